//===- ReferenceAttentionTest.cpp - The CPU reference, checked -----*- C++ -*-===//
//
// The optimized reference (tiles, threads, fast exact-sum paths) is checked
// bit for bit against a naive transcription of the precise definitions in
// docs/numerics.md written here with ExactAccumulator for every sum; the
// float64 reference is checked against finite differences; plus hand-made
// cases, GQA, documents, NaN propagation and determinism.
//
//===----------------------------------------------------------------------===//
#include "flamia/Numerics/ExactSum.h"
#include "flamia/Numerics/Parallel.h"
#include "flamia/Numerics/Quantizer.h"
#include "flamia/Numerics/ReferenceAttention.h"
#include "flamia/Support/Validation.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>
#include <random>

using namespace flamia::numerics;
using flamia::DocumentLayout;

namespace {

/// The smallest float32 >= a * b (written apart from the library's).
float productRoundedUp(float a, float b) {
  double exact = static_cast<double>(a) * b;
  float r = static_cast<float>(exact);
  return static_cast<double>(r) < exact
             ? std::nextafter(r, std::numeric_limits<float>::infinity())
             : r;
}

/// exp2 in double, rounded to float32, below 2^-126 flushed to 0.
float exp2Flushed(float x) {
  float r = static_cast<float>(std::exp2(static_cast<double>(x)));
  return r < std::numeric_limits<float>::min() ? 0.0f : r;
}

struct Problem {
  int64_t T, Hq, Hkv, D;
  std::vector<float> q, k, v, dO;
  DocumentLayout docs;
  bool causal = true;
  float softmaxScale = 0.0f; // 0: 1 / sqrt(D)

  AttentionInputs inputs() const {
    AttentionInputs in;
    in.softmaxScale = softmaxScale;
    in.numTokens = T;
    in.numHeads = Hq;
    in.numKvHeads = Hkv;
    in.headDim = D;
    in.q = q.data();
    in.k = k.data();
    in.v = v.data();
    in.docs = &docs;
    in.causal = causal;
    return in;
  }
};

Problem randomProblem(std::vector<int32_t> cu, int64_t Hq, int64_t Hkv,
                      int64_t D, uint32_t seed, float outlier = 0.0f) {
  Problem p;
  p.T = cu.back();
  p.Hq = Hq;
  p.Hkv = Hkv;
  p.D = D;
  EXPECT_TRUE(DocumentLayout::fromCuSeqlens(cu, p.T, p.docs).ok());
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto fill = [&](std::vector<float> &x, int64_t H) {
    x.resize(p.T * H * D);
    for (float &y : x)
      y = roundToBf16(normal(rng));
  };
  fill(p.q, Hq);
  fill(p.k, Hkv);
  fill(p.v, Hkv);
  fill(p.dO, Hq);
  if (outlier != 0.0f) // a few large channels in K, a few large tokens in V
    for (int64_t t = 0; t < p.T; ++t)
      for (int64_t h = 0; h < Hkv; ++h) {
        float &kx = p.k[(t * Hkv + h) * D + 3];
        kx = roundToBf16(kx * outlier);
        if (t % 37 == 5)
          for (int64_t d = 0; d < D; ++d) {
            float &vx = p.v[(t * Hkv + h) * D + d];
            vx = roundToBf16(vx * outlier);
          }
      }
  return p;
}

//===----------------------------------------------------------------------===//
// A naive transcription of the precise definitions
//===----------------------------------------------------------------------===//

class NaiveReference {
public:
  NaiveReference(const Problem &p, const RecipeConfig &r) : p_(p), r_(r) {
    scale_ = p.inputs().effectiveSoftmaxScale();
    c_ = static_cast<float>(static_cast<double>(scale_) * 1.4426950408889634);
    for (int u = 0; u < kNumOperandUses; ++u) {
      OperandUse use = static_cast<OperandUse>(u);
      // The operands are the bf16-rounded inputs.
      std::vector<float> src = source(use);
      for (float &x : src)
        x = roundToBf16(x);
      int64_t H = heads(use);
      const OperandQuantization &oq = r.operand(use);
      if (!oq.quantized) {
        copies_[u].assign(src.begin(), src.end());
        continue;
      }
      QuantizedTensor qt;
      EXPECT_TRUE(quantize(src.data(), p.T, H, p.D, p.docs, oq.layout,
                           oq.format(), qt)
                      .ok());
      copies_[u] = qt.dequantizeAll();
    }
  }

