//===- TrainingReference.h - The CPU reference as a training step -*- C++ -*-===//
//
// The "kernels" of the training-step leak tests: the CPU reference's
// forward on bf16 q, k, v and its backward on grad_o, as flamia-run's
// callbacks return them (O as bf16 bits, the rest float32).
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_UNITTESTS_VALIDATION_TRAININGREFERENCE_H
#define FLAMIA_UNITTESTS_VALIDATION_TRAININGREFERENCE_H

#include "TestBatch.h"

#include "flamia/Numerics/ReferenceAttention.h"
#include "flamia/Validation/Leaks.h"

#include "gtest/gtest.h"

namespace flamia::validation::device::test {

inline std::vector<float> widen(const std::vector<uint16_t> &x) {
  std::vector<float> f(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    f[i] = numerics::bf16ToFloat(x[i]);
  return f;
}

/// The forward of `recipe` on q, k, v (the batch's shape and `docs`), then
/// its backward on dO with the forward's O and LSE, or with `given`'s.
inline TrainingOutputs referenceTrainingStep(
    const OwnedBatch &batch, const DocumentLayout &docs,
    const numerics::RecipeConfig &recipe, const std::vector<uint16_t> &q,
    const std::vector<uint16_t> &k, const std::vector<uint16_t> &v,
    const std::vector<uint16_t> &dO, const TrainingOutputs *given = nullptr,
    bool causal = true) {
  std::vector<float> qf = widen(q), kf = widen(k), vf = widen(v),
                     df = widen(dO);
  numerics::AttentionInputs in;
  in.numTokens = batch.T;
  in.numHeads = batch.Hq;
  in.numKvHeads = batch.Hkv;
  in.headDim = batch.D;
  in.q = qf.data();
  in.k = kf.data();
  in.v = vf.data();
  in.docs = &docs;
  in.causal = causal;
  numerics::ForwardOutputs fwd;
  EXPECT_TRUE(numerics::referenceForward(in, recipe, fwd));
  TrainingOutputs out;
  out.o.resize(fwd.o.size());
  for (size_t i = 0; i < fwd.o.size(); ++i)
    out.o[i] = numerics::floatToBf16(fwd.o[i]);
  out.lse = fwd.lse;
  const TrainingOutputs &forBackward = given ? *given : out;
  std::vector<float> of = widen(forBackward.o);
  numerics::BackwardOutputs bwd;
  EXPECT_TRUE(numerics::referenceBackward(in, recipe, df.data(), of.data(),
                                          forBackward.lse.data(), bwd));
  out.dq = bwd.dq;
  out.dk = bwd.dk;
  out.dv = bwd.dv;
  return out;
}

} // namespace flamia::validation::device::test

#endif // FLAMIA_UNITTESTS_VALIDATION_TRAININGREFERENCE_H
