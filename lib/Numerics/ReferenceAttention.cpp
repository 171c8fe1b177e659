//===- ReferenceAttention.cpp - The CPU reference of recipe mxfp8 ---------===//
//
// Structure (all work items write disjoint outputs, so the thread count never
// changes a bit):
//   forward     items (query head, document, 64-query chunk); key tiles of
//               `tile` keys, document-local, ascending; online softmax.
//   backward A  items (query head, document, 64-query chunk): recompute the
//               rows of S, P, dP, dS; quantize dS along keys; dQ.
//   backward B  items (kv head, document, key tile): recompute the columns
//               for every query head of the group; quantize dS along
//               queries; dK, dV.
//
//===----------------------------------------------------------------------===//
#include "flamia/Numerics/ReferenceAttention.h"

#include "flamia/Numerics/ExactSum.h"
#include "flamia/Numerics/Formats.h"
#include "flamia/Numerics/Parallel.h"
#include "flamia/Numerics/Quantizer.h"
#include "flamia/Support/Validation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <tuple>

namespace flamia::numerics {

float AttentionInputs::effectiveSoftmaxScale() const {
  if (softmaxScale != 0.0f)
    return softmaxScale;
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(headDim)));
}

Status validateAttentionInputs(const AttentionInputs &in) {
  if (!in.docs)
    return Status::error("no document layout");
  std::string error;
  if (!validation::validateHeads(in.numHeads, in.numKvHeads, error))
    return Status::error(error);
  if (in.numTokens < 0 || in.headDim < 1)
    return Status::error("attention needs T >= 0 and at least one channel");
  if (in.docs->numTokens() != in.numTokens)
    return Status::error("the documents cover " +
                         std::to_string(in.docs->numTokens()) +
                         " tokens but the tensors have " +
                         std::to_string(in.numTokens));
  // 0 means the default, 1/sqrt(D); any other scale follows the rule of
  // every tool and the runtime (finite and > 0), with its message.
  if (in.softmaxScale != 0.0f &&
      !validation::validateSoftmaxScale(in.softmaxScale, error))
    return Status::error(error);
  return Status::success();
}

void ScoreTrace::init(const AttentionInputs &in) {
  const int64_t T = in.numTokens;
  rowOffset.assign(static_cast<size_t>(in.numHeads * T + 1), 0);
  int64_t offset = 0;
  for (int64_t h = 0; h < in.numHeads; ++h)
    for (int64_t i = 0; i < T; ++i) {
      rowOffset[h * T + i] = offset;
      int doc = in.docs->documentOf(i);
      int64_t keyEnd = in.causal ? i + 1 : in.docs->end(doc);
      offset += keyEnd - in.docs->begin(doc);
    }
  rowOffset[in.numHeads * T] = offset;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  forward.assign(static_cast<size_t>(offset), nan);
  backwardRows.assign(static_cast<size_t>(offset), nan);
  backwardColumns.assign(static_cast<size_t>(offset), nan);
}