  const std::vector<float> &source(OperandUse u) const {
    switch (u) {
    case OperandUse::QInQK:
    case OperandUse::QInDSQ:
      return p_.q;
    case OperandUse::KInQK:
    case OperandUse::KInDSK:
      return p_.k;
    case OperandUse::VInPV:
    case OperandUse::VInDOV:
      return p_.v;
    default:
      return p_.dO;
    }
  }
  int64_t heads(OperandUse u) const {
    const std::vector<float> &s = source(u);
    return (&s == &p_.q || &s == &p_.dO) ? p_.Hq : p_.Hkv;
  }
  /// Row t, head h of a use's copy, or of the bf16 tensor when `bf16`.
  std::vector<double> row(OperandUse u, int64_t t, int64_t h, bool bf16) const {
    std::vector<double> out(p_.D);
    int64_t base = (t * heads(u) + h) * p_.D;
    for (int64_t d = 0; d < p_.D; ++d)
      out[d] = bf16 ? static_cast<double>(roundToBf16(source(u)[base + d]))
                    : copies_[static_cast<int>(u)][base + d];
    return out;
  }
  static float exactDotF(const std::vector<double> &a,
                         const std::vector<double> &b) {
    ExactAccumulator acc;
    for (size_t k = 0; k < a.size(); ++k)
      acc.add(a[k] * b[k]);
    return acc.roundToFloat();
  }
  bool safe(int64_t i, int64_t j) const {
    int64_t b = p_.docs.begin(p_.docs.documentOf(i));
    return r_.safeBlock > 0 &&
           (i - b) / r_.safeBlock == (j - b) / r_.safeBlock;
  }
  int64_t g(int64_t h) const { return h / (p_.Hq / p_.Hkv); }
  /// The raw score fl32(exact dot), before the softmax scale.
  float score(int64_t h, int64_t i, int64_t j) const {
    bool s = safe(i, j);
    return exactDotF(row(OperandUse::QInQK, i, h, s),
                     row(OperandUse::KInQK, j, g(h), s));
  }
  static double pq(float p) {
    return e4m3ToFloat(floatToE4M3(p * 256.0f, Overflow::Saturate)) / 256.0;
  }
  int64_t keyEnd(int64_t i) const {
    return p_.causal ? i + 1 : p_.docs.end(p_.docs.documentOf(i));
  }

  void forward(std::vector<float> &o, std::vector<float> &lse) const {
    o.assign(p_.T * p_.Hq * p_.D, 0.0f);
    lse.assign(p_.Hq * p_.T, 0.0f);
    for (int64_t h = 0; h < p_.Hq; ++h)
      for (int64_t i = 0; i < p_.T; ++i) {
        int64_t b = p_.docs.begin(p_.docs.documentOf(i)), e = keyEnd(i);
        float m = -INFINITY, l = 0.0f;
        std::vector<float> acc(p_.D, 0.0f);
        for (int64_t kt = b; kt < e; kt += r_.tile) {
          int64_t kEnd = std::min(kt + r_.tile, e);
          std::vector<float> t;
          float rawMax = -INFINITY;
          for (int64_t j = kt; j < kEnd; ++j) {
            t.push_back(score(h, i, j));
            rawMax = std::max(rawMax, t.back());
          }
          float mNew = std::max(m, productRoundedUp(rawMax, c_));
          float alpha = mNew == m ? 1.0f : exp2Flushed(m - mNew);
          ExactAccumulator rowSum;
          std::vector<ExactAccumulator> pv(p_.D);
          // P x 2^8 directly: the addend 8 - m rounded once per row.
          float addend = 8.0f - mNew;
          for (int64_t j = kt; j < kEnd; ++j) {
            float pj = exp2Flushed(std::fma(t[j - kt], c_, addend));
            rowSum.add(pj);
            bool s = safe(i, j);
            double w = s ? roundToBf16(pj)
                         : e4m3ToFloat(floatToE4M3(pj, Overflow::Saturate));
            std::vector<double> vr = row(OperandUse::VInPV, j, g(h), s);
            for (int64_t d = 0; d < p_.D; ++d)
              pv[d].add(w * vr[d]);
          }
          float al = alpha * l;
          l = al + rowSum.roundToFloat();
          for (int64_t d = 0; d < p_.D; ++d) {
            float a = alpha * acc[d];
            acc[d] = a + pv[d].roundToFloat();
          }
          m = mNew;
        }
        for (int64_t d = 0; d < p_.D; ++d)
          o[(i * p_.Hq + h) * p_.D + d] = roundToBf16(acc[d] / l);
        // acc and l carry 2^8; LSE from l x 2^-8 (exact).
        float l2 = m + static_cast<float>(
                           std::log2(static_cast<double>(std::ldexp(l, -8))));
        lse[h * p_.T + i] = l2 * 0.693147180559945309417f;
      }
  }

