//===- ExactSum.cpp - Exact sums rounded once -----------------------------===//
#include "flamia/Numerics/ExactSum.h"

#include <cstring>

// Hot loops: on x86-64 with GCC/Clang, an AVX2 clone is selected at load
// time. Without FMA contraction (-ffp-contract=off) and without reassociation,
// each lane does the same IEEE operations in either clone.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define FLAMIA_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define FLAMIA_VECTOR_CLONES
#endif

namespace flamia::numerics {

// Vec4 values live only inside the cloned functions below, never in a call:
// a helper such as `Vec4 load4(const double *)` is compiled for the default
// target, where a 32-byte vector is returned through memory, while the AVX2
// clone expects it in %ymm0. Once inlined (-O1 and up) nobody notices; at -O0
// the call is real, the AVX2 clone passes its source pointer where the helper
// expects the return slot, and the helper overwrites the caller's input
// (issue 18: the numerics unit tests failed at -O0 only). Hence the memcpy
// at each use.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi" // Vec4 never crosses a call
#endif

namespace {
typedef double Vec4 __attribute__((vector_size(32)));
} // namespace

FLAMIA_VECTOR_CLONES
double sumOfProducts(const double *a, const double *b, int64_t n) {
  Vec4 acc0 = {0, 0, 0, 0}, acc1 = {0, 0, 0, 0};
  int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    Vec4 a0, b0, a1, b1;
    std::memcpy(&a0, a + k, sizeof(Vec4));
    std::memcpy(&b0, b + k, sizeof(Vec4));
    std::memcpy(&a1, a + k + 4, sizeof(Vec4));
    std::memcpy(&b1, b + k + 4, sizeof(Vec4));
    acc0 += a0 * b0;
    acc1 += a1 * b1;
  }
  Vec4 acc = acc0 + acc1;
  double s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  for (; k < n; ++k)
    s += a[k] * b[k];
  return s;
}

FLAMIA_VECTOR_CLONES
void accumulateWeightedRows(const double *w, const double *const *rows,
                            int64_t n, int64_t D, double *acc) {
  int64_t k = 0;
  for (; k + 4 <= n; k += 4) {
    const double w0 = w[k], w1 = w[k + 1], w2 = w[k + 2], w3 = w[k + 3];
    const double *r0 = rows[k], *r1 = rows[k + 1], *r2 = rows[k + 2],
                 *r3 = rows[k + 3];
    for (int64_t d = 0; d < D; ++d)
      acc[d] += (w0 * r0[d] + w1 * r1[d]) + (w2 * r2[d] + w3 * r3[d]);
  }
  for (; k < n; ++k) {
    const double wk = w[k];
    const double *r = rows[k];
    for (int64_t d = 0; d < D; ++d)
      acc[d] += wk * r[d];
  }
}

void ExactAccumulator::clear() {
  std::memset(limbs_, 0, sizeof(limbs_));
  ieeeSum_ = 0.0;
  nonFinite_ = false;
  pendingAdds_ = 0;
}

void ExactAccumulator::add(double term) {
  ieeeSum_ += term;
  if (!std::isfinite(term)) {
    nonFinite_ = true;
    return;
  }
  if (term == 0.0)
    return;
  int exp;
  double frac = std::frexp(term, &exp); // term = frac * 2^exp, |frac| in [.5,1)
  bool negative = frac < 0;
  if (negative)
    frac = -frac;
  uint64_t mant = static_cast<uint64_t>(std::ldexp(frac, 53)); // exact
  int pos = exp - 53 + kOffset; // weight of mant's lowest bit; >= 26
  int limb = pos / kLimbBits;
  int shift = pos % kLimbBits;
  unsigned __int128 v = static_cast<unsigned __int128>(mant) << shift;
  int64_t c0 = static_cast<int64_t>(static_cast<uint32_t>(v));
  int64_t c1 = static_cast<int64_t>(static_cast<uint32_t>(v >> 32));
  int64_t c2 = static_cast<int64_t>(static_cast<uint32_t>(v >> 64));
  if (negative) {
    limbs_[limb] -= c0;
    limbs_[limb + 1] -= c1;
    limbs_[limb + 2] -= c2;
  } else {
    limbs_[limb] += c0;
    limbs_[limb + 1] += c1;
    limbs_[limb + 2] += c2;
  }
  // Each add moves a limb by < 2^32: normalize long before int64 overflows.
  if (++pendingAdds_ >= (1u << 30))
    normalize();
}

