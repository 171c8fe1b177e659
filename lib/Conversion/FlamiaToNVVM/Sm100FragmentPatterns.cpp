//===- Sm100FragmentPatterns.cpp - fragments one row per thread -----------===//
//
// On sm_100a a !flamia.frag<128xNxf32> is a 128-row tile held by the 128
// threads of a warpgroup, thread t (t = tid % 128) holding row t: the lane
// of tensor memory its warp reaches, 32 (t / 32) + t % 32, which is where
// an M = 128 tcgen05.mma puts row t of D (PTX ISA 9.0, 9.7.16.10.5 "Layout
// D"). Row reductions need no shuffles. A !flamia.rows<128xf32> is the
// thread's one row value. Narrow fragments (bf16, f8E4M3FN) pack 2 or 4
// consecutive columns into a 32-bit register, the lower column in the low
// bits, which is the layout tcgen05.mma reads for A in tensor memory.
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"
#include "Patterns.h"

#include "flamia/Dialect/FlamiaOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::flamia;

namespace {

/// `v` through a side-effecting move, so that its computation cannot be
/// moved past the tensor-memory and barrier operations that follow.
Value pinned(Emitter &e, Value v) {
  auto asmOp = LLVM::InlineAsmOp::create(
      e.b, e.loc, e.f32(), ValueRange{v}, "mov.b32 $0, $1;", "=f,f",
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::TailCallKind::None,
      LLVM::AsmDialectAttr::get(e.b.getContext(), LLVM::AsmDialect::AD_ATT),
      ArrayAttr());
  return asmOp.getResult(0);
}

/// The thread's row of the warpgroup's tile.
Value rowOfThread(Emitter &e) { return e.urem(e.tid(), e.i32c(128)); }

struct RowsFillLowering : OpConversionPattern<RowsFillOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RowsFillOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter e(rewriter, op.getLoc());
    Type type = getTypeConverter()->convertType(op.getResult().getType());
    rewriter.replaceOp(op, e.pack(type, {e.f32c(op.getValue().convertToDouble())}));
    return success();
  }
};

struct FragMaskLowering : OpConversionPattern<FragMaskOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(FragMaskOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter e(rewriter, op.getLoc());
    SmallVector<Value> s = e.unpack(adaptor.getScores());
    Value ninf = e.f32c(-std::numeric_limits<float>::infinity());
    Value query = e.add(adaptor.getQueryBase(), rowOfThread(e));
    // Keys at or past the limit, and (causal) past the query: a per-row
    // bound on the column, min(limit, query + 1) - key_base.
    Value bound = adaptor.getKeyLimit();
    if (op.getCausal()) {
      Value next = e.add(query, e.i32c(1));
      bound = e.select(e.icmp(LLVM::ICmpPredicate::slt, next, bound), next, bound);
    }
    Value firstMasked = e.sub(bound, adaptor.getKeyBase());
    for (int64_t i = 0, n = s.size(); i < n; ++i)
      s[i] = e.select(e.icmp(LLVM::ICmpPredicate::sge, e.i32c(i), firstMasked),
                      ninf, s[i]);
    rewriter.replaceOp(op, e.pack(adaptor.getScores().getType(), s));
    return success();
  }
};

struct SoftmaxUpdateLowering : OpConversionPattern<SoftmaxUpdateOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SoftmaxUpdateOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter e(rewriter, op.getLoc());
    SmallVector<Value> s = e.unpack(adaptor.getScores());
    Value scale = adaptor.getScaleLog2();
    // t = fl32(s * scale_log2): the contract's log2-domain score (as on
    // sm_90a, docs/numerics.md).
    Value rowMax = e.f32c(-std::numeric_limits<float>::infinity());
    for (Value &v : s) {
      v = e.fmul(v, scale);
      rowMax = e.fmax(rowMax, v);
    }
    Value oldMax = e.extract(adaptor.getMax(), 0);
    Value oldSum = e.extract(adaptor.getSum(), 0);
    Value newMax = e.fmax(oldMax, rowMax);
    Value alpha = e.exp2(e.fsub(oldMax, newMax));
    Value rowSum = e.f32c(0);
    for (Value &v : s) {
      v = e.exp2(e.fsub(v, newMax));
      rowSum = e.fadd(rowSum, v);
    }
    // Pin the row sum here: LLVM would otherwise sink the 128 additions to
    // the loop latch, keeping every p alive next to the rounded copy of P
    // (twice the registers of a row, and spills).
    Value newSum = pinned(e, e.fadd(e.fmul(oldSum, alpha), rowSum));
    Type rowsType = adaptor.getMax().getType();
    rewriter.replaceOp(op, {e.pack(adaptor.getScores().getType(), s),
                            e.pack(rowsType, {newMax}), e.pack(rowsType, {newSum}),
                            e.pack(rowsType, {alpha})});
    return success();
  }
};