  /// dS quantized along one axis: `vals` at positions pos[], blocks of 32
  /// from `origin`, safe entries excluded (bf16).
  std::vector<double> quantizeAxis(const std::vector<float> &vals,
                                   const std::vector<int64_t> &pos,
                                   const std::vector<bool> &isSafe,
                                   int64_t origin) const {
    std::vector<double> w(vals.size());
    for (size_t k = 0; k < vals.size();) {
      int64_t blk = (pos[k] - origin) / 32;
      size_t kEnd = k;
      while (kEnd < vals.size() && (pos[kEnd] - origin) / 32 == blk)
        ++kEnd;
      std::vector<float> buf;
      for (size_t x = k; x < kEnd; ++x)
        buf.push_back(isSafe[x] ? 0.0f : vals[x]);
      std::vector<uint8_t> codes(buf.size());
      uint8_t sc = quantizeBlock(buf.data(), buf.size(), kMXFP8E4M3,
                                 codes.data());
      for (size_t x = k; x < kEnd; ++x)
        w[x] = isSafe[x] ? static_cast<double>(roundToBf16(vals[x]))
                         : e4m3ToFloat(codes[x - k]) *
                               decodeScale(sc, ScaleFormat::E8M0);
      k = kEnd;
    }
    return w;
  }

  void backward(const std::vector<float> &o, const std::vector<float> &lse,
                std::vector<float> &dq, std::vector<float> &dk,
                std::vector<float> &dv) const {
    const int64_t T = p_.T, Hq = p_.Hq, Hkv = p_.Hkv, D = p_.D;
    // Full matrices per head (masked entries unused).
    std::vector<float> P(Hq * T * T, 0.0f), dS(Hq * T * T, 0.0f);
    for (int64_t h = 0; h < Hq; ++h)
      for (int64_t i = 0; i < T; ++i) {
        std::vector<double> dob(D), ob(D);
        for (int64_t d = 0; d < D; ++d) {
          dob[d] = roundToBf16(p_.dO[(i * Hq + h) * D + d]);
          ob[d] = roundToBf16(o[(i * Hq + h) * D + d]);
        }
        float Di = exactDotF(dob, ob);
        float lse2 = lse[h * T + i] * 1.44269504088896340736f;
        int64_t b = p_.docs.begin(p_.docs.documentOf(i));
        for (int64_t j = b; j < keyEnd(i); ++j) {
          bool s = safe(i, j);
          float pij = exp2Flushed(std::fma(score(h, i, j), c_, -lse2));
          float dp = exactDotF(row(OperandUse::DOInDOV, i, h, s),
                               row(OperandUse::VInDOV, j, g(h), s));
          float diff = dp - Di;
          P[(h * T + i) * T + j] = pij;
          dS[(h * T + i) * T + j] = pij * diff;
        }
      }
    dq.assign(T * Hq * D, 0.0f);
    for (int64_t h = 0; h < Hq; ++h)
      for (int64_t i = 0; i < T; ++i) {
        int64_t b = p_.docs.begin(p_.docs.documentOf(i));
        std::vector<float> vals;
        std::vector<int64_t> pos;
        std::vector<bool> sf;
        for (int64_t j = b; j < keyEnd(i); ++j) {
          vals.push_back(dS[(h * T + i) * T + j]);
          pos.push_back(j);
          sf.push_back(safe(i, j));
        }
        std::vector<double> w = quantizeAxis(vals, pos, sf, b);
        std::vector<float> acc(D, 0.0f);
        for (int64_t kt = b; kt < keyEnd(i); kt += r_.tile) {
          std::vector<ExactAccumulator> ts(D);
          for (int64_t j = kt; j < std::min(kt + r_.tile, keyEnd(i)); ++j) {
            std::vector<double> kr = row(OperandUse::KInDSK, j, g(h), sf[j - b]);
            for (int64_t d = 0; d < D; ++d)
              ts[d].add(w[j - b] * kr[d]);
          }
          for (int64_t d = 0; d < D; ++d)
            acc[d] += ts[d].roundToFloat();
        }
        for (int64_t d = 0; d < D; ++d)
          dq[(i * Hq + h) * D + d] = scale_ * acc[d];
      }
    dk.assign(T * Hkv * D, 0.0f);
    dv.assign(T * Hkv * D, 0.0f);
    const int64_t group = Hq / Hkv;
    for (int64_t gg = 0; gg < Hkv; ++gg)
      for (int64_t j = 0; j < T; ++j) {
        int doc = p_.docs.documentOf(j);
        int64_t b = p_.docs.begin(doc), e = p_.docs.end(doc);
        int64_t first = p_.causal ? j : b;
        // Weights per head of the group along queries.
        std::vector<std::vector<double>> wk(group), wv(group);
        for (int64_t hl = 0; hl < group; ++hl) {
          int64_t h = gg * group + hl;
          std::vector<float> vals;
          std::vector<int64_t> pos;
          std::vector<bool> sf;
          for (int64_t i = first; i < e; ++i) {
            vals.push_back(dS[(h * T + i) * T + j]);
            pos.push_back(i);
            sf.push_back(safe(i, j));
            float pij = P[(h * T + i) * T + j];
            wv[hl].push_back(sf.back() ? static_cast<double>(roundToBf16(pij))
                                       : pq(pij));
          }
          wk[hl] = quantizeAxis(vals, pos, sf, b);
        }
        std::vector<float> accK(D, 0.0f), accV(D, 0.0f);
        for (int64_t qt = b; qt < e; qt += r_.tile) {
          std::vector<ExactAccumulator> tk(D), tv(D);
          bool any = false;
          for (int64_t hl = 0; hl < group; ++hl) {
            int64_t h = gg * group + hl;
            for (int64_t i = std::max(qt, first); i < std::min(qt + r_.tile, e);
                 ++i) {
              any = true;
              bool s = safe(i, j);
              std::vector<double> qr = row(OperandUse::QInDSQ, i, h, s);
              std::vector<double> dr = row(OperandUse::DOInPDO, i, h, s);
              for (int64_t d = 0; d < D; ++d) {
                tk[d].add(wk[hl][i - first] * qr[d]);
                tv[d].add(wv[hl][i - first] * dr[d]);
              }
            }
          }
          if (!any)
            continue;
          for (int64_t d = 0; d < D; ++d) {
            accK[d] += tk[d].roundToFloat();
            accV[d] += tv[d].roundToFloat();
          }
        }
        for (int64_t d = 0; d < D; ++d) {
          dk[(j * Hkv + gg) * D + d] = scale_ * accK[d];
          dv[(j * Hkv + gg) * D + d] = accV[d];
        }
      }
  }

private:
  const Problem &p_;
  const RecipeConfig &r_;
  float scale_, c_;
  std::vector<double> copies_[kNumOperandUses];
};

void expectBitIdentical(const std::vector<float> &a,
                        const std::vector<float> &b, const char *what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t k = 0; k < a.size(); ++k)
    ASSERT_EQ(bitsOf(a[k]), bitsOf(b[k]))
        << what << "[" << k << "]: " << a[k] << " vs " << b[k];
}

