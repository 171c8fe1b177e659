//===- ExactSumTest.cpp - Exact sums rounded once ----------------*- C++ -*-===//
#include "flamia/Numerics/ExactSum.h"
#include "flamia/Numerics/Formats.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using namespace flamia::numerics;

namespace {

float exactSum(const std::vector<double> &terms) {
  ExactAccumulator acc;
  for (double t : terms)
    acc.add(t);
  return acc.roundToFloat();
}

TEST(ExactAccumulator, CancellationIsExact) {
  // Naive double summation loses the 1 entirely.
  EXPECT_EQ(exactSum({0x1p100, 1.0, -0x1p100}), 1.0f);
  EXPECT_EQ(exactSum({0x1p-1000, 0x1p900, -0x1p900}), 0.0f); // 2^-1000 -> 0
  EXPECT_EQ(exactSum({0x1p-140, 0x1p300, -0x1p300}), 0x1p-140f);
  EXPECT_EQ(exactSum({-0x1p-140, 0x1p-1074, 0x1p1023, -0x1p1023}),
            -0x1p-140f); // 2^-1074 is far below float's precision there
}

TEST(ExactAccumulator, RoundsTiesToEvenOnce) {
  // 1 + 2^-24 is the midpoint of 1 and 1 + 2^-23: tie -> even (1).
  EXPECT_EQ(exactSum({1.0, 0x1p-24}), 1.0f);
  // A tiny extra term breaks the tie upward; a double sum would lose it.
  EXPECT_EQ(exactSum({1.0, 0x1p-24, 0x1p-200}), 1.0f + 0x1p-23f);
  EXPECT_EQ(exactSum({1.0, 0x1p-24, -0x1p-200}), 1.0f);
  // 1 + 3 * 2^-24: tie between 1 + 2^-23 (odd) and 1 + 2^-22 (even).
  EXPECT_EQ(exactSum({1.0, 3 * 0x1p-24}), 1.0f + 0x1p-22f);
  // Negative values mirror.
  EXPECT_EQ(exactSum({-1.0, -0x1p-24, -0x1p-200}), -(1.0f + 0x1p-23f));
}

TEST(ExactAccumulator, SubnormalAndOverflowResults) {
  // 1.5 * 2^-149: tie between 2^-149 (odd) and 2^-148 (even).
  EXPECT_EQ(exactSum({0x1p-149, 0x1p-150}), 0x1p-148f);
  // 2^-150 alone: tie between 0 and 2^-149 -> 0.
  EXPECT_EQ(exactSum({0x1p-150}), 0.0f);
  EXPECT_EQ(exactSum({0x1p-150, 0x1p-300}), 0x1p-149f);
  // A negative sum far below the smallest subnormal rounds to -0.
  float negZero = exactSum({-0x1p-300});
  EXPECT_EQ(negZero, 0.0f);
  EXPECT_TRUE(std::signbit(negZero));
  // An exact zero is +0.
  EXPECT_FALSE(std::signbit(exactSum({-1.0, 1.0})));
  // Overflow: FLT_MAX + half an ulp ties to even = inf; less stays finite.
  double fmax = FLT_MAX;
  EXPECT_EQ(exactSum({fmax, 0x1p103}), INFINITY);
  EXPECT_EQ(exactSum({fmax, 0x1p103, -0x1p-500}), FLT_MAX);
  EXPECT_EQ(exactSum({1e300, -1e300, -2.0}), -2.0f);
}

TEST(ExactAccumulator, NonFiniteTermsPropagate) {
  EXPECT_TRUE(std::isnan(exactSum({1.0, NAN})));
  EXPECT_EQ(exactSum({1.0, INFINITY}), INFINITY);
  EXPECT_TRUE(std::isnan(exactSum({INFINITY, -INFINITY})));
}

TEST(ExactAccumulator, RandomCancellingSetsGiveTheKnownValue) {
  // Random terms plus their negatives in shuffled order, plus a known value:
  // the exact sum is the known value whatever the order.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mant(-1.0, 1.0);
  std::uniform_int_distribution<int> expo(-300, 300);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<double> terms;
    for (int k = 0; k < 50; ++k) {
      double t = std::ldexp(mant(rng), expo(rng));
      terms.push_back(t);
      terms.push_back(-t);
    }
    double known = std::ldexp(mant(rng), expo(rng) / 3);
    terms.push_back(known);
    std::shuffle(terms.begin(), terms.end(), rng);
    ExactAccumulator acc;
    for (double t : terms)
      acc.add(t);
    ASSERT_EQ(acc.roundToDouble(), known);
    ASSERT_EQ(acc.roundToFloat(), static_cast<float>(known));
  }
}

