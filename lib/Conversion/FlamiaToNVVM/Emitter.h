//===- Emitter.h - Building LLVM/NVVM IR for kernel lowering ----*- C++ -*-===//
//
// A thin layer over OpBuilder for the code convert-flamia-to-nvvm writes:
// integer and float arithmetic, thread indices, shuffles, mbarriers and
// shared-memory addressing, all as LLVM and NVVM dialect ops.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_LIB_CONVERSION_FLAMIATONVVM_EMITTER_H
#define FLAMIA_LIB_CONVERSION_FLAMIATONVVM_EMITTER_H

#include "flamia/Support/MLIR.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"

namespace flamia {

/// Address spaces of the NVPTX backend.
enum AddressSpace : unsigned { Generic = 0, Global = 1, Shared = 3 };

/// The dynamic shared memory symbol every kernel of a gpu.module uses.
constexpr const char *kDynamicSmemSymbol = "__flamia_dynamic_smem";

class Emitter {
public:
  Emitter(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  OpBuilder &b;
  Location loc;

  // Types.
  Type i1() { return b.getI1Type(); }
  Type i8() { return b.getI8Type(); }
  Type i16() { return b.getI16Type(); }
  Type i32() { return b.getI32Type(); }
  Type i64() { return b.getI64Type(); }
  Type f32() { return b.getF32Type(); }
  Type f64() { return b.getF64Type(); }
  Type ptr(unsigned as = Generic) {
    return LLVM::LLVMPointerType::get(b.getContext(), as);
  }

  // Constants.
  Value i32c(int64_t v) { return LLVM::ConstantOp::create(b, loc, i32(), v); }
  Value i64c(int64_t v) { return LLVM::ConstantOp::create(b, loc, i64(), v); }
  Value i1c(bool v) { return LLVM::ConstantOp::create(b, loc, i1(), v); }
  Value f32c(double v) {
    return LLVM::ConstantOp::create(b, loc, f32(), b.getF32FloatAttr(v));
  }
  Value f64c(double v) {
    return LLVM::ConstantOp::create(b, loc, f64(), b.getF64FloatAttr(v));
  }

  // Integer arithmetic.
  Value add(Value x, Value y) { return LLVM::AddOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return LLVM::SubOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return LLVM::MulOp::create(b, loc, x, y); }
  Value udiv(Value x, Value y) { return LLVM::UDivOp::create(b, loc, x, y); }
  Value urem(Value x, Value y) { return LLVM::URemOp::create(b, loc, x, y); }
  Value sdiv(Value x, Value y) { return LLVM::SDivOp::create(b, loc, x, y); }
  Value band(Value x, Value y) { return LLVM::AndOp::create(b, loc, x, y); }
  Value bor(Value x, Value y) { return LLVM::OrOp::create(b, loc, x, y); }
  Value bxor(Value x, Value y) { return LLVM::XOrOp::create(b, loc, x, y); }
  Value shl(Value x, Value y) { return LLVM::ShlOp::create(b, loc, x, y); }
  Value lshr(Value x, Value y) { return LLVM::LShrOp::create(b, loc, x, y); }
  Value icmp(LLVM::ICmpPredicate p, Value x, Value y) {
    return LLVM::ICmpOp::create(b, loc, p, x, y);
  }
  Value select(Value c, Value x, Value y) {
    return LLVM::SelectOp::create(b, loc, c, x, y);
  }
  Value zext(Type t, Value x) { return LLVM::ZExtOp::create(b, loc, t, x); }
  Value sext(Type t, Value x) { return LLVM::SExtOp::create(b, loc, t, x); }
  Value trunc(Type t, Value x) { return LLVM::TruncOp::create(b, loc, t, x); }
  Value bitcast(Type t, Value x) { return LLVM::BitcastOp::create(b, loc, t, x); }

  // Float arithmetic.
  Value fadd(Value x, Value y) { return LLVM::FAddOp::create(b, loc, x, y); }
  Value fsub(Value x, Value y) { return LLVM::FSubOp::create(b, loc, x, y); }
  Value fmul(Value x, Value y) { return LLVM::FMulOp::create(b, loc, x, y); }
  Value fdiv(Value x, Value y) { return LLVM::FDivOp::create(b, loc, x, y); }
  Value fneg(Value x) { return LLVM::FNegOp::create(b, loc, x); }
  /// x * y + z rounded once (PTX fma.rn.f32).
  Value fma(Value x, Value y, Value z) {
    return LLVM::FMAOp::create(b, loc, x, y, z);
  }
  /// x * y rounded toward +inf (PTX mul.rp.f32): the smallest float32 at
  /// least the exact product.
  Value fmulUp(Value x, Value y) {
    return LLVM::CallIntrinsicOp::create(b, loc, f32(),
                                         b.getStringAttr("llvm.nvvm.mul.rp.f"),
                                         ValueRange{x, y})
        .getResult(0);
  }
  Value fmax(Value x, Value y) { return LLVM::MaxNumOp::create(b, loc, x, y); }
  /// The maximum that is NaN if either operand is (PTX max.NaN.f32).
  Value fmaxNaN(Value x, Value y) {
    return LLVM::MaximumOp::create(b, loc, x, y);
  }
  Value fcmp(LLVM::FCmpPredicate p, Value x, Value y) {
    return LLVM::FCmpOp::create(b, loc, p, x, y);
  }
  /// exp2 as PTX ex2.approx.ftz.f32: a result below 2^-126 is +0. The
  /// softmax's exponentials are at most 1 (scores minus a row maximum or
  /// LSE); one below 2^-126 rounds to 0 in P's E4M3 codes (whose smallest
  /// value is 2^-9 of P x 2^8) and vanishes in every f32 sum it joins (a
  /// row sum holds the maximum's exponential, above 2^-64 while the row
  /// maximum is below 2^30 in magnitude: docs/numerics.md). Without .ftz
  /// the SASS brackets each MUFU.EX2 with a compare and two multiplies to
  /// produce subnormal results: three more instructions per score (the
  /// dK/dV kernel -12 to -14% without them; docs/performance.md, runs 50
  /// and 51).
  Value exp2(Value x) {
    return LLVM::CallIntrinsicOp::create(
               b, loc, f32(), b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f"),
               ValueRange{x})
        .getResult(0);
  }
  /// log2 (PTX lg2.approx.f32; NVPTX has no native llvm.log2).
  Value log2(Value x) {
    return LLVM::CallIntrinsicOp::create(b, loc, f32(),
                                         b.getStringAttr("llvm.nvvm.lg2.approx.f"),
                                         ValueRange{x})
        .getResult(0);
  }

  // Structs.
  Value extract(Value s, int64_t i) {
    return LLVM::ExtractValueOp::create(b, loc, s, i);
  }
  Value insert(Value s, Value v, int64_t i) {
    return LLVM::InsertValueOp::create(b, loc, s, v, i);
  }
  Value undef(Type t) { return LLVM::UndefOp::create(b, loc, t); }
  /// A struct of `type` holding `values`.
  Value pack(Type type, ArrayRef<Value> values);
  SmallVector<Value> unpack(Value s);

  // Threads.
  Value tid() { return NVVM::ThreadIdXOp::create(b, loc, i32()); }
  Value lane() { return NVVM::LaneIdOp::create(b, loc, i32()); }
  /// Butterfly shuffle across the warp (all lanes participate).
  Value shflXor(Value v, int64_t mask);
  /// v of lane `srcLane` (all lanes participate).
  Value shflIdx(Value v, Value srcLane);

  // Memory.
  /// A pointer `base + bytes` (byte offset) in `base`'s address space.
  Value gep(Value base, Value bytes) {
    return LLVM::GEPOp::create(b, loc, base.getType(), i8(), base,
                               ArrayRef<LLVM::GEPArg>{bytes});
  }
  /// The index of element [token, head, col] of a packed [T, heads,
  /// rowElems] global tensor, as i64. token, head and col are non-negative
  /// i32 values; the products are formed in 64 bits because T * H * D passes
  /// 2^31 from 2^20 tokens at H * D = 2048. `heads64` is the head count as
  /// i64 (headCount).
  Value packedIndex(Value token, Value head, Value col, Value heads64,
                    int64_t rowElems) {
    Value row = add(mul(zext(i64(), token), heads64), zext(i64(), head));
    return add(mul(row, i64c(rowElems)), zext(i64(), col));
  }
  /// A head count as i64: the i32 runtime value when there is one (the op's
  /// `heads` operand), else the static `heads` of the tensor's type.
  Value headCount(Value runtime, int64_t heads) {
    return runtime ? zext(i64(), runtime) : i64c(heads);
  }
  /// The index of element [head, token] of a head-major [H, T] tensor (the
  /// LSE), as i64.
  Value headMajorIndex(Value head, Value numTokens, Value token) {
    return add(mul(zext(i64(), head), zext(i64(), numTokens)), zext(i64(), token));
  }
  /// A pointer to element `index` (i64) of `elemBytes`-byte elements.
  Value elementPtr(Value base, Value index, int64_t elemBytes) {
    return gep(base, elemBytes == 1 ? index : mul(index, i64c(elemBytes)));
  }
  Value gep(Value base, int64_t bytes) {
    return LLVM::GEPOp::create(b, loc, base.getType(), i8(), base,
                               ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(bytes)});
  }
  Value load(Type t, Value p, unsigned align = 0) {
    return LLVM::LoadOp::create(b, loc, t, p, align);
  }
  void store(Value v, Value p, unsigned align = 0) {
    LLVM::StoreOp::create(b, loc, v, p, align);
  }
  /// The kernel's dynamic shared memory (declared in the gpu.module).
  Value smemBase();
  /// The 32-bit shared-window address of a shared pointer.
  Value smemAddress(Value sharedPtr) {
    return LLVM::PtrToIntOp::create(b, loc, i32(), sharedPtr);
  }

