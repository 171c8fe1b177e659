//===- Float64Attention.cpp - Recipe `none`: exact attention in double ----===//
//
// The unquantized reference the quality tables compare against: softmax
// attention and its exact gradients computed in double on the bf16-rounded
// inputs (double accumulation, vectorized), cast to float32.
//
//===----------------------------------------------------------------------===//
#include "flamia/Numerics/ExactSum.h"
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
  return sumOfProducts(a, b, n);
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

  // Rows: O, LSE, D_i and dQ per (head, document, chunk of 64 queries), key
  // tiles of 64 in the inner loops so that K and V tiles stay in cache.
  constexpr int64_t kChunk = 64;
  std::vector<double> o(static_cast<size_t>(T * Hq * D), 0.0);
  std::vector<double> lse(static_cast<size_t>(Hq * T), 0.0);
  std::vector<double> Dval(static_cast<size_t>(Hq * T), 0.0);
  if (grads) {
    grads->dq.assign(static_cast<size_t>(T * Hq * D), 0.0f);
    grads->dk.assign(static_cast<size_t>(T * Hkv * D), 0.0f);
    grads->dv.assign(static_cast<size_t>(T * Hkv * D), 0.0f);
  }
  const bool backward = dO && grads;
  struct Item {
    int64_t head;
    int doc;
    int64_t begin, end;
  };
  auto chunks = [&](int64_t heads) {
    std::vector<Item> items;
    for (int64_t h = 0; h < heads; ++h)
      for (int d = 0; d < docs.numDocuments(); ++d)
        for (int64_t b = docs.begin(d); b < docs.end(d); b += kChunk)
          items.push_back({h, d, b, std::min(b + kChunk, docs.end(d))});
    return items;
  };
  const std::vector<Item> rowItems = chunks(Hq);
  parallelFor(static_cast<int64_t>(rowItems.size()), [&](int64_t k) {
    const Item &it = rowItems[k];
    const int64_t h = it.head, g = h / group;
    const int64_t b = docs.begin(it.doc), e = docs.end(it.doc), L = e - b;
    const int64_t nq = it.end - it.begin;
    auto keyEnd = [&](int64_t i) { return in.causal ? i + 1 : e; };
    const int64_t keyLimit = in.causal ? it.end : e;
    std::vector<double> S(static_cast<size_t>(nq * L), 0.0);
    for (int64_t kt = b; kt < keyLimit; kt += kChunk)
      for (int64_t qi = 0; qi < nq; ++qi) {
        const int64_t i = it.begin + qi;
        const int64_t jEnd = std::min(kt + kChunk, keyEnd(i));
        for (int64_t j = kt; j < jEnd; ++j)
          S[qi * L + (j - b)] = scale * dot(qrow(i, h), krow(j, g), D);
      }
    std::vector<const double *> rows(static_cast<size_t>(kChunk));
    for (int64_t qi = 0; qi < nq; ++qi) {
      const int64_t i = it.begin + qi, n = keyEnd(i) - b;
      double *s = &S[qi * L];
      double mx = -std::numeric_limits<double>::infinity();
      bool nan = false;
      for (int64_t x = 0; x < n; ++x) {
        if (std::isnan(s[x]))
          nan = true;
        else
          mx = std::max(mx, s[x]);
      }
      if (nan)
        mx = std::numeric_limits<double>::quiet_NaN();
      double l = 0;
      for (int64_t x = 0; x < n; ++x)
        l += (s[x] = std::exp(s[x] - mx));
      for (int64_t x = 0; x < n; ++x)
        s[x] /= l; // P
      lse[h * T + i] = mx + std::log(l);
    }
    for (int64_t kt = b; kt < keyLimit; kt += kChunk)
      for (int64_t qi = 0; qi < nq; ++qi) {
        const int64_t i = it.begin + qi;
        const int64_t jEnd = std::min(kt + kChunk, keyEnd(i));
        if (jEnd <= kt)
          continue;
        for (int64_t j = kt; j < jEnd; ++j)
          rows[j - kt] = vrow(j, g);
        accumulateWeightedRows(&S[qi * L + (kt - b)], rows.data(), jEnd - kt,
                               D, &o[(i * Hq + h) * D]);
      }
    if (!backward)
      return;
    for (int64_t qi = 0; qi < nq; ++qi) {
      const int64_t i = it.begin + qi;
      Dval[h * T + i] = dot(dorow(i, h), &o[(i * Hq + h) * D], D);
    }
    for (int64_t kt = b; kt < keyLimit; kt += kChunk)
      for (int64_t qi = 0; qi < nq; ++qi) {
        const int64_t i = it.begin + qi;
        const int64_t jEnd = std::min(kt + kChunk, keyEnd(i));
        for (int64_t j = kt; j < jEnd; ++j) {
          double &x = S[qi * L + (j - b)]; // P -> dS
          x = x * (dot(dorow(i, h), vrow(j, g), D) - Dval[h * T + i]);
        }
      }
    std::vector<double> dq(static_cast<size_t>(nq * D), 0.0);
    for (int64_t kt = b; kt < keyLimit; kt += kChunk)
      for (int64_t qi = 0; qi < nq; ++qi) {
        const int64_t i = it.begin + qi;
        const int64_t jEnd = std::min(kt + kChunk, keyEnd(i));
        if (jEnd <= kt)
          continue;
        for (int64_t j = kt; j < jEnd; ++j)
          rows[j - kt] = krow(j, g);
        accumulateWeightedRows(&S[qi * L + (kt - b)], rows.data(), jEnd - kt,
                               D, &dq[qi * D]);
      }
    for (int64_t qi = 0; qi < nq; ++qi)
      for (int64_t d = 0; d < D; ++d)
        grads->dq[((it.begin + qi) * Hq + h) * D + d] =
            static_cast<float>(scale * dq[qi * D + d]);
  });
  out.o.resize(o.size());
  for (size_t x = 0; x < o.size(); ++x)
    out.o[x] = static_cast<float>(o[x]);
  out.lse.resize(lse.size());
  for (size_t x = 0; x < lse.size(); ++x)
    out.lse[x] = static_cast<float>(lse[x]);
  if (!backward)
    return Status::success();

  // Columns: dK, dV per (kv head, document, tile of 64 keys), summing the
  // query heads of the group.
  const std::vector<Item> colItems = chunks(Hkv);
  parallelFor(static_cast<int64_t>(colItems.size()), [&](int64_t k) {
    const Item &it = colItems[k];
    const int64_t g = it.head;
    const int64_t b = docs.begin(it.doc), e = docs.end(it.doc);
    const int64_t j0 = it.begin, j1 = it.end, nk = j1 - j0;
    std::vector<double> dk(static_cast<size_t>(nk * D), 0.0),
        dv(static_cast<size_t>(nk * D), 0.0);
    for (int64_t hl = 0; hl < group; ++hl) {
      const int64_t h = g * group + hl;
      for (int64_t i = in.causal ? j0 : b; i < e; ++i) {
        const double *qr = qrow(i, h), *dr = dorow(i, h);
        const int64_t jEnd = in.causal ? std::min(j1, i + 1) : j1;
        for (int64_t j = j0; j < jEnd; ++j) {
          const double P =
              std::exp(scale * dot(qr, krow(j, g), D) - lse[h * T + i]);
          const double dS = P * (dot(dr, vrow(j, g), D) - Dval[h * T + i]);
          double *dkj = &dk[(j - j0) * D], *dvj = &dv[(j - j0) * D];
          const double *rows2[1] = {qr};
          accumulateWeightedRows(&dS, rows2, 1, D, dkj);
          rows2[0] = dr;
          accumulateWeightedRows(&P, rows2, 1, D, dvj);
        }
      }
    }
    for (int64_t j = j0; j < j1; ++j)
      for (int64_t d = 0; d < D; ++d) {
        grads->dk[(j * Hkv + g) * D + d] =
            static_cast<float>(scale * dk[(j - j0) * D + d]);
        grads->dv[(j * Hkv + g) * D + d] =
            static_cast<float>(dv[(j - j0) * D + d]);
      }
  });
  return Status::success();
}

} // namespace flamia::numerics
