//===- FormatsAPFloatTest.cpp - Conversions vs llvm::APFloat -----*- C++ -*-===//
//
// Exhaustive checks of lib/Numerics' format conversions against
// llvm::APFloat (Float8E4M3FN, Float8E5M2, Float4E2M1FN, Float8E8M0FNU,
// BFloat): every code decodes to the same float32 bits; encoding agrees for
// every bf16 bit pattern, 10^6 random float32 bit patterns, and every
// representable value, midpoint (tie) and their float32 neighbours. Built
// only with FLAMIA_ENABLE_COMPILER (it needs the LLVM dylib).
//
//===----------------------------------------------------------------------===//
#include "flamia/Numerics/Formats.h"

#include "llvm/ADT/APFloat.h"
#include "gtest/gtest.h"

#include <cmath>
#include <random>
#include <vector>

using namespace flamia::numerics;
using llvm::APFloat;
using llvm::APInt;

namespace {

struct Converted {
  uint32_t bits;
  bool isNaN;
};

Converted apEncode(const llvm::fltSemantics &sem, float x) {
  APFloat f(x);
  bool losesInfo;
  (void)f.convert(sem, APFloat::rmNearestTiesToEven, &losesInfo);
  return {static_cast<uint32_t>(f.bitcastToAPInt().getZExtValue()), f.isNaN()};
}

Converted apDecode(const llvm::fltSemantics &sem, unsigned width,
                   uint32_t code) {
  APFloat f(sem, APInt(width, code));
  bool losesInfo;
  (void)f.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven,
                  &losesInfo);
  return {static_cast<uint32_t>(f.bitcastToAPInt().getZExtValue()), f.isNaN()};
}

bool isNaNBits(uint32_t u) { return (u & 0x7fffffffu) > 0x7f800000u; }

/// The float32 inputs every encoder is checked on.
std::vector<float> encodeInputs() {
  std::vector<float> in;
  // Every bf16 bit pattern, and the four interesting low halves below it
  // (exact, tie, just below and just above the tie) for bf16 rounding.
  for (uint32_t b = 0; b < 0x10000u; ++b)
    for (uint32_t low : {0x0000u, 0x8000u, 0x7fffu, 0x8001u, 0x0001u})
      in.push_back(floatOf((b << 16) | low));
  // 10^6 random float32 bit patterns.
  std::mt19937 rng(20250101);
  for (int k = 0; k < 1000000; ++k)
    in.push_back(floatOf(static_cast<uint32_t>(rng())));
  // Every value of the small formats, the midpoints between neighbours, and
  // the float32 neighbours of both (rounding boundaries, ties, subnormals,
  // overflow thresholds).
  std::vector<double> points;
  auto addFormat = [&](int manBits, int bias, int maxExpField) {
    std::vector<double> values;
    for (int e = 0; e <= maxExpField; ++e)
      for (int m = 0; m < (1 << manBits); ++m)
        values.push_back(e == 0 ? std::ldexp(m, 1 - bias - manBits)
                                : std::ldexp((1 << manBits) | m,
                                             e - bias - manBits));
    for (size_t k = 0; k < values.size(); ++k) {
      points.push_back(values[k]);
      if (k + 1 < values.size())
        points.push_back(0.5 * (values[k] + values[k + 1]));
    }
    // Beyond the largest value: the overflow midpoint and more.
    double top = values.back(), step = top - values[values.size() - 2];
    points.push_back(top + 0.5 * step);
    points.push_back(top + step);
    points.push_back(2 * top);
  };
  addFormat(3, 7, 15);  // E4M3FN (0x7F excluded below by value range)
  addFormat(2, 15, 30); // E5M2
  addFormat(1, 1, 3);   // E2M1
  for (int e = -140; e <= 128; ++e) { // E8M0 boundaries 2^e and 1.5 * 2^e
    points.push_back(std::ldexp(1.0, e));
    points.push_back(std::ldexp(1.5, e));
  }
  for (double p : points) {
    float f = static_cast<float>(p);
    for (float x : {f, std::nextafter(f, 0.0f), std::nextafter(f, INFINITY)})
      for (float s : {x, -x})
        in.push_back(s);
  }
  for (float s : {INFINITY, -INFINITY, NAN, -NAN, 0.0f, -0.0f,
                  floatOf(0x7f800001u), floatOf(0x7fa00000u),
                  floatOf(0xffa00001u), floatOf(0x7fbfffffu), FLT_MAX,
                  -FLT_MAX, FLT_MIN, floatOf(1u), floatOf(0x80000001u)})
    in.push_back(s);
  return in;
}

