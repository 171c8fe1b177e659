//===- SyntheticInputsTest.cpp - Seeded inputs, bit for bit -----*- C++ -*-===//
//
// flamia-run's packed bf16 batches (makePackedBf16Inputs) must not change:
// its --check compares the GPU against CPU references made from the same
// seed, and results recorded in bench/results name seeds. The expected values
// below were printed by flamia-run's own generator before it moved into
// SyntheticInputs.cpp.
//
//===----------------------------------------------------------------------===//
#include "flamia/Numerics/SyntheticInputs.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <vector>

using namespace flamia::numerics;

namespace {

uint64_t fnv1a(const std::vector<uint16_t> &x) {
  uint64_t h = 1469598103934665603ull;
  for (uint16_t v : x) {
    h ^= v;
    h *= 1099511628211ull;
  }
  return h;
}

TEST(SyntheticInputs, OutlierChannels) {
  EXPECT_EQ(outlierChannels(128), (std::vector<int64_t>{3, 17, 64, 123}));
  EXPECT_EQ(outlierChannels(64), (std::vector<int64_t>{3, 17, 0, 59}));
  EXPECT_EQ(outlierChannels(8), (std::vector<int64_t>{3, 1, 0}));
  EXPECT_EQ(outlierChannels(1), (std::vector<int64_t>{0}));
  EXPECT_TRUE(outlierChannels(0).empty());
}

TEST(SyntheticInputs, SmallGradientScalesOnlyDOByAPowerOfTwo) {
  flamia::DocumentLayout docs;
  ASSERT_TRUE(flamia::DocumentLayout::fromCuSeqlens({0, 40, 100}, 100, docs));
  AttentionTensors random =
      makeSyntheticInputs(docs, 2, 1, 32, InputKind::Random, 7);
  AttentionTensors small =
      makeSyntheticInputs(docs, 2, 1, 32, InputKind::SmallGradient, 7);
  EXPECT_EQ(small.q, random.q);
  EXPECT_EQ(small.k, random.k);
  EXPECT_EQ(small.v, random.v);
  ASSERT_EQ(small.dO.size(), random.dO.size());
  for (size_t i = 0; i < small.dO.size(); ++i)
    ASSERT_EQ(small.dO[i], random.dO[i] * 0x1p-16f) << i;
}

TEST(SyntheticInputs, KindNamesRoundTrip) {
  for (InputKind k : {InputKind::Random, InputKind::Outlier, InputKind::Massive,
                      InputKind::SmallGradient}) {
    InputKind parsed;
    ASSERT_TRUE(inputKindFromName(inputKindName(k), parsed));
    EXPECT_EQ(parsed, k);
  }
  InputKind parsed;
  EXPECT_FALSE(inputKindFromName("tiny", parsed));
  EXPECT_STREQ(inputKindName(InputKind::SmallGradient), "small-grad");
}

TEST(SyntheticInputs, MixSeed) {
  EXPECT_EQ(mixSeed(1, 2, 3), 0x1915f685d2b0e282ull);
}

TEST(SyntheticInputs, PackedBf16InputsAreBitForBitStable) {
  // T = 600, Hq = 4, Hkv = 2, D = 64: q spans three 2^16-element chunks,
  // and tokens 7, 68, ... carry the outlier rows.
  for (bool outliers : {false, true}) {
    std::vector<uint16_t> q, k, v;
    makePackedBf16Inputs(600, 4, 2, 64, 1, outliers, q, k, v);
    ASSERT_EQ(q.size(), 600u * 4 * 64);
    ASSERT_EQ(k.size(), 600u * 2 * 64);
    ASSERT_EQ(v.size(), 600u * 2 * 64);
    EXPECT_EQ(q[0], 0x3e3f);
    EXPECT_EQ(q[65536], 0x3f78); // the first element of chunk 1
    EXPECT_EQ(k[4], 0xbde1);     // not an outlier channel
    EXPECT_EQ(q[8 * 4 * 64], 0x3e65);
    if (!outliers) {
      EXPECT_EQ(fnv1a(q), 0xf9f2794c4adb321full);
      EXPECT_EQ(fnv1a(k), 0x971a62a865b6fee8ull);
      EXPECT_EQ(fnv1a(v), 0xcce0dc1edec264d4ull);
      EXPECT_EQ(k[3], 0xbfc0);
      EXPECT_EQ(q[7 * 4 * 64], 0x3f22);
      EXPECT_EQ(v[7 * 2 * 64 + 1], 0xbe4b);
    } else {
      EXPECT_EQ(fnv1a(q), 0x39cd39a3e666f272ull);
      EXPECT_EQ(fnv1a(k), 0x6a1ec2622df1c173ull);
      EXPECT_EQ(fnv1a(v), 0xb03ca44ee90ebb0eull);
      EXPECT_EQ(k[3], 0xc316);           // channel 3 x100
      EXPECT_EQ(q[7 * 4 * 64], 0x427d);  // token 7 x100
      EXPECT_EQ(v[7 * 2 * 64 + 1], 0xc19f);
    }
  }
}

TEST(SyntheticInputs, PackedBf16OutliersWithASmallHeadDim) {
  // D = 8: channels 3, 17 % 8 = 1, 64 % 8 = 0 (and 8 - 5 = 3 again).
  std::vector<uint16_t> q, k, v;
  makePackedBf16Inputs(5, 1, 1, 8, 42, true, q, k, v);
  const std::vector<uint16_t> token0 = {0xc2df, 0xc336, 0xbf20, 0x42e3,
                                        0x3f27, 0xbf6a, 0x3c9b, 0x3d6b};
  EXPECT_EQ(std::vector<uint16_t>(k.begin(), k.begin() + 8), token0);
}

TEST(SyntheticInputs, FillBf16NormalIsChunkedByStream) {
  // The first chunk of stream 1 is what makePackedBf16Inputs puts in q.
  std::vector<uint16_t> q, k, v, x(1000);
  makePackedBf16Inputs(10, 1, 1, 100, 1, false, q, k, v);
  fillBf16Normal(x.data(), x.size(), 1, 1);
  EXPECT_EQ(x, q);
  fillBf16Normal(x.data(), x.size(), 1, 2);
  EXPECT_EQ(x, k);
}

} // namespace

