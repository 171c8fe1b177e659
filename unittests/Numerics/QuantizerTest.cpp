//===- QuantizerTest.cpp - Scale rule, blocks, layouts -----------*- C++ -*-===//
#include "flamia/Numerics/Quantizer.h"
#include "flamia/Support/Validation.h"

#include "gtest/gtest.h"

#include <cfloat>
#include <cmath>
#include <random>
#include <vector>

using namespace flamia::numerics;
using flamia::DocumentLayout;

namespace {

/// The scale rule by brute force: the smallest e in [-127, 127] with
/// amax <= m * 2^e (exact in double), or 127.
int bruteForceExponent(double amax, double m) {
  for (int e = -127; e < 127; ++e)
    if (amax <= std::ldexp(m, e))
      return e;
  return 127;
}

TEST(ScaleRule, ExponentMatchesTheDefinitionEverywhere) {
  std::vector<float> amaxes;
  for (uint32_t b = 0; b < 0x7f80u; ++b) // every positive finite bf16
    amaxes.push_back(floatOf(b << 16));
  std::mt19937 rng(3);
  for (int k = 0; k < 200000; ++k) // random positive finite float32
    amaxes.push_back(floatOf(rng() % 0x7f800000u));
  for (double m : {448.0, 57344.0, 6.0})
    for (double x : {m, 2 * m, m / 2})
      for (float f : {static_cast<float>(x),
                      std::nextafter(static_cast<float>(x), 0.0f),
                      std::nextafter(static_cast<float>(x), INFINITY)})
        amaxes.push_back(f);
  for (double m : {448.0, 57344.0, 6.0})
    for (float a : amaxes)
      ASSERT_EQ(mxScaleExponent(a, m), bruteForceExponent(a, m))
          << "amax " << a << " m " << m;
}

TEST(ScaleRule, FloorOfLog2DifferenceIsNotTheRule) {
  // amax = 449 needs e = 1 (449 / 1 > 448); amax = 448 needs e = 0; 224
  // needs e = -1; 225 needs e = 0 (225 * 2 > 448).
  EXPECT_EQ(mxScaleExponent(448.0, 448.0), 0);
  EXPECT_EQ(mxScaleExponent(449.0, 448.0), 1);
  EXPECT_EQ(mxScaleExponent(224.0, 448.0), -1);
  EXPECT_EQ(mxScaleExponent(225.0, 448.0), 0);
  // floor(log2(a)) - floor(log2(m)) would say 8 - 8 = 0 for a = 300 (and
  // 300 <= 448), but also 0 for a = 500, which does not fit.
  EXPECT_EQ(mxScaleExponent(500.0, 448.0), 1);
  EXPECT_EQ(mxScaleExponent(0.0, 448.0), -127);
  EXPECT_EQ(mxScaleExponent(1e-45, 448.0), -127); // clamped
  EXPECT_EQ(mxScaleExponent(FLT_MAX, 448.0), 120);
  EXPECT_EQ(mxScaleExponent(FLT_MAX, 6.0), 126);
  EXPECT_EQ(mxScaleExponent(6.0, 6.0), 0);
  EXPECT_EQ(mxScaleExponent(6.5, 6.0), 1);
  EXPECT_EQ(mxScaleExponent(57344.0, 57344.0), 0);
  EXPECT_EQ(mxScaleExponent(57345.0, 57344.0), 1);
}

TEST(QuantizeBlock, E4M3ElementsTiesAndSubnormals) {
  // amax 448 -> e = 0, elements are E4M3 of the values themselves.
  std::vector<float> v = {448.0f, 17.0f, 19.0f, -17.0f, 0x1p-10f,
                          3 * 0x1p-10f, -0.0f, 1.0f};
  std::vector<uint8_t> codes(v.size());
  uint8_t scale = quantizeBlock(v.data(), v.size(), kMXFP8E4M3, codes.data());
  EXPECT_EQ(scale, 127);
  EXPECT_EQ(codes[0], 0x7e);
  EXPECT_EQ(e4m3ToFloat(codes[1]), 16.0f);  // tie 17 -> even 16
  EXPECT_EQ(e4m3ToFloat(codes[2]), 20.0f);  // tie 19 -> even 20
  EXPECT_EQ(e4m3ToFloat(codes[3]), -16.0f);
  EXPECT_EQ(codes[4], 0x00);                // 2^-10: tie 0 / 2^-9 -> 0
  EXPECT_EQ(codes[5], 0x02);                // 3 * 2^-10 -> 2^-8 (even)
  EXPECT_EQ(codes[6], 0x80);                // -0 keeps its sign
  EXPECT_EQ(codes[7], 0x38);
}

TEST(QuantizeBlock, ScaleIsTheSmallestPowerThatFits) {
  // amax 1792 = 448 * 4 -> e = 2 exactly; amax 1793 -> e = 3.
  std::vector<float> v = {1792.0f, 1.0f, -3.3f};
  std::vector<uint8_t> codes(3);
  EXPECT_EQ(quantizeBlock(v.data(), 3, kMXFP8E4M3, codes.data()), 129);
  EXPECT_EQ(codes[0], 0x7e);
  EXPECT_EQ(e4m3ToFloat(codes[1]), 0.25f);
  EXPECT_EQ(e4m3ToFloat(codes[2]), -0.8125f); // -3.3/4 = -0.825 -> -0.8125
  v[0] = 1793.0f;
  EXPECT_EQ(quantizeBlock(v.data(), 3, kMXFP8E4M3, codes.data()), 130);
  EXPECT_EQ(e4m3ToFloat(codes[0]), 224.0f); // 1793 / 8 = 224.125 -> 224
}

TEST(QuantizeBlock, ZeroAndNonFiniteBlocks) {
  std::vector<float> zeros = {0.0f, -0.0f, 0.0f};
  std::vector<uint8_t> codes(3);
  EXPECT_EQ(quantizeBlock(zeros.data(), 3, kMXFP8E4M3, codes.data()), 0x00);
  EXPECT_EQ(codes[1], 0x80);
  EXPECT_EQ(quantizeBlock(zeros.data(), 3, kNVFP4, codes.data()), 0x00);
  EXPECT_EQ(codes[0], 0x0);
  EXPECT_EQ(codes[1], 0x8);
  for (float bad : {NAN, INFINITY, -INFINITY}) {
    std::vector<float> v = {1.0f, bad, 2.0f};
    for (QuantFormat f : {kMXFP8E4M3, kMXFP8E5M2}) {
      EXPECT_EQ(quantizeBlock(v.data(), 3, f, codes.data()), 0xff);
      EXPECT_EQ(codes, std::vector<uint8_t>({0x7f, 0x7f, 0x7f}));
    }
    for (QuantFormat f : {kMXFP4, kNVFP4}) {
      EXPECT_EQ(quantizeBlock(v.data(), 3, f, codes.data()), 0xff);
      EXPECT_EQ(codes, std::vector<uint8_t>({0, 0, 0}));
    }
  }
}

TEST(QuantizeBlock, E5M2UsesItsOwnMaximum) {
  std::vector<float> v = {57344.0f * 8, 1.0f};
  std::vector<uint8_t> codes(2);
  EXPECT_EQ(quantizeBlock(v.data(), 2, kMXFP8E5M2, codes.data()), 130);
  EXPECT_EQ(codes[0], 0x7b);
  EXPECT_EQ(e5m2ToFloat(codes[1]), 0.125f);
}

TEST(QuantizeBlock, MXFP4TiesToEvenCodes) {
  // amax 6 -> e = 0: elements are E2M1 of the values.
  std::vector<float> v = {6.0f, 0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f,
                          -5.0f, 0.26f};
  std::vector<uint8_t> codes(v.size());
  EXPECT_EQ(quantizeBlock(v.data(), v.size(), kMXFP4, codes.data()), 127);
  std::vector<float> got;
  for (uint8_t c : codes)
    got.push_back(e2m1ToFloat(c));
  EXPECT_EQ(got, std::vector<float>({6.0f, 0.0f, 1.0f, 1.0f, 2.0f, 2.0f,
                                     4.0f, 4.0f, -4.0f, 0.5f}));
}

TEST(QuantizeBlock, NVFP4ScaleIsTheSmallestE4M3ThatFits) {
  EXPECT_EQ(nvfp4ScaleCode(0.0), 0x00);
  EXPECT_EQ(e4m3ToFloat(nvfp4ScaleCode(6.0)), 1.0f);
  EXPECT_EQ(e4m3ToFloat(nvfp4ScaleCode(6.0 + 1e-6)), 1.125f);
  EXPECT_EQ(nvfp4ScaleCode(6 * 0x1p-9), 0x01);           // smallest subnormal
  EXPECT_EQ(nvfp4ScaleCode(6 * 0x1p-9 * (1 + 1e-9)), 0x02);
  EXPECT_EQ(nvfp4ScaleCode(6 * 448.0), 0x7e);
  EXPECT_EQ(nvfp4ScaleCode(1e9), 0x7e); // saturates at 448
  // Brute force over a range of amax values.
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-12, 12);
  for (int k = 0; k < 20000; ++k) {
    double amax = std::exp2(u(rng));
    uint8_t code = nvfp4ScaleCode(amax);
    double s = e4m3ToFloat(code);
    if (amax > 6 * 448.0) {
      ASSERT_EQ(code, 0x7e);
      continue;
    }
    ASSERT_LE(amax, 6 * s);
    if (code > 1) {
      ASSERT_GT(amax, 6.0 * e4m3ToFloat(code - 1));
    }
  }
}

