//===- SyntheticInputs.h - Seeded random attention inputs --------*- C++ -*-===//
//
// Deterministic inputs for leak checks and quality tables (the generator is
// std::mt19937 + a Box-Muller normal written here, so every platform makes
// the same tensors). All values are bf16.
//
//   Random   Q, K, V, dO ~ N(0, 1)
//   Outlier  Random, then: K channels {3, 17, 64 % D, D - 5} x100 (all
//            tokens, all heads); Q, V and dO: every 61st token (t % 61 == 7)
//            x100 (all channels).
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_NUMERICS_SYNTHETICINPUTS_H
#define FLAMIA_NUMERICS_SYNTHETICINPUTS_H

#include "flamia/Numerics/DocumentLayout.h"
#include "flamia/Numerics/ReferenceAttention.h"

#include <cstdint>
#include <string>
#include <vector>

namespace flamia::numerics {

enum class InputKind { Random, Outlier };
const char *inputKindName(InputKind kind);

struct AttentionTensors {
  int64_t numTokens = 0, numHeads = 0, numKvHeads = 0, headDim = 0;
  std::vector<float> q, k, v, dO; // bf16 values
  DocumentLayout docs;
  bool causal = true;
  float softmaxScale = 0.0f;

  AttentionInputs inputs() const;
};

/// A deterministic normal generator (Box-Muller on mt19937).
class NormalGenerator {
public:
  explicit NormalGenerator(uint32_t seed);
  float next();

private:
  uint32_t state_[624];
  int index_;
  bool hasSpare_ = false;
  double spare_ = 0;
  uint32_t nextU32();
};

AttentionTensors makeSyntheticInputs(const DocumentLayout &docs,
                                     int64_t numHeads, int64_t numKvHeads,
                                     int64_t headDim, InputKind kind,
                                     uint32_t seed);

} // namespace flamia::numerics

#endif // FLAMIA_NUMERICS_SYNTHETICINPUTS_H