namespace {

constexpr float kLog2eF = 1.44269504088896340736f;
constexpr float kLn2F = 0.693147180559945309417f;
constexpr int64_t kQueryChunk = 64;

/// The reference's exp2 and log2 on float32: the double-precision function
/// rounded once to float32 (deterministic across C libraries whose double
/// exp2/log2 are accurate to < 1 ulp; see docs/numerics.md). exp2 flushes a
/// result below 2^-126 to +0, as the kernels' ex2.approx.ftz does.
inline float exp2f32(float x) {
  float r = static_cast<float>(std::exp2(static_cast<double>(x)));
  return r < std::numeric_limits<float>::min() ? 0.0f : r;
}
inline float log2f32(float x) {
  return static_cast<float>(std::log2(static_cast<double>(x)));
}

/// fl32 of a * b rounded toward +inf: the smallest float32 >= the exact
/// product (the product of two float32 is exact in double).
inline float mulUp(float a, float b) {
  const double exact = static_cast<double>(a) * static_cast<double>(b);
  float r = static_cast<float>(exact);
  if (static_cast<double>(r) < exact)
    r = std::nextafter(r, std::numeric_limits<float>::infinity());
  return r;
}

/// The softmax's exponent s * c - m rounded once (the kernels' FFMA).
inline float exponent(float s, float c, float m) { return std::fma(s, c, -m); }

/// P's fixed scale 2^8: P x 2^8 <= 256 is what E4M3 rounds (its normal
/// range starts at 2^-6). The forward computes P x 2^8 directly, with the
/// exponent's addend fl32(8 - m) (docs/numerics.md, section 4); the
/// backward scales its unscaled P.
constexpr int kPScaleLog2 = 8;

/// A forward weight from p' = P x 2^8: bf16 in the safe block (or where P
/// is not quantized), else E4M3 (saturating; p' <= 256 never saturates).
inline double forwardWeight(float pScaled, bool isSafe, bool quantize) {
  if (isSafe || !quantize)
    return roundToBf16(pScaled);
  return e4m3ToFloat(floatToE4M3(pScaled, Overflow::Saturate));
}

/// The backward's unscaled P quantized for P^T dO: the forward's weight of
/// P x 2^8, / 2^8 (both scalings exact: P is 0 or at least 2^-126).
inline double quantizeP(float p, bool quantize) {
  return std::ldexp(forwardWeight(std::ldexp(p, kPScaleLog2), /*isSafe=*/false,
                                  quantize),
                    -kPScaleLog2);
}

/// A GEMM operand in double: [T, heads, D] values (exact: bf16 or
/// dequantized), an upper bound on each row's 2-norm and each row's lowest
/// significant bit (the certificates of the exact-sum fast paths).
struct Operand {
  int64_t heads = 0, dim = 0;
  std::vector<double> values;
  std::vector<double> norms;
  std::vector<int> lsbs;
  std::vector<double> maxAbs; // NaN if the row holds a NaN or an inf
  const double *row(int64_t t, int64_t h) const {
    return &values[static_cast<size_t>((t * heads + h) * dim)];
  }
  double norm(int64_t t, int64_t h) const {
    return norms[static_cast<size_t>(t * heads + h)];
  }
  int lsb(int64_t t, int64_t h) const {
    return lsbs[static_cast<size_t>(t * heads + h)];
  }
  void computeNorms(int64_t T) {
    norms.assign(static_cast<size_t>(T * heads), 0.0);
    lsbs.assign(static_cast<size_t>(T * heads), 0);
    maxAbs.assign(static_cast<size_t>(T * heads), 0.0);
    parallelFor(T, [&](int64_t t) {
      for (int64_t h = 0; h < heads; ++h) {
        const double *r = row(t, h);
        norms[t * heads + h] = normUpperBound(r, dim);
        lsbs[t * heads + h] = minLsbExponent(r, dim);
        double m = 0.0;
        for (int64_t d = 0; d < dim; ++d) {
          double a = std::fabs(r[d]);
          if (!(a <= std::numeric_limits<double>::max())) {
            m = std::numeric_limits<double>::quiet_NaN();
            break;
          }
          m = std::max(m, a);
        }
        maxAbs[t * heads + h] = m;
      }
    });
  }
};

/// The lsb of a product of a weight and a row (see doubleSumIsExact).
inline int productLsb(double w, int rowLsb) {
  if (!std::isfinite(w) || rowLsb <= kLsbOfNonFinite / 2)
    return kLsbOfNonFinite;
  if (w == 0.0 || rowLsb >= kLsbOfZero / 2)
    return kLsbOfZero;
  return lsbExponent(w) + rowLsb;
}

/// One term list of a tile sum: weights and the operand rows they scale,
/// with each row's certificates (lsb, largest magnitude).
struct WeightedRows {
  std::vector<double> w;
  std::vector<const double *> rows;
  std::vector<int> lsbs;
  std::vector<double> maxAbs;