TEST(ExactDot, FastPathAgreesWithTheExactAccumulator) {
  // bf16 x bf16 products are exact in double: the fast path (double sum +
  // error bound) must give the same float as the exact accumulator.
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  int64_t n = 128;
  std::vector<double> a(n), b(n);
  for (int trial = 0; trial < 20000; ++trial) {
    float scale = trial % 3 == 0 ? 1e-3f : (trial % 3 == 1 ? 1.0f : 1e4f);
    for (int64_t k = 0; k < n; ++k) {
      a[k] = roundToBf16(normal(rng) * scale);
      b[k] = roundToBf16(normal(rng));
    }
    // Heavy cancellation on some trials: b = -a on half the entries.
    if (trial % 7 == 0)
      for (int64_t k = 0; k < n / 2; ++k)
        b[k] = a[n - 1 - k], b[n - 1 - k] = -a[k];
    float fast = exactDot(a.data(), b.data(), n,
                          normUpperBound(a.data(), n) *
                              normUpperBound(b.data(), n));
    ASSERT_EQ(bitsOf(fast), bitsOf(exactDotSlow(a.data(), b.data(), n)))
        << "trial " << trial;
  }
}

TEST(ExactDot, LsbCertificateRoundsExactTiesToEven) {
  // 1 + 2^-24 is exactly a float32 tie: only an exact method gets it right.
  // Products of (1, 2^-12) with (1, 2^-12): lsb = -24, sum < 2^28.
  std::vector<double> a = {1.0, 0x1p-12}, b = {1.0, 0x1p-12};
  int lsb = minLsbExponent(a.data(), 2) + minLsbExponent(b.data(), 2);
  EXPECT_EQ(lsb, -24);
  EXPECT_TRUE(doubleSumIsExact(2.0, lsb));
  EXPECT_EQ(exactDot(a.data(), b.data(), 2, 2.0, lsb), 1.0f);
  std::vector<double> c = {1.0, 3 * 0x1p-12}, d = {1.0, 0x1p-12};
  EXPECT_EQ(exactDot(c.data(), d.data(), 2, 4.0,
                     minLsbExponent(c.data(), 2) + minLsbExponent(d.data(), 2)),
            1.0f + 0x1p-22f);
  // Certificates: zero rows are exact zeros, non-finite rows never exact.
  std::vector<double> z = {0.0, -0.0}, n = {NAN, 1.0};
  EXPECT_EQ(minLsbExponent(z.data(), 2), kLsbOfZero);
  EXPECT_EQ(minLsbExponent(n.data(), 2), kLsbOfNonFinite);
  EXPECT_FALSE(doubleSumIsExact(1.0, kLsbOfNonFinite + 5));
  EXPECT_TRUE(std::isnan(exactDot(n.data(), a.data(), 2, NAN,
                                  kLsbOfNonFinite - 24)));
  EXPECT_EQ(lsbExponent(3.0), 0);
  EXPECT_EQ(lsbExponent(0.75), -2);
  EXPECT_EQ(lsbExponent(0x1p-1074), -1074);
  EXPECT_EQ(lsbExponent(-0x1.8p-1073), -1074);
}

TEST(ExactDot, ExactCancellationTakesTheSlowPath) {
  std::vector<double> a = {0x1p60, 3.0, -0x1p60, 0x1p-30};
  std::vector<double> b = {1.0, 1.0, 1.0, 1.0};
  EXPECT_EQ(exactDot(a.data(), b.data(), 4, 0x1p61), 3.0f + 0x1p-30f);
  std::vector<double> z = {1.0, -1.0};
  EXPECT_EQ(exactDot(z.data(), b.data(), 2, 2.0), 0.0f);
}

} // namespace

// issue 18: at -O0 the AVX2 clone of sumOfProducts called a 32-byte-vector
// helper compiled for the default target, which took the input pointer for
// its return slot: the sum was garbage and the inputs were overwritten. Both
// clones must return the exact sum of exactly summable products and leave
// the inputs alone (the Debug leg of scripts/run-tests.sh runs this at -O0).
TEST(SumOfProducts, ExactForSmallIntegersAndLeavesInputsAlone) {
  for (int64_t n : {0, 1, 7, 8, 9, 16, 33, 128}) {
    std::vector<double> a(n), b(n);
    double expected = 0;
    for (int64_t k = 0; k < n; ++k) {
      a[k] = static_cast<double>(k % 13) - 6;
      b[k] = static_cast<double>(k % 7) + 1;
      expected += a[k] * b[k];
    }
    const std::vector<double> a0 = a, b0 = b;
    EXPECT_EQ(sumOfProducts(a.data(), b.data(), n), expected) << "n = " << n;
    EXPECT_EQ(a, a0) << "n = " << n;
    EXPECT_EQ(b, b0) << "n = " << n;
  }
}
