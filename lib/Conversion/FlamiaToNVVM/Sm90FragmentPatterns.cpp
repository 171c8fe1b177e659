//===- Sm90FragmentPatterns.cpp - fragments in wgmma registers ------------===//
//
// On sm_90a a !flamia.frag<64xNxf32> is the wgmma accumulator of the
// executing warpgroup: N/2 floats per thread, register i of thread t (warp
// w = t/32 % 4, lane l) holding row 16w + l/4 + 8((i/2)%2) and column
// 8(i/4) + 2(l%4) + i%2 (PTX ISA 9.0, 9.7.15.5.1.1; docs/descriptors.md).
// A !flamia.frag<64xKxbf16> is the A operand of m64nNk16: N/4 .b32 registers
// of packed bf16 pairs in the same positions, so P computed in the
// accumulator layout feeds P V without moving data. A !flamia.rows<64xf32>
// is a thread's two rows (16w + l/4 and +8).
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

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>
#include <string>

using namespace mlir;
using namespace mlir::flamia;
using ::flamia::AtomOrder;
using ::flamia::OperandMajor;
using ::flamia::SmemOperandTile;
using ::flamia::SmemSwizzle;

namespace {

/// Row and column of accumulator register `i`, given the thread's first row
/// and quad position (column pair).
struct AccLayout {
  Value row0; // 16 w + l / 4
  Value quad; // l % 4
  static int64_t rowHalf(int64_t i) { return (i / 2) % 2; }
  static int64_t colBase(int64_t i) { return 8 * (i / 4) + i % 2; }

  static AccLayout get(Emitter &e) {
    Value tid = e.tid();
    Value lane = e.urem(tid, e.i32c(32));
    Value warp = e.urem(e.udiv(tid, e.i32c(32)), e.i32c(4));
    return {e.add(e.mul(warp, e.i32c(16)), e.udiv(lane, e.i32c(4))),
            e.urem(lane, e.i32c(4))};
  }
  /// Column of register i (row offset: rowHalf(i) * 8).
  Value col(Emitter &e, int64_t i) const {
    return e.add(e.mul(quad, e.i32c(2)), e.i32c(colBase(i)));
  }
};

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
  if (!::flamia::makeSm90OperandDescriptor(tile, 0, k0, desc, error))
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
      Value wg = e.sub(e.udiv(e.tid(), e.i32c(128)), e.i32c(roleFirst.getInt()));
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

struct FragZeroLowering : OpConversionPattern<FragZeroOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(FragZeroOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter e(rewriter, op.getLoc());
    auto type = cast<LLVM::LLVMStructType>(
        getTypeConverter()->convertType(op.getResult().getType()));
    SmallVector<Value> zeros;
    for (Type t : type.getBody())
      zeros.push_back(t.isF32() ? e.f32c(0) : e.i32c(0));
    rewriter.replaceOp(op, e.pack(type, zeros));
    return success();
  }
};

struct RowsFillLowering : OpConversionPattern<RowsFillOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RowsFillOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter e(rewriter, op.getLoc());
    Type type = getTypeConverter()->convertType(op.getResult().getType());
    Value v = e.f32c(op.getValue().convertToDouble());
    rewriter.replaceOp(op, e.pack(type, {v, v}));
    return success();
  }
};

struct FragMaskLowering : OpConversionPattern<FragMaskOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(FragMaskOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter e(rewriter, op.getLoc());
    AccLayout layout = AccLayout::get(e);
    SmallVector<Value> s = e.unpack(adaptor.getScores());
    Value ninf = e.f32c(-std::numeric_limits<float>::infinity());
    Value query[2] = {e.add(adaptor.getQueryBase(), layout.row0),
                      e.add(adaptor.getQueryBase(), e.add(layout.row0, e.i32c(8)))};
    for (int64_t i = 0, n = s.size(); i < n; ++i) {
      Value key = e.add(adaptor.getKeyBase(), layout.col(e, i));
      Value masked = e.icmp(LLVM::ICmpPredicate::sge, key, adaptor.getKeyLimit());
      if (op.getCausal())
        masked = e.bor(masked, e.icmp(LLVM::ICmpPredicate::sgt, key,
                                      query[AccLayout::rowHalf(i)]));
      s[i] = e.select(masked, ninf, s[i]);
    }
    rewriter.replaceOp(op, e.pack(adaptor.getScores().getType(), s));
    return success();
  }
};

/// Max or sum of a row over the four threads of a quad.
Value quadReduce(Emitter &e, Value v, bool isMax) {
  for (int64_t m : {1, 2}) {
    Value other = e.shflXor(v, m);
    v = isMax ? e.fmax(v, other) : e.fadd(v, other);
  }
  return v;
}

