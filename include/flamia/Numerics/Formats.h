//===- Formats.h - Bit-exact conversions between float32 and the ---*- C++ -*-===//
//                 microscaling formats
//
// The element and scale formats of docs/design.md section 4, with the semantics of
// the MLIR/LLVM builtin float types of the same name:
//
//   E4M3   f8E4M3FN    1.4.3, bias 7, max 448, NaN 0x7F/0xFF, no inf
//   E5M2   f8E5M2      1.5.2, bias 15, max 57344, inf 0x7C/0xFC, NaN 0x7D..
//   E2M1   f4E2M1FN    1.2.1, bias 1, values {0,.5,1,1.5,2,3,4,6}; the code
//                      lives in the low nibble of a byte, sign = bit 3
//   E8M0   f8E8M0FNU   8 exponent bits, value 2^(code-127), NaN 0xFF, no
//                      sign, no zero
//   UE4M3  f8E4M3FN used unsigned (NVFP4 block scales): the codes 0x00..0x7E
//                      of E4M3 (sign bit clear)
//   BF16   bfloat16
//
// Encoders round to nearest, ties to even (RNE). Two overflow behaviours:
//   Overflow::Ieee      exactly llvm::APFloat::convert(rmNearestTiesToEven):
//                       E4M3 overflow/inf -> NaN (0x7F|sign), E5M2
//                       overflow -> inf, E2M1 (finite-only) saturates and
//                       maps inf/NaN to a signed zero.
//   Overflow::Saturate  like PTX cvt.satfinite: a finite value or an
//                       infinity beyond the largest finite value becomes
//                       +-max; NaN stays NaN. The quantizer uses this.
// Decoders are exact (table lookups) and produce APFloat's float32 bits,
// including NaN payloads (see docs/numerics.md for the one place where
// APFloat itself is inconsistent: E8M0 0xFF).
//
// Everything here is plain C++17, header-inline, and branch-light: it runs in
// the inner loops of the CPU reference.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_NUMERICS_FORMATS_H
#define FLAMIA_NUMERICS_FORMATS_H

#include <cstdint>
#include <cstring>

namespace flamia::numerics {

inline uint32_t bitsOf(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}
inline float floatOf(uint32_t u) {
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

enum class Overflow { Ieee, Saturate };

namespace detail {

/// RNE of the magnitude |x| (float32 bits without the sign, finite) into a
/// minifloat with `manBits` mantissa bits and exponent bias `bias`, with
/// subnormals and an unbounded exponent range above. Returns the magnitude
/// code (exponent field << manBits | mantissa); a result above the format's
/// largest code means overflow, which the caller handles.
inline uint32_t roundMagnitude(uint32_t absBits, int manBits, int bias) {
  if (absBits == 0)
    return 0;
  int biasedExp = static_cast<int>(absBits >> 23);
  uint32_t sig = absBits & 0x7fffffu;
  int exp;
  if (biasedExp == 0) {
    exp = -126; // float32 subnormal: no implicit bit
  } else {
    exp = biasedExp - 127;
    sig |= 0x800000u;
  }
  const int minExp = 1 - bias;
  int shift = 23 - manBits;
  uint32_t base = 0;
  if (exp >= minExp)
    base = static_cast<uint32_t>(exp - minExp) << manBits;
  else
    shift += minExp - exp;
  // sig < 2^24 <= half of the rounding unit: rounds to zero.
  if (shift >= 25)
    return 0;
  uint32_t q = sig >> shift;
  uint32_t rem = sig & ((1u << shift) - 1u);
  uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1u)))
    ++q;
  // Normal: (exp - minExp) << m plus q in [2^m, 2^(m+1)] gives
  // (exp + bias) << m | fraction, carries included. Subnormal: q itself.
  return base + q;
}

struct DecodeTables {
  uint32_t e4m3[256];
  uint32_t e5m2[256];
  uint32_t e8m0[256];
  uint32_t e2m1[16];
  DecodeTables();
};
const DecodeTables &decodeTables();

} // namespace detail

//===----------------------------------------------------------------------===//
// bfloat16
//===----------------------------------------------------------------------===//

