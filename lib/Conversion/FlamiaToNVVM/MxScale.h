//===- MxScale.h - The contract's E8M0 block scale, in IR -------*- C++ -*-===//
//
// The scale rule of docs/design.md ("Scale rule") for E4M3 elements, shared
// by the quantization kernel (flamia.quantize_block) and the backward's
// online dS quantization (flamia.frag.block_quantize): e is the smallest
// integer with amax / 2^e <= 448, from the bits of amax (exact: e = E - 8,
// plus 1 when the mantissa exceeds 1.75), clamped to [-127, 127]; an
// all-zero (or subnormal) amax gets -127; a non-finite block (amax = +inf,
// NaN counted as +inf by the caller) gets the NaN byte 0xFF.
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

} // namespace flamia

#endif // FLAMIA_LIB_CONVERSION_FLAMIATONVVM_MXSCALE_H