  void clear() {
    w.clear();
    rows.clear();
    lsbs.clear();
    maxAbs.clear();
  }
  void add(double weight, const Operand &op, int64_t t, int64_t h) {
    w.push_back(weight);
    rows.push_back(op.row(t, h));
    lsbs.push_back(op.lsb(t, h));
    maxAbs.push_back(op.maxAbs[static_cast<size_t>(t * op.heads + h)]);
  }
  int64_t size() const { return static_cast<int64_t>(w.size()); }
};

/// sum_k w[k] * rows[k][d] for every d, each exact and rounded once to
/// float32 (fast paths as in exactDot, with the bound
/// sum_k |w_k rows_k[d]| <= sum_k |w_k| max|rows_k|; exact fallback per
/// element).
void exactWeightedRows(const WeightedRows &t, int64_t D, float *out,
                       std::vector<double> &s) {
  const int64_t n = t.size();
  s.assign(static_cast<size_t>(D), 0.0);
  // IEEE products: a zero weight times a NaN (or inf) row is NaN, as in the
  // hardware's MMA (the bound is then NaN and every element takes the exact
  // path, which propagates it).
  double bound = 0.0;
  int lsb = kLsbOfZero;
  for (int64_t k = 0; k < n; ++k) {
    bound += std::fabs(t.w[k]) * t.maxAbs[k];
    lsb = std::min(lsb, productLsb(t.w[k], t.lsbs[k]));
  }
  bound *= 1.0 + static_cast<double>(n + 2) * 0x1p-52; // its own rounding
  if (bound == 0.0) {
    for (int64_t d = 0; d < D; ++d)
      out[d] = 0.0f;
    return;
  }
  accumulateWeightedRows(t.w.data(), t.rows.data(), n, D, s.data());
  const bool exact = doubleSumIsExact(bound, lsb);
  const double err = sumErrorBound(n, bound);
  for (int64_t d = 0; d < D; ++d) {
    if (exact) {
      out[d] = static_cast<float>(s[d]);
      continue;
    }
    if (roundIfCertain(s[d], err, out[d]))
      continue;
    ExactAccumulator acc;
    for (int64_t k = 0; k < n; ++k)
      acc.add(t.w[k] * t.rows[k][d]);
    out[d] = acc.roundToFloat();
  }
}

/// fl32 of the exact sum of n non-negative (or NaN) floats.
float exactSumOfFloats(const float *p, int64_t n) {
  double s = 0;
  for (int64_t k = 0; k < n; ++k)
    s += p[k];
  if (s == 0.0)
    return 0.0f;
  int lsb = kLsbOfZero;
  for (int64_t k = 0; k < n; ++k)
    if (p[k] != 0.0f)
      lsb = std::min(lsb, std::isfinite(p[k]) ? lsbExponent(p[k])
                                               : kLsbOfNonFinite);
  if (doubleSumIsExact(s, lsb))
    return static_cast<float>(s);
  float out;
  if (roundIfCertain(s, sumErrorBound(n, s), out))
    return out;
  ExactAccumulator acc;
  for (int64_t k = 0; k < n; ++k)
    acc.add(p[k]);
  return acc.roundToFloat();
}

/// Quantizes dS values along one contraction axis: entries k = 0..n-1 sit at
/// token positions pos0 + k; `isSafe(k)` marks the bf16 path (excluded from
/// the blocks, weight bf16(v)). Blocks per the DsQuantization; for
/// PerTensor the exponent is given (`tensorExp`, or `tensorNaN`).
template <typename SafeFn>
void quantizeAlongAxis(const float *v, int64_t n, int64_t pos0,
                       int64_t docBegin, const DsQuantization &q,
                       int tensorExp, bool tensorNaN, SafeFn isSafe,
                       double *weights, std::vector<float> &buf,
                       std::vector<uint8_t> &codes) {
  if (!q.quantized) {
    for (int64_t k = 0; k < n; ++k)
      weights[k] = roundToBf16(v[k]);
    return;
  }
  if (q.blocking == TokenBlocking::PerTensor) {
    const double scale = pow2(tensorExp), inverse = pow2(-tensorExp);
    for (int64_t k = 0; k < n; ++k) {
      if (isSafe(k)) {
        weights[k] = roundToBf16(v[k]);
      } else if (tensorNaN) {
        weights[k] = std::numeric_limits<double>::quiet_NaN();
      } else {
        uint8_t c = encodeElementSaturating(static_cast<double>(v[k]) * inverse,
                                            q.element);
        weights[k] = decodeElement(c, q.element) * scale;
      }
    }
    return;
  }
  // Block boundaries: document-local blocks start at the document's first
  // token, packed blocks at multiples of the block size.
  const int64_t origin = q.blocking == TokenBlocking::Packed ? 0 : docBegin;
  const QuantFormat format{q.element, ScaleFormat::E8M0};
  int64_t k = 0;
  while (k < n) {
    int64_t pos = pos0 + k;
    int64_t blockEnd = origin + ((pos - origin) / q.block + 1) * q.block;
    int64_t kEnd = std::min(n, blockEnd - pos0);
    int64_t len = kEnd - k;
    buf.resize(static_cast<size_t>(len));
    codes.resize(static_cast<size_t>(len));
    for (int64_t x = 0; x < len; ++x)
      buf[x] = isSafe(k + x) ? 0.0f : v[k + x];
    uint8_t sc = quantizeBlock(buf.data(), len, format, codes.data());
    double scale = decodeScale(sc, ScaleFormat::E8M0);
    for (int64_t x = 0; x < len; ++x)
      weights[k + x] = isSafe(k + x)
                           ? static_cast<double>(roundToBf16(v[k + x]))
                           : decodeElement(codes[x], q.element) * scale;
    k = kEnd;
  }
}

class Reference {
public:
  Reference(const AttentionInputs &in, const RecipeConfig &r)
      : in_(in), r_(r), docs_(*in.docs), T_(in.numTokens), Hq_(in.numHeads),
        Hkv_(in.numKvHeads), D_(in.headDim), group_(Hq_ / Hkv_) {
    scale_ = in.effectiveSoftmaxScale();
    c_ = static_cast<float>(static_cast<double>(scale_) * 1.4426950408889634);
    safeStart_.assign(static_cast<size_t>(T_), 0);
    if (r.safeBlock > 0)
      for (int d = 0; d < docs_.numDocuments(); ++d)
        for (int64_t t = docs_.begin(d); t < docs_.end(d); ++t)
          safeStart_[t] = docs_.begin(d) +
                          (t - docs_.begin(d)) / r.safeBlock * r.safeBlock;
  }

  void prepareForward() {
    qf_ = roundedCopy(in_.q, Hq_);
    kf_ = roundedCopy(in_.k, Hkv_);
    vf_ = roundedCopy(in_.v, Hkv_);
    qb_ = bf16Operand(qf_, Hq_);
    kb_ = bf16Operand(kf_, Hkv_);
    vb_ = bf16Operand(vf_, Hkv_);
    op(OperandUse::QInQK, qf_, qb_, Hq_);
    op(OperandUse::KInQK, kf_, kb_, Hkv_);
    op(OperandUse::VInPV, vf_, vb_, Hkv_);
  }

