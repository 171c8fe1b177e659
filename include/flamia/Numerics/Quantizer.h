//===- Quantizer.h - The no-clipping block quantizer -------------*- C++ -*-===//
//
// docs/design.md section 4, "Scale rule (no clipping)":
//   MX (E8M0 scale): for a block with amax = max |x| and element maximum m
//     (448 E4M3, 57344 E5M2, 6 E2M1) the scale is 2^e, e the smallest integer
//     with amax / 2^e <= m, clamped to [-127, 127]; amax = 0 gives e = -127
//     (byte 0). Elements are RNE(x / 2^e) saturated to +-m.
//   NVFP4 (UE4M3 scale): block of 16, scale = the smallest positive E4M3
//     value s with amax <= 6 s (448 if none; byte 0 if amax = 0), global
//     scale 1.0, elements RNE to E2M1 of x / s, saturated to +-6.
//   A block holding a NaN or an Inf gets the NaN scale byte 0xFF and NaN
//   elements: 0x7F for E4M3/E5M2; E2M1 has no NaN, its elements are 0.
//
// Every step is exact: the scale exponent comes from frexp (no log2), x / 2^e
// is an exact power-of-two scaling, and x / s (NVFP4) is rounded to E2M1
// directly from the double quotient (which never lands on an E2M1 tie unless
// the exact quotient does).
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_NUMERICS_QUANTIZER_H
#define FLAMIA_NUMERICS_QUANTIZER_H

#include "flamia/Schedule/DocumentLayout.h"
#include "flamia/Numerics/Formats.h"
#include "flamia/Numerics/ScaleLayout.h"
#include "flamia/Numerics/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace flamia::numerics {

enum class ElementFormat { E4M3, E5M2, E2M1 };
enum class ScaleFormat { E8M0, UE4M3 };

struct QuantFormat {
  ElementFormat element = ElementFormat::E4M3;
  ScaleFormat scale = ScaleFormat::E8M0;

  /// "mxfp8-e4m3", "mxfp8-e5m2", "mxfp4", "nvfp4".
  std::string name() const;
  static bool fromName(const std::string &name, QuantFormat &out);
};
constexpr QuantFormat kMXFP8E4M3{ElementFormat::E4M3, ScaleFormat::E8M0};
constexpr QuantFormat kMXFP8E5M2{ElementFormat::E5M2, ScaleFormat::E8M0};
constexpr QuantFormat kMXFP4{ElementFormat::E2M1, ScaleFormat::E8M0};
constexpr QuantFormat kNVFP4{ElementFormat::E2M1, ScaleFormat::UE4M3};

/// The largest finite element value m: 448, 57344 or 6.
float elementMax(ElementFormat format);

/// The scale rule's exponent for a finite amax >= 0: the smallest e with
/// amax / 2^e <= m, clamped to [-127, 127]; -127 for amax = 0. Exact.
int mxScaleExponent(double amax, double elementMax);

/// The NVFP4 scale byte for a finite amax >= 0: the smallest positive E4M3
/// value s with amax <= 6 s, 0x7E (448) when even 448 is too small, 0x00
/// when amax = 0.
uint8_t nvfp4ScaleCode(double amax);

/// RNE of a (finite) value to E2M1, saturated to +-6: the 4-bit code.
/// Rounds directly from double (no intermediate float rounding).
uint8_t roundToE2M1Saturating(double x);

/// Element code of x (already divided by its scale), RNE, saturated to +-m.
inline uint8_t encodeElementSaturating(double scaled, ElementFormat format) {
  switch (format) {
  case ElementFormat::E4M3:
    return floatToE4M3(static_cast<float>(scaled), Overflow::Saturate);
  case ElementFormat::E5M2:
    return floatToE5M2(static_cast<float>(scaled), Overflow::Saturate);
  case ElementFormat::E2M1:
    return roundToE2M1Saturating(scaled);
  }
  return 0;
}
inline float decodeElement(uint8_t code, ElementFormat format) {
  switch (format) {
  case ElementFormat::E4M3:
    return e4m3ToFloat(code);
  case ElementFormat::E5M2:
    return e5m2ToFloat(code);
  case ElementFormat::E2M1:
    return e2m1ToFloat(code);
  }
  return 0;
}
/// The element code that marks a NaN block: 0x7F (E4M3, E5M2) or 0 (E2M1).
uint8_t nanBlockElementCode(ElementFormat format);

/// The value of a scale byte (2^(b-127) or the UE4M3 value; NaN for 0xFF).
double decodeScale(uint8_t code, ScaleFormat format);

/// One block's quantization: `values` (n of them, finite or not) -> the scale
/// byte and the element codes. The building block of quantize(), also used
/// for the online quantization of dS.
uint8_t quantizeBlock(const float *values, int64_t n, QuantFormat format,
                      uint8_t *codes);

/// A quantized [T, H, D] tensor: element codes in the packed order and
/// scales in the logical layout [NB, H, scaleChannels].
struct QuantizedTensor {
  int64_t numTokens = 0, numHeads = 0, headDim = 0;
  QuantFormat format;
  ScaleLayout layout;
  TokenBlocks blocks;
  int64_t scaleChannels = 0;   // scales per (block, head)
  int64_t channelsPerScale = 0;
  std::vector<uint8_t> codes;  // [T, H, D]
  std::vector<uint8_t> scales; // [NB, H, scaleChannels]

  uint8_t scaleCode(int64_t t, int64_t h, int64_t d) const {
    return scales[(static_cast<int64_t>(blocks.blockOfToken[t]) * numHeads +
                   h) * scaleChannels +
                  d / channelsPerScale];
  }
  /// The dequantized value element * scale (exact in double).
  double dequantize(int64_t t, int64_t h, int64_t d) const;
  /// All values, [T, H, D], exact in double.
  std::vector<double> dequantizeAll() const;
};

/// Quantizes x [T, H, D] (float32, C order) with `layout` over `docs`.
/// Checks the layout against D. Multithreaded over (token block, head).
Status quantize(const float *x, int64_t numTokens, int64_t numHeads,
                int64_t headDim, const DocumentLayout &docs,
                const ScaleLayout &layout, QuantFormat format,
                QuantizedTensor &out);

} // namespace flamia::numerics

#endif // FLAMIA_NUMERICS_QUANTIZER_H