TEST(QuantizeBlock, NVFP4ElementsAndSaturation) {
  // amax 9 -> s = 1.5 (9 <= 6 * 1.5); 1.875 / 1.5 = 1.25: tie -> 1.0.
  std::vector<float> v = {9.0f, 1.875f, -2.0f, 0.0f};
  std::vector<uint8_t> codes(4);
  EXPECT_EQ(e4m3ToFloat(quantizeBlock(v.data(), 4, kNVFP4, codes.data())),
            1.5f);
  EXPECT_EQ(e2m1ToFloat(codes[0]), 6.0f);
  EXPECT_EQ(e2m1ToFloat(codes[1]), 1.0f);
  EXPECT_EQ(e2m1ToFloat(codes[2]), -1.5f); // -1.333 -> -1.5
  // Beyond 6 * 448 the elements saturate to +-6.
  std::vector<float> big = {1e6f, -1e6f, 448.0f};
  EXPECT_EQ(quantizeBlock(big.data(), 3, kNVFP4, codes.data()), 0x7e);
  EXPECT_EQ(codes[0], 0x7);
  EXPECT_EQ(codes[1], 0xf);
  EXPECT_EQ(e2m1ToFloat(codes[2]), 1.0f);
}

TEST(QuantizeBlock, RandomBlocksObeyTheRule) {
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> exps(-100, 100);
  for (QuantFormat f : {kMXFP8E4M3, kMXFP8E5M2, kMXFP4}) {
    double m = elementMax(f.element);
    for (int trial = 0; trial < 2000; ++trial) {
      std::vector<float> v(32);
      int e0 = exps(rng);
      for (float &x : v)
        x = std::ldexp(normal(rng), e0);
      std::vector<uint8_t> codes(32);
      uint8_t sc = quantizeBlock(v.data(), 32, f, codes.data());
      int e = e8m0Exponent(sc);
      double amax = 0;
      for (float x : v)
        amax = std::max(amax, static_cast<double>(std::fabs(x)));
      ASSERT_LE(amax, std::ldexp(m, e));
      if (e > -127) {
        ASSERT_GT(amax, std::ldexp(m, e - 1));
      }
      for (int k = 0; k < 32; ++k) {
        // The element is the nearest representable value to x / 2^e.
        double scaled = std::ldexp(static_cast<double>(v[k]), -e);
        double got = decodeElement(codes[k], f.element);
        for (int c = 0; c < (f.element == ElementFormat::E2M1 ? 16 : 256);
             ++c) {
          double other = decodeElement(static_cast<uint8_t>(c), f.element);
          if (std::isfinite(other)) {
            ASSERT_LE(std::fabs(got - scaled), std::fabs(other - scaled));
          }
        }
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Layouts over documents
//===----------------------------------------------------------------------===//

std::vector<float> iota3(int64_t T, int64_t H, int64_t D) {
  std::vector<float> x(T * H * D);
  for (size_t k = 0; k < x.size(); ++k)
    x[k] = static_cast<float>((k % 7) + 1) * (k % 2 ? -1.0f : 1.0f);
  return x;
}

TEST(Quantize, DocumentLocalBlocksWithPartialAndEmptyDocuments) {
  const int64_t T = 40, H = 2, D = 64;
  DocumentLayout docs;
  ASSERT_TRUE(DocumentLayout::fromCuSeqlens({0, 5, 5, 40}, T, docs).ok());
  std::vector<float> x = iota3(T, H, D);
  // An outlier in document 0 must not change document 2's scales.
  x[(4 * H + 1) * D + 33] = 1e6f;
  QuantizedTensor q;
  ASSERT_TRUE(quantize(x.data(), T, H, D, docs, ScaleLayout::documentLocal(32, 32),
                       kMXFP8E4M3, q)
                  .ok());
  ASSERT_EQ(q.blocks.numBlocks(), 3); // [0,5) [5,37) [37,40)
  EXPECT_EQ(q.blocks.begin, std::vector<int64_t>({0, 5, 37}));
  EXPECT_EQ(q.blocks.end, std::vector<int64_t>({5, 37, 40}));
  ASSERT_EQ(q.scales.size(), 3u * H * (D / 32));
  // Block 0, head 1, channel block 1 holds the outlier: 1e6 / 2^e <= 448.
  EXPECT_EQ(q.scales[(0 * H + 1) * 2 + 1], e8m0FromExponent(mxScaleExponent(1e6, 448)));
  // Everything else has amax 7 -> e = -6 (7 * 64 = 448).
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t c = 0; c < 2; ++c)
        if (!(b == 0 && h == 1 && c == 1)) {
          EXPECT_EQ(q.scales[(b * H + h) * 2 + c], 127 - 6) << b << h << c;
        }
  // Dequantization is exact here (small integers).
  EXPECT_EQ(q.dequantize(20, 1, 3), x[(20 * H + 1) * D + 3]);
}

TEST(Quantize, PackedBlocksStraddleDocuments) {
  const int64_t T = 40, H = 1, D = 32;
  DocumentLayout docs;
  ASSERT_TRUE(DocumentLayout::fromCuSeqlens({0, 5, 5, 40}, T, docs).ok());
  std::vector<float> x = iota3(T, H, D);
  x[4 * D] = 1e6f; // document 0
  QuantizedTensor q;
  ASSERT_TRUE(quantize(x.data(), T, H, D, docs, ScaleLayout::packed(32, 32),
                       kMXFP8E4M3, q)
                  .ok());
  ASSERT_EQ(q.blocks.numBlocks(), 2); // [0,32) [32,40)
  // The outlier of document 0 sets the scale of document 2's first tokens.
  EXPECT_EQ(q.scaleCode(10, 0, 0), e8m0FromExponent(mxScaleExponent(1e6, 448)));
  EXPECT_EQ(q.scaleCode(35, 0, 0), 127 - 6);
}

TEST(Quantize, PerTensorAndPerTokenLayouts) {
  const int64_t T = 10, H = 2, D = 64;
  DocumentLayout docs = DocumentLayout::singleDocument(T);
  std::vector<float> x = iota3(T, H, D);
  x[(9 * H + 0) * D + 0] = 4480.0f;
  QuantizedTensor q;
  ASSERT_TRUE(quantize(x.data(), T, H, D, docs, ScaleLayout::perTensor(),
                       kMXFP8E4M3, q)
                  .ok());
  ASSERT_EQ(q.scales.size(), 2u); // [1, H, 1]
  EXPECT_EQ(q.scales[0], e8m0FromExponent(4)); // 4480 / 16 = 280 <= 448
  EXPECT_EQ(q.scales[1], 127 - 6);
  ASSERT_TRUE(quantize(x.data(), T, H, D, docs, ScaleLayout::perToken(32),
                       kMXFP8E4M3, q)
                  .ok());
  ASSERT_EQ(q.scales.size(), static_cast<size_t>(T * H * 2));
  EXPECT_EQ(q.scaleCode(9, 0, 0), e8m0FromExponent(4));
  EXPECT_EQ(q.scaleCode(8, 0, 0), 127 - 6);
  EXPECT_EQ(q.scaleCode(9, 0, 32), 127 - 6);
}

TEST(Quantize, NVFP4SixteenBySixteen) {
  const int64_t T = 20, H = 1, D = 32;
  DocumentLayout docs = DocumentLayout::singleDocument(T);
  std::vector<float> x = iota3(T, H, D); // amax 7 everywhere
  QuantizedTensor q;
  ASSERT_TRUE(quantize(x.data(), T, H, D, docs, ScaleLayout::documentLocal(16, 16),
                       kNVFP4, q)
                  .ok());
  ASSERT_EQ(q.scales.size(), 2u * 1 * 2); // blocks [0,16) [16,20)
  // 7 <= 6 s: s = 1.25 (1.125 * 6 = 6.75 < 7).
  for (uint8_t s : q.scales)
    EXPECT_EQ(e4m3ToFloat(s), 1.25f);
  // 7 / 1.25 = 5.6 -> 6; 1 / 1.25 = 0.8 -> 1.0
  EXPECT_EQ(q.dequantize(0, 0, 0), 1.25 * 1.0);
}

TEST(Quantize, RejectsBadLayouts) {
  DocumentLayout docs = DocumentLayout::singleDocument(4);
  std::vector<float> x(4 * 48);
  QuantizedTensor q;
  Status s = quantize(x.data(), 4, 1, 48, docs, ScaleLayout::perToken(32),
                      kMXFP8E4M3, q);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message, "head dim 48 is not divisible by the channel block 32");
  s = quantize(x.data(), 4, 1, 48, DocumentLayout::singleDocument(5),
               ScaleLayout::perToken(16), kMXFP8E4M3, q);
  EXPECT_FALSE(s.ok());
}

} // namespace