void checkAgainstNaive(const Problem &p, const RecipeConfig &r) {
  AttentionInputs in = p.inputs();
  ForwardOutputs fo;
  BackwardOutputs bo;
  ASSERT_TRUE(runAttention(in, r, p.dO.data(), fo, &bo).ok());
  NaiveReference naive(p, r);
  std::vector<float> o, lse, dq, dk, dv;
  naive.forward(o, lse);
  expectBitIdentical(fo.o, o, "O");
  expectBitIdentical(fo.lse, lse, "LSE");
  naive.backward(fo.o, fo.lse, dq, dk, dv);
  expectBitIdentical(bo.dq, dq, "dQ");
  expectBitIdentical(bo.dk, dk, "dK");
  expectBitIdentical(bo.dv, dv, "dV");
}

RecipeConfig recipe(const char *name, int64_t safeBlock = -1) {
  RecipeConfig r;
  EXPECT_TRUE(recipeFromName(name, r).ok());
  if (safeBlock >= 0)
    r.safeBlock = safeBlock;
  return r;
}

TEST(ReferenceAttention, MatchesNaiveDefinitionMxfp8Documents) {
  // Documents shorter than a tile, longer than a tile, a partial last block,
  // a zero-length document; GQA 4:2; small tiles so several are visited.
  Problem p = randomProblem({0, 70, 70, 75, 300}, 4, 2, 64, 1);
  RecipeConfig r = recipe("mxfp8", 64);
  r.tile = 64;
  checkAgainstNaive(p, r);
}

TEST(ReferenceAttention, MatchesNaiveDefinitionDefaultTilesOutliers) {
  Problem p = randomProblem({0, 200, 333}, 2, 1, 64, 2, 100.0f);
  checkAgainstNaive(p, recipe("mxfp8"));
}

TEST(ReferenceAttention, MatchesNaiveDefinitionLargeScores) {
  // Row maxima near 2^17 and 2^27 in the log2 domain: the maximum scaled
  // rounded up sits up to ulp(m) above the largest score (1/64 and 16), the
  // exponents' FMAs keep every p <= 1, and O stays finite.
  for (float scale : {3000.0f, 3.0e6f}) {
    Problem p = randomProblem({0, 150, 300}, 2, 1, 64, 21);
    p.softmaxScale = scale;
    checkAgainstNaive(p, recipe("mxfp8"));
    ForwardOutputs fo;
    ASSERT_TRUE(referenceForward(p.inputs(), recipe("mxfp8"), fo).ok());
    for (float x : fo.o)
      ASSERT_TRUE(std::isfinite(x)) << "scale " << scale;
  }
}