void ExactAccumulator::normalize() {
  for (int k = 0; k + 1 < kLimbs; ++k) {
    int64_t carry = limbs_[k] >> kLimbBits; // floor division
    limbs_[k] -= carry * (int64_t(1) << kLimbBits);
    limbs_[k + 1] += carry;
  }
  pendingAdds_ = 0;
}

template <int Precision, int MinExp>
double ExactAccumulator::roundTo(bool &isZero, bool &negative) const {
  int64_t a[kLimbs];
  std::memcpy(a, limbs_, sizeof(a));
  auto propagate = [&a]() {
    for (int k = 0; k + 1 < kLimbs; ++k) {
      int64_t carry = a[k] >> kLimbBits;
      a[k] -= carry * (int64_t(1) << kLimbBits);
      a[k + 1] += carry;
    }
  };
  propagate();
  negative = a[kLimbs - 1] < 0;
  if (negative) {
    for (int64_t &x : a)
      x = -x;
    propagate();
  }
  int top = kLimbs - 1;
  while (top >= 0 && a[top] == 0)
    --top;
  isZero = top < 0;
  if (isZero)
    return 0.0;
  auto bit = [&a](int pos) -> uint64_t {
    return (static_cast<uint64_t>(a[pos / kLimbBits]) >> (pos % kLimbBits)) &
           1u;
  };
  int msb = top * kLimbBits + 63 -
            __builtin_clzll(static_cast<unsigned long long>(a[top]));
  int lsb = msb - (Precision - 1);
  const int minLsb = kOffset + MinExp; // weight of the smallest subnormal
  if (lsb < minLsb)
    lsb = minLsb;
  uint64_t q = 0;
  for (int pos = msb; pos >= lsb; --pos)
    q = (q << 1) | bit(pos);
  uint64_t roundBit = bit(lsb - 1);
  bool sticky = false;
  int stickyTop = lsb - 2; // any set bit at positions <= stickyTop
  if (stickyTop >= 0) {
    int limb = stickyTop / kLimbBits;
    int within = stickyTop % kLimbBits;
    uint64_t mask = within == 63 ? ~0ull : ((1ull << (within + 1)) - 1);
    sticky = (static_cast<uint64_t>(a[limb]) & mask) != 0;
    for (int k = limb - 1; k >= 0 && !sticky; --k)
      sticky = a[k] != 0;
  }
  if (roundBit && (sticky || (q & 1u)))
    ++q;
  return std::ldexp(static_cast<double>(q), lsb - kOffset);
}

float ExactAccumulator::roundToFloat() const {
  if (nonFinite_)
    return static_cast<float>(ieeeSum_);
  bool isZero, negative;
  // float32: 24 bits of precision, smallest subnormal 2^-149. The double
  // returned holds q * 2^k with q <= 2^24 exactly; the cast to float is exact
  // or overflows to inf, exactly as RNE does.
  double mag = roundTo<24, -149>(isZero, negative);
  if (isZero)
    return 0.0f;
  float f = static_cast<float>(mag);
  return negative ? -f : f;
}

double ExactAccumulator::roundToDouble() const {
  if (nonFinite_)
    return ieeeSum_;
  bool isZero, negative;
  double mag = roundTo<53, -1074>(isZero, negative);
  if (isZero)
    return 0.0;
  return negative ? -mag : mag;
}

float exactDotSlow(const double *a, const double *b, int64_t n) {
  ExactAccumulator acc;
  for (int64_t k = 0; k < n; ++k)
    acc.add(a[k] * b[k]);
  return acc.roundToFloat();
}

} // namespace flamia::numerics