const std::vector<float> &inputs() {
  static const std::vector<float> in = encodeInputs();
  return in;
}

TEST(FormatsAPFloat, InputSetIsLarge) {
  // 5 * 65536 bf16-derived + 10^6 random + boundaries.
  EXPECT_GT(inputs().size(), 1300000u);
}

//===----------------------------------------------------------------------===//
// Decoding: every code
//===----------------------------------------------------------------------===//

TEST(FormatsAPFloat, DecodeE4M3EveryCode) {
  for (uint32_t c = 0; c < 256; ++c) {
    Converted ref = apDecode(APFloat::Float8E4M3FN(), 8, c);
    ASSERT_EQ(bitsOf(e4m3ToFloat(static_cast<uint8_t>(c))), ref.bits)
        << "code 0x" << std::hex << c;
  }
}

TEST(FormatsAPFloat, DecodeE5M2EveryCode) {
  for (uint32_t c = 0; c < 256; ++c) {
    Converted ref = apDecode(APFloat::Float8E5M2(), 8, c);
    ASSERT_EQ(bitsOf(e5m2ToFloat(static_cast<uint8_t>(c))), ref.bits)
        << "code 0x" << std::hex << c;
  }
}

TEST(FormatsAPFloat, DecodeE2M1EveryCode) {
  for (uint32_t c = 0; c < 16; ++c) {
    Converted ref = apDecode(APFloat::Float4E2M1FN(), 4, c);
    ASSERT_EQ(bitsOf(e2m1ToFloat(static_cast<uint8_t>(c))), ref.bits)
        << "code 0x" << std::hex << c;
    // Only the low nibble matters.
    ASSERT_EQ(bitsOf(e2m1ToFloat(static_cast<uint8_t>(c | 0xa0))), ref.bits);
  }
}

TEST(FormatsAPFloat, DecodeE8M0EveryCode) {
  for (uint32_t c = 0; c < 256; ++c) {
    Converted ref = apDecode(APFloat::Float8E8M0FNU(), 8, c);
    float mine = e8m0ToFloat(static_cast<uint8_t>(c));
    if (ref.isNaN) {
      // APFloat agrees 0xFF is NaN but loses the significand when it
      // converts to float32, producing the bits of +inf (0x7f800000); we
      // return a quiet NaN. Documented in docs/numerics.md.
      ASSERT_EQ(c, 0xffu);
      ASSERT_EQ(ref.bits, 0x7f800000u);
      ASSERT_TRUE(std::isnan(mine));
      continue;
    }
    ASSERT_EQ(bitsOf(mine), ref.bits) << "code 0x" << std::hex << c;
  }
  EXPECT_EQ(bitsOf(e8m0ToFloat(0)), 0x00400000u); // 2^-127, subnormal
  EXPECT_EQ(e8m0ToFloat(127), 1.0f);
  EXPECT_EQ(e8m0ToFloat(254), std::ldexp(1.0f, 127));
}

TEST(FormatsAPFloat, DecodeBf16EveryCode) {
  for (uint32_t c = 0; c < 0x10000u; ++c) {
    Converted ref = apDecode(APFloat::BFloat(), 16, c);
    uint32_t mine = bitsOf(bf16ToFloat(static_cast<uint16_t>(c)));
    if (ref.isNaN) {
      // APFloat quiets signalling NaNs on conversion; bf16ToFloat is a bit
      // extension (it keeps the payload as is). Both are NaN, same sign.
      ASSERT_TRUE(isNaNBits(mine));
      ASSERT_EQ(mine >> 31, ref.bits >> 31);
      ASSERT_EQ(mine | 0x400000u, ref.bits) << std::hex << c;
      continue;
    }
    ASSERT_EQ(mine, ref.bits) << "bf16 0x" << std::hex << c;
  }
}

