//===- FragmentPatterns.cpp - fragment ops on any target ------------------===//
//
// The fragment ops that are the same computation on every target: fill,
// zero, masking, the online-softmax update, P rounding, row scaling and the
// epilogue. Each is written once over the target's FragmentLayout (which
// rows a thread holds, the column of each element, how a row is reduced and
// stored); the MMAs and tensor memory are in the target files.
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"
#include "FragmentLayout.h"
#include "Patterns.h"
#include "TargetInfo.h"

#include "flamia/Dialect/FlamiaOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace flamia;

namespace {

/// The values of a !flamia.rows, one per row slot of the thread.
SmallVector<Value> rowValues(Emitter &e, Value rows, int64_t count) {
  SmallVector<Value> values;
  for (int64_t r = 0; r < count; ++r)
    values.push_back(e.extract(rows, r));
  return values;
}

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

struct FragZeroLowering : FragmentPattern<FragZeroOp> {
  using FragmentPattern::FragmentPattern;
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

struct RowsFillLowering : FragmentPattern<RowsFillOp> {
  using FragmentPattern::FragmentPattern;
  LogicalResult
  matchAndRewrite(RowsFillOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter e(rewriter, op.getLoc());
    Type type = getTypeConverter()->convertType(op.getResult().getType());
    Value v = e.f32c(op.getValue().convertToDouble());
    rewriter.replaceOp(op, e.pack(type, SmallVector<Value>(
                                            layout().rowsPerThread(), v)));
    return success();
  }
};

/// Scores of keys at or past the limit, and (causal) past the query, become
/// -inf; with `transposed` (rows are keys, columns queries), scores of
/// queries at or past the limit, and (causal) before the key.
///
/// With keys as columns, an element's column is column(0) plus a constant,
/// columnOffsetOf(i), so the test is one of that constant against a bound
/// computed once per row slot: key >= limit or key > query is key >=
/// min(limit, query + 1), i.e. offset >= min(limit, query + 1) - key_base -
/// column(0). That is one compare and one select per element instead of a
/// key index, two compares and two selects, with the same -inf entries: for
/// a row of a real token, query + 1 <= validation::kMaxTokens = 2^31 - 1 and
/// every bound is an exact i32 (only a padding row past a document that ends
/// at token 2^31 - 1 could wrap, and its output is never stored).
struct FragMaskLowering : FragmentPattern<FragMaskOp> {
  using FragmentPattern::FragmentPattern;
  LogicalResult
  matchAndRewrite(FragMaskOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter e(rewriter, op.getLoc());
    const FragmentLayout &l = layout();
    ThreadPosition pos = l.position(e);
    SmallVector<Value> s = e.unpack(adaptor.getScores());
    Value ninf = e.f32c(-std::numeric_limits<float>::infinity());
    if (op.getTransposed()) {
      // Columns are queries. The same rewrite (query >= limit or query <
      // key as offset >= limit - query_base - column(0) or offset < key -
      // query_base - column(0)) made the dK/dV kernels spill more (80 -> 104
      // bytes at D = 128), so each element's query index stays.
      for (int64_t i = 0, n = s.size(); i < n; ++i) {
        Value key = e.add(adaptor.getKeyBase(), l.row(e, pos, l.rowSlotOf(i)));
        Value query = e.add(adaptor.getQueryBase(), l.column(e, pos, i));
        Value masked = e.icmp(LLVM::ICmpPredicate::sge, query, adaptor.getKeyLimit());
        if (op.getCausal())
          masked = e.bor(masked, e.icmp(LLVM::ICmpPredicate::sgt, key, query));
        s[i] = e.select(masked, ninf, s[i]);
      }
      rewriter.replaceOp(op, e.pack(adaptor.getScores().getType(), s));
      return success();
    }
    // column(0) is 0 where a thread holds whole rows: nothing to subtract.
    Value firstColumn = l.holdsWholeRows() ? Value() : l.column(e, pos, 0);
    // Columns are keys: one bound per row slot (one for all without
    // `causal`), min(limit, query + 1) - key_base - column(0), and one
    // compare with a constant per element.
    SmallVector<Value> firstMasked;
    for (int64_t r = 0; r < l.rowsPerThread(); ++r) {
      if (!op.getCausal() && r > 0) {
        firstMasked.push_back(firstMasked.front());
        continue;
      }
      Value bound = adaptor.getKeyLimit();
      if (op.getCausal()) {
        Value query = e.add(adaptor.getQueryBase(), l.row(e, pos, r));
        Value one = e.i32c(1);
        Value next = e.add(query, one);
        bound = e.select(e.icmp(LLVM::ICmpPredicate::slt, next, bound), next,
                         bound);
      }
      Value relative = e.sub(bound, adaptor.getKeyBase());
      firstMasked.push_back(firstColumn ? e.sub(relative, firstColumn)
                                        : relative);
    }
    for (int64_t i = 0, n = s.size(); i < n; ++i)
      s[i] = e.select(e.icmp(LLVM::ICmpPredicate::sge,
                             e.i32c(l.columnOffsetOf(i)),
                             firstMasked[l.rowSlotOf(i)]),
                      ninf, s[i]);
    rewriter.replaceOp(op, e.pack(adaptor.getScores().getType(), s));
    return success();
  }
};

/// One step of the online softmax in the log2 domain (docs/numerics.md):
/// m' = max(m, up32(rowmax s * scale_log2)), alpha = 2^(m - m'),
/// p = 2^fma(s, scale_log2, -m'), l' = l alpha + rowsum p. The exponent's
/// argument is one FFMA per score instead of a multiply and a subtract (the
/// forward 5-8% faster, docs/performance.md run 77). The row maximum is
/// taken over the raw scores (scale_log2 > 0 commutes with max) and scaled
/// rounded up, so the exact s * scale_log2 - m' is <= 0 and every p <= 1,
/// as P's fixed E4M3 scale 2^8 requires; rounded to nearest it could exceed
/// 1, and overflow for rows past 2^31.
struct SoftmaxUpdateLowering : FragmentPattern<SoftmaxUpdateOp> {
  using FragmentPattern::FragmentPattern;
  LogicalResult
  matchAndRewrite(SoftmaxUpdateOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter e(rewriter, op.getLoc());
    const FragmentLayout &l = layout();
    int64_t rows = l.rowsPerThread();
    SmallVector<Value> s = e.unpack(adaptor.getScores());
    Value scale = adaptor.getScaleLog2();
    Value ninf = e.f32c(-std::numeric_limits<float>::infinity());
    SmallVector<Value> rowMax(rows, ninf);
    for (int64_t i = 0, n = s.size(); i < n; ++i)
      rowMax[l.rowSlotOf(i)] = e.fmax(rowMax[l.rowSlotOf(i)], s[i]);
    SmallVector<Value> oldMax = rowValues(e, adaptor.getMax(), rows);
    SmallVector<Value> oldSum = rowValues(e, adaptor.getSum(), rows);
    SmallVector<Value> newMax(rows), addend(rows), alpha(rows),
        rowSum(rows, e.f32c(0));
    // The exponents' addend is -m', or with p_scale = k, k - m' (one
    // rounding per row): p and the sums are then those of P x 2^k, the
    // scale P is rounded with, and flamia.frag.quantize multiplies nothing.
    const int64_t pScale = op.getPScale();
    for (int64_t r = 0; r < rows; ++r) {
      Value tileMax =
          e.fmulUp(l.reduceRow(e, rowMax[r], /*isMax=*/true), scale);
      newMax[r] = e.fmax(oldMax[r], tileMax);
      addend[r] = pScale ? e.fsub(e.f32c(static_cast<double>(pScale)), newMax[r])
                         : e.fneg(newMax[r]);
      alpha[r] = e.exp2(e.fsub(oldMax[r], newMax[r]));
    }
    for (int64_t i = 0, n = s.size(); i < n; ++i) {
      int64_t r = l.rowSlotOf(i);
      s[i] = e.exp2(e.fma(s[i], scale, addend[r]));
      rowSum[r] = e.fadd(rowSum[r], s[i]);
    }
    SmallVector<Value> newSum(rows);
    for (int64_t r = 0; r < rows; ++r) {
      newSum[r] = e.fadd(e.fmul(oldSum[r], alpha[r]),
                         l.reduceRow(e, rowSum[r], /*isMax=*/false));
      // A thread holding whole rows adds up to 128 values per row: pinned
      // here, the sum is not sunk to the loop latch by LLVM, which would
      // keep every p alive next to the rounded copy of P (twice the
      // registers of a row, and spills).
      if (l.holdsWholeRows())
        newSum[r] = pinned(e, newSum[r]);
    }
    Type rowsType = adaptor.getMax().getType();
    rewriter.replaceOp(op, {e.pack(adaptor.getScores().getType(), s),
                            e.pack(rowsType, newMax), e.pack(rowsType, newSum),
                            e.pack(rowsType, alpha)});
    return success();
  }
};

/// P * 2^k rounded to E4M3 where `quantized` (the quantized path) or to
/// bf16 (the safe block), as packed bf16 pairs in the layout of the P V
/// MMA's A operand, or (where the target's MMA reads them) as E4M3 codes
/// four per register, the lower column in the low bits.
struct FragQuantizeLowering : FragmentPattern<FragQuantizeOp> {
  using FragmentPattern::FragmentPattern;
  LogicalResult
  matchAndRewrite(FragQuantizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter e(rewriter, op.getLoc());
    PrecisionAttr precision = op.getPrecision();
    if (!isa<Float8E4M3FNType>(precision.getElementType()))
      return op.emitOpError() << target().getName()
                              << " lowering: P rounds to f8E4M3FN only";
    bool toCodes = isa<Float8E4M3FNType>(op.getResult().getType().getElementType());
    if (toCodes && !target().packsE4M3Fragments())
      return op.emitOpError() << target().getName()
                              << " lowering: P as E4M3 codes is not an MMA "
                                 "operand layout of this target (bf16 only)";
    Type outType = getTypeConverter()->convertType(op.getResult().getType());
    SmallVector<Value> p = e.unpack(adaptor.getP());
    if (!op.getPrescaled()) {
      Value factor = e.f32c(std::ldexp(1.0, *precision.getFixedScale()));
      for (Value &v : p)
        v = e.fmul(v, factor);
    }
    if (toCodes) {
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
    rewriter.replaceOp(op, e.roundPairsToBF16(outType, p,
                                              adaptor.getQuantized(),
                                              op.getNanViaRowSum()));
    return success();
  }
};

struct FragScaleRowsLowering : FragmentPattern<FragScaleRowsOp> {
  using FragmentPattern::FragmentPattern;
  LogicalResult
  matchAndRewrite(FragScaleRowsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter e(rewriter, op.getLoc());
    const FragmentLayout &l = layout();
    auto multiply = [&](Emitter &me) {
      SmallVector<Value> v = me.unpack(adaptor.getFrag());
      SmallVector<Value> f = rowValues(me, adaptor.getFactors(), l.rowsPerThread());
      for (int64_t i = 0, n = v.size(); i < n; ++i)
        v[i] = me.fmul(v[i], f[l.rowSlotOf(i)]);
      return me.pack(adaptor.getFrag().getType(), v);
    };
    if (!op.getSkipOnes()) {
      rewriter.replaceOp(op, multiply(e));
      return success();
    }
    // One vote per warp: if any factor of its rows is not 1.0 (or is NaN,
    // hence `une`), the whole warp multiplies; the branch is warp-uniform.
    Value notOne = e.i1c(false);
    for (Value factor : rowValues(e, adaptor.getFactors(), l.rowsPerThread()))
      notOne = e.bor(notOne, e.fcmp(LLVM::FCmpPredicate::une, factor, e.f32c(1.0)));
    Value warpMultiplies = NVVM::VoteSyncOp::create(
        rewriter, op.getLoc(), e.i1(), e.i32c(-1), notOne, NVVM::VoteSyncKind::any);
    auto ifOp = scf::IfOp::create(rewriter, op.getLoc(),
                                  TypeRange{adaptor.getFrag().getType()},
                                  warpMultiplies, /*withElseRegion=*/true);
    OpBuilder tb = ifOp.getThenBodyBuilder();
    Emitter te(tb, op.getLoc());
    scf::YieldOp::create(tb, op.getLoc(), multiply(te));
    OpBuilder eb = ifOp.getElseBodyBuilder();
    scf::YieldOp::create(eb, op.getLoc(), adaptor.getFrag());
    rewriter.replaceOp(op, ifOp.getResults());
    return success();
  }
};

/// O = acc / (2^k l) as bf16 into o[q_start + row, head, :] (acc / l where
/// l carries 2^k too); LSE = (m + log2 l) ln 2 into lse[head, q_start + row],
/// by one thread per row; rows at or past q_rows are not written.
struct AttnStoreLowering : FragmentPattern<AttnStoreOp> {
  using FragmentPattern::FragmentPattern;
  LogicalResult
  matchAndRewrite(AttnStoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter e(rewriter, loc);
    const FragmentLayout &l = layout();
    auto oType = op.getO().getType();
    int64_t d = oType.getShape()[2];
    Value heads = e.headCount(adaptor.getHeads(), oType.getShape()[1]);
    SmallVector<Value> acc = e.unpack(adaptor.getAcc());
    if (l.holdsWholeRows() &&
        (static_cast<int64_t>(acc.size()) != d * l.rowsPerThread() || d % 8 != 0))
      return op.emitOpError() << target().getName()
                              << " lowering: the accumulator holds a whole "
                                 "row of O ("
                              << d << " columns), got " << acc.size();
    ThreadPosition pos = l.position(e);
    // acc carries 2^k (P's fixed scale); the sum too where sum_prescaled.
    // Both scalings are exact, so LSE takes log2 of the unscaled sum.
    const bool sumScaled = op.getSumPrescaled();
    Value factor =
        sumScaled ? Value() : e.f32c(std::ldexp(1.0, op.getFixedScale()));
    Value unscale =
        sumScaled ? e.f32c(std::ldexp(1.0, -op.getFixedScale())) : Value();
    for (int64_t r = 0; r < l.rowsPerThread(); ++r) {
      Value rowInTile = e.add(adaptor.getRowBase(), l.row(e, pos, r));
      Value valid = e.icmp(LLVM::ICmpPredicate::slt, rowInTile, adaptor.getQRows());
      Value m = e.extract(adaptor.getMax(), r);
      Value sum = e.extract(adaptor.getSum(), r);
      Value inv = e.fdiv(e.f32c(1.0), sumScaled ? sum : e.fmul(sum, factor));
      auto ifOp = scf::IfOp::create(rewriter, loc, valid, /*withElse=*/false);
      OpBuilder tb = ifOp.getThenBodyBuilder();
      Emitter te(tb, loc);
      Value token = te.add(adaptor.getQStart(), rowInTile);
      Value rowElement = te.packedIndex(token, adaptor.getHead(), te.i32c(0), heads, d);
      l.storeRowAsBF16(te, pos, acc, r, inv, adaptor.getO(), rowElement);
      OpBuilder lb = tb;
      if (Value writer = l.isRowWriter(te, pos)) {
        auto lseIf = scf::IfOp::create(tb, loc, writer, /*withElse=*/false);
        lb = lseIf.getThenBodyBuilder();
      }
      Emitter le(lb, loc);
      Value rowSum = sumScaled ? le.fmul(sum, unscale) : sum;
      Value lse = le.fmul(le.fadd(m, le.log2(rowSum)), le.f32c(0.6931471805599453));
      le.store(lse, le.elementPtr(adaptor.getLse(), le.headMajorIndex(adaptor.getHead(), adaptor.getNumTokens(), token), 4), 4);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void flamia::populateFragmentPatterns(const FlamiaTypeConverter &converter,
                                      RewritePatternSet &patterns) {
  patterns.add<FragZeroLowering, RowsFillLowering, FragMaskLowering,
               SoftmaxUpdateLowering, FragQuantizeLowering,
               FragScaleRowsLowering, AttnStoreLowering>(converter,
                                                         patterns.getContext());
}
