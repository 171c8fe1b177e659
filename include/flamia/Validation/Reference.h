//===- Reference.h - O and LSE vs the CPU references ------------*- C++ -*-===//
//
// O and LSE of a run against the CPU mxfp8 reference (the recipe the kernels
// implement; judged) and the float64 reference (reported; and the GPU must
// be closer to the former when the recipe's own error is large enough to
// tell). See Check.h for the library as a whole and docs/runtime.md for the
// tolerances.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_VALIDATION_REFERENCE_H
#define FLAMIA_VALIDATION_REFERENCE_H

#include "flamia/Validation/Check.h"

namespace flamia::validation::device {

/// Tolerances of the reference comparison (docs/runtime.md).
/// O: relative L2 error to the mxfp8 reference at most this.
constexpr double kMaxRelL2O = 1e-2;
/// LSE: this plus the row's worst-case fp32 accumulation error of a score.
constexpr double kMaxAbsLse = 1e-3;
/// The GPU must be at least this much closer to the mxfp8 reference than to
/// the float64 reference ...
constexpr double kMaxRatioToQuantizationError = 0.5;
/// ... when the recipe's own error (mxfp8 ref vs float64 ref) is above this
/// (4 x 2^-9: a few bf16 roundings of O).
constexpr double kMinQuantizationErrorForRatio = 4.0 / 512.0;

/// The comparison of two tensors.
struct Comparison {
  /// sqrt(sum (a - b)^2 / sum b^2) over the non-NaN pairs (sqrt(sum
  /// (a - b)^2) when b is all zero); for compareLse with a tolerance, the
  /// largest |a - b| / tolerance instead.
  double relL2 = 0;
  double maxAbs = 0;
  int64_t nan = 0;      // pairs with a NaN on either side (not in the sums)
  int64_t compared = 0;
  int64_t worst = -1;   // index into a of the largest |a - b|
};

/// a vs b, both [T, H, D] with Ha and Hb heads, over heads 0 .. heads - 1.
Comparison compareO(const float *a, const float *b, int64_t T, int64_t Ha,
                    int64_t Hb, int64_t heads, int64_t D);

/// LSE [H, T]: rows h < heads. With `tolerance` ([heads, T]), relL2 is the
/// largest |a - b| / tolerance and worst its index.
Comparison compareLse(const float *a, const float *b, int64_t T, int64_t heads,
                      const double *tolerance = nullptr);

/// The LSE tolerance of each row [heads, T] (docs/runtime.md): kMaxAbsLse
/// plus twice the worst-case fp32 accumulation error of any of the row's
/// scores, D * 2^-24 * scale * max_d |q_id| * max_j sum_d |k_jd| over the
/// keys j the row sees (Higham's gamma_D bound). q [T, heads, D],
/// k [T, kvHeads, D].
std::vector<double> lseTolerance(const float *q, const float *k, int64_t T,
                                 int64_t heads, int64_t kvHeads, int64_t D,
                                 const int32_t *cu, int64_t numDocs,
                                 bool causal, float softmaxScale);

/// Query heads compared with the reference: whole GQA groups.
struct ReferenceOptions {
  /// > 0: these many (a multiple of Hq / Hkv, at most Hq); 0: all; < 0:
  /// as many GQA groups as `budget` multiply-adds of Q K^T and P V allow
  /// (at least one).
  int64_t heads = -1;
  double budget = 1.5e11;
  /// The kernels' softmax scale (the runtime's, after the manifest's
  /// default).
  float softmaxScale = 0.0f;
};

/// True if `heads` (> 0) is a valid explicit head count for Hq, Hkv; else
/// false with `rule` set to "must be a multiple of Hq / Hkv = G and at most
/// Hq = H" (callers put the option's name and value in front).
bool validReferenceHeads(int64_t heads, int64_t Hq, int64_t Hkv,
                         std::string &rule);

/// The query heads checkReference compares (after validReferenceHeads).
int64_t referenceHeads(const BatchView &batch, bool causal,
                       const ReferenceOptions &options);

/// What checkReference computed, for callers that keep the arrays (flamia-run
/// --dump). `skipped`: the recipe has no reference; nothing else is set.
struct ReferenceArrays {
  bool skipped = false;
  int64_t heads = 0;               // query heads compared
  std::vector<float> o;            // the GPU's O as float32 [T, Hq, D]
  std::vector<float> refO, refLse; // mxfp8 reference [T, heads, D], [heads, T]
  std::vector<float> f64O, f64Lse; // float64 reference, same shapes
};

/// Five checks, appended to `out` (RECIPE: the manifest's, e.g. mxfp8 or
/// nvfp4-mixed): "O vs CPU RECIPE reference" (Pass: rel L2 <= kMaxRelL2O, no
/// NaN), "LSE vs CPU RECIPE reference" (Pass: every |diff| within its
/// lseTolerance, no NaN), "O: GPU vs float64 reference" and "O: RECIPE ref
/// vs float64 ref" (Info), "O: closer to RECIPE than to float64" (Pass:
/// ratio <= kMaxRatioToQuantizationError; Info when the
/// recipe's error is below kMinQuantizationErrorForRatio). A single Skip row
/// "O, LSE vs reference" when the recipe has no reference. Errors: an
/// invalid explicit head count, a bad cu_seqlens, a failing reference.
runtime::Status checkReference(const BatchView &batch,
                               const runtime::Manifest &manifest,
                               const ReferenceOptions &options,
                               const OutputsView &outputs,
                               std::vector<Check> &out,
                               ReferenceArrays *arrays = nullptr);

} // namespace flamia::validation::device

#endif // FLAMIA_VALIDATION_REFERENCE_H
