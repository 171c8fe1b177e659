//===- ExactSum.h - Exact sums of exact products, rounded once ----*- C++ -*-===//
//
// The CPU reference defines every dot product and every tile sum as the EXACT
// mathematical sum of its (exactly representable) products, rounded once to
// float32 (round to nearest even). Products of the operands it uses are exact
// in double: E4M3 x E4M3 x 2^(e_a+e_b) has 8 significant bits, bf16 x bf16
// has 16, and their exponents stay far inside double's range.
//
// Fast paths: (1) low-precision products are multiples of 2^lsb; when their
// absolute sum is below 2^(lsb+52) every partial double sum is exact, so the
// double sum rounded to float is fl32(exact) (this is the common case, and
// the only cheap way to get exact ties right). (2) Otherwise bound the error
// of the double sum by gamma_(n-1) * sum|p_k|, gamma_k = k u / (1 - k u): if
// every value in [s - err, s + err] rounds to the same float32, that float
// is fl32(exact). (3) Else ExactAccumulator adds the products into a wide
// fixed-point integer and rounds it once.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_NUMERICS_EXACTSUM_H
#define FLAMIA_NUMERICS_EXACTSUM_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace flamia::numerics {

/// Accumulates finite doubles exactly (a 2304-bit fixed-point integer whose
/// lowest bit weighs 2^-1152, wide enough for any double and 2^40 terms) and
/// rounds the exact sum once to float32. A non-finite term makes the result
/// the IEEE double sum of the terms (NaN or +-inf), cast to float.
class ExactAccumulator {
public:
  ExactAccumulator() { clear(); }
  void clear();
  void add(double term);
  /// Adds a * b, which must be exact in double.
  void addProduct(double a, double b) { add(a * b); }
  /// RNE of the exact sum to float32. An exact zero is +0; a nonzero sum
  /// below half the smallest subnormal gives a zero of its sign.
  float roundToFloat() const;
  /// The exact sum rounded to double (RNE), for tests and diagnostics.
  double roundToDouble() const;

private:
  static constexpr int kLimbBits = 32;
  static constexpr int kLimbs = 72;
  static constexpr int kOffset = 1152; // bit 0 has weight 2^-kOffset
  void normalize();
  template <int Precision, int MinExp>
  double roundTo(bool &isZero, bool &negative) const;
  int64_t limbs_[kLimbs];
  double ieeeSum_;
  bool nonFinite_;
  uint32_t pendingAdds_;
};

/// An upper bound on |double sum - exact sum| of n products whose absolute
/// values sum to at most `absBound` (generous: 4x the classical bound, which
/// also covers the rounding of absBound itself and of s +- err).
inline double sumErrorBound(int64_t n, double absBound) {
  return absBound * static_cast<double>(n + 1) * 0x1p-51;
}

/// sum_k a[k] * b[k] in double, in an unspecified order (vectorized; on
/// x86-64 an AVX2 clone is picked at run time). The callers' results never
/// depend on the order: they either prove the double sum exact or bound its
/// error independently of the order.
double sumOfProducts(const double *a, const double *b, int64_t n);

/// acc[d] += sum_k w[k] * rows[k][d] for d < D, in an unspecified order.
void accumulateWeightedRows(const double *w, const double *const *rows,
                            int64_t n, int64_t D, double *acc);

/// 2^e exactly, without a libm call for normal results.
inline double pow2(int e) {
  if (e < -1022 || e > 1023)
    return std::ldexp(1.0, e);
  uint64_t u = static_cast<uint64_t>(e + 1023) << 52;
  double x;
  std::memcpy(&x, &u, 8);
  return x;
}

/// The exponent of the lowest set significand bit of a finite nonzero
/// double: x is an odd integer times 2^lsbExponent(x).
inline int lsbExponent(double x) {
  uint64_t u;
  std::memcpy(&u, &x, 8);
  int biased = static_cast<int>((u >> 52) & 0x7ff);
  uint64_t sig = u & ((uint64_t(1) << 52) - 1);
  if (biased == 0)
    return -1074 + __builtin_ctzll(sig);
  sig |= uint64_t(1) << 52;
  return biased - 1075 + __builtin_ctzll(sig);
}

/// lsb of a vector: the minimum lsbExponent over its nonzero elements;
/// kLsbOfZero if all are zero, kLsbOfNonFinite if one is NaN or inf.
constexpr int kLsbOfZero = 1 << 20;
constexpr int kLsbOfNonFinite = -(1 << 22);
inline int minLsbExponent(const double *a, int64_t n) {
  int lsb = kLsbOfZero;
  for (int64_t k = 0; k < n; ++k) {
    if (a[k] == 0.0)
      continue;
    if (!std::isfinite(a[k]))
      return kLsbOfNonFinite;
    int e = lsbExponent(a[k]);
    if (e < lsb)
      lsb = e;
  }
  return lsb;
}

/// True when a double summation of products, each a multiple of 2^lsb and
/// together of absolute sum at most `absBound`, is exact in any order: every
/// partial sum is then a multiple of 2^lsb below 2^(lsb + 52) in magnitude
/// (one bit of margin for the rounding of absBound itself).
inline bool doubleSumIsExact(double absBound, int lsb) {
  if (lsb <= kLsbOfNonFinite / 2)
    return false;
  if (lsb >= kLsbOfZero / 2)
    return absBound == 0.0;
  return absBound < pow2(lsb + 52);
}

/// If fl32 of every value in [s - err, s + err] is the same nonzero float,
/// stores it and returns true.
inline bool roundIfCertain(double s, double err, float &out) {
  float lo = static_cast<float>(s - err);
  float hi = static_cast<float>(s + err);
  if (lo == hi && lo != 0.0f) {
    out = lo;
    return true;
  }
  return false;
}

/// fl32 of the exact dot product sum_k a[k] * b[k], where each product is
/// exact in double; `absBound` >= sum_k |a[k] b[k]| (for example
/// ||a||_2 * ||b||_2) and every product is a multiple of 2^lsb (for example
/// lsb = minLsbExponent(a) + minLsbExponent(b)). Three stages: (1) the double
/// sum is provably exact: round it; (2) every value within the error bound
/// of the double sum rounds to the same float; (3) ExactAccumulator. NaN/inf
/// inputs propagate as in IEEE arithmetic.
float exactDotSlow(const double *a, const double *b, int64_t n);
inline float exactDot(const double *a, const double *b, int64_t n,
                      double absBound, int lsb) {
  const double s = sumOfProducts(a, b, n);
  if (doubleSumIsExact(absBound, lsb))
    return static_cast<float>(s);
  float out;
  if (roundIfCertain(s, sumErrorBound(n, absBound), out))
    return out;
  return exactDotSlow(a, b, n);
}
/// The same without an lsb certificate (stages 2 and 3 only).
inline float exactDot(const double *a, const double *b, int64_t n,
                      double absBound) {
  return exactDot(a, b, n, absBound, kLsbOfNonFinite);
}

/// sqrt(sum a_k^2), rounded up slightly so that ||a|| ||b|| bounds
/// sum |a_k b_k| despite rounding.
inline double normUpperBound(const double *a, int64_t n) {
  double s = 0;
  for (int64_t k = 0; k < n; ++k)
    s += a[k] * a[k];
  return std::sqrt(s) * (1.0 + static_cast<double>(n + 2) * 0x1p-52);
}

} // namespace flamia::numerics

#endif // FLAMIA_NUMERICS_EXACTSUM_H