/// P * 2^k as E4M3 codes (4 per register) or as bf16 (2 per register; E4M3
/// values held in bf16 where `quantized`).
struct FragQuantizeLowering : OpConversionPattern<FragQuantizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(FragQuantizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter e(rewriter, loc);
    PrecisionAttr precision = op.getPrecision();
    if (!isa<Float8E4M3FNType>(precision.getElementType()))
      return op.emitOpError() << "sm_100a lowering: P rounds to f8E4M3FN only";
    Type outType = getTypeConverter()->convertType(op.getResult().getType());
    SmallVector<Value> p = e.unpack(adaptor.getP());
    Value factor = e.f32c(std::ldexp(1.0, *precision.getFixedScale()));
    for (Value &v : p)
      v = e.fmul(v, factor);
    if (isa<Float8E4M3FNType>(op.getResult().getType().getElementType())) {
      // The verifier requires `quantized`: codes only.
      SmallVector<Value> words;
      for (size_t i = 0; i + 3 < p.size(); i += 4) {
        Value lo = e.zext(e.i32(), e.bitcast(e.i16(), e.cvtToE4M3x2(p[i + 1], p[i])));
        Value hi = e.zext(e.i32(), e.bitcast(e.i16(), e.cvtToE4M3x2(p[i + 3], p[i + 2])));
        words.push_back(e.bor(lo, e.shl(hi, e.i32c(16))));
      }
      rewriter.replaceOp(op, e.pack(outType, words));
      return success();
    }
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
    Value f = e.extract(adaptor.getFactors(), 0);
    for (Value &x : v)
      x = e.fmul(x, f);
    rewriter.replaceOp(op, e.pack(adaptor.getFrag().getType(), v));
    return success();
  }
};

/// O = acc / (2^k l) as bf16 into o[q_start + row, head, :] with 16-byte
/// stores (a thread writes its whole row); LSE = (m + log2 l) ln 2 into
/// lse[head, q_start + row]; rows at or past q_rows are not written.
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
    if (static_cast<int64_t>(acc.size()) != d || d % 8 != 0)
      return op.emitOpError() << "sm_100a lowering: the accumulator holds a "
                                 "whole row of O ("
                              << d << " columns), got " << acc.size();
    Value row = e.add(adaptor.getRowBase(), rowOfThread(e));
    Value valid = e.icmp(LLVM::ICmpPredicate::slt, row, adaptor.getQRows());
    Value m = e.extract(adaptor.getMax(), 0);
    Value l = e.extract(adaptor.getSum(), 0);
    Value factor = e.f32c(std::ldexp(1.0, op.getFixedScale()));
    auto ifOp = scf::IfOp::create(rewriter, loc, valid, /*withElse=*/false);
    OpBuilder tb = ifOp.getThenBodyBuilder();
    Emitter te(tb, loc);
    Value inv = te.fdiv(te.f32c(1.0), te.fmul(l, factor));
    Value token = te.add(adaptor.getQStart(), row);
    Value rowPtr = te.elementPtr(
        adaptor.getO(),
        te.packedIndex(token, adaptor.getHead(), te.i32c(0), heads, d), 2);
    auto v4 = VectorType::get({4}, te.i32());
    for (int64_t c = 0; c < d; c += 8) {
      Value vec = te.undef(v4);
      for (int64_t j = 0; j < 4; ++j) {
        Value lo = te.fmul(acc[c + 2 * j], inv), hi = te.fmul(acc[c + 2 * j + 1], inv);
        vec = LLVM::InsertElementOp::create(tb, loc, vec, te.cvtToBF16x2(hi, lo),
                                            te.i32c(j));
      }
      te.store(vec, te.gep(rowPtr, 2 * c), 16);
    }
    Value lse = te.fmul(te.fadd(m, te.log2(l)), te.f32c(0.6931471805599453));
    te.store(lse, te.elementPtr(adaptor.getLse(), te.headMajorIndex(adaptor.getHead(), adaptor.getNumTokens(), token), 4), 4);
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::flamia::populateSm100FragmentPatterns(
    const FlamiaTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<RowsFillLowering, FragMaskLowering, SoftmaxUpdateLowering,
               FragQuantizeLowering, FragScaleRowsLowering, AttnStoreLowering>(
      converter, patterns.getContext());
}