/// float32 -> bf16 bits, RNE; NaN keeps its sign and top payload bits and is
/// made quiet (as APFloat does).
inline uint16_t floatToBf16(float x) {
  uint32_t u = bitsOf(x);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((u >> 16) | 0x0040u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
inline float bf16ToFloat(uint16_t b) {
  return floatOf(static_cast<uint32_t>(b) << 16);
}
/// The float32 holding bf16(x).
inline float roundToBf16(float x) { return bf16ToFloat(floatToBf16(x)); }

//===----------------------------------------------------------------------===//
// E4M3 (f8E4M3FN)
//===----------------------------------------------------------------------===//

constexpr float kE4M3Max = 448.0f;
constexpr uint8_t kE4M3NaN = 0x7f;

inline uint8_t floatToE4M3(float x, Overflow overflow = Overflow::Ieee) {
  uint32_t u = bitsOf(x);
  uint8_t sign = static_cast<uint8_t>((u >> 24) & 0x80u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u)
    return sign | kE4M3NaN;
  if (a == 0x7f800000u)
    return sign | (overflow == Overflow::Saturate ? 0x7e : kE4M3NaN);
  uint32_t mag = detail::roundMagnitude(a, 3, 7);
  if (mag > 0x7eu)
    return sign | (overflow == Overflow::Saturate ? 0x7e : kE4M3NaN);
  return sign | static_cast<uint8_t>(mag);
}
inline float e4m3ToFloat(uint8_t code) {
  return floatOf(detail::decodeTables().e4m3[code]);
}

//===----------------------------------------------------------------------===//
// E5M2 (f8E5M2)
//===----------------------------------------------------------------------===//

constexpr float kE5M2Max = 57344.0f;
constexpr uint8_t kE5M2NaN = 0x7f;

inline uint8_t floatToE5M2(float x, Overflow overflow = Overflow::Ieee) {
  uint32_t u = bitsOf(x);
  uint8_t sign = static_cast<uint8_t>((u >> 24) & 0x80u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) // NaN: top two payload bits, made quiet (APFloat)
    return sign | static_cast<uint8_t>(0x7cu | ((a >> 21) & 3u) | 2u);
  if (a == 0x7f800000u)
    return sign | (overflow == Overflow::Saturate ? 0x7b : 0x7c);
  uint32_t mag = detail::roundMagnitude(a, 2, 15);
  if (mag > 0x7bu)
    return sign | (overflow == Overflow::Saturate ? 0x7b : 0x7c);
  return sign | static_cast<uint8_t>(mag);
}
inline float e5m2ToFloat(uint8_t code) {
  return floatOf(detail::decodeTables().e5m2[code]);
}

//===----------------------------------------------------------------------===//
// E2M1 (f4E2M1FN): code in the low nibble, sign = bit 3
//===----------------------------------------------------------------------===//

constexpr float kE2M1Max = 6.0f;

/// E2M1 is finite-only: both overflow modes saturate finite values to +-6.
/// Ieee maps inf/NaN to a signed zero (APFloat); Saturate maps inf to +-6 and
/// NaN to a signed zero (the format has no NaN).
inline uint8_t floatToE2M1(float x, Overflow overflow = Overflow::Ieee) {
  uint32_t u = bitsOf(x);
  uint8_t sign = static_cast<uint8_t>((u >> 28) & 0x8u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u)
    return sign;
  if (a == 0x7f800000u)
    return sign | (overflow == Overflow::Saturate ? 0x7 : 0x0);
  uint32_t mag = detail::roundMagnitude(a, 1, 1);
  if (mag > 0x7u)
    mag = 0x7u;
  return sign | static_cast<uint8_t>(mag);
}
inline float e2m1ToFloat(uint8_t code) {
  return floatOf(detail::decodeTables().e2m1[code & 0xfu]);
}

//===----------------------------------------------------------------------===//
// E8M0 (f8E8M0FNU): 2^(code - 127), NaN 0xFF
//===----------------------------------------------------------------------===//

constexpr uint8_t kE8M0NaN = 0xff;

/// The scale byte of the power of two 2^e, e in [-127, 127].
inline uint8_t e8m0FromExponent(int e) { return static_cast<uint8_t>(e + 127); }
/// The exponent of a (non-NaN) scale byte.
inline int e8m0Exponent(uint8_t code) { return static_cast<int>(code) - 127; }

/// float32 -> E8M0 as APFloat rounds positive values: with no mantissa bits,
/// x in [2^E, 2^(E+1)) goes to 2^(E+1) when x >= 1.5 * 2^E (ties up), else to
/// 2^E; below the smallest value 2^-127 it is 0x00 (there is no zero), above
/// the largest 2^127 it is NaN. +-0 give 0x00. Negative nonzero values, inf
/// and NaN give NaN 0xFF (APFloat's result for negative inputs is not
/// meaningful: it lets the sign bit leak into the exponent).
inline uint8_t floatToE8M0(float x) {
  uint32_t u = bitsOf(x);
  if ((u & 0x7fffffffu) == 0)
    return 0;
  if (u >= 0x7f800000u) // inf, NaN, or any negative value
    return kE8M0NaN;
  int biasedExp = static_cast<int>(u >> 23);
  uint32_t man = u & 0x7fffffu;
  int code;
  if (biasedExp == 0) {
    // Subnormal: x = man * 2^-149. Only [2^-127, 2^-126) can be >= 1.5*2^-127.
    code = (man >= 0x600000u) ? 1 : 0;
  } else {
    code = biasedExp + (man >= 0x400000u ? 1 : 0); // 2^(E) = code E+127
  }
  if (code > 254)
    return kE8M0NaN;
  return static_cast<uint8_t>(code);
}
inline float e8m0ToFloat(uint8_t code) {
  return floatOf(detail::decodeTables().e8m0[code]);
}

//===----------------------------------------------------------------------===//
// UE4M3: E4M3 used unsigned, for NVFP4 block scales
//===----------------------------------------------------------------------===//

/// The value of an NVFP4 scale byte: the E4M3 value of codes 0x00..0x7E; the
/// NaN codes 0x7F/0xFF and codes with the sign bit set decode to NaN.
inline float ue4m3ToFloat(uint8_t code) {
  if (code >= 0x7f)
    return floatOf(0x7fc00000u);
  return e4m3ToFloat(code);
}

} // namespace flamia::numerics

#endif // FLAMIA_NUMERICS_FORMATS_H