TEST(ReferenceAttention, MatchesNaiveDefinitionUnroundedInputs) {
  // Inputs that are not bf16 values are rounded to bf16 first.
  Problem p = randomProblem({0, 100, 161}, 2, 2, 32, 13);
  for (std::vector<float> *x : {&p.q, &p.k, &p.v, &p.dO})
    for (float &y : *x)
      y *= 1.0123f;
  RecipeConfig r = recipe("mxfp8", 32);
  checkAgainstNaive(p, r);
}

TEST(ReferenceAttention, MatchesNaiveDefinitionNonCausal) {
  Problem p = randomProblem({0, 90, 170}, 2, 2, 32, 3);
  p.causal = false;
  RecipeConfig r = recipe("mxfp8", 32);
  r.tile = 32;
  checkAgainstNaive(p, r);
}

TEST(ReferenceAttention, MatchesNaiveDefinitionStrictAndNoSafeBlock) {
  Problem p = randomProblem({0, 150, 260}, 2, 1, 64, 4);
  checkAgainstNaive(p, recipe("mxfp8-strict", 32));
  checkAgainstNaive(p, recipe("leaky-no-safe-block"));
}

TEST(ReferenceAttention, MatchesNaiveDefinitionNvfp4Mixed) {
  // NVFP4 per token in Q K^T and dO V^T, E4M3 token blocks elsewhere;
  // documents that end inside a block of 16, 32 and a tile; GQA; D = 64
  // and 128 (four and eight NVFP4 blocks per token).
  Problem p = randomProblem({0, 150, 151, 151, 290}, 4, 2, 64, 21);
  checkAgainstNaive(p, recipe("nvfp4-mixed", 128));
  checkAgainstNaive(p, recipe("nvfp4-mixed", 32));
  Problem wide = randomProblem({0, 40, 170}, 2, 1, 128, 22);
  checkAgainstNaive(wide, recipe("nvfp4-mixed"));
}

TEST(ReferenceAttention, Nvfp4OperandsAreTheE2M1TimesUE4M3Values) {
  // Without a safe block every score reads the NVFP4 copies: S must be
  // fl32(fl32(exact dot of the dequantized E2M1 x UE4M3 values) * c).
  Problem p = randomProblem({0, 2}, 1, 1, 32, 23);
  AttentionInputs in = p.inputs();
  RecipeConfig r = recipe("nvfp4-mixed", 0);
  ForwardOutputs fo;
  ScoreTrace trace;
  ASSERT_TRUE(referenceForward(in, r, fo, &trace).ok());
  DocumentLayout one = p.docs;
  QuantizedTensor qq, kq;
  std::vector<float> q(p.q), k(p.k);
  for (float &x : q)
    x = roundToBf16(x);
  for (float &x : k)
    x = roundToBf16(x);
  ASSERT_TRUE(quantize(q.data(), 2, 1, 32, one, ScaleLayout::perToken(16),
                       kNVFP4, qq));
  ASSERT_TRUE(quantize(k.data(), 2, 1, 32, one, ScaleLayout::perToken(16),
                       kNVFP4, kq));
  // Two NVFP4 blocks per token: one UE4M3 scale per 16 channels.
  EXPECT_EQ(qq.scales.size(), 4u);
  float c = static_cast<float>((1.0 / std::sqrt(32.0)) * 1.4426950408889634);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j <= i; ++j) {
      double dot = 0; // 32 products of 6-bit significands: exact
      for (int64_t d = 0; d < 32; ++d)
        dot += qq.dequantize(i, 0, d) * kq.dequantize(j, 0, d);
      EXPECT_EQ(trace.forward[trace.index(in, 0, i, j)],
                static_cast<float>(dot) * c)
          << "i=" << i << " j=" << j;
    }
}

TEST(ReferenceAttention, SingleKeyIsExact) {
  // One token on the bf16 (safe) path: m = fl32(q.k) * c rounded up
  // (c = fl32(scale * log2 e)), P x 2^8 = exp2(fl32(q.k * c + fl32(8 - m)))
  // is within 2^-12 of 256, so bf16 of it is 256 and O = bf16(v) exactly;
  // LSE = (m + log2 P) * ln2.
  Problem p = randomProblem({0, 1}, 1, 1, 32, 5);
  AttentionInputs in = p.inputs();
  ForwardOutputs fo;
  ASSERT_TRUE(referenceForward(in, recipe("mxfp8"), fo).ok());
  double dot = 0; // 32 bf16 products: exact in double here
  for (int d = 0; d < 32; ++d)
    dot += static_cast<double>(p.q[d]) * p.k[d];
  float c = static_cast<float>((1.0 / std::sqrt(32.0)) * 1.4426950408889634);
  float m = productRoundedUp(static_cast<float>(dot), c);
  // P x 2^8, with the addend 8 - m rounded once.
  float p0 = exp2Flushed(std::fma(static_cast<float>(dot), c, 8.0f - m));
  ASSERT_LE(p0, 256.0f);
  ASSERT_GT(p0, 256.0f - 0x1p-12f);
  float lse2 =
      m + static_cast<float>(std::log2(static_cast<double>(p0 / 256.0f)));
  EXPECT_EQ(fo.lse[0], lse2 * 0.693147180559945309417f);
  for (int d = 0; d < 32; ++d)
    EXPECT_EQ(fo.o[d], p.v[d]);
}

