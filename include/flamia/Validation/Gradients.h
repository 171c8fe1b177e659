//===- Gradients.h - The backward's results vs the CPU reference -*- C++
//-*-===//
//
// What the backward kernels of a training step computed (docs/runtime-abi.md,
// "The backward kernels (sm_90a)"): dQ, dK and dV against the
// CPU mxfp8 reference's backward (numerics::referenceBackward) fed with the
// GPU's own O and LSE, so that the forward's differences do not count twice;
// and the workspace buffer `delta` (holds part delta) bit for bit against the
// reference's D_i = fl32(exact sum_d dO_id O_id). The quantized copies of
// grad_o are QuantizedCopies.h's (tensor grad_o by "holds"). See Check.h for
// the library as a whole and docs/runtime.md for the tolerance.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_VALIDATION_GRADIENTS_H
#define FLAMIA_VALIDATION_GRADIENTS_H

#include "flamia/Validation/Check.h"
#include "flamia/Validation/Reference.h"

namespace flamia::validation::device {

/// dQ, dK, dV: relative L2 error to the CPU mxfp8 reference (fed the GPU's O
/// and LSE) at most this (docs/runtime.md, "Tolerances of the backward").
constexpr double kMaxRelL2Grad = 1e-2;

/// How far the fp32 rounding of the scores alone may move the backward's P
/// between two correct implementations, as a power of two: P = 2^(c s - lse2)
/// with c = softmax_scale log2(e), and a score's fp32 error is of the order of
/// 2^-24 |s| <= 2^-24 |q| |k|. So c 2^-24 max|q_i| max|k_j| (Euclidean norms
/// over D, the largest of the batch). Above kIllConditionedExponent the
/// gradient rows say so (the verdict is unchanged): run 79 measured correct
/// kernels at rel L2 5e-3 where this is 0.03 and 1.6e-2 to 4.4e-2 where it
/// is 0.3 (docs/runtime.md, "Tolerance of the gradients, and why").
double scoreRoundingExponent(const float *q, int64_t numQ, const float *k,
                             int64_t numK, int64_t D, float softmaxScale);
constexpr double kIllConditionedExponent = 1.0 / 16;

/// A gradient buffer as float32: `bytes` of bf16 (2 per element) or f32 (4),
/// the manifest's dtype of dq, dk or dv. Other dtypes give an empty vector.
std::vector<float> gradientValues(const uint8_t *bytes, size_t n,
                                  runtime::DType dtype);

/// The GPU's gradients as float32: dq [T, Hq, D], dk, dv [T, Hkv, D].
struct GradientsView {
  const float *dq = nullptr, *dk = nullptr, *dv = nullptr;
};

/// "gradients written (no NaN)": dq (`qElements`), dk and dv (`kvElements`
/// each) hold no NaN (they were filled with NaN before the run). The detail
/// names the NaN count of each.
Check checkGradientsWritten(const GradientsView &gradients, size_t qElements,
                            size_t kvElements);

/// D_i of the reference's backward, [Hq, T]: delta[h, t] = fl32(the exact
/// sum over d of dO[t, h, d] * O[t, h, d]), dO and O bf16 bits [T, Hq, D]
/// (the GPU's O: the reference reads the forward's output as an input).
std::vector<float> referenceDelta(const uint16_t *gradO, const uint16_t *o,
                                  int64_t T, int64_t Hq, int64_t D);

/// A delta buffer ([Hq, T] f32, `bytes` bytes) bit for bit against
/// `expected` (referenceDelta). Pass: every element's bits equal
/// ("bit-identical"). Fail: the size differs, or "N of M differ; first
/// [h=.., t=..] gpu .. ref ..; max rel ..", max abs diff the largest
/// difference (a NaN: infinity).
Check checkDelta(const std::string &buffer, const std::vector<float> &expected,
                 const uint8_t *gpu, size_t bytes, int64_t T, int64_t Hq);

/// A debug build's S check (flamia-compile --debug-scores): the raw scores
/// S = Q K^T of each query row against the first key tile of its document
/// as the forward wrote them (`forward`, workspace s_fwd) and as the dQ
/// kernel recomputed them (`backward`, s_dq), both f32 [T, Hq, blockN],
/// `elements` floats each, compared bit for bit on the keys inside the
/// document (column c < min(blockN, document length)); the columns past a
/// document's end read the next document's keys (the forward) or zeros (the
/// dQ kernel) and are not scores of the document. Both buffers are to be
/// filled with NaN before the step: an entry still NaN in either was not
/// written. Pass: every entry written and equal ("bit-identical"). Fail: the
/// size differs, or "N unwritten, M of K differ; first [t=.., h=.., key=..]
/// forward .. backward ..".
Check checkRecomputedScores(const float *forward, const float *backward,
                            size_t elements, const std::vector<int32_t> &cu,
                            int64_t Hq, int64_t blockN);

/// What checkGradients computed (flamia-run --dump).
struct GradientArrays {
  bool skipped = false;
  int64_t heads = 0;                    // query heads compared
  std::vector<float> refDq, refDk, refDv; // [T, heads | heads / G, D]
};

/// Three checks, appended to `out`: "dQ vs CPU mxfp8 reference", "dK ...",
/// "dV ..." (Pass: rel L2 <= kMaxRelL2Grad and no NaN; the detail names the
/// rel L2, the NaN count and the worst position). The reference runs on whole
/// GQA groups, as many as `options` allow (referenceHeads with the budget
/// divided by 2.5: the backward's five GEMMs against the forward's two);
/// dK and dV of kv head g depend only on the query heads of group g, so a
/// prefix of groups is exact. `batch.gradO` must be set. A single Skip row
/// "dQ, dK, dV vs reference" when the recipe has no reference. Errors: no
/// grad_o, an invalid explicit head count, a bad cu_seqlens, the reference.
runtime::Status checkGradients(const BatchView &batch,
                               const runtime::Manifest &manifest,
                               const ReferenceOptions &options,
                               const OutputsView &outputs,
                               const GradientsView &gradients,
                               std::vector<Check> &out,
                               GradientArrays *arrays = nullptr);

} // namespace flamia::validation::device

#endif // FLAMIA_VALIDATION_GRADIENTS_H