struct SoftmaxUpdateLowering : OpConversionPattern<SoftmaxUpdateOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SoftmaxUpdateOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter e(rewriter, op.getLoc());
    SmallVector<Value> s = e.unpack(adaptor.getScores());
    Value scale = adaptor.getScaleLog2();
    // t = fl32(s * scale_log2): the contract's log2-domain score.
    for (Value &v : s)
      v = e.fmul(v, scale);
    Value ninf = e.f32c(-std::numeric_limits<float>::infinity());
    Value rowMax[2] = {ninf, ninf};
    for (int64_t i = 0, n = s.size(); i < n; ++i)
      rowMax[AccLayout::rowHalf(i)] = e.fmax(rowMax[AccLayout::rowHalf(i)], s[i]);
    Value oldMax[2] = {e.extract(adaptor.getMax(), 0), e.extract(adaptor.getMax(), 1)};
    Value oldSum[2] = {e.extract(adaptor.getSum(), 0), e.extract(adaptor.getSum(), 1)};
    Value newMax[2], alpha[2], rowSum[2] = {e.f32c(0), e.f32c(0)};
    for (int r = 0; r < 2; ++r) {
      newMax[r] = e.fmax(oldMax[r], quadReduce(e, rowMax[r], /*isMax=*/true));
      alpha[r] = e.exp2(e.fsub(oldMax[r], newMax[r]));
    }
    for (int64_t i = 0, n = s.size(); i < n; ++i) {
      int r = AccLayout::rowHalf(i);
      s[i] = e.exp2(e.fsub(s[i], newMax[r]));
      rowSum[r] = e.fadd(rowSum[r], s[i]);
    }
    Value newSum[2];
    for (int r = 0; r < 2; ++r)
      newSum[r] = e.fadd(e.fmul(oldSum[r], alpha[r]),
                         quadReduce(e, rowSum[r], /*isMax=*/false));
    Type rowsType = adaptor.getMax().getType();
    rewriter.replaceOp(op, {e.pack(adaptor.getScores().getType(), s),
                            e.pack(rowsType, {newMax[0], newMax[1]}),
                            e.pack(rowsType, {newSum[0], newSum[1]}),
                            e.pack(rowsType, {alpha[0], alpha[1]})});
    return success();
  }
};

/// P * 2^k rounded to E4M3 (quantized path) or to bf16 (safe block), as
/// packed bf16 pairs in the A-operand layout.
struct FragQuantizeLowering : OpConversionPattern<FragQuantizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(FragQuantizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter e(rewriter, loc);
    PrecisionAttr precision = op.getPrecision();
    if (!isa<Float8E4M3FNType>(precision.getElementType()))
      return op.emitOpError() << "sm_90a lowering: P rounds to f8E4M3FN only";
    Type outType = getTypeConverter()->convertType(op.getResult().getType());
    SmallVector<Value> p = e.unpack(adaptor.getP());
    Value factor = e.f32c(std::ldexp(1.0, *precision.getFixedScale()));
    for (Value &v : p)
      v = e.fmul(v, factor);
    rewriter.replaceOp(op,
                       e.roundPairsToBF16(outType, p, adaptor.getQuantized()));
    return success();
  }
};

struct FragScaleRowsLowering : OpConversionPattern<FragScaleRowsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(FragScaleRowsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter e(rewriter, op.getLoc());
    SmallVector<Value> v = e.unpack(adaptor.getFrag());
    Value f[2] = {e.extract(adaptor.getFactors(), 0),
                  e.extract(adaptor.getFactors(), 1)};
    for (int64_t i = 0, n = v.size(); i < n; ++i)
      v[i] = e.fmul(v[i], f[AccLayout::rowHalf(i)]);
    rewriter.replaceOp(op, e.pack(adaptor.getFrag().getType(), v));
    return success();
  }
};

/// O = acc / (2^k l) as bf16 into o[q_start + row, head, :]; LSE = (m +
/// log2 l) ln 2 into lse[head, q_start + row]; rows at or past q_rows are
/// not written.
struct AttnStoreLowering : OpConversionPattern<AttnStoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AttnStoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter e(rewriter, loc);
    auto oType = op.getO().getType();
    int64_t heads = oType.getShape()[1], d = oType.getShape()[2];
    SmallVector<Value> acc = e.unpack(adaptor.getAcc());
    AccLayout layout = AccLayout::get(e);
    Value factor = e.f32c(std::ldexp(1.0, op.getFixedScale()));
    for (int r = 0; r < 2; ++r) {
      Value rowInTile = e.add(adaptor.getRowBase(), e.add(layout.row0, e.i32c(8 * r)));
      Value valid = e.icmp(LLVM::ICmpPredicate::slt, rowInTile, adaptor.getQRows());
      Value m = e.extract(adaptor.getMax(), r);
      Value l = e.extract(adaptor.getSum(), r);
      Value inv = e.fdiv(e.f32c(1.0), e.fmul(l, factor));
      auto ifOp = scf::IfOp::create(rewriter, loc, valid, /*withElse=*/false);
      OpBuilder tb = ifOp.getThenBodyBuilder();
      Emitter te(tb, loc);
      Value token = te.add(adaptor.getQStart(), rowInTile);
      Value rowElem = te.packedIndex(token, adaptor.getHead(), te.i32c(0), heads, d);
      for (int64_t i = 0, n = acc.size(); i < n; i += 2) {
        if (AccLayout::rowHalf(i) != r)
          continue;
        Value lo = te.fmul(acc[i], inv), hi = te.fmul(acc[i + 1], inv);
        Value packed = te.cvtToBF16x2(hi, lo);
        Value elem = te.add(rowElem, te.zext(te.i64(), layout.col(te, i)));
        Value addr = te.elementPtr(adaptor.getO(), elem, 2);
        te.store(packed, addr, 4);
      }
      // One thread of the quad writes the row's LSE.
      Value first = te.icmp(LLVM::ICmpPredicate::eq, layout.quad, te.i32c(0));
      auto lseIf = scf::IfOp::create(tb, loc, first, /*withElse=*/false);
      OpBuilder lb = lseIf.getThenBodyBuilder();
      Emitter le(lb, loc);
      Value lse = le.fmul(le.fadd(m, le.log2(l)), le.f32c(0.6931471805599453));
      le.store(lse, le.elementPtr(adaptor.getLse(), le.headMajorIndex(adaptor.getHead(), adaptor.getNumTokens(), token), 4), 4);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::flamia::populateSm90FragmentPatterns(
    const FlamiaTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<WarpgroupMmaLowering, WarpgroupWaitLowering, FragZeroLowering, RowsFillLowering,
               FragMaskLowering, SoftmaxUpdateLowering, FragQuantizeLowering,
               FragScaleRowsLowering, AttnStoreLowering>(converter,
                                                         patterns.getContext());
}
