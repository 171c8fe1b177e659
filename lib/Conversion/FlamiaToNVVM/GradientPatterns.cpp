//===- GradientPatterns.cpp - the backward's fragment ops on any target ---===//
//
// The fragment ops of the backward programs, written once over the
// target's FragmentLayout like FragmentPatterns.cpp: P and dS from the
// recomputed scores (flamia.softmax.grad), dS quantized in 32-column blocks
// (flamia.frag.block_quantize) and the gradient epilogue
// (flamia.grad.store); and D = rowsum(dO * O) for the gradient quantizer
// (flamia.row_dot).
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"
#include "FragmentLayout.h"
#include "MxScale.h"
#include "Patterns.h"
#include "TargetInfo.h"

#include "flamia/Dialect/FlamiaOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>
#include <map>

using namespace mlir;
using namespace flamia;

namespace {

constexpr float kLog2e = 1.4426950408889634f;

/// Where the per-query values of a score fragment's entries are: the
/// entry's query (its row slot, or with `transposed` its column slot: queries
/// are columns) at token doc_start + query_base + query of the [H, T] f32
/// tensors. Masked form: a query at or past query_limit reads the
/// document's first token (a valid address) and `valid` says so. Unmasked
/// form (every query of the tile valid): constant offsets from the
/// thread's first query, no test. One load per slot, shared by the entries
/// of the slot.
class QueryAddresses {
public:
  /// `arrays`: the tensors that will be read (unmasked: the address of the
  /// thread's first query in each is computed here, once).
  QueryAddresses(Emitter &e, const FragmentLayout &l, bool transposed,
                 bool unmasked, Value head, Value docStart, Value queryBase,
                 Value queryLimit, Value numTokens, ArrayRef<Value> arrays)
      : e(e), l(l), pos(l.position(e)), transposed(transposed),
        unmasked(unmasked), head(head), docStart(docStart),
        queryBase(queryBase), queryLimit(queryLimit), numTokens(numTokens) {
    if (unmasked) {
      Value first = transposed ? l.column(e, pos, 0) : l.row(e, pos, 0);
      Value firstIndex = index(e.add(queryBase, first));
      for (Value array : arrays)
        firstAddress[array] = e.elementPtr(array, firstIndex, 4);
    }
  }

  int64_t slotOf(int64_t i) const {
    return transposed ? l.columnSlotOf(i) : l.rowSlotOf(i);
  }

  /// Whether entry i's query is below query_limit (null when unmasked).
  Value valid(int64_t i) { return unmasked ? Value() : slot(i).valid; }

  /// Entry i's query's value in `base` (an [H, T] f32 tensor).
  Value load(Value base, int64_t i) {
    Value ptr;
    if (unmasked) {
      int64_t offset = transposed ? l.columnOffsetOf(i)
                                  : l.rowOffsetOf(l.rowSlotOf(i));
      ptr = e.gep(firstAddress.lookup(base), 4 * offset);
    } else {
      ptr = e.elementPtr(base, slot(i).index, 4);
    }
    return e.load(e.f32(), ptr, 4);
  }

  struct Slot {
    Value valid, index;
  };
  /// The masked form's test and (clamped) [H, T] index of the
  /// document-local query `q`: an invalid query reads the document's first
  /// token (a valid address) and its values are never used.
  Slot ofQuery(Value q) const {
    Value ok = e.icmp(LLVM::ICmpPredicate::slt, q, queryLimit);
    return Slot{ok, index(e.select(ok, q, e.i32c(0)))};
  }

private:
  /// The masked form's test and index of entry i's query, once per slot.
  const Slot &slot(int64_t i) {
    auto it = slots.find(slotOf(i));
    if (it != slots.end())
      return it->second;
    Value local = transposed ? l.column(e, pos, i)
                             : l.row(e, pos, l.rowSlotOf(i));
    return slots.emplace(slotOf(i), ofQuery(e.add(queryBase, local)))
        .first->second;
  }
  Value index(Value q) const {
    return e.headMajorIndex(head, numTokens, e.add(docStart, q));
  }

