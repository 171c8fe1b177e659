//===- Emitter.cpp - Building LLVM/NVVM IR for kernel lowering ------------===//
#include "Emitter.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace flamia;

Value Emitter::pack(Type type, ArrayRef<Value> values) {
  Value s = undef(type);
  for (auto [i, v] : llvm::enumerate(values))
    s = insert(s, v, i);
  return s;
}

SmallVector<Value> Emitter::unpack(Value s) {
  auto type = cast<LLVM::LLVMStructType>(s.getType());
  SmallVector<Value> out;
  for (unsigned i = 0, e = type.getBody().size(); i < e; ++i)
    out.push_back(extract(s, i));
  return out;
}

Value Emitter::shflXor(Value v, int64_t mask) {
  return NVVM::ShflOp::create(b, loc, v.getType(), i32c(-1), v, i32c(mask),
                              i32c(31), NVVM::ShflKind::bfly, UnitAttr());
}

Value Emitter::shflIdx(Value v, Value srcLane) {
  return NVVM::ShflOp::create(b, loc, v.getType(), i32c(-1), v, srcLane,
                              i32c(31), NVVM::ShflKind::idx, UnitAttr());
}

Value Emitter::smemBase() {
  Value addr = LLVM::AddressOfOp::create(b, loc, ptr(Shared), kDynamicSmemSymbol);
  return addr;
}

void Emitter::mbarrierInit(Value bar, int64_t count) {
  NVVM::MBarrierInitOp::create(b, loc, bar, i32c(count), /*predicate=*/Value());
}

void Emitter::mbarrierWait(Value bar, Value parity) {
  // A 10ms suspend hint; the op loops until the phase completes.
  NVVM::MBarrierTryWaitParityOp::create(b, loc, bar, parity, i32c(10000000));
}

void Emitter::mbarrierArrive(Value bar) {
  NVVM::MBarrierArriveOp::create(b, loc, TypeRange{i64()}, bar, Value());
}

void Emitter::mbarrierArriveExpectTx(Value bar, int64_t bytes) {
  NVVM::MBarrierArriveExpectTxOp::create(b, loc, Type(), bar, i32c(bytes),
                                         NVVM::MemScopeKind::CTA,
                                         /*relaxed=*/false, /*predicate=*/Value());
}

Value Emitter::cvtToE4M3x2(Value hi, Value lo) {
  return NVVM::ConvertF32x2ToF8x2Op::create(
      b, loc, VectorType::get({2}, i8()), hi, lo, NVVM::FPRoundingMode::RN,
      NVVM::SaturationMode::SATFINITE, /*relu=*/false,
      Float8E4M3FNType::get(b.getContext()));
}

Value Emitter::cvtE4M3x2ToF16x2(Value pair) {
  return NVVM::ConvertF8x2ToF16x2Op::create(
      b, loc, VectorType::get({2}, b.getF16Type()), pair, /*relu=*/false,
      Float8E4M3FNType::get(b.getContext()));
}

std::pair<Value, Value> Emitter::cvtE4M3x2ToF32(Value pair) {
  Value h2 = cvtE4M3x2ToF16x2(pair);
  Value f2 = LLVM::FPExtOp::create(b, loc, VectorType::get({2}, f32()), h2);
  return {LLVM::ExtractElementOp::create(b, loc, f2, i32c(0)),
          LLVM::ExtractElementOp::create(b, loc, f2, i32c(1))};
}

Value Emitter::cvtToBF16x2(Value hi, Value lo) {
  Value packed = NVVM::ConvertF32x2ToBF16x2Op::create(
      b, loc, VectorType::get({2}, b.getBF16Type()), hi, lo,
      /*random_bits=*/Value(), NVVM::FPRoundingMode::RN);
  return bitcast(i32(), packed);
}

Value Emitter::cvtNonNegativeE4M3x2ToBF16x2(Value pair) {
  Value h2 = cvtE4M3x2ToF16x2(pair);
  // f16 is s|e5|m10 with bias 15, bf16 s|e8|m7 with bias 127. An E4M3
  // value has three mantissa bits, so the low seven of each f16 half are
  // zero and the 32-bit shift moves nothing across the halves; the sign
  // bits are zero (non-negative). Each half then reads as a bf16 with the
  // f16's exponent field and mantissa: the value times 2^(15 - 127).
  Value shifted = lshr(bitcast(i32(), h2), i32c(3));
  auto bf16x2 = VectorType::get({2}, b.getBF16Type());
  Value scale = LLVM::ConstantOp::create(
      b, loc, bf16x2,
      DenseElementsAttr::get(bf16x2,
                             APFloat(APFloat::BFloat(), "0x1p112")));
  // Exact: a power of two times a normal value far from the bf16 range's
  // ends (E4M3's smallest, 2^-9, is 2^-121 here).
  return bitcast(i32(), fmul(bitcast(bf16x2, shifted), scale));
}

Value Emitter::roundPairsToBF16(Type outType, ArrayRef<Value> p,
                                Value quantized, bool nanViaRowSum) {
  auto roundPairs = [&](OpBuilder &nested, bool toE4M3) {
    Emitter be(nested, loc);
    SmallVector<Value> regs;
    for (size_t i = 0; i + 1 < p.size(); i += 2) {
      Value lo = p[i], hi = p[i + 1];
      if (toE4M3 && nanViaRowSum) {
        regs.push_back(
            be.cvtNonNegativeE4M3x2ToBF16x2(be.cvtToE4M3x2(hi, lo)));
        continue;
      }
      if (toE4M3)
        std::tie(lo, hi) = be.cvtE4M3x2ToF32(be.cvtToE4M3x2(hi, lo));
      regs.push_back(be.cvtToBF16x2(hi, lo));
    }
    return be.pack(outType, regs);
  };
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{outType}, quantized,
                                /*withElse=*/true);
  OpBuilder tb = ifOp.getThenBodyBuilder();
  scf::YieldOp::create(tb, loc, roundPairs(tb, /*toE4M3=*/true));
  OpBuilder eb = ifOp.getElseBodyBuilder();
  scf::YieldOp::create(eb, loc, roundPairs(eb, /*toE4M3=*/false));
  return ifOp.getResult(0);
}