TEST(ReferenceAttention, TwoKeysByHand) {
  // Query 1 sees keys 0 and 1, both in its safe block: p = P x 2^8 =
  // exp2(fl32(s c + fl32(8 - m))) with m = (max s) c rounded up;
  // O = (bf16(p0) v0 + bf16(p1) v1) / (p0 + p1), LSE from (p0 + p1) / 2^8.
  Problem p = randomProblem({0, 2}, 1, 1, 32, 6);
  ForwardOutputs fo;
  ASSERT_TRUE(referenceForward(p.inputs(), recipe("mxfp8"), fo).ok());
  float c = static_cast<float>((1.0 / std::sqrt(32.0)) * 1.4426950408889634);
  float s[2];
  for (int j = 0; j < 2; ++j) {
    double dot = 0;
    for (int d = 0; d < 32; ++d)
      dot += static_cast<double>(p.q[32 + d]) * p.k[j * 32 + d];
    s[j] = static_cast<float>(dot);
  }
  float m = productRoundedUp(std::max(s[0], s[1]), c);
  float p0 = exp2Flushed(std::fma(s[0], c, 8.0f - m));
  float p1 = exp2Flushed(std::fma(s[1], c, 8.0f - m));
  float l = p0 + p1; // exact sum of two floats, rounded once
  for (int d = 0; d < 32; ++d) {
    double num = static_cast<double>(roundToBf16(p0)) * p.v[d] +
                 static_cast<double>(roundToBf16(p1)) * p.v[32 + d];
    float acc = static_cast<float>(num); // exact in double: 16-bit products
    EXPECT_EQ(fo.o[32 + d], roundToBf16(acc / l)) << d;
  }
  EXPECT_EQ(fo.lse[1],
            (m + static_cast<float>(std::log2(static_cast<double>(l / 256.0f)))) *
                0.693147180559945309417f);
}

TEST(ReferenceAttention, DeterministicAcrossThreadCounts) {
  Problem p = randomProblem({0, 300, 520}, 2, 2, 64, 7, 30.0f);
  AttentionInputs in = p.inputs();
  RecipeConfig r = recipe("mxfp8");
  ForwardOutputs f1, f2;
  BackwardOutputs b1, b2;
  setNumThreads(1);
  ASSERT_TRUE(runAttention(in, r, p.dO.data(), f1, &b1).ok());
  setNumThreads(7);
  ASSERT_TRUE(runAttention(in, r, p.dO.data(), f2, &b2).ok());
  setNumThreads(0);
  expectBitIdentical(f1.o, f2.o, "O");
  expectBitIdentical(f1.lse, f2.lse, "LSE");
  expectBitIdentical(b1.dq, b2.dq, "dQ");
  expectBitIdentical(b1.dk, b2.dk, "dK");
  expectBitIdentical(b1.dv, b2.dv, "dV");
}

TEST(ReferenceAttention, GroupedQueryAttentionEqualsReplicatedKv) {
  // Hq = 4 on Hkv = 2 gives the same O, LSE and dQ as Hkv = 4 with each kv
  // head duplicated; dK/dV of the group equal the sums (up to rounding).
  Problem gqa = randomProblem({0, 180, 260}, 4, 2, 32, 8);
  Problem rep = gqa;
  rep.Hkv = 4;
  auto dup = [&](const std::vector<float> &x) {
    std::vector<float> y(gqa.T * 4 * gqa.D);
    for (int64_t t = 0; t < gqa.T; ++t)
      for (int64_t h = 0; h < 4; ++h)
        for (int64_t d = 0; d < gqa.D; ++d)
          y[(t * 4 + h) * gqa.D + d] = x[(t * 2 + h / 2) * gqa.D + d];
    return y;
  };
  rep.k = dup(gqa.k);
  rep.v = dup(gqa.v);
  RecipeConfig r = recipe("mxfp8", 64);
  ForwardOutputs f1, f2;
  BackwardOutputs b1, b2;
  ASSERT_TRUE(runAttention(gqa.inputs(), r, gqa.dO.data(), f1, &b1).ok());
  ASSERT_TRUE(runAttention(rep.inputs(), r, rep.dO.data(), f2, &b2).ok());
  expectBitIdentical(f1.o, f2.o, "O");
  expectBitIdentical(f1.lse, f2.lse, "LSE");
  expectBitIdentical(b1.dq, b2.dq, "dQ");
  for (int64_t t = 0; t < gqa.T; ++t)
    for (int64_t g = 0; g < 2; ++g)
      for (int64_t d = 0; d < gqa.D; ++d) {
        float sumK = b2.dk[(t * 4 + 2 * g) * gqa.D + d] +
                     b2.dk[(t * 4 + 2 * g + 1) * gqa.D + d];
        EXPECT_NEAR(b1.dk[(t * 2 + g) * gqa.D + d], sumK,
                    1e-5f * (1 + std::fabs(sumK)));
      }
}