  void prepareBackward(const float *dO, const float *o) {
    prepareForward();
    dof_ = roundedCopy(dO, Hq_);
    of_ = roundedCopy(o, Hq_);
    dob_ = bf16Operand(dof_, Hq_);
    op(OperandUse::DOInDOV, dof_, dob_, Hq_);
    op(OperandUse::VInDOV, vf_, vb_, Hkv_);
    op(OperandUse::KInDSK, kf_, kb_, Hkv_);
    op(OperandUse::QInDSQ, qf_, qb_, Hq_);
    op(OperandUse::DOInPDO, dof_, dob_, Hq_);
  }

  void forward(ForwardOutputs &out, ScoreTrace *trace);
  void backward(const float *lse, BackwardOutputs &out, ScoreTrace *trace);

private:
  struct Item {
    int64_t head;
    int doc;
    int64_t begin, end;
  };

  std::vector<float> roundedCopy(const float *x, int64_t heads) const {
    std::vector<float> out(static_cast<size_t>(T_ * heads * D_));
    for (size_t k = 0; k < out.size(); ++k)
      out[k] = roundToBf16(x[k]);
    return out;
  }

  const Operand *bf16Operand(const std::vector<float> &x, int64_t heads) {
    auto o = std::make_unique<Operand>();
    o->heads = heads;
    o->dim = D_;
    o->values.assign(x.begin(), x.end());
    o->computeNorms(T_);
    owned_.push_back(std::move(o));
    return owned_.back().get();
  }

  /// The copy a use reads: the bf16 operand, or the quantized copy (one per
  /// distinct source tensor, layout and format).
  void op(OperandUse use, const std::vector<float> &source,
          const Operand *bf16, int64_t heads) {
    const OperandQuantization &quant = r_.operand(use);
    if (!quant.quantized) {
      ops_[static_cast<int>(use)] = bf16;
      return;
    }
    auto key = std::make_tuple(source.data(), quant.layout.tokenBlock,
                               quant.layout.channelBlock,
                               static_cast<int>(quant.layout.blocking),
                               static_cast<int>(quant.element),
                               static_cast<int>(quant.scale));
    auto it = quantizedCopies_.find(key);
    if (it != quantizedCopies_.end()) {
      ops_[static_cast<int>(use)] = it->second;
      return;
    }
    QuantizedTensor qt;
    Status s = quantize(source.data(), T_, heads, D_, docs_, quant.layout,
                        quant.format(), qt);
    (void)s; // validated by RecipeConfig::validate
    auto o = std::make_unique<Operand>();
    o->heads = heads;
    o->dim = D_;
    o->values = qt.dequantizeAll();
    o->computeNorms(T_);
    owned_.push_back(std::move(o));
    ops_[static_cast<int>(use)] = owned_.back().get();
    quantizedCopies_[key] = owned_.back().get();
  }

  const Operand *use(OperandUse u) const { return ops_[static_cast<int>(u)]; }

  /// Whether key j is in query i's safe block (i and j of one document).
  bool safe(int64_t i, int64_t j, int64_t /*docBegin*/) const {
    return r_.safeBlock > 0 && safeStart_[i] == safeStart_[j];
  }

  /// s_ij = fl32(exact dot), the raw score (before the softmax scale).
  float rawScore(int64_t h, int64_t g, int64_t i, int64_t j,
                 bool isSafe) const {
    const Operand *qo = isSafe ? qb_ : use(OperandUse::QInQK);
    const Operand *ko = isSafe ? kb_ : use(OperandUse::KInQK);
    float dot = exactDot(qo->row(i, h), ko->row(j, g), D_,
                         qo->norm(i, h) * ko->norm(j, g),
                         qo->lsb(i, h) + ko->lsb(j, g));
    return dot;
  }

  /// dP_ij = fl32(exact dot of dO_i and V_j) from the copies of dO V^T.
  float dP(int64_t h, int64_t g, int64_t i, int64_t j, bool isSafe) const {
    const Operand *a = isSafe ? dob_ : use(OperandUse::DOInDOV);
    const Operand *b = isSafe ? vb_ : use(OperandUse::VInDOV);
    return exactDot(a->row(i, h), b->row(j, g), D_,
                    a->norm(i, h) * b->norm(j, g), a->lsb(i, h) + b->lsb(j, g));
  }

  /// dS_ij = P_ij * (dP_ij - D_i) with P_ij = exp2(fma(s_ij, c, -lse2_i)).
  /// *tOut is the traced t_ij = fl32(s_ij * c).
  float dS(int64_t h, int64_t g, int64_t i, int64_t j, bool isSafe,
           float lse2, float Di, float *tOut, float *pOut) const {
    float s = rawScore(h, g, i, j, isSafe);
    float p = exp2f32(exponent(s, c_, lse2));
    float diff = dP(h, g, i, j, isSafe) - Di;
    *tOut = s * c_;
    *pOut = p;
    return p * diff;
  }

