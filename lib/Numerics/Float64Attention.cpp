//===- Float64Attention.cpp - Recipe `none`: exact attention in double ----===//
//
// The unquantized reference the quality tables compare against: softmax
// attention and its exact gradients computed in double on the bf16-rounded
// inputs (double accumulation in ascending index order), cast to float32.
//
//===----------------------------------------------------------------------===//
#include "flamia/Numerics/Formats.h"
#include "flamia/Numerics/Parallel.h"
#include "flamia/Numerics/ReferenceAttention.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace flamia::numerics {

namespace {

std::vector<double> bf16Doubles(const float *x, size_t n) {
  std::vector<double> out(n);
  for (size_t k = 0; k < n; ++k)
    out[k] = roundToBf16(x[k]);
  return out;
}

inline double dot(const double *a, const double *b, int64_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  const int64_t n4 = n & ~int64_t(3);
  for (int64_t k = 0; k < n4; k += 4) {
    s0 += a[k] * b[k];
    s1 += a[k + 1] * b[k + 1];
    s2 += a[k + 2] * b[k + 2];
    s3 += a[k + 3] * b[k + 3];
  }
  for (int64_t k = n4; k < n; ++k)
    s0 += a[k] * b[k];
  return (s0 + s1) + (s2 + s3);
}

} // namespace

Status float64Attention(const AttentionInputs &in, const float *dO,
                        ForwardOutputs &out, BackwardOutputs *grads) {
  if (Status s = validateAttentionInputs(in); !s)
    return s;
  const DocumentLayout &docs = *in.docs;
  const int64_t T = in.numTokens, Hq = in.numHeads, Hkv = in.numKvHeads,
                D = in.headDim, group = Hq / Hkv;
  const double scale = in.effectiveSoftmaxScale();
  const std::vector<double> q = bf16Doubles(in.q, T * Hq * D);
  const std::vector<double> k = bf16Doubles(in.k, T * Hkv * D);
  const std::vector<double> v = bf16Doubles(in.v, T * Hkv * D);
  std::vector<double> dob;
  if (dO)
    dob = bf16Doubles(dO, T * Hq * D);
  auto qrow = [&](int64_t t, int64_t h) { return &q[(t * Hq + h) * D]; };
  auto krow = [&](int64_t t, int64_t g) { return &k[(t * Hkv + g) * D]; };
  auto vrow = [&](int64_t t, int64_t g) { return &v[(t * Hkv + g) * D]; };
  auto dorow = [&](int64_t t, int64_t h) { return &dob[(t * Hq + h) * D]; };

  // Rows: O, LSE, D_i and dQ per (head, query).
  std::vector<double> o(static_cast<size_t>(T * Hq * D), 0.0);
  std::vector<double> lse(static_cast<size_t>(Hq * T), 0.0);
  std::vector<double> Dval(static_cast<size_t>(Hq * T), 0.0);
  if (grads) {
    grads->dq.assign(static_cast<size_t>(T * Hq * D), 0.0f);
    grads->dk.assign(static_cast<size_t>(T * Hkv * D), 0.0f);
    grads->dv.assign(static_cast<size_t>(T * Hkv * D), 0.0f);
  }
  const bool backward = dO && grads;
  parallelFor(Hq * T, [&](int64_t item) {
    const int64_t h = item / T, i = item % T, g = h / group;
    const int doc = docs.documentOf(i);
    const int64_t b = docs.begin(doc);
    const int64_t keyEnd = in.causal ? i + 1 : docs.end(doc);
    const int64_t n = keyEnd - b;
    std::vector<double> s(n), p(n);
    double mx = -std::numeric_limits<double>::infinity();
    bool nan = false;
    for (int64_t j = b; j < keyEnd; ++j) {
      s[j - b] = scale * dot(qrow(i, h), krow(j, g), D);
      if (std::isnan(s[j - b]))
        nan = true;
      else
        mx = std::max(mx, s[j - b]);
    }
    if (nan)
      mx = std::numeric_limits<double>::quiet_NaN();
    double l = 0;
    for (int64_t x = 0; x < n; ++x)
      l += (p[x] = std::exp(s[x] - mx));
    double *orow = &o[(i * Hq + h) * D];
    for (int64_t j = b; j < keyEnd; ++j) {
      const double w = p[j - b] / l;
      const double *vr = vrow(j, g);
      for (int64_t d = 0; d < D; ++d)
        orow[d] += w * vr[d];
    }
    lse[h * T + i] = mx + std::log(l);
    if (!backward)
      return;
    const double Di = dot(dorow(i, h), orow, D);
    Dval[h * T + i] = Di;
    std::vector<double> dq(D, 0.0);
    for (int64_t j = b; j < keyEnd; ++j) {
      const double P = p[j - b] / l;
      const double dS = P * (dot(dorow(i, h), vrow(j, g), D) - Di);
      const double *kr = krow(j, g);
      for (int64_t d = 0; d < D; ++d)
        dq[d] += dS * kr[d];
    }
    for (int64_t d = 0; d < D; ++d)
      grads->dq[(i * Hq + h) * D + d] = static_cast<float>(scale * dq[d]);
  });
  out.o.resize(o.size());
  for (size_t x = 0; x < o.size(); ++x)
    out.o[x] = static_cast<float>(o[x]);
  out.lse.resize(lse.size());
  for (size_t x = 0; x < lse.size(); ++x)
    out.lse[x] = static_cast<float>(lse[x]);
  if (!backward)
    return Status::success();

  // Columns: dK, dV per (kv head, key), summing the heads of the group.
  parallelFor(Hkv * T, [&](int64_t item) {
    const int64_t g = item / T, j = item % T;
    const int doc = docs.documentOf(j);
    const int64_t first = in.causal ? j : docs.begin(doc);
    const int64_t e = docs.end(doc);
    std::vector<double> dk(D, 0.0), dv(D, 0.0);
    for (int64_t hl = 0; hl < group; ++hl) {
      const int64_t h = g * group + hl;
      for (int64_t i = first; i < e; ++i) {
        const double P =
            std::exp(scale * dot(qrow(i, h), krow(j, g), D) - lse[h * T + i]);
        const double dS =
            P * (dot(dorow(i, h), vrow(j, g), D) - Dval[h * T + i]);
        const double *qr = qrow(i, h), *dr = dorow(i, h);
        for (int64_t d = 0; d < D; ++d) {
          dk[d] += dS * qr[d];
          dv[d] += P * dr[d];
        }
      }
    }
    for (int64_t d = 0; d < D; ++d) {
      grads->dk[(j * Hkv + g) * D + d] = static_cast<float>(scale * dk[d]);
      grads->dv[(j * Hkv + g) * D + d] = static_cast<float>(dv[d]);
    }
  });
  return Status::success();
}

} // namespace flamia::numerics
