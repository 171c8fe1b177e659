//===- SyntheticInputs.h - Seeded random attention inputs --------*- C++ -*-===//
//
// Deterministic inputs for leak checks and quality tables (the generator is
// std::mt19937 + a Box-Muller normal written here, so every platform makes
// the same tensors). All values are bf16.
//
//   Random   Q, K, V, dO ~ N(0, 1)
//   Outlier  Random, then: K channels {3, 17, 64 % D, D - 5} x100 (all
//            tokens, all heads) with the same Q channels x0.01 (the logits
//            keep their scale; K's quantization blocks see the outliers);
//            V and dO: every 61st token (t % 61 == 7) x100 (all channels).
//   Massive  Outlier, but the V and dO tokens x10^4 ("massive
//            activations": beyond E4M3's 2^17.8 range relative to N(0,1)
//            block-mates, so a shared scale flushes them).
//   SmallGradient  Random with dO x 2^-16 (exact in bf16): the size of a
//            loss gradient averaged over ~10^5 tokens. Power-of-two (E8M0)
//            scales follow it exactly; NVFP4's UE4M3 scales (>= 2^-9, global
//            scale 1.0) cannot.
//
// The packed bf16 batches flamia-run uploads to the GPU come from a second,
// parallel generator (makePackedBf16Inputs): SplitMix64 streams
// (flamia/Schedule/DeterministicRandom.h) per 2^16-element chunk, so a batch
// of billions of elements is made on every core and is the same whatever the
// thread count. Its outlier pattern: K channels {3, 17, 64 % D, D - 5} x100
// (all tokens, all heads); Q and V tokens t % 61 == 7 x100 (all channels).
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_NUMERICS_SYNTHETICINPUTS_H
#define FLAMIA_NUMERICS_SYNTHETICINPUTS_H

#include "flamia/Schedule/DocumentLayout.h"
#include "flamia/Numerics/ReferenceAttention.h"

#include <cstdint>
#include <string>
#include <vector>

namespace flamia::numerics {

enum class InputKind { Random, Outlier, Massive, SmallGradient };
const char *inputKindName(InputKind kind);
/// The kind named `name` (random, outlier, massive, small-grad); false if
/// none.
bool inputKindFromName(const std::string &name, InputKind &out);
/// "random, outlier, massive or small-grad": for messages.
const char *inputKindNames();

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

/// The channels the outlier patterns scale: 3, 17, 64 and D - 5, each
/// modulo D, without repeats, in that order.
std::vector<int64_t> outlierChannels(int64_t headDim);

/// A stream seed derived from (seed, a, b): the first output of SplitMix64
/// seeded with seed ^ a * 0x9E3779B97F4A7C15 ^ b * 0xC2B2AE3D27D4EB4F.
uint64_t mixSeed(uint64_t seed, uint64_t a, uint64_t b);

/// Fills bits[0, n) with bf16 N(0, 1) samples (bit patterns): element i of
/// chunk c = i / 2^16 comes from DeterministicRandom(mixSeed(seed, stream, c))
/// (normal(), rounded to bf16 via float), the chunks in parallel.
void fillBf16Normal(uint16_t *bits, size_t n, uint64_t seed, uint64_t stream);

/// flamia-run's random packed batch as bf16 bit patterns: q [T, Hq, D] from
/// stream 1, k and v [T, Hkv, D] from streams 2 and 3 of `seed`; with
/// `outliers` the packed outlier pattern of the file comment (each scaled
/// element rounded to bf16 again).
void makePackedBf16Inputs(int64_t numTokens, int64_t numHeads,
                          int64_t numKvHeads, int64_t headDim, uint64_t seed,
                          bool outliers, std::vector<uint16_t> &q,
                          std::vector<uint16_t> &k, std::vector<uint16_t> &v);

/// The perturbation of the L1/L2 leak checks: replaces tokens [begin, end)
/// of a packed [T, H, D] bf16 tensor (bit patterns) with fresh N(0, 1)
/// samples from DeterministicRandom(mixSeed(seed, begin, end)), and (if
/// `outlier`) token `begin` with +-1000 times the tensor's largest magnitude
/// (saturated to the largest finite bf16). flamia-run and the Python package
/// perturb device inputs with it, so the two agree bit for bit.
void perturbPackedBf16Tokens(std::vector<uint16_t> &x, int64_t H, int64_t D,
                             int64_t begin, int64_t end, uint64_t seed,
                             bool outlier);

} // namespace flamia::numerics

#endif // FLAMIA_NUMERICS_SYNTHETICINPUTS_H