  std::vector<Item> chunks(int64_t heads, int64_t chunk) const {
    std::vector<Item> items;
    for (int64_t h = 0; h < heads; ++h)
      for (int d = 0; d < docs_.numDocuments(); ++d)
        for (int64_t b = docs_.begin(d); b < docs_.end(d); b += chunk)
          items.push_back({h, d, b, std::min(b + chunk, docs_.end(d))});
    return items;
  }

  void dsTensorScales(const std::vector<float> &lse2,
                      const std::vector<float> &Dvals);
  void backwardRows(const Item &item, const std::vector<float> &lse2,
                    const std::vector<float> &Dvals, BackwardOutputs &out,
                    ScoreTrace *trace) const;
  void backwardColumns(const Item &item, const std::vector<float> &lse2,
                       const std::vector<float> &Dvals, BackwardOutputs &out,
                       ScoreTrace *trace) const;

  const AttentionInputs &in_;
  const RecipeConfig &r_;
  const DocumentLayout &docs_;
  const int64_t T_, Hq_, Hkv_, D_, group_;
  float scale_ = 0, c_ = 0;
  std::vector<float> qf_, kf_, vf_, dof_, of_;
  const Operand *qb_ = nullptr, *kb_ = nullptr, *vb_ = nullptr,
                *dob_ = nullptr;
  const Operand *ops_[kNumOperandUses] = {};
  std::vector<std::unique_ptr<Operand>> owned_;
  std::map<std::tuple<const float *, int64_t, int64_t, int, int, int>,
           const Operand *>
      quantizedCopies_;
  // The first token of each token's safe block (document-local).
  std::vector<int64_t> safeStart_;
  // Per-tensor dS: one exponent per query head (and whether it saw NaN).
  std::vector<int> dsTensorExp_;
  std::vector<char> dsTensorNaN_;
};

//===----------------------------------------------------------------------===//
// Forward
//===----------------------------------------------------------------------===//

void Reference::forward(ForwardOutputs &out, ScoreTrace *trace) {
  out.o.assign(static_cast<size_t>(T_ * Hq_ * D_), 0.0f);
  out.lse.assign(static_cast<size_t>(Hq_ * T_), 0.0f);
  std::vector<Item> items = chunks(Hq_, kQueryChunk);
  const int64_t tile = r_.tile;
  const Operand *vq = use(OperandUse::VInPV);
  parallelFor(static_cast<int64_t>(items.size()), [&](int64_t itemIndex) {
    const Item &item = items[itemIndex];
    const int64_t h = item.head, g = h / group_;
    const int64_t b = docs_.begin(item.doc), e = docs_.end(item.doc);
    const int64_t nq = item.end - item.begin;
    std::vector<float> m(nq, -std::numeric_limits<float>::infinity());
    std::vector<float> l(nq, 0.0f);
    std::vector<float> acc(static_cast<size_t>(nq * D_), 0.0f);
    std::vector<float> raw(tile), p(tile), pv(D_);
    std::vector<double> s;
    WeightedRows terms;
    const int64_t keyLimit = in_.causal ? item.end : e;
    for (int64_t kt = b; kt < keyLimit; kt += tile) {
      const int64_t ktEnd = std::min(kt + tile, e);
      for (int64_t qi = 0; qi < nq; ++qi) {
        const int64_t i = item.begin + qi;
        const int64_t kEnd = in_.causal ? std::min(ktEnd, i + 1) : ktEnd;
        if (kEnd <= kt)
          continue; // no unmasked key in this tile
        const int64_t n = kEnd - kt;
        // The tile's maximum of the raw scores, scaled rounded up (c > 0
        // commutes with max): every exponent s c - m_new is <= 0 exactly.
        float tileMax = -std::numeric_limits<float>::infinity();
        bool sawNaN = false;
        for (int64_t j = kt; j < kEnd; ++j) {
          float sj = rawScore(h, g, i, j, safe(i, j, b));
          raw[j - kt] = sj;
          if (trace)
            trace->forward[trace->index(in_, h, i, j)] = sj * c_;
          if (std::isnan(sj))
            sawNaN = true;
          else if (sj > tileMax)
            tileMax = sj;
        }
        const float mOld = m[qi];
        const float mNew = (sawNaN || std::isnan(mOld))
                               ? std::numeric_limits<float>::quiet_NaN()
                               : std::max(mOld, mulUp(tileMax, c_));
        const float alpha = mNew == mOld ? 1.0f : exp2f32(mOld - mNew);
        // p' = P x 2^8 = exp2(fl32(s c + fl32(8 - m))): the row's addend is
        // rounded once, the exponent once (the kernels' FADD and FFMA).
        const float addend = static_cast<float>(kPScaleLog2) - mNew;
        terms.clear();
        for (int64_t j = kt; j < kEnd; ++j) {
          const bool isSafe = safe(i, j, b);
          const float pj = exp2f32(std::fma(raw[j - kt], c_, addend));
          p[j - kt] = pj;
          terms.add(forwardWeight(pj, isSafe, r_.quantizeP),
                    isSafe ? *vb_ : *vq, j, g);
        }
        const float rowSum = exactSumOfFloats(p.data(), n);
        exactWeightedRows(terms, D_, pv.data(), s);
        l[qi] = alpha * l[qi] + rowSum; // two float32 roundings
        float *accRow = &acc[qi * D_];
        for (int64_t d = 0; d < D_; ++d) {
          float scaled = alpha * accRow[d];
          accRow[d] = scaled + pv[d];
        }
        m[qi] = mNew;
      }
    }
    for (int64_t qi = 0; qi < nq; ++qi) {
      const int64_t i = item.begin + qi;
      float *o = &out.o[(i * Hq_ + h) * D_];
      // acc and l both carry 2^8 (O unchanged); LSE takes the exact
      // l x 2^-8.
      for (int64_t d = 0; d < D_; ++d)
        o[d] = roundToBf16(acc[qi * D_ + d] / l[qi]);
      float lse2 = m[qi] + log2f32(std::ldexp(l[qi], -kPScaleLog2));
      out.lse[h * T_ + i] = lse2 * kLn2F;
    }
  });
}

//===----------------------------------------------------------------------===//
// Backward
//===----------------------------------------------------------------------===//

void Reference::dsTensorScales(const std::vector<float> &lse2,
                               const std::vector<float> &Dvals) {
  // One pass over every unmasked, quantized pair per head: amax of dS.
  std::vector<Item> items = chunks(Hq_, kQueryChunk);
  std::vector<float> itemMax(items.size(), 0.0f);
  std::vector<char> itemNaN(items.size(), 0);
  parallelFor(static_cast<int64_t>(items.size()), [&](int64_t k) {
    const Item &item = items[k];
    const int64_t h = item.head;
    const int64_t b = docs_.begin(item.doc), e = docs_.end(item.doc);
    float amax = 0.0f;
    bool nan = false;
    for (int64_t i = item.begin; i < item.end; ++i) {
      const int64_t keyEnd = in_.causal ? i + 1 : e;
      for (int64_t j = b; j < keyEnd; ++j) {
        if (safe(i, j, b))
          continue;
        float t, p;
        float ds = dS(h, h / group_, i, j, false, lse2[h * T_ + i],
                      Dvals[h * T_ + i], &t, &p);
        float mag = std::fabs(ds);
        if (!(mag <= std::numeric_limits<float>::max()))
          nan = true;
        else
          amax = std::max(amax, mag);
      }
    }
    itemMax[k] = amax;
    itemNaN[k] = nan;
  });
  std::vector<float> headMax(Hq_, 0.0f);
  dsTensorNaN_.assign(Hq_, 0);
  for (size_t k = 0; k < items.size(); ++k) {
    headMax[items[k].head] = std::max(headMax[items[k].head], itemMax[k]);
    dsTensorNaN_[items[k].head] |= itemNaN[k];
  }
  dsTensorExp_.assign(Hq_, 0);
  for (int64_t h = 0; h < Hq_; ++h)
    dsTensorExp_[h] = mxScaleExponent(headMax[h], elementMax(r_.dS.element));
}

void Reference::backwardRows(const Item &item, const std::vector<float> &lse2,
                             const std::vector<float> &Dvals,
                             BackwardOutputs &out, ScoreTrace *trace) const {
  const int64_t h = item.head, g = h / group_;
  const int64_t b = docs_.begin(item.doc), e = docs_.end(item.doc);
  const int64_t L = e - b, nq = item.end - item.begin, tile = r_.tile;
  const Operand *kq = use(OperandUse::KInDSK);
  // dS rows [nq, L] (keys from the document start), then their weights.
  std::vector<float> ds(static_cast<size_t>(nq * L), 0.0f);
  std::vector<double> wts(static_cast<size_t>(nq * L), 0.0);
  const int64_t keyLimit = in_.causal ? item.end : e;
  for (int64_t kt = b; kt < keyLimit; kt += tile) {
    const int64_t ktEnd = std::min(kt + tile, e);
    for (int64_t qi = 0; qi < nq; ++qi) {
      const int64_t i = item.begin + qi;
      const int64_t kEnd = in_.causal ? std::min(ktEnd, i + 1) : ktEnd;
      for (int64_t j = kt; j < kEnd; ++j) {
        float t, p;
        ds[qi * L + (j - b)] = dS(h, g, i, j, safe(i, j, b), lse2[h * T_ + i],
                                  Dvals[h * T_ + i], &t, &p);
        if (trace)
          trace->backwardRows[trace->index(in_, h, i, j)] = t;
      }
    }
  }
  std::vector<float> buf;
  std::vector<uint8_t> codes;
  const int tensorExp = dsTensorExp_.empty() ? 0 : dsTensorExp_[h];
  const bool tensorNaN = dsTensorNaN_.empty() ? false : dsTensorNaN_[h];
  for (int64_t qi = 0; qi < nq; ++qi) {
    const int64_t i = item.begin + qi;
    const int64_t n = (in_.causal ? i + 1 : e) - b;
    quantizeAlongAxis(
        &ds[qi * L], n, b, b, r_.dS, tensorExp, tensorNaN,
        [&](int64_t k) { return safe(i, b + k, b); }, &wts[qi * L], buf,
        codes);
  }
  // dQ_i = scale * (fp32 sum over key tiles of the exact tile sums).
  std::vector<float> acc(static_cast<size_t>(nq * D_), 0.0f), tileSum(D_);
  std::vector<double> s;
  WeightedRows terms;
  for (int64_t kt = b; kt < keyLimit; kt += tile) {
    const int64_t ktEnd = std::min(kt + tile, e);
    for (int64_t qi = 0; qi < nq; ++qi) {
      const int64_t i = item.begin + qi;
      const int64_t kEnd = in_.causal ? std::min(ktEnd, i + 1) : ktEnd;
      if (kEnd <= kt)
        continue;
      terms.clear();
      for (int64_t j = kt; j < kEnd; ++j)
        terms.add(wts[qi * L + (j - b)], safe(i, j, b) ? *kb_ : *kq, j, g);
      exactWeightedRows(terms, D_, tileSum.data(), s);
      for (int64_t d = 0; d < D_; ++d)
        acc[qi * D_ + d] += tileSum[d];
    }
  }
  for (int64_t qi = 0; qi < nq; ++qi) {
    const int64_t i = item.begin + qi;
    for (int64_t d = 0; d < D_; ++d)
      out.dq[(i * Hq_ + h) * D_ + d] = scale_ * acc[qi * D_ + d];
  }
}

void Reference::backwardColumns(const Item &item,
                                const std::vector<float> &lse2,
                                const std::vector<float> &Dvals,
                                BackwardOutputs &out,
                                ScoreTrace *trace) const {
  const int64_t g = item.head; // a kv head
  const int64_t b = docs_.begin(item.doc), e = docs_.end(item.doc);
  const int64_t j0 = item.begin, j1 = item.end, nk = j1 - j0;
  const int64_t tile = r_.tile;
  const int64_t iStart = in_.causal ? j0 : b;
  const int64_t nq = e - iStart;
  const Operand *qq = use(OperandUse::QInDSQ);
  const Operand *doq = use(OperandUse::DOInPDO);
  // Per head of the group: dS and P columns [nq, nk] for queries iStart..e.
  const size_t strip = static_cast<size_t>(nq * nk);
  std::vector<float> ds(strip * group_, 0.0f), pr(strip * group_, 0.0f);
  for (int64_t hl = 0; hl < group_; ++hl) {
    const int64_t h = g * group_ + hl;
    for (int64_t i = iStart; i < e; ++i) {
      const int64_t kEnd = in_.causal ? std::min(j1, i + 1) : j1;
      for (int64_t j = j0; j < kEnd; ++j) {
        float t, p;
        float v = dS(h, g, i, j, safe(i, j, b), lse2[h * T_ + i],
                     Dvals[h * T_ + i], &t, &p);
        size_t idx = hl * strip + (i - iStart) * nk + (j - j0);
        ds[idx] = v;
        pr[idx] = p;
        if (trace)
          trace->backwardColumns[trace->index(in_, h, i, j)] = t;
      }
    }
  }
  // Quantize each column along queries (masked i < j excluded).
  std::vector<double> wk(strip * group_, 0.0), wv(strip * group_, 0.0);
  std::vector<float> col, buf;
  std::vector<double> colW;
  std::vector<uint8_t> codes;
  for (int64_t hl = 0; hl < group_; ++hl) {
    const int64_t h = g * group_ + hl;
    const int tensorExp = dsTensorExp_.empty() ? 0 : dsTensorExp_[h];
    const bool tensorNaN = dsTensorNaN_.empty() ? false : dsTensorNaN_[h];
    for (int64_t j = j0; j < j1; ++j) {
      const int64_t first = in_.causal ? j : b; // first unmasked query
      const int64_t n = e - first;
      col.resize(static_cast<size_t>(n));
      colW.resize(static_cast<size_t>(n));
      for (int64_t i = first; i < e; ++i)
        col[i - first] = ds[hl * strip + (i - iStart) * nk + (j - j0)];
      quantizeAlongAxis(
          col.data(), n, first, b, r_.dS, tensorExp, tensorNaN,
          [&](int64_t k) { return safe(first + k, j, b); }, colW.data(), buf,
          codes);
      for (int64_t i = first; i < e; ++i) {
        size_t idx = hl * strip + (i - iStart) * nk + (j - j0);
        wk[idx] = colW[i - first];
        wv[idx] = safe(i, j, b) ? static_cast<double>(roundToBf16(pr[idx]))
                                : quantizeP(pr[idx], r_.quantizeP);
      }
    }
  }
  // dK_j, dV_j: fp32 sums over document-local query tiles (ascending) of the
  // exact tile sums over (query head of the group, query of the tile).
  std::vector<float> accK(static_cast<size_t>(nk * D_), 0.0f),
      accV(static_cast<size_t>(nk * D_), 0.0f), tileSum(D_);
  std::vector<double> s;
  WeightedRows termsK, termsV;
  for (int64_t qt = b; qt < e; qt += tile) {
    const int64_t qtEnd = std::min(qt + tile, e);
    for (int64_t j = j0; j < j1; ++j) {
      const int64_t lo = std::max(qt, in_.causal ? j : b);
      if (lo >= qtEnd)
        continue;
      termsK.clear();
      termsV.clear();
      for (int64_t hl = 0; hl < group_; ++hl) {
        const int64_t h = g * group_ + hl;
        for (int64_t i = lo; i < qtEnd; ++i) {
          size_t idx = hl * strip + (i - iStart) * nk + (j - j0);
          const bool isSafe = safe(i, j, b);
          termsK.add(wk[idx], isSafe ? *qb_ : *qq, i, h);
          termsV.add(wv[idx], isSafe ? *dob_ : *doq, i, h);
        }
      }
      exactWeightedRows(termsK, D_, tileSum.data(), s);
      for (int64_t d = 0; d < D_; ++d)
        accK[(j - j0) * D_ + d] += tileSum[d];
      exactWeightedRows(termsV, D_, tileSum.data(), s);
      for (int64_t d = 0; d < D_; ++d)
        accV[(j - j0) * D_ + d] += tileSum[d];
    }
  }
  for (int64_t j = j0; j < j1; ++j)
    for (int64_t d = 0; d < D_; ++d) {
      out.dk[(j * Hkv_ + g) * D_ + d] = scale_ * accK[(j - j0) * D_ + d];
      out.dv[(j * Hkv_ + g) * D_ + d] = accV[(j - j0) * D_ + d];
    }
}

void Reference::backward(const float *lse, BackwardOutputs &out,
                         ScoreTrace *trace) {
  out.dq.assign(static_cast<size_t>(T_ * Hq_ * D_), 0.0f);
  out.dk.assign(static_cast<size_t>(T_ * Hkv_ * D_), 0.0f);
  out.dv.assign(static_cast<size_t>(T_ * Hkv_ * D_), 0.0f);
  // LSE in the log2 domain and D_i = fl32(exact dO_i . O_i), per (h, i).
  std::vector<float> lse2(static_cast<size_t>(Hq_ * T_)),
      Dvals(static_cast<size_t>(Hq_ * T_));
  const Operand *ob = bf16Operand(of_, Hq_);
  parallelFor(Hq_, [&](int64_t h) {
    for (int64_t i = 0; i < T_; ++i) {
      lse2[h * T_ + i] = lse[h * T_ + i] * kLog2eF;
      Dvals[h * T_ + i] = exactDot(dob_->row(i, h), ob->row(i, h), D_,
                                   dob_->norm(i, h) * ob->norm(i, h),
                                   dob_->lsb(i, h) + ob->lsb(i, h));
    }
  });
  if (r_.dS.quantized && r_.dS.blocking == TokenBlocking::PerTensor)
    dsTensorScales(lse2, Dvals);
  std::vector<Item> rowItems = chunks(Hq_, kQueryChunk);
  parallelFor(static_cast<int64_t>(rowItems.size()), [&](int64_t k) {
    backwardRows(rowItems[k], lse2, Dvals, out, trace);
  });
  std::vector<Item> colItems = chunks(Hkv_, r_.tile);
  parallelFor(static_cast<int64_t>(colItems.size()), [&](int64_t k) {
    backwardColumns(colItems[k], lse2, Dvals, out, trace);
  });
}

} // namespace