namespace {

TEST(SyntheticInputs, PerturbPackedBf16Tokens) {
  const int64_t T = 40, H = 2, D = 32;
  std::vector<uint16_t> x(T * H * D, floatToBf16(0.5f));
  x[7] = floatToBf16(-3.0f); // the tensor's largest magnitude
  std::vector<uint16_t> y = x;
  perturbPackedBf16Tokens(y, H, D, 10, 13, 99, /*outlier=*/true);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < H * D; ++i) {
      size_t at = static_cast<size_t>(t * H * D + i);
      if (t < 10 || t >= 13) {
        ASSERT_EQ(y[at], x[at]) << "token " << t << " changed";
      }
    }
  // Token `begin` holds +-1000 x max |x|, alternating.
  EXPECT_EQ(bf16ToFloat(y[10 * H * D]), bf16ToFloat(floatToBf16(3000.0f)));
  EXPECT_EQ(bf16ToFloat(y[10 * H * D + 1]), bf16ToFloat(floatToBf16(-3000.0f)));
  // The other perturbed tokens are fresh samples, the same for the same
  // seed and range, others for another seed.
  EXPECT_NE(y[11 * H * D], x[11 * H * D]);
  std::vector<uint16_t> again = x, other = x;
  perturbPackedBf16Tokens(again, H, D, 10, 13, 99, true);
  perturbPackedBf16Tokens(other, H, D, 10, 13, 100, true);
  EXPECT_EQ(again, y);
  EXPECT_NE(other, y);
  // Without the outlier token `begin` is a sample too; an empty range is a
  // no-op.
  std::vector<uint16_t> plain = x;
  perturbPackedBf16Tokens(plain, H, D, 10, 13, 99, false);
  EXPECT_LT(std::fabs(bf16ToFloat(plain[10 * H * D])), 10.0f);
  std::vector<uint16_t> none = x;
  perturbPackedBf16Tokens(none, H, D, 5, 5, 99, true);
  EXPECT_EQ(none, x);
}

} // namespace