TEST(ReferenceAttention, NaNPropagatesOnlyForward) {
  // A NaN in K at position 100 of document 1: document 0 is untouched, and
  // in document 1 queries before 100 stay finite (the NaN's key block lies
  // in their safe block, on the bf16 path); queries from 100 on are NaN.
  Problem p = randomProblem({0, 64, 300}, 1, 1, 32, 9);
  ForwardOutputs clean, dirty;
  BackwardOutputs cg, dg;
  RecipeConfig r = recipe("mxfp8");
  ASSERT_TRUE(runAttention(p.inputs(), r, p.dO.data(), clean, &cg).ok());
  p.k[100 * 32 + 5] = NAN;
  ASSERT_TRUE(runAttention(p.inputs(), r, p.dO.data(), dirty, &dg).ok());
  for (int64_t i = 0; i < 100; ++i)
    for (int64_t d = 0; d < 32; ++d)
      ASSERT_EQ(bitsOf(dirty.o[i * 32 + d]), bitsOf(clean.o[i * 32 + d]))
          << i;
  for (int64_t i = 100; i < 300; ++i)
    ASSERT_TRUE(std::isnan(dirty.lse[i])) << i;
  for (size_t k = 0; k < 64 * 32; ++k) { // document 0's gradients
    ASSERT_EQ(bitsOf(dg.dq[k]), bitsOf(cg.dq[k]));
    ASSERT_EQ(bitsOf(dg.dk[k]), bitsOf(cg.dk[k]));
  }
}

TEST(ReferenceAttention, QuantizedIsCloseToFloat64) {
  Problem p = randomProblem({0, 400, 512}, 2, 2, 64, 10);
  ForwardOutputs fq, fe;
  BackwardOutputs bq, be;
  ASSERT_TRUE(runAttention(p.inputs(), recipe("mxfp8"), p.dO.data(), fq, &bq).ok());
  ASSERT_TRUE(runAttention(p.inputs(), recipe("none"), p.dO.data(), fe, &be).ok());
  auto cosine = [](const std::vector<float> &a, const std::vector<float> &b) {
    double ab = 0, aa = 0, bb = 0;
    for (size_t k = 0; k < a.size(); ++k)
      ab += double(a[k]) * b[k], aa += double(a[k]) * a[k],
          bb += double(b[k]) * b[k];
    return ab / std::sqrt(aa * bb);
  };
  EXPECT_GT(cosine(fq.o, fe.o), 0.995);
  EXPECT_GT(cosine(bq.dq, be.dq), 0.98);
  EXPECT_GT(cosine(bq.dk, be.dk), 0.98);
  EXPECT_GT(cosine(bq.dv, be.dv), 0.99);
  for (size_t k = 0; k < fe.lse.size(); ++k)
    ASSERT_NEAR(fq.lse[k], fe.lse[k], 0.05);
}

/// An independent double-precision attention loss sum(O * dO), no rounding.
double lossFloat64(const Problem &p) {
  double loss = 0;
  const double scale = 1.0 / std::sqrt(static_cast<double>(p.D));
  for (int64_t h = 0; h < p.Hq; ++h)
    for (int64_t i = 0; i < p.T; ++i) {
      int64_t b = p.docs.begin(p.docs.documentOf(i));
      int64_t e = p.causal ? i + 1 : p.docs.end(p.docs.documentOf(i));
      int64_t g = h / (p.Hq / p.Hkv);
      std::vector<double> s;
      double mx = -INFINITY;
      for (int64_t j = b; j < e; ++j) {
        double dot = 0;
        for (int64_t d = 0; d < p.D; ++d)
          dot += double(p.q[(i * p.Hq + h) * p.D + d]) *
                 p.k[(j * p.Hkv + g) * p.D + d];
        s.push_back(scale * dot);
        mx = std::max(mx, s.back());
      }
      double l = 0;
      for (double &x : s)
        l += (x = std::exp(x - mx));
      for (int64_t d = 0; d < p.D; ++d) {
        double o = 0;
        for (int64_t j = b; j < e; ++j)
          o += s[j - b] / l * p.v[(j * p.Hkv + g) * p.D + d];
        loss += o * p.dO[(i * p.Hq + h) * p.D + d];
      }
    }
  return loss;
}

