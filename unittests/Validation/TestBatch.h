//===- TestBatch.h - Small host batches for the validation tests -*- C++ -*-===//
#ifndef FLAMIA_UNITTESTS_VALIDATION_TESTBATCH_H
#define FLAMIA_UNITTESTS_VALIDATION_TESTBATCH_H

#include "flamia/Numerics/Formats.h"
#include "flamia/Validation/Check.h"

#include <cstdint>
#include <vector>

namespace flamia::validation::device::test {

/// A batch that owns its arrays; view() points into them.
struct OwnedBatch {
  std::vector<int32_t> cu;
  int64_t T = 0, Hq = 0, Hkv = 0, D = 0;
  std::vector<uint16_t> q, k, v;

  BatchView view() const {
    BatchView b;
    b.cu = cu.data();
    b.numDocs = static_cast<int64_t>(cu.size()) - 1;
    b.T = T;
    b.Hq = Hq;
    b.Hkv = Hkv;
    b.D = D;
    b.q = q.data();
    b.k = k.data();
    b.v = v.data();
    return b;
  }
};

/// cu_seqlens `cu`, heads Hq/Hkv, head_dim D; q, k, v deterministic values
/// in about [-2, 2) (a fixed LCG, bf16), or all `constant` when nonzero.
inline OwnedBatch makeBatch(std::vector<int32_t> cu, int64_t Hq, int64_t Hkv,
                            int64_t D, float constant = 0.0f) {
  OwnedBatch b;
  b.cu = std::move(cu);
  b.T = b.cu.back();
  b.Hq = Hq;
  b.Hkv = Hkv;
  b.D = D;
  uint64_t state = 12345;
  auto next = [&]() {
    if (constant != 0.0f)
      return numerics::floatToBf16(constant);
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double u = static_cast<double>(state >> 11) * 0x1p-53; // [0, 1)
    return numerics::floatToBf16(static_cast<float>(4.0 * u - 2.0));
  };
  auto fill = [&](std::vector<uint16_t> &x, int64_t H) {
    x.resize(static_cast<size_t>(b.T * H * D));
    for (uint16_t &e : x)
      e = next();
  };
  fill(b.q, Hq);
  fill(b.k, Hkv);
  fill(b.v, Hkv);
  return b;
}

/// A manifest the checks accept: recipe mxfp8 (safe block 128), head_dim
/// `D`, `causal`, no schedule, no buffers.
inline runtime::Manifest makeManifest(int64_t D, bool causal = true) {
  runtime::Manifest m;
  m.version = 2;
  m.recipe.kind = runtime::kRecipeMxfp8;
  m.recipe.safeBlock = 128;
  m.headDim = D;
  m.causal = causal;
  return m;
}

} // namespace flamia::validation::device::test

#endif // FLAMIA_UNITTESTS_VALIDATION_TESTBATCH_H
