//===- QuantizedCopies.h - Workspace copies vs the CPU quantizer -*- C++ -*-===//
//
// Every workspace buffer bit for bit against the numerics quantizer, by what
// its manifest entry says it holds ("holds", include/flamia/Runtime/
// Manifest.h): the E4M3 payload, the E8M0 scales, the bf16 dequantized copy
// or sm_100a's scale-factor tiles of q, k, v or (a training step) grad_o, per
// token (1x32) or per token block (32x32); delta (rowsum(dO * O)) against
// the reference's D (Gradients.h). Scratch buffers are listed (Info), not
// checked.
// See Check.h for the library as a whole.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_VALIDATION_QUANTIZEDCOPIES_H
#define FLAMIA_VALIDATION_QUANTIZEDCOPIES_H

#include "flamia/Validation/Check.h"

#include "flamia/Numerics/Quantizer.h"

#include <functional>
#include <map>
#include <tuple>
#include <utility>

namespace flamia::validation::device {

/// The CPU quantizer's copies of a batch's q, k, v and grad_o: MXFP8 (E4M3,
/// 32-element blocks, E8M0 scales) or NVFP4 (E2M1, 16-element blocks, UE4M3
/// scales; per token only), each (tensor, layout, format) made once, on first
/// use.
class QuantizedReference {
public:
  /// `batch` (q, k, v and cu_seqlens) and `docs` must outlive this object.
  QuantizedReference(const BatchView &batch, const DocumentLayout &docs)
      : batch_(batch), docs_(docs) {}

  /// The copy of `tensor` with per-token (1x32) or per-token-block
  /// (document-local 32x32) scales; with `nvfp4`, the NVFP4 per-token (1x16)
  /// copy. An error if the quantizer fails, `nvfp4` is asked of a token-block
  /// layout, or the tensor is grad_o and the batch has none.
  runtime::Status get(runtime::HeldTensor tensor, runtime::HeldLayout layout,
                      const numerics::QuantizedTensor *&out,
                      bool nvfp4 = false);

private:
  const BatchView &batch_;
  const DocumentLayout &docs_;
  std::map<std::tuple<runtime::HeldTensor, runtime::HeldLayout, bool>,
           numerics::QuantizedTensor>
      cache_;
};

/// The row name of a buffer holding `holds`: "NAME (E4M3 payload)",
/// "NAME (E8M0 scales)", "NAME (1x32 dequantized, bf16)", "NAME (32x32
/// dequantized, bf16)", "NAME (scale-factor tiles, 128x4 layout)"; of an
/// NVFP4 copy (`nvfp4`) "NAME (E2M1 payload, 2 a byte)", "NAME (UE4M3
/// scales)", "NAME (1x16 dequantized, bf16)", "NAME (UE4M3 scale-factor
/// tiles, 128x4 layout)".
std::string copyCheckName(const std::string &buffer,
                          const runtime::BufferContents &holds,
                          bool nvfp4 = false);

/// A payload, scales or dequantized copy (holds.part Payload, Scales or
/// Dequantized) of `bytes` bytes against `ref`, the quantizer's copy of the
/// same tensor in the same layout and format (ref.format: MXFP8 or NVFP4;
/// an NVFP4 payload holds two E2M1 codes a byte, element 2i in the low
/// nibble). Pass: every byte equal ("bit-identical"; a dequantized NaN
/// matches any NaN). Fail: the size differs, or "N differ; first [t=..,
/// h=.., d=..] gpu .. ref .." with the largest difference of the decoded
/// values (E4M3 or E2M1 values, E8M0 exponents, UE4M3 scale values, bf16
/// values; a NaN on one side counts as infinity).
Check checkQuantizedCopy(const std::string &buffer,
                         const runtime::BufferContents &holds,
                         const numerics::QuantizedTensor &ref,
                         const uint8_t *gpu, size_t bytes);

/// sm_100a's scale-factor tiles (holds.part ScaleTiles; the quantizer's
/// flamia.quantize_block): slot (b0, h), 512 bytes, holds the 128 rows of
/// the four token blocks b0 .. b0 + 3 in the 128x4 tiled layout
/// (include/flamia/Target/ScaleFactorLayout.h), scale 1 (127) where a block
/// would lie past the last one. `blocks` is the per-token-block copy (its
/// token blocks, in document order), `scales` the copy in holds.layout: per
/// token (rows past a short block's end hold the scale of zero, 0) or per
/// token block; with holds.tileRows Channels, rows are channels and the
/// K-blocks the four blocks (v). `scales` of an NVFP4 copy (per token,
/// UE4M3, 16 channels a scale) has a tile per 64 channels in each slot
/// ([NB, H, 512 x ceil(D / 64)], scale c in tile c / 4, column c % 4) and
/// UE4M3 1.0 (0x38) past the last block. Every byte is compared.
Check checkScaleTiles(const std::string &buffer,
                      const runtime::BufferContents &holds,
                      const numerics::QuantizedTensor &blocks,
                      const numerics::QuantizedTensor &scales,
                      const uint8_t *gpu, size_t bytes);

/// Downloads one workspace buffer of the last run (by manifest name).
using FetchBuffer = std::function<runtime::Status(const std::string &buffer,
                                                  std::vector<uint8_t> &bytes)>;

/// Every workspace buffer of `manifest`, in manifest order, one Check each
/// (appended to `out`); a single Skip row "quantized copies" when the
/// manifest's recipe has no CPU reference. A delta buffer is checked with
/// checkDelta against referenceDelta(batch.gradO, `o`) (the run's O, bf16
/// [T, Hq, D]); without `o` or grad_o it is a Skip row. Copies of grad_o
/// need batch.gradO. A copy is NVFP4 when its payload is e2m1 or its scales
/// e4m3; a dequantized copy when another buffer holds such a payload or
/// scales of the same tensor and layout, or else when the recipe reads that
/// tensor per token as NVFP4. Errors only from `fetch`, the documents, the
/// quantizer, or a copy of grad_o without batch.gradO.
runtime::Status checkQuantizedCopies(const BatchView &batch,
                                     const runtime::Manifest &manifest,
                                     const FetchBuffer &fetch,
                                     std::vector<Check> &out,
                                     const uint16_t *o = nullptr);

} // namespace flamia::validation::device

#endif // FLAMIA_VALIDATION_QUANTIZEDCOPIES_H
