//===- ExactSum.h - Exact sums of exact products, rounded once ----*- C++ -*-===//
//
// The CPU reference defines every dot product and every tile sum as the EXACT
// mathematical sum of its (exactly representable) products, rounded once to
// float32 (round to nearest even). Products of the operands it uses are exact
// in double: E4M3 x E4M3 x 2^(e_a+e_b) has 8 significant bits, bf16 x bf16
// has 16, and their exponents stay far inside double's range.
//
// Fast path: sum in double (any order) and bound the error by
//   |s - exact| <= gamma_(n-1) * sum|p_k|,  gamma_k = k u / (1 - k u).
// If every value in [s - err, s + err] rounds to the same float32, that float
// is fl32(exact). Otherwise (rare: the double sum sits within ~2^-40 of a
// float32 rounding boundary, or the sum is zero) ExactAccumulator adds the
// products into a wide fixed-point integer and rounds it once.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_NUMERICS_EXACTSUM_H
#define FLAMIA_NUMERICS_EXACTSUM_H

#include <cmath>
#include <cstdint>

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
/// ||a||_2 * ||b||_2). NaN/inf inputs propagate as in IEEE arithmetic.
float exactDotSlow(const double *a, const double *b, int64_t n);
inline float exactDot(const double *a, const double *b, int64_t n,
                      double absBound) {
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
  double s = (s0 + s1) + (s2 + s3);
  float out;
  if (roundIfCertain(s, sumErrorBound(n, absBound), out))
    return out;
  return exactDotSlow(a, b, n);
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
