//===- StandardWorkloadsTest.cpp - Reproducible benchmark batches ---------===//
#include "flamia/Schedule/StandardWorkloads.h"

#include "flamia/Schedule/DeterministicRandom.h"
#include "flamia/Schedule/DocumentLayout.h"
#include "flamia/Support/Validation.h"

#include "gtest/gtest.h"

using namespace flamia;

// SplitMix64's published outputs for seed 0.
TEST(DeterministicRandom, SplitMix64Reference) {
  DeterministicRandom r(0);
  EXPECT_EQ(r.next(), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(r.next(), 0x6E789E6AA1B965F4ull);
  EXPECT_EQ(r.next(), 0x06C45D188009454Full);
}

TEST(DeterministicRandom, UniformAndNormalRanges) {
  DeterministicRandom r(7);
  double sum = 0, sumSq = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    double u = r.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    double z = r.normal();
    sum += z;
    sumSq += z * z;
  }
  // Mean 0 and variance 1 within a few standard errors.
  EXPECT_NEAR(sum / n, 0.0, 0.03);
  EXPECT_NEAR(sumSq / n, 1.0, 0.05);
}

TEST(StandardWorkloads, Names) {
  StandardWorkload w;
  std::string err;
  for (const char *name : {"lognormal1k", "fixed2k", "single32k", "tiny34"}) {
    ASSERT_TRUE(parseStandardWorkload(name, w, err)) << err;
    EXPECT_STREQ(standardWorkloadName(w), name);
  }
  EXPECT_FALSE(parseStandardWorkload("uniform", w, err));
  EXPECT_EQ(err, "unknown workload 'uniform' (expected lognormal1k, fixed2k, "
                 "single32k or tiny34)");
  EXPECT_EQ(standardWorkloadDefaultTokens(StandardWorkload::Tiny34), 278528);
  EXPECT_EQ(standardWorkloadDefaultTokens(StandardWorkload::Fixed2k), 32768);
}

TEST(StandardWorkloads, FixedShapes) {
  std::vector<int32_t> cu;
  std::string err;
  ASSERT_TRUE(makeStandardWorkload(StandardWorkload::Fixed2k, 32768, cu, err));
  ASSERT_EQ(cu.size(), 17u);
  for (size_t d = 0; d < cu.size(); ++d)
    EXPECT_EQ(cu[d], 2048 * static_cast<int32_t>(d));
  ASSERT_TRUE(makeStandardWorkload(StandardWorkload::Fixed2k, 5000, cu, err));
  EXPECT_EQ(cu, (std::vector<int32_t>{0, 2048, 4096, 5000}));
  ASSERT_TRUE(
      makeStandardWorkload(StandardWorkload::Single32k, 32768, cu, err));
  EXPECT_EQ(cu, (std::vector<int32_t>{0, 32768}));
  ASSERT_TRUE(makeStandardWorkload(StandardWorkload::Tiny34, 278528, cu, err));
  ASSERT_EQ(cu.size(), 8193u);
  EXPECT_EQ(cu[8192], 278528);
  EXPECT_EQ(cu[1], 34);
  ASSERT_TRUE(makeStandardWorkload(StandardWorkload::Tiny34, 100, cu, err));
  EXPECT_EQ(cu, (std::vector<int32_t>{0, 34, 68, 100}));

  EXPECT_FALSE(makeStandardWorkload(StandardWorkload::Fixed2k, 0, cu, err));
  EXPECT_EQ(err, "workload token count must be in [1, 2^31 - 1], got 0");
}

// The lognormal batch of 32768 tokens, pinned: the table in
// docs/performance.md is computed on it. Cross-checked against an
// independent Python implementation of the same generator (SplitMix64,
// Box-Muller, max(64, round(exp(ln 1024 + z)))).
TEST(StandardWorkloads, LognormalIsPinned) {
  std::vector<int32_t> cu;
  std::string err;
  ASSERT_TRUE(
      makeStandardWorkload(StandardWorkload::Lognormal1k, 32768, cu, err));
  EXPECT_EQ(cu,
            (std::vector<int32_t>{0, 1123, 3557, 5236, 5529, 5970, 8812, 17850,
                                  18515, 18779, 24369, 26271, 27831, 32768}));
  // Larger batches: every document but the trimmed last one has >= 64
  // tokens, and the prefix is the same sequence.
  std::vector<int32_t> big;
  ASSERT_TRUE(
      makeStandardWorkload(StandardWorkload::Lognormal1k, 1 << 20, big, err));
  ASSERT_TRUE(validation::validateCuSeqlens(big.data(), big.size(), 1 << 20, err)) << err;
  for (size_t d = 0; d + 2 < big.size(); ++d)
    EXPECT_GE(big[d + 1] - big[d], 64);
  for (size_t d = 0; d + 1 < cu.size() - 1; ++d)
    EXPECT_EQ(big[d], cu[d]);
  // The median of exp(N(ln 1024, 1)) is 1024: about half the documents are
  // shorter.
  size_t shorter = 0;
  for (size_t d = 0; d + 2 < big.size(); ++d)
    shorter += big[d + 1] - big[d] < 1024;
  double fraction =
      static_cast<double>(shorter) / static_cast<double>(big.size() - 2);
  EXPECT_NEAR(fraction, 0.5, 0.06);
}