//===----------------------------------------------------------------------===//
// Encoding (Overflow::Ieee == APFloat, bit for bit)
//===----------------------------------------------------------------------===//

TEST(FormatsAPFloat, EncodeE4M3) {
  for (float x : inputs()) {
    Converted ref = apEncode(APFloat::Float8E4M3FN(), x);
    ASSERT_EQ(floatToE4M3(x), ref.bits)
        << "x = " << x << " bits 0x" << std::hex << bitsOf(x);
  }
}

TEST(FormatsAPFloat, EncodeE5M2) {
  for (float x : inputs()) {
    Converted ref = apEncode(APFloat::Float8E5M2(), x);
    ASSERT_EQ(floatToE5M2(x), ref.bits)
        << "x = " << x << " bits 0x" << std::hex << bitsOf(x);
  }
}

TEST(FormatsAPFloat, EncodeE2M1) {
  for (float x : inputs()) {
    Converted ref = apEncode(APFloat::Float4E2M1FN(), x);
    ASSERT_EQ(floatToE2M1(x), ref.bits)
        << "x = " << x << " bits 0x" << std::hex << bitsOf(x);
  }
}

TEST(FormatsAPFloat, EncodeBf16) {
  for (float x : inputs()) {
    Converted ref = apEncode(APFloat::BFloat(), x);
    ASSERT_EQ(floatToBf16(x), ref.bits)
        << "x = " << x << " bits 0x" << std::hex << bitsOf(x);
  }
}

TEST(FormatsAPFloat, EncodeE8M0) {
  int64_t negatives = 0;
  for (float x : inputs()) {
    Converted ref = apEncode(APFloat::Float8E8M0FNU(), x);
    uint32_t u = bitsOf(x);
    if ((u >> 31) && (u & 0x7fffffffu) != 0 && !isNaNBits(u)) {
      // Documented difference: APFloat lets the sign of a negative input
      // leak into the exponent (-1e-30 -> 0x9b); E8M0 has no negative
      // values, we return NaN.
      ASSERT_EQ(floatToE8M0(x), kE8M0NaN) << x;
      ++negatives;
      continue;
    }
    ASSERT_EQ(floatToE8M0(x), ref.bits)
        << "x = " << x << " bits 0x" << std::hex << bitsOf(x);
  }
  EXPECT_GT(negatives, 100000);
  // The rounding rule in words: ties go up, below 2^-127 is 0x00.
  EXPECT_EQ(floatToE8M0(1.5f), 0x80);
  EXPECT_EQ(floatToE8M0(std::nextafter(1.5f, 0.0f)), 0x7f);
  EXPECT_EQ(floatToE8M0(1e-45f), 0x00);
  EXPECT_EQ(floatToE8M0(std::ldexp(1.5f, 127)), kE8M0NaN);
}

//===----------------------------------------------------------------------===//
// Overflow::Saturate differs from APFloat exactly where APFloat overflows
//===----------------------------------------------------------------------===//

TEST(FormatsAPFloat, SaturatingE4M3DiffersOnlyOnOverflow) {
  int64_t differ = 0;
  for (float x : inputs()) {
    Converted ref = apEncode(APFloat::Float8E4M3FN(), x);
    uint8_t sat = floatToE4M3(x, Overflow::Saturate);
    bool inputNaN = std::isnan(x);
    if (!inputNaN && ref.isNaN) {
      // Overflow (|x| > 464, or inf): APFloat gives NaN, we give +-448.
      ASSERT_TRUE(std::fabs(x) > 464.0f) << x;
      ASSERT_EQ(sat, std::signbit(x) ? 0xfe : 0x7e) << x;
      ++differ;
    } else {
      ASSERT_EQ(sat, ref.bits) << x;
    }
  }
  EXPECT_GT(differ, 1000);
  EXPECT_EQ(floatToE4M3(464.0f, Overflow::Saturate), 0x7e); // tie -> 448
  EXPECT_EQ(floatToE4M3(464.0f), 0x7e);
  EXPECT_EQ(floatToE4M3(std::nextafter(464.0f, INFINITY)), 0x7f);
}