  // Conversions of float pairs. PTX puts the first operand of a pair
  // conversion in the upper half; these take (hi, lo) and keep lo in the
  // low half (the lower address).
  /// (hi, lo) f32 -> E4M3x2 (RNE, saturating), as vector<2xi8>.
  Value cvtToE4M3x2(Value hi, Value lo);
  /// E4M3x2 (vector<2xi8>) -> vector<2xf16>, exactly (every E4M3 value is
  /// a normal f16).
  Value cvtE4M3x2ToF16x2(Value pair);
  /// E4M3x2 (vector<2xi8>) -> (lo, hi) f32, exactly.
  std::pair<Value, Value> cvtE4M3x2ToF32(Value pair);
  /// (hi, lo) f32 -> packed bf16x2 (RNE) as i32.
  Value cvtToBF16x2(Value hi, Value lo);
  /// Non-negative E4M3x2 (vector<2xi8>) -> packed bf16x2 as i32, exactly,
  /// without widening to f32: the codes' f16 pair shifted right by three
  /// bits is the bf16 pair of the same values times 2^-112 (every E4M3
  /// value is a normal f16, and both formats keep their mantissa at the top
  /// of the low bits), and one bf16x2 multiply by 2^112 restores them. A
  /// NaN code becomes a finite value: only for callers where a NaN also
  /// reaches the result another way.
  Value cvtNonNegativeE4M3x2ToBF16x2(Value pair);
  /// P (already times its fixed scale, consecutive values paired) as packed
  /// bf16x2 words of `outType`: where `quantized` (i1) each value is first
  /// rounded to E4M3 (exact in bf16), else rounded to bf16 directly. With
  /// `nanViaRowSum`, the E4M3 codes become bf16 by
  /// cvtNonNegativeE4M3x2ToBF16x2 (P >= 0; a NaN of P also makes the row
  /// sum, and so the output, NaN).
  Value roundPairsToBF16(Type outType, ArrayRef<Value> p, Value quantized,
                         bool nanViaRowSum = false);

  // mbarriers (shared-memory pointers).
  void mbarrierInit(Value bar, int64_t count);
  /// Blocks until the phase of parity `parity` (i32 0/1) has completed.
  void mbarrierWait(Value bar, Value parity);
  void mbarrierArrive(Value bar);
  void mbarrierArriveExpectTx(Value bar, int64_t bytes);
};

} // namespace flamia

#endif // FLAMIA_LIB_CONVERSION_FLAMIATONVVM_EMITTER_H