TEST(Float64Attention, GradientsMatchFiniteDifferences) {
  // Inputs hold bf16 values, so the reference's rounding is the identity;
  // the finite differences use a separate unrounded implementation.
  Problem p = randomProblem({0, 5, 12}, 2, 1, 8, 11);
  ForwardOutputs fo;
  BackwardOutputs bo;
  ASSERT_TRUE(float64Attention(p.inputs(), p.dO.data(), fo, &bo).ok());
  auto check = [&](std::vector<float> &x, const std::vector<float> &grad,
                   const char *name) {
    for (size_t k = 0; k < x.size(); k += 3) {
      float saved = x[k];
      const float eps = 1e-2f;
      x[k] = saved + eps;
      double up = lossFloat64(p);
      x[k] = saved - eps;
      double down = lossFloat64(p);
      x[k] = saved;
      double fd = (up - down) / (2.0 * eps);
      ASSERT_NEAR(grad[k], fd, 2e-3 * (1 + std::fabs(fd))) << name << k;
    }
  };
  check(p.q, bo.dq, "dQ");
  check(p.k, bo.dk, "dK");
  check(p.v, bo.dv, "dV");
  // And O itself.
  double lossFromO = 0;
  for (size_t k = 0; k < fo.o.size(); ++k)
    lossFromO += double(fo.o[k]) * p.dO[k];
  EXPECT_NEAR(lossFromO, lossFloat64(p), 1e-4);
}

TEST(ReferenceAttention, RejectsBadInputs) {
  Problem p = randomProblem({0, 10}, 3, 2, 32, 12);
  ForwardOutputs fo;
  Status s = referenceForward(p.inputs(), recipe("mxfp8"), fo);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message,
            "Hq (query heads) = 3 is not a multiple of Hkv (kv heads) = 2");
  Problem q = randomProblem({0, 10}, 1, 1, 48, 12);
  s = referenceForward(q.inputs(), recipe("mxfp8"), fo);
  EXPECT_EQ(s.message,
            "Q in QK^T: head dim 48 is not divisible by the channel block 32");
  RecipeConfig r = recipe("mxfp8", 48);
  s = referenceForward(randomProblem({0, 10}, 1, 1, 32, 1).inputs(), r, fo);
  EXPECT_EQ(s.message, "safe block must be 0 (none) or a positive multiple of "
                       "32, got 48");
}

// The reference takes 0 as 1/sqrt(D) and otherwise the softmax scale rule
// of every tool and the runtime, with its message (it used to accept a
// negative scale); its head check is validateHeads.
TEST(ReferenceAttention, SoftmaxScaleAndHeadsAreTheSharedRules) {
  DocumentLayout docs = DocumentLayout::singleDocument(4);
  AttentionInputs in;
  in.numTokens = 4;
  in.numHeads = 2;
  in.numKvHeads = 1;
  in.headDim = 32;
  in.docs = &docs;
  EXPECT_TRUE(validateAttentionInputs(in).ok());
  in.softmaxScale = 0.125f;
  EXPECT_TRUE(validateAttentionInputs(in).ok());
  for (float bad : {-0.125f, -1e-30f, std::numeric_limits<float>::infinity(),
                    std::numeric_limits<float>::quiet_NaN()}) {
    in.softmaxScale = bad;
    std::string shared;
    ASSERT_FALSE(flamia::validation::validateSoftmaxScale(bad, shared));
    Status s = validateAttentionInputs(in);
    EXPECT_FALSE(s.ok());
    EXPECT_EQ(s.message, shared);
  }
  in.softmaxScale = -0.125f;
  EXPECT_EQ(validateAttentionInputs(in).message,
            "softmax_scale -0.125 must be finite and > 0");

  // Heads: validateHeads, word for word.
  in.softmaxScale = 0.0f;
  in.numHeads = 3;
  in.numKvHeads = 2;
  EXPECT_EQ(validateAttentionInputs(in).message,
            "Hq (query heads) = 3 is not a multiple of Hkv (kv heads) = 2");
  in.numHeads = 2;
  in.numKvHeads = 0;
  EXPECT_EQ(validateAttentionInputs(in).message,
            "Hkv (kv heads) = 0 must be in [1, Hq = 2]");
}

} // namespace