TEST(FormatsAPFloat, SaturatingE5M2DiffersOnlyOnOverflow) {
  int64_t differ = 0;
  for (float x : inputs()) {
    Converted ref = apEncode(APFloat::Float8E5M2(), x);
    uint8_t sat = floatToE5M2(x, Overflow::Saturate);
    if (!std::isnan(x) && (ref.bits & 0x7fu) == 0x7cu) {
      // APFloat: inf (|x| >= 61440 rounds past the largest finite value,
      // or x is inf). We saturate to +-57344.
      ASSERT_TRUE(std::fabs(x) >= 61440.0f) << x;
      ASSERT_EQ(sat, std::signbit(x) ? 0xfb : 0x7b) << x;
      ++differ;
    } else {
      ASSERT_EQ(sat, ref.bits) << x;
    }
  }
  EXPECT_GT(differ, 1000);
  EXPECT_EQ(floatToE5M2(61440.0f), 0x7c); // tie rounds to even = inf
  EXPECT_EQ(floatToE5M2(61440.0f, Overflow::Saturate), 0x7b);
}

TEST(FormatsAPFloat, SaturatingE2M1DiffersOnlyOnInfinity) {
  for (float x : inputs()) {
    Converted ref = apEncode(APFloat::Float4E2M1FN(), x);
    uint8_t sat = floatToE2M1(x, Overflow::Saturate);
    if (std::isinf(x))
      ASSERT_EQ(sat, std::signbit(x) ? 0xf : 0x7); // APFloat: signed zero
    else
      ASSERT_EQ(sat, ref.bits) << x;
  }
}

// The sm_90a forward turns P's E4M3 codes into bf16 without f32
// (Emitter::cvtNonNegativeE4M3x2ToBF16x2): cvt.rn.f16x2.e4m3x2, the 32-bit
// word shifted right by three, each half read as bf16 and multiplied by
// 2^112. Exact for every non-negative code, with both halves of the word
// independent (no bit crosses from the high half into the low one).
TEST(FormatsAPFloat, NonNegativeE4M3ToBF16ByShiftIsExact) {
  auto f16Bits = [](uint8_t code) {
    bool losesInfo;
    APFloat h(e4m3ToFloat(code));
    (void)h.convert(APFloat::IEEEhalf(), APFloat::rmNearestTiesToEven,
                    &losesInfo);
    EXPECT_FALSE(losesInfo) << int(code);
    return static_cast<uint32_t>(h.bitcastToAPInt().getZExtValue());
  };
  const APFloat scale = llvm::scalbn(APFloat(APFloat::BFloat(), "1"), 112,
                                     APFloat::rmNearestTiesToEven);
  auto restored = [&](uint32_t half) {
    APFloat b(APFloat::BFloat(), APInt(16, half));
    EXPECT_FALSE(b.isDenormal()) << half;
    APFloat::opStatus st = b.multiply(scale, APFloat::rmNearestTiesToEven);
    EXPECT_EQ(st, APFloat::opOK) << half; // exact
    return b.convertToFloat();
  };
  int pairs = 0;
  for (uint32_t hi = 0; hi <= 0x7e; ++hi) {
    for (uint32_t lo = 0; lo <= 0x7e; ++lo) {
      uint32_t word = (f16Bits(hi) << 16 | f16Bits(lo)) >> 3;
      float vlo = restored(word & 0xffffu), vhi = restored(word >> 16);
      ASSERT_EQ(bitsOf(vlo), bitsOf(e4m3ToFloat(lo))) << lo << " " << hi;
      ASSERT_EQ(bitsOf(vhi), bitsOf(e4m3ToFloat(hi))) << lo << " " << hi;
      ++pairs;
    }
  }
  EXPECT_EQ(pairs, 127 * 127);
  // A negative code is not: its sign bit lands inside the exponent field.
  uint32_t word = f16Bits(0xb8) >> 3; // -1.0
  EXPECT_NE(bitsOf(restored(word & 0xffffu)), bitsOf(-1.0f));
}

} // namespace
