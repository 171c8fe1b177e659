//===- Sm90WarpgroupMmaPatterns.cpp - wgmma and its waits -----------------===//
//
// The sm_90a MMAs: flamia.wg.mma as wgmma.mma_async m64nNk16 (bf16 in, f32
// accumulate) and flamia.wg.wait as wgmma.wait_group. Their fragments are in
// the accumulator layout of FragmentLayout.h (Sm90AccumulatorLayout); a
// !flamia.frag<64xKxbf16> A operand is N/4 .b32 registers of packed bf16
// pairs in the same positions, so P computed in the accumulator layout
// feeds P V without moving data. The fragment ops themselves are lowered by
// FragmentPatterns.cpp, for every target.
//
// The register-A form of wgmma (P in registers) is a named gap of MLIR 22's
// NVVM dialect: nvvm.wgmma.mma_async takes A only as a shared-memory
// descriptor, so that one instruction is inline PTX.
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"
#include "KernelPlan.h"
#include "Patterns.h"

#include "flamia/Dialect/FlamiaOps.h"
#include "flamia/Target/Sm90WgmmaDescriptor.h"

#include <string>

using namespace mlir;
using namespace flamia;

namespace {

/// Compile-time part of a wgmma descriptor (start address field holds the
/// slice's offset from the tile base; the runtime base >> 4 is added).
FailureOr<uint64_t> descriptorTemplate(Operation *op, OperandMajor major,
                                       AtomOrder order, uint32_t mn, uint32_t k,
                                       uint32_t k0) {
  SmemOperandTile tile;
  tile.major = major;
  tile.swizzle = SmemSwizzle::B128;
  tile.elementBits = 16;
  tile.mnExtent = mn;
  tile.kExtent = k;
  tile.order = order;
  uint64_t desc = 0;
  std::string error;
  if (!makeSm90OperandDescriptor(tile, 0, k0, desc, error))
    return op->emitOpError() << "wgmma descriptor: " << error;
  return desc;
}

Value withBase(Emitter &e, uint64_t templ, Value baseAddr) {
  Value base = e.zext(e.i64(), e.lshr(baseAddr, e.i32c(4)));
  return e.add(e.i64c(static_cast<int64_t>(templ)), base);
}

struct WarpgroupMmaLowering : OpConversionPattern<WarpgroupMmaOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(WarpgroupMmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter e(rewriter, loc);
    FragmentType resultType = op.getResult().getType();
    int64_t n = resultType.getCols();
    Type accType = getTypeConverter()->convertType(resultType);
    SmemType bType = op.getB().getType();
    if (!bType.getElementType().isBF16())
      return op.emitOpError() << "sm_90a lowering: bf16 operands only";
    Value bBase = e.add(e.smemAddress(adaptor.getB()),
                        e.mul(adaptor.getBStage(), e.i32c(bType.getTileBytes())));
    Value acc = adaptor.getAcc();
    bool accumulate = static_cast<bool>(acc);
    if (!acc) {
      SmallVector<Value> zeros(n / 2, e.f32c(0));
      acc = e.pack(accType, zeros);
    }
    NVVM::WgmmaFenceAlignedOp::create(rewriter, loc);
    auto shape = NVVM::MMAShapeAttr::get(rewriter.getContext(), 64, n, 16);
    if (auto aType = dyn_cast<SmemType>(op.getA().getType())) {
      // S = Q K^T: A and B K-major in shared memory.
      auto roleFirst = op->getAttrOfType<IntegerAttr>(kRoleFirstAttr);
      if (!roleFirst)
        return op.emitOpError() << "is not inside a flamia.role";
      // Broadcast from lane 0: ptxas then knows the index is the same in
      // the whole warp and builds the descriptors in uniform registers,
      // not per thread followed by two register moves to the uniform file
      // per MMA instruction.
      Value wg = e.shflIdx(
          e.sub(e.udiv(e.tid(), e.i32c(128)), e.i32c(roleFirst.getInt())),
          e.i32c(0));
      int64_t k = aType.getCols();
      Value aBase = e.add(e.smemAddress(adaptor.getA()),
                          e.mul(adaptor.getAStage(), e.i32c(aType.getTileBytes())));
      // This warpgroup's 64 rows: 64 rows x 128 bytes into each atom.
      aBase = e.add(aBase, e.mul(wg, e.i32c(64 * 128)));
      for (int64_t kk = 0; kk < k / 16; ++kk) {
        auto aT = descriptorTemplate(op, OperandMajor::K, AtomOrder::MNFastest,
                                     aType.getRows(), k, 16 * kk);
        auto bT = descriptorTemplate(op, OperandMajor::K, AtomOrder::MNFastest,
                                     bType.getRows(), k, 16 * kk);
        if (failed(aT) || failed(bT))
          return failure();
        bool overwrite = kk == 0 && !accumulate;
        acc = NVVM::WgmmaMmaAsyncOp::create(
            rewriter, loc, accType, acc, withBase(e, *aT, aBase),
            withBase(e, *bT, bBase), shape, NVVM::WGMMATypes::bf16,
            NVVM::WGMMATypes::bf16, NVVM::WGMMATypes::f32,
            overwrite ? NVVM::WGMMAScaleOut::zero : NVVM::WGMMAScaleOut::one,
            NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
            NVVM::MMALayout::row, NVVM::MMALayout::col,
            NVVM::MMAIntOverflowAttr());
      }
    } else {
      // O += P V: A = P in registers, B = V MN-major (transposed).
      auto aFrag = cast<FragmentType>(op.getA().getType());
      int64_t k = aFrag.getCols();
      if (!op.getBTransposed())
        return op.emitOpError() << "sm_90a lowering: a register A operand "
                                   "reads B transposed (P V)";
      SmallVector<Value> aRegs = e.unpack(adaptor.getA());
      for (int64_t kk = 0; kk < k / 16; ++kk) {
        auto bT = descriptorTemplate(op, OperandMajor::MN, AtomOrder::KFastest,
                                     bType.getCols(), bType.getRows(), 16 * kk);
        if (failed(bT))
          return failure();
        bool overwrite = kk == 0 && !accumulate;
        acc = emitRegisterAWgmma(e, accType, acc, ArrayRef(aRegs).slice(4 * kk, 4),
                                 withBase(e, *bT, bBase), n, overwrite);
      }
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(rewriter, loc);
    // An async MMA's group is waited for by flamia.wg.wait.
    if (!op.getAsync())
      NVVM::WgmmaWaitGroupSyncOp::create(rewriter, loc, 0);
    rewriter.replaceOp(op, acc);
    return success();
  }

  /// wgmma.mma_async.sync.aligned.m64n<N>k16.f32.bf16.bf16 with A in four
  /// .b32 registers (inline PTX: NVVM's op has no register-A form).
  static Value emitRegisterAWgmma(Emitter &e, Type accType, Value acc,
                                  ArrayRef<Value> a, Value bDesc, int64_t n,
                                  bool overwrite) {
    int64_t nAcc = n / 2;
    std::string asmStr = "{\n.reg .pred p;\nsetp.ne.b32 p, $" +
                         std::to_string(2 * nAcc + 5) + ", 0;\n" +
                         "wgmma.mma_async.sync.aligned.m64n" +
                         std::to_string(n) + "k16.f32.bf16.bf16 {";
    std::string constraints;
    for (int64_t i = 0; i < nAcc; ++i) {
      asmStr += (i ? ", $" : "$") + std::to_string(i);
      constraints += (i ? ",=f" : "=f");
    }
    asmStr += "}, {";
    for (int64_t i = 0; i < 4; ++i)
      asmStr += (i ? ", $" : "$") + std::to_string(2 * nAcc + i);
    asmStr += "}, $" + std::to_string(2 * nAcc + 4) + ", p, 1, 1, 1;\n}";
    for (int64_t i = 0; i < nAcc; ++i)
      constraints += "," + std::to_string(i);
    constraints += ",r,r,r,r,l,r";
    SmallVector<Value> operands = e.unpack(acc);
    operands.append(a.begin(), a.end());
    operands.push_back(bDesc);
    operands.push_back(e.i32c(overwrite ? 0 : 1));
    auto asmOp = LLVM::InlineAsmOp::create(
        e.b, e.loc, accType, operands, asmStr, constraints,
        /*has_side_effects=*/true, /*is_align_stack=*/false,
        LLVM::TailCallKind::None,
        LLVM::AsmDialectAttr::get(e.b.getContext(), LLVM::AsmDialect::AD_ATT),
        ArrayAttr());
    return asmOp.getResult(0);
  }
};

/// wgmma.wait_group N, then every waited-for fragment through an empty
/// side-effecting asm that returns its registers. The wait is an intrinsic
/// with side effects but the accumulators do not depend on it: without the
/// asm, LLVM may read them (copy, spill, compute) before the wait. A
/// register A operand (P) of the waited MMA is an input of the asm too, so
/// its registers stay untouched while the tensor cores may still read them.
struct WarpgroupWaitLowering : OpConversionPattern<WarpgroupWaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(WarpgroupWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter e(rewriter, loc);
    NVVM::WgmmaWaitGroupSyncOp::create(rewriter, loc, op.getPending());
    SmallVector<Value> results;
    for (auto [original, converted] :
         llvm::zip(op.getFragments(), adaptor.getFragments())) {
      SmallVector<Value> regs = e.unpack(converted);
      int64_t n = regs.size();
      std::string constraints;
      for (int64_t i = 0; i < n; ++i)
        constraints += (i ? ",=f" : "=f");
      for (int64_t i = 0; i < n; ++i)
        constraints += "," + std::to_string(i);
      SmallVector<Value> operands(regs);
      auto mma = original.getDefiningOp<WarpgroupMmaOp>();
      if (mma && isa<FragmentType>(mma.getA().getType())) {
        Value a = rewriter.getRemappedValue(mma.getA());
        for (Value reg : e.unpack(a)) {
          operands.push_back(reg);
          constraints += ",r";
        }
      }
      SmallVector<Type> types(n, e.f32());
      auto asmOp = LLVM::InlineAsmOp::create(
          rewriter, loc, LLVM::LLVMStructType::getLiteral(getContext(), types),
          operands, "", constraints,
          /*has_side_effects=*/true, /*is_align_stack=*/false,
          LLVM::TailCallKind::None,
          LLVM::AsmDialectAttr::get(getContext(), LLVM::AsmDialect::AD_ATT),
          ArrayAttr());
      SmallVector<Value> out;
      for (int64_t i = 0; i < n; ++i)
        out.push_back(LLVM::ExtractValueOp::create(rewriter, loc,
                                                   asmOp.getResult(0), i));
      results.push_back(e.pack(converted.getType(), out));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void flamia::populateSm90WarpgroupMmaPatterns(
    const FlamiaTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<WarpgroupMmaLowering, WarpgroupWaitLowering>(
      converter, patterns.getContext());
}
