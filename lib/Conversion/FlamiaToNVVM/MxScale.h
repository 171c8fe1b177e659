//===- MxScale.h - The contract's E8M0 block scale, in IR -------*- C++ -*-===//
//
// The scale rules of docs/design.md ("Scale rule"). MX for E4M3 elements,
// shared by the quantization kernel (flamia.quantize_block) and the backward's
// online dS quantization (flamia.frag.block_quantize): e is the smallest
// integer with amax / 2^e <= 448, from the bits of amax (exact: e = E - 8,
// plus 1 when the mantissa exceeds 1.75), clamped to [-127, 127]; an
// all-zero (or subnormal) amax gets -127; a non-finite block (amax = +inf,
// NaN counted as +inf by the caller) gets the NaN byte 0xFF. NVFP4 (the
// recipe nvfp4-mixed's per-token copies): an unsigned-E4M3 scale per 16
// elements and E2M1 elements, global scale 1.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_LIB_CONVERSION_FLAMIATONVVM_MXSCALE_H
#define FLAMIA_LIB_CONVERSION_FLAMIATONVVM_MXSCALE_H

#include "Emitter.h"

namespace flamia {

struct MxScale {
  Value byte;      // i8 scale code (E8M0)
  Value inverse;   // f32 2^-e
  Value factor;    // f32 2^e
  Value nonFinite; // i1: the block holds an Inf or a NaN
};

/// The E8M0 scale of a block whose amax is `amax` (+inf for Inf/NaN blocks).
MxScale mxScaleOf(Emitter &e, Value amax);

/// |x| for a block's amax, with NaN counted as +inf (so that amax = +inf
/// marks a non-finite block).
Value mxMagnitude(Emitter &e, Value x);

/// The E4M3 codes (vector<2xi8>, lo first) of the elements `lo`, `hi` of a
/// block with scale `s`: x / 2^e rounded to nearest even and saturated.
Value mxfp8Codes(Emitter &e, Value lo, Value hi, const MxScale &s);

/// The dequantized values of two codes from mxfp8Codes, code x 2^e (exact
/// in bf16), as a packed bf16x2 word (i32, lo in the low half); a
/// non-finite block's are NaN (0x7FC0).
Value mxfp8Dequantized(Emitter &e, Value codes, const MxScale &s);

/// The number of E2M1 rounding boundaries (between its 8 magnitudes).
constexpr int kNumE2M1Boundaries = 7;

/// NVFP4's unsigned-E4M3 scale of a 16-element group (docs/design.md,
/// "Scale rule"): the smallest positive E4M3 value s with amax <= 6 s, 448
/// (0x7E) at most, 0 when amax = 0, NaN (0xFF) for a non-finite group.
struct Nvfp4Scale {
  Value byte;      // i8 scale code (UE4M3)
  Value value;     // f32: s (0 for an all-zero group)
  Value nonFinite; // i1: the group holds an Inf or a NaN
  /// f32: E2M1's rounding boundaries times s (exact), for e2m1Quantize.
  Value thresholds[kNumE2M1Boundaries];
};

/// The UE4M3 scale of a group whose amax is `amax` (+inf for Inf/NaN).
Nvfp4Scale nvfp4ScaleOf(Emitter &e, Value amax);

/// The E2M1 code (i32, 0..15, sign in bit 3) of `x / s` rounded to nearest
/// even and saturated to +-6, found by comparing |x| with s.thresholds (no
/// division), and that E2M1 value times s as f32 (exact: at most 6
/// significant bits), with x's sign.
std::pair<Value, Value> e2m1Quantize(Emitter &e, Value x, const Nvfp4Scale &s);

} // namespace flamia

#endif // FLAMIA_LIB_CONVERSION_FLAMIATONVVM_MXSCALE_H
