//===- Workload.h - flamia-run's inputs -------------------------*- C++ -*-===//
//
// The packed batch flamia-run runs: cu_seqlens from a workload name or a
// list of document lengths, and bf16 Q, K, V generated from a seed (or read
// from .npy files).
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_TOOLS_FLAMIARUN_WORKLOAD_H
#define FLAMIA_TOOLS_FLAMIARUN_WORKLOAD_H

#include "Options.h"

#include <cstdint>
#include <string>
#include <vector>

namespace flamia::run {

/// A batch on the host; tensors are bf16 bit patterns in the packed layouts
/// q [T, Hq, D], k and v [T, Hkv, D].
struct HostBatch {
  std::vector<int32_t> cu;
  int64_t T = 0, Hq = 0, Hkv = 0, D = 0;
  std::vector<uint16_t> q, k, v;
  /// grad_o [T, Hq, D] (--backward only).
  std::vector<uint16_t> gradO;

  int64_t numDocs() const { return static_cast<int64_t>(cu.size()) - 1; }
  /// Elements of q and o, of k and v, of lse (the dimensions are validated
  /// by checkBatchSize first, so these products fit).
  size_t qElements() const { return static_cast<size_t>(T * Hq * D); }
  size_t kElements() const { return static_cast<size_t>(T * Hkv * D); }
  size_t lseElements() const { return static_cast<size_t>(T * Hq); }
  int64_t docLength(int64_t d) const { return cu[d + 1] - cu[d]; }
};

/// cu_seqlens of --workload/--tokens. Errors name the bad part.
bool makeCuSeqlens(const RunOptions &options, std::vector<int32_t> &cu,
                   std::string &error);

/// Checks T, Hq, Hkv, D against what the runtime accepts
/// (validation::validateProblemSize with the kernels' limit) and the host
/// memory making the inputs (and, with --check, the references) needs
/// against this machine's physical memory. Errors name the value and the
/// limit.
bool checkBatchSize(const HostBatch &batch, const RunOptions &options,
                    std::string &error);

/// Fills q, k, v with bf16 N(0, 1) samples (deterministic for a seed,
/// whatever the thread count); with `outliers` the packed outlier pattern:
/// numerics::makePackedBf16Inputs (include/flamia/Numerics/SyntheticInputs.h).
void generateInputs(HostBatch &batch, uint64_t seed, bool outliers);

/// grad_o for --backward: bf16 N(0, 1) samples [T, Hq, D], deterministic for
/// a seed (numerics::perturbPackedBf16Tokens over every token, without the
/// outlier, from a seed apart from q, k, v's).
void generateGradO(HostBatch &batch, uint64_t seed);
/// Reads --grad-o (float32 [T, Hq, D] holding bf16 values; the batch's T,
/// Hq, D must be set).
bool loadGradO(const std::string &path, HostBatch &batch, std::string &error);
/// Reads --q/--k/--v (float32 holding bf16 values) and --cu-seqlens (int32;
/// default one document).
bool loadNpyInputs(const RunOptions &options, HostBatch &batch,
                   std::string &error);

/// FLOPs of the forward: sum over documents of 2 L^2 D Hq (causal; half of
/// 4 L^2 D Hq), or 4 L^2 D Hq without the causal mask (docs/design.md section 6).
double forwardFlops(const std::vector<int32_t> &cu, int64_t Hq, int64_t D,
                    bool causal);

/// bf16 <-> float.
float bf16ToFloat(uint16_t bits);
uint16_t floatToBf16(float x);
std::vector<float> toFloat(const std::vector<uint16_t> &x);

} // namespace flamia::run

#endif // FLAMIA_TOOLS_FLAMIARUN_WORKLOAD_H
