//===- Formats.cpp - Decode tables for the microscaling formats ------------===//
#include "flamia/Numerics/Formats.h"

#include <cmath>

namespace flamia::numerics::detail {

namespace {
/// The float32 bits of a finite minifloat magnitude (exponent field, mantissa
/// field) with `manBits` mantissa bits and exponent bias `bias`.
uint32_t finiteBits(uint32_t expField, uint32_t manField, int manBits,
                    int bias) {
  double value;
  if (expField == 0)
    value = std::ldexp(static_cast<double>(manField), 1 - bias - manBits);
  else
    value = std::ldexp(static_cast<double>((1u << manBits) | manField),
                       static_cast<int>(expField) - bias - manBits);
  return bitsOf(static_cast<float>(value)); // exact: few significant bits
}
} // namespace

DecodeTables::DecodeTables() {
  for (uint32_t code = 0; code < 256; ++code) {
    uint32_t sign = (code & 0x80u) << 24;
    uint32_t mag = code & 0x7fu;
    // E4M3FN: only S.1111.111 is NaN; the payload shifts into the float32
    // mantissa with the quiet bit set.
    if (mag == 0x7fu)
      e4m3[code] = sign | 0x7f800000u | (0x7u << 20) | 0x400000u;
    else
      e4m3[code] = sign | finiteBits(mag >> 3, mag & 7u, 3, 7);
    // E5M2: exponent field 31 is inf (mantissa 0) or NaN.
    if ((mag >> 2) == 31u)
      e5m2[code] = (mag & 3u) == 0
                       ? sign | 0x7f800000u
                       : sign | 0x7f800000u | ((mag & 3u) << 21) | 0x400000u;
    else
      e5m2[code] = sign | finiteBits(mag >> 2, mag & 3u, 2, 15);
    // E8M0: 2^(code - 127); 0xFF is NaN.
    e8m0[code] = code == 0xffu
                     ? 0x7fc00000u
                     : bitsOf(static_cast<float>(
                           std::ldexp(1.0, static_cast<int>(code) - 127)));
  }
  for (uint32_t code = 0; code < 16; ++code) {
    uint32_t sign = (code & 0x8u) << 28;
    uint32_t mag = code & 0x7u;
    e2m1[code] = sign | finiteBits(mag >> 1, mag & 1u, 1, 1);
  }
}

const DecodeTables &decodeTables() {
  static const DecodeTables tables;
  return tables;
}

} // namespace flamia::numerics::detail
