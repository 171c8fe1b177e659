//===- ReferenceAttention.h - The CPU reference of recipe mxfp8 ---*- C++ -*-===//
//
// The executable definition of docs/design.md section 4 (precise definitions in
// docs/numerics.md, "Precise definitions (recipe mxfp8, version 1)"):
// forward (O, LSE) and backward (dQ, dK, dV) of causal or non-causal
// attention over packed documents, every GEMM operand read from the copy its
// RecipeConfig names, every sum the exact sum of exact products rounded once
// to float32. Deterministic: results do not depend on the thread count.
//
// Tensors are float32, C order: Q, O, dO, dQ [T, Hq, D]; K, V, dK, dV
// [T, Hkv, D] (GQA: query head h reads kv head h / (Hq / Hkv)); LSE [Hq, T]
// in natural-log units. Q, K, V, dO and O are rounded to bf16 first (they
// are meant to hold bf16 values already).
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_NUMERICS_REFERENCEATTENTION_H
#define FLAMIA_NUMERICS_REFERENCEATTENTION_H

#include "flamia/Schedule/DocumentLayout.h"
#include "flamia/Numerics/RecipeConfig.h"
#include "flamia/Numerics/Status.h"

#include <cstdint>
#include <vector>

namespace flamia::numerics {

struct AttentionInputs {
  int64_t numTokens = 0;
  int64_t numHeads = 0;   // Hq
  int64_t numKvHeads = 0; // Hkv, divides Hq
  int64_t headDim = 0;
  const float *q = nullptr; // [T, Hq, D]
  const float *k = nullptr; // [T, Hkv, D]
  const float *v = nullptr; // [T, Hkv, D]
  const DocumentLayout *docs = nullptr;
  bool causal = true;
  float softmaxScale = 0.0f; // 0: 1 / sqrt(D)

  /// softmaxScale, or fl32(1 / sqrt(D)) when it is 0.
  float effectiveSoftmaxScale() const;
};

/// Heads valid by flamia::validation::validateHeads, T >= 0, D >= 1,
/// documents cover T, the softmax scale 0 (the default) or valid by
/// flamia::validation::validateSoftmaxScale (the shared messages).
Status validateAttentionInputs(const AttentionInputs &in);

struct ForwardOutputs {
  std::vector<float> o;   // [T, Hq, D], bf16 values
  std::vector<float> lse; // [Hq, T]
};

struct BackwardOutputs {
  std::vector<float> dq; // [T, Hq, D]
  std::vector<float> dk; // [T, Hkv, D]
  std::vector<float> dv; // [T, Hkv, D]
};

/// The log2-domain scores t_ij of every unmasked pair, as the forward and the
/// backward computed them (the Consistency property compares them bit for
/// bit). Row (h, i) holds keys from its document's first token up to i
/// (causal) or to the document's end.
struct ScoreTrace {
  std::vector<int64_t> rowOffset; // [Hq * T + 1], row (h, i) = h * T + i
  std::vector<float> forward;
  std::vector<float> backwardRows;    // recomputed for dQ
  std::vector<float> backwardColumns; // recomputed for dK, dV

  void init(const AttentionInputs &in);
  int64_t index(const AttentionInputs &in, int64_t h, int64_t i,
                int64_t j) const {
    return rowOffset[h * in.numTokens + i] +
           (j - in.docs->begin(in.docs->documentOf(i)));
  }
};

/// Forward of a quantized recipe (not `none`).
Status referenceForward(const AttentionInputs &in, const RecipeConfig &recipe,
                        ForwardOutputs &out, ScoreTrace *trace = nullptr);

/// Backward of a quantized recipe from the forward's O and LSE (treated as
/// inputs) and dO.
Status referenceBackward(const AttentionInputs &in, const RecipeConfig &recipe,
                         const float *dO, const float *o, const float *lse,
                         BackwardOutputs &out, ScoreTrace *trace = nullptr);

/// Recipe `none`: exact softmax attention and its exact gradients in double
/// on the bf16-rounded inputs, cast to float32 at the end. `dO` may be null
/// (forward only); then `grads` is ignored.
Status float64Attention(const AttentionInputs &in, const float *dO,
                        ForwardOutputs &out, BackwardOutputs *grads);

/// Any recipe: forward, then (if dO) backward from the forward's outputs.
Status runAttention(const AttentionInputs &in, const RecipeConfig &recipe,
                    const float *dO, ForwardOutputs &out,
                    BackwardOutputs *grads, ScoreTrace *trace = nullptr);

} // namespace flamia::numerics

#endif // FLAMIA_NUMERICS_REFERENCEATTENTION_H