Status referenceForward(const AttentionInputs &in, const RecipeConfig &recipe,
                        ForwardOutputs &out, ScoreTrace *trace) {
  if (Status s = validateAttentionInputs(in); !s)
    return s;
  if (recipe.float64Reference)
    return Status::error("recipe 'none' has no quantized forward; use "
                         "float64Attention");
  if (Status s = recipe.validate(in.headDim); !s)
    return s;
  Reference ref(in, recipe);
  ref.prepareForward();
  if (trace && trace->rowOffset.empty())
    trace->init(in);
  ref.forward(out, trace);
  return Status::success();
}

Status referenceBackward(const AttentionInputs &in, const RecipeConfig &recipe,
                         const float *dO, const float *o, const float *lse,
                         BackwardOutputs &out, ScoreTrace *trace) {
  if (Status s = validateAttentionInputs(in); !s)
    return s;
  if (recipe.float64Reference)
    return Status::error("recipe 'none' has no quantized backward; use "
                         "float64Attention");
  if (Status s = recipe.validate(in.headDim); !s)
    return s;
  Reference ref(in, recipe);
  ref.prepareBackward(dO, o);
  if (trace && trace->rowOffset.empty())
    trace->init(in);
  ref.backward(lse, out, trace);
  return Status::success();
}

Status runAttention(const AttentionInputs &in, const RecipeConfig &recipe,
                    const float *dO, ForwardOutputs &out,
                    BackwardOutputs *grads, ScoreTrace *trace) {
  if (recipe.float64Reference)
    return float64Attention(in, dO, out, grads);
  if (Status s = referenceForward(in, recipe, out, trace); !s)
    return s;
  if (dO && grads)
    return referenceBackward(in, recipe, dO, out.o.data(), out.lse.data(),
                             *grads, trace);
  return Status::success();
}

} // namespace flamia::numerics