  Emitter &e;
  const FragmentLayout &l;
  ThreadPosition pos;
  bool transposed, unmasked;
  Value head, docStart, queryBase, queryLimit, numTokens;
  llvm::DenseMap<Value, Value> firstAddress;
  std::map<int64_t, Slot> slots;
};

/// P = exp2(s * c - lse * log2(e)) and dS = P (dp - delta) per entry, both
/// 0 where s is -inf (masked) or the entry's query is past the limit. The
/// per-query values are loaded once per query a thread holds: per row slot,
/// or (transposed: queries are columns) per column slot; LSE not at all
/// when flamia.frag.load_lse2 loaded it before (`preloaded`).
///
/// An `unmasked` tile (every query valid, no entry masked) needs neither
/// test: the exponential and the product are the whole per-entry work, and
/// the values are read at constant offsets from the address of the
/// thread's first query. With queries as columns that is 16 columns a
/// thread at N = 64 on sm_90a; the masked form computes, checks and
/// clamps each column's token index (about 7 instructions a load pair) and
/// keeps a predicate per column alive until dS.
struct SoftmaxGradLowering : FragmentPattern<SoftmaxGradOp> {
  using FragmentPattern::FragmentPattern;
  LogicalResult
  matchAndRewrite(SoftmaxGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter e(rewriter, op.getLoc());
    const FragmentLayout &l = layout();
    SmallVector<Value> s = e.unpack(adaptor.getScores());
    SmallVector<Value> dp = e.unpack(adaptor.getDp());
    SmallVector<Value> preloaded;
    if (adaptor.getLse2())
      preloaded = e.unpack(adaptor.getLse2());
    bool transposed = op.getTransposed();
    const bool unmasked = op.getUnmasked();
    // -LSE_i log2(e), the addend of the exponent's FFMA.
    struct QueryValues {
      Value valid, negLse2, delta;
    };
    std::map<int64_t, QueryValues> bySlot;
    SmallVector<Value> arrays{adaptor.getDelta()};
    if (preloaded.empty())
      arrays.insert(arrays.begin(), adaptor.getLse());
    QueryAddresses at(e, l, transposed, unmasked, adaptor.getHead(),
                      adaptor.getDocStart(), adaptor.getQueryBase(),
                      adaptor.getQueryLimit(), adaptor.getNumTokens(), arrays);
    // One row per thread with queries as columns (sm_100a's dK/dV kernel):
    // every thread needs every column's values. Lane l of each warp loads
    // those of column 32 g + l, and column i's come from lane i % 32 by a
    // shuffle: two loads and two shuffles per 32 columns instead of a load
    // per column and value, and no registers held for all of them.
    if (transposed && l.holdsWholeRows()) {
      if (!preloaded.empty())
        return op.emitOpError() << target().getName()
                                << " lowering: a preloaded LSE needs a "
                                   "layout with a row spread over threads";
      int64_t cols = static_cast<int64_t>(s.size());
      Value laneId = e.lane();
      std::map<int64_t, std::pair<Value, Value>> byGroup;
      for (int64_t i = 0; i < cols; ++i) {
        int64_t group = i / 32;
        if (!byGroup.count(group)) {
          Value index = at.ofQuery(e.add(adaptor.getQueryBase(),
                                         e.add(laneId, e.i32c(32 * group))))
                            .index;
          Value lse = e.load(e.f32(), e.elementPtr(adaptor.getLse(), index, 4), 4);
          Value delta = e.load(e.f32(), e.elementPtr(adaptor.getDelta(), index, 4), 4);
          byGroup[group] = {e.fmul(lse, e.f32c(-kLog2e)), delta};
        }
        Value query = e.add(adaptor.getQueryBase(), e.i32c(i));
        Value valid =
            e.icmp(LLVM::ICmpPredicate::slt, query, adaptor.getQueryLimit());
        auto [negLse2, delta] = byGroup[group];
        bySlot.emplace(i, QueryValues{valid, e.shflIdx(negLse2, e.i32c(i % 32)),
                                      e.shflIdx(delta, e.i32c(i % 32))});
      }
    }
    auto valuesOf = [&](int64_t i) -> const QueryValues & {
      int64_t slot = at.slotOf(i);
      auto it = bySlot.find(slot);
      if (it != bySlot.end())
        return it->second;
      Value valid = at.valid(i);
      Value lse = preloaded.empty() ? at.load(adaptor.getLse(), i) : Value();
      Value delta = at.load(adaptor.getDelta(), i);
      // Negating the constant is exact: -fl32(LSE log2 e) either way.
      Value negLse2 =
          lse ? e.fmul(lse, e.f32c(-kLog2e)) : e.fneg(preloaded[i]);
      return bySlot.emplace(slot, QueryValues{valid, negLse2, delta})
          .first->second;
    };
    Value ninf = e.f32c(-std::numeric_limits<float>::infinity());
    Value zero = e.f32c(0);
    SmallVector<Value> p(s.size()), ds(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
      const QueryValues &qv = valuesOf(static_cast<int64_t>(i));
      // As the forward: the exponent's argument in one FFMA.
      Value pi = e.exp2(e.fma(s[i], adaptor.getScaleLog2(), qv.negLse2));
      Value dsi = e.fmul(pi, e.fsub(dp[i], qv.delta));
      if (unmasked) {
        p[i] = pi;
        ds[i] = dsi;
        continue;
      }
      Value keep = e.band(qv.valid,
                          e.fcmp(LLVM::FCmpPredicate::une, s[i], ninf));
      p[i] = e.select(keep, pi, zero);
      ds[i] = e.select(keep, dsi, zero);
    }
    Type type = adaptor.getScores().getType();
    rewriter.replaceOp(op, {e.pack(type, p), e.pack(type, ds)});
    return success();
  }
};

/// fl32(lse * log2(e)) per entry, loaded as flamia.softmax.grad would load
/// it (one load per query slot), for softmax.grad's `preloaded` operand.
struct FragLoadLse2Lowering : FragmentPattern<FragLoadLse2Op> {
  using FragmentPattern::FragmentPattern;
  LogicalResult
  matchAndRewrite(FragLoadLse2Op op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter e(rewriter, op.getLoc());
    const FragmentLayout &l = layout();
    if (l.holdsWholeRows())
      return op.emitOpError() << target().getName()
                              << " lowering: a whole row per thread; "
                                 "softmax.grad loads LSE itself there";
    Type type = getTypeConverter()->convertType(op.getResult().getType());
    int64_t n = cast<LLVM::LLVMStructType>(type).getBody().size();
    QueryAddresses at(e, l, op.getTransposed(), op.getUnmasked(),
                      adaptor.getHead(), adaptor.getDocStart(),
                      adaptor.getQueryBase(), adaptor.getQueryLimit(),
                      adaptor.getNumTokens(), {adaptor.getLse()});
    std::map<int64_t, Value> bySlot;
    SmallVector<Value> values;
    for (int64_t i = 0; i < n; ++i) {
      auto [it, fresh] = bySlot.try_emplace(at.slotOf(i));
      if (fresh)
        it->second = e.fmul(at.load(adaptor.getLse(), i), e.f32c(kLog2e));
      values.push_back(it->second);
    }
    rewriter.replaceOp(op, e.pack(type, values));
    return success();
  }
};

/// The E8M0 scale of every (row slot, 32-column block) of the fragment
/// values `x`: the block's amax (NaN counted as +inf), combined across the
/// threads that hold the row. A thread's part of a block is reduced with
/// the NaN-propagating maximum (PTX max.NaN) and its NaN turned into +inf
/// once, before the reduction across threads (which keeps numbers over
/// NaN), instead of a test per element.
std::map<std::pair<int64_t, int64_t>, MxScale>
blockScalesOf(Emitter &e, const FragmentLayout &l, ArrayRef<Value> x) {
  const int64_t block = 32;
  Value inf = e.f32c(std::numeric_limits<float>::infinity());
  std::map<std::pair<int64_t, int64_t>, Value> amax;
  for (size_t i = 0; i < x.size(); ++i) {
    auto key = std::make_pair(l.rowSlotOf(i), l.columnGroupOf(i, block));
    Value a = LLVM::FAbsOp::create(e.b, e.loc, x[i]);
    auto it = amax.find(key);
    amax[key] = it == amax.end() ? a : e.fmaxNaN(it->second, a);
  }
  std::map<std::pair<int64_t, int64_t>, MxScale> scales;
  for (auto &[key, a] : amax) {
    Value part = e.select(e.fcmp(LLVM::FCmpPredicate::uno, a, a), inf, a);
    scales.emplace(key, mxScaleOf(e, l.reduceRow(e, part, /*isMax=*/true)));
  }
  return scales;
}

/// dS in blocks of 32 columns per row: the block's amax (combined across the
/// threads holding the row), its E8M0 scale, E4M3 elements, dequantized to
/// bf16 pairs; bf16 rounding on the safe path.
struct FragBlockQuantizeLowering : FragmentPattern<FragBlockQuantizeOp> {
  using FragmentPattern::FragmentPattern;
  LogicalResult
  matchAndRewrite(FragBlockQuantizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter e(rewriter, loc);
    const FragmentLayout &l = layout();
    Type outType = getTypeConverter()->convertType(op.getResult().getType());
    SmallVector<Value> x = e.unpack(adaptor.getValues());
    const int64_t block = 32;
    auto ifOp = scf::IfOp::create(rewriter, loc, TypeRange{outType},
                                  adaptor.getQuantized(), /*withElse=*/true);
    {
      OpBuilder tb = ifOp.getThenBodyBuilder();
      Emitter te(tb, loc);
      // Block (row slot, column group) of every element, and its scale.
      std::map<std::pair<int64_t, int64_t>, MxScale> scales =
          blockScalesOf(te, l, x);
      SmallVector<Value> words;
      for (size_t i = 0; i + 1 < x.size(); i += 2) {
        const MxScale &sc =
            scales.at({l.rowSlotOf(i), l.columnGroupOf(i, block)});
        Value f8 = te.cvtToE4M3x2(te.fmul(x[i + 1], sc.inverse),
                                  te.fmul(x[i], sc.inverse));
        auto [lo, hi] = te.cvtE4M3x2ToF32(f8);
        Value packed = te.cvtToBF16x2(te.fmul(hi, sc.factor),
                                      te.fmul(lo, sc.factor));
        words.push_back(te.select(sc.nonFinite, te.i32c(0x7FC07FC0), packed));
      }
      scf::YieldOp::create(tb, loc, te.pack(outType, words));
    }
    {
      OpBuilder eb = ifOp.getElseBodyBuilder();
      Emitter ee(eb, loc);
      SmallVector<Value> words;
      for (size_t i = 0; i + 1 < x.size(); i += 2)
        words.push_back(ee.cvtToBF16x2(x[i + 1], x[i]));
      scf::YieldOp::create(eb, loc, ee.pack(outType, words));
    }
    rewriter.replaceOp(op, ifOp.getResult(0));
    return success();
  }
};

/// dS in blocks of 32 columns per row as E4M3 codes for a block-scaled MMA
/// (sm_100a): the scales as in flamia.frag.block_quantize, the codes packed
/// four per word, a non-finite block's codes NaN (0x7F); each block's scale
/// byte into the 128x4 scale-factor tile at (row, k_block + b), then the
/// async proxy fenced against the generic stores (tcgen05.cp reads them).
struct FragMxQuantizeLowering : FragmentPattern<FragMxQuantizeOp> {
  using FragmentPattern::FragmentPattern;
  LogicalResult
  matchAndRewrite(FragMxQuantizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter e(rewriter, loc);
    const FragmentLayout &l = layout();
    if (!l.holdsWholeRows())
      return op.emitOpError()
             << target().getName()
             << " lowering: E4M3 codes with a scale-factor tile need one row "
                "per thread (a tensor-memory fragment)";
    Type outType = getTypeConverter()->convertType(op.getCodes().getType());
    SmallVector<Value> x = e.unpack(adaptor.getValues());
    std::map<std::pair<int64_t, int64_t>, MxScale> scales =
        blockScalesOf(e, l, x);
    SmallVector<Value> words;
    for (size_t i = 0; i + 3 < x.size(); i += 4) {
      const MxScale &sc = scales.at({0, l.columnGroupOf(i, 32)});
      auto pair = [&](size_t j) {
        return e.zext(e.i32(), e.bitcast(e.i16(),
                                         e.cvtToE4M3x2(
                                             e.fmul(x[j + 1], sc.inverse),
                                             e.fmul(x[j], sc.inverse))));
      };
      Value word = e.bor(pair(i), e.shl(pair(i + 2), e.i32c(16)));
      words.push_back(e.select(sc.nonFinite, e.i32c(0x7F7F7F7F), word));
    }
    // Row r's K-block kb: byte (r % 32) * 16 + (r / 32) * 4 + kb of the
    // stage's tile (ScaleFactorLayout.h).
    Value row = l.position(e).firstRow;
    Value tile = e.gep(adaptor.getScales(),
                       e.mul(adaptor.getStage(), e.i32c(512)));
    Value rowBytes = e.add(e.mul(e.urem(row, e.i32c(32)), e.i32c(16)),
                           e.mul(e.udiv(row, e.i32c(32)), e.i32c(4)));
    for (auto &[key, sc] : scales) {
      Value kb = e.add(adaptor.getKBlock(), e.i32c(key.second));
      e.store(sc.byte, e.gep(tile, e.add(rowBytes, kb)), 1);
    }
    NVVM::FenceProxyOp::create(
        rewriter, loc,
        NVVM::ProxyKindAttr::get(getContext(), NVVM::ProxyKind::async_shared),
        NVVM::SharedSpaceAttr::get(getContext(), NVVM::SharedSpace::shared_cta));
    rewriter.replaceOp(op, e.pack(outType, words));
    return success();
  }
};

/// acc * factor into out[row_start + row, head, :] (bf16 or f32), rows at
/// or past valid_rows not written.
struct GradStoreLowering : FragmentPattern<GradStoreOp> {
  using FragmentPattern::FragmentPattern;
  LogicalResult
  matchAndRewrite(GradStoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter e(rewriter, loc);
    const FragmentLayout &l = layout();
    GlobalType outType = op.getOut().getType();
    int64_t d = outType.getShape()[2];
    Value heads = e.headCount(adaptor.getHeads(), outType.getShape()[1]);
    bool asF32 = outType.getElementType().isF32();
    SmallVector<Value> acc = e.unpack(adaptor.getAcc());
    ThreadPosition pos = l.position(e);
    for (int64_t r = 0; r < l.rowsPerThread(); ++r) {
      Value rowInTile = e.add(adaptor.getRowBase(), l.row(e, pos, r));
      Value valid =
          e.icmp(LLVM::ICmpPredicate::slt, rowInTile, adaptor.getValidRows());
      auto ifOp = scf::IfOp::create(rewriter, loc, valid, /*withElse=*/false);
      OpBuilder tb = ifOp.getThenBodyBuilder();
      Emitter te(tb, loc);
      Value token = te.add(adaptor.getRowStart(), rowInTile);
      Value firstColumn =
          adaptor.getColumns() ? adaptor.getColumns() : te.i32c(0);
      Value rowElement =
          te.packedIndex(token, adaptor.getHead(), firstColumn, heads, d);
      if (asF32)
        l.storeRowAsF32(te, pos, acc, r, adaptor.getFactor(), adaptor.getOut(),
                        rowElement);
      else
        l.storeRowAsBF16(te, pos, acc, r, adaptor.getFactor(),
                         adaptor.getOut(), rowElement);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// The f64 value of two shuffled halves (a butterfly shuffle of an f64).
Value shflXorF64(Emitter &e, Value v, int64_t mask) {
  Value bits = e.bitcast(e.i64(), v);
  Value lo = e.trunc(e.i32(), bits);
  Value hi = e.trunc(e.i32(), e.lshr(bits, e.i64c(32)));
  lo = e.shflXor(lo, mask);
  hi = e.shflXor(hi, mask);
  Value joined = e.bor(e.zext(e.i64(), lo), e.shl(e.zext(e.i64(), hi), e.i64c(32)));
  return e.bitcast(e.f64(), joined);
}

/// An f64 sum carried as an unevaluated pair hi + lo (hi = fl64(hi + lo)).
struct DoubleDouble {
  Value hi, lo;
};

/// Knuth's TwoSum: s = fl64(a + b) and the exact error a + b - s (no
/// condition on the magnitudes; nothing here is reassociated or contracted
/// into a rounding FMA: the only products are exact).
DoubleDouble twoSum(Emitter &e, Value a, Value b) {
  Value s = e.fadd(a, b);
  Value bb = e.fsub(s, a);
  Value aPart = e.fsub(a, e.fsub(s, bb));
  Value bPart = e.fsub(b, bb);
  return {s, e.fadd(aPart, bPart)};
}

DoubleDouble addDD(Emitter &e, DoubleDouble x, DoubleDouble y) {
  DoubleDouble s = twoSum(e, x.hi, y.hi);
  Value lo = e.fadd(x.lo, y.lo);
  return {s.hi, e.fadd(s.lo, lo)};
}

/// fl32(hi + lo): hi + lo rounded to odd in f64 (hi, moved one ulp toward
/// the exact value and so made odd, when lo is not zero and hi is even),
/// then to nearest even in f32. Rounding to odd with 29 more bits than the
/// target makes the second rounding the correct one, ties included.
Value roundToF32(Emitter &e, DoubleDouble x) {
  DoubleDouble n = twoSum(e, x.hi, x.lo);
  Value bits = e.bitcast(e.i64(), n.hi);
  Value even =
      e.icmp(LLVM::ICmpPredicate::eq, e.band(bits, e.i64c(1)), e.i64c(0));
  Value inexact = e.fcmp(LLVM::FCmpPredicate::one, n.lo, e.f64c(0));
  Value finite =
      e.fcmp(LLVM::FCmpPredicate::olt, LLVM::FAbsOp::create(e.b, e.loc, n.hi),
             e.f64c(std::numeric_limits<double>::infinity()));
  // lo of hi's sign: the exact value lies beyond hi (one ulp up in
  // magnitude), else below it.
  Value hiSign = e.lshr(bits, e.i64c(63));
  Value loSign = e.lshr(e.bitcast(e.i64(), n.lo), e.i64c(63));
  Value sameSign = e.icmp(LLVM::ICmpPredicate::eq, hiSign, loSign);
  Value up = e.add(bits, e.i64c(1));
  Value down = e.sub(bits, e.i64c(1));
  Value moved = e.select(sameSign, up, down);
  Value adjust = e.band(e.band(even, inexact), finite);
  Value odd = e.bitcast(e.f64(), e.select(adjust, moved, bits));
  return LLVM::FPTruncOp::create(e.b, e.loc, e.f32(), odd);
}

/// out[head, t] = fl32(sum_d a b) for the CTA's rows: warp w takes rows w,
/// w + 4, ...; lane l the D / 32 consecutive channels from l * D / 32. The
/// products of two bf16 are exact in f64, and they are summed as f64 pairs
/// (TwoSum), the lanes' pairs combined by a butterfly in a fixed order;
/// lane 0 rounds the pair once to f32. That is the reference's fl32 of the
/// exact sum whenever the pair holds the sum exactly: the pairs' low parts
/// (multiples of the smallest term's last bit, each below an ulp of the
/// partial sum) add exactly while the largest partial sum is within 2^98 of
/// that bit, i.e. for terms within about 2^80 of each other in magnitude.
/// A plain f64 sum was exact only within 2^37, which outlier rows exceed
/// (H200 run 47: one delta of 16780 one ulp off at D = 64).
struct RowDotLowering : OpConversionPattern<RowDotOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RowDotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter e(rewriter, loc);
    GlobalType aType = op.getA().getType();
    int64_t d = aType.getShape()[2];
    Value heads = e.headCount(adaptor.getHeads(), aType.getShape()[1]);
    if (d % 64 != 0)
      return op.emitOpError() << "head dim " << d
                              << " is not implemented (a multiple of 64)";
    int64_t perLane = d / 32; // 2 or 4 bf16: one or two 32-bit words
    Value tid = e.tid();
    Value warp = e.udiv(tid, e.i32c(32));
    Value lane = e.urem(tid, e.i32c(32));
    for (int64_t j = 0; j < 8; ++j) {
      Value row = e.add(warp, e.i32c(4 * j));
      Value valid = e.icmp(LLVM::ICmpPredicate::slt, row, adaptor.getLength());
      Value clamped = e.select(valid, row, e.i32c(0));
      Value token = e.add(adaptor.getStart(), clamped);
      Value elem = e.packedIndex(token, adaptor.getHead(),
                                 e.mul(lane, e.i32c(perLane)), heads, d);
      DoubleDouble sum{e.f64c(0), e.f64c(0)};
      for (int64_t w = 0; w < perLane / 2; ++w) {
        Value aw = e.load(e.i32(), e.gep(e.elementPtr(adaptor.getA(), elem, 2), 4 * w), 4);
        Value bw = e.load(e.i32(), e.gep(e.elementPtr(adaptor.getB(), elem, 2), 4 * w), 4);
        for (int64_t half = 0; half < 2; ++half) {
          auto widen = [&](Value word) {
            Value bits = half == 0 ? e.shl(word, e.i32c(16))
                                   : e.band(word, e.i32c(0xFFFF0000));
            return LLVM::FPExtOp::create(rewriter, loc, e.f64(),
                                         e.bitcast(e.f32(), bits))
                .getResult();
          };
          DoubleDouble t = twoSum(e, sum.hi, e.fmul(widen(aw), widen(bw)));
          sum = {t.hi, e.fadd(sum.lo, t.lo)};
        }
      }
      for (int64_t m : {16, 8, 4, 2, 1})
        sum =
            addDD(e, sum, {shflXorF64(e, sum.hi, m), shflXorF64(e, sum.lo, m)});
      Value writes = e.band(valid, e.icmp(LLVM::ICmpPredicate::eq, lane, e.i32c(0)));
      auto ifOp = scf::IfOp::create(rewriter, loc, writes, /*withElse=*/false);
      OpBuilder tb = ifOp.getThenBodyBuilder();
      Emitter te(tb, loc);
      Value f = roundToF32(te, sum);
      Value index = te.headMajorIndex(adaptor.getHead(), adaptor.getNumTokens(), token);
      te.store(f, te.elementPtr(adaptor.getOut(), index, 4), 4);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void flamia::populateGradientPatterns(const FlamiaTypeConverter &converter,
                                      RewritePatternSet &patterns) {
  patterns.add<SoftmaxGradLowering, FragLoadLse2Lowering,
               FragBlockQuantizeLowering,
               FragMxQuantizeLowering,
               GradStoreLowering, RowDotLowering>(converter,
                                                  patterns.getContext());
}
