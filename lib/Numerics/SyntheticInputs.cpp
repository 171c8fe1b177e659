//===- SyntheticInputs.cpp - Seeded random attention inputs ---------------===//
#include "flamia/Numerics/SyntheticInputs.h"

#include "flamia/Numerics/Formats.h"
#include "flamia/Numerics/Parallel.h"
#include "flamia/Schedule/DeterministicRandom.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace flamia::numerics {

const char *inputKindName(InputKind kind) {
  switch (kind) {
  case InputKind::Random:
    return "random";
  case InputKind::Outlier:
    return "outlier";
  case InputKind::Massive:
    return "massive";
  case InputKind::SmallGradient:
    return "small-grad";
  }
  return "?";
}

bool inputKindFromName(const std::string &name, InputKind &out) {
  for (InputKind k : {InputKind::Random, InputKind::Outlier, InputKind::Massive,
                      InputKind::SmallGradient})
    if (name == inputKindName(k)) {
      out = k;
      return true;
    }
  return false;
}

const char *inputKindNames() {
  return "random, outlier, massive or small-grad";
}

AttentionInputs AttentionTensors::inputs() const {
  AttentionInputs in;
  in.numTokens = numTokens;
  in.numHeads = numHeads;
  in.numKvHeads = numKvHeads;
  in.headDim = headDim;
  in.q = q.data();
  in.k = k.data();
  in.v = v.data();
  in.docs = &docs;
  in.causal = causal;
  in.softmaxScale = softmaxScale;
  return in;
}

// MT19937, spelled out so that the stream is fixed by this file alone.
NormalGenerator::NormalGenerator(uint32_t seed) {
  state_[0] = seed;
  for (int i = 1; i < 624; ++i)
    state_[i] = 1812433253u * (state_[i - 1] ^ (state_[i - 1] >> 30)) +
                static_cast<uint32_t>(i);
  index_ = 624;
}

uint32_t NormalGenerator::nextU32() {
  if (index_ >= 624) {
    for (int i = 0; i < 624; ++i) {
      uint32_t y = (state_[i] & 0x80000000u) | (state_[(i + 1) % 624] & 0x7fffffffu);
      state_[i] = state_[(i + 397) % 624] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
    }
    index_ = 0;
  }
  uint32_t y = state_[index_++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

float NormalGenerator::next() {
  if (hasSpare_) {
    hasSpare_ = false;
    return static_cast<float>(spare_);
  }
  // Uniforms in (0, 1] from 32 bits each.
  double u1 = (static_cast<double>(nextU32()) + 1.0) / 4294967296.0;
  double u2 = static_cast<double>(nextU32()) / 4294967296.0;
  double r = std::sqrt(-2.0 * std::log(u1));
  double theta = 6.283185307179586 * u2;
  spare_ = r * std::sin(theta);
  hasSpare_ = true;
  return static_cast<float>(r * std::cos(theta));
}

std::vector<int64_t> outlierChannels(int64_t headDim) {
  const int64_t D = headDim;
  std::vector<int64_t> channels;
  if (D <= 0)
    return channels;
  for (int64_t c : {int64_t(3), int64_t(17), int64_t(64), D - 5}) {
    c = ((c % D) + D) % D;
    if (std::find(channels.begin(), channels.end(), c) == channels.end())
      channels.push_back(c);
  }
  return channels;
}

uint64_t mixSeed(uint64_t seed, uint64_t a, uint64_t b) {
  DeterministicRandom r(seed ^ (a * 0x9E3779B97F4A7C15ull) ^
                        (b * 0xC2B2AE3D27D4EB4Full));
  return r.next();
}

void fillBf16Normal(uint16_t *bits, size_t n, uint64_t seed, uint64_t stream) {
  constexpr size_t kChunk = size_t{1} << 16;
  const int64_t chunks = static_cast<int64_t>((n + kChunk - 1) / kChunk);
  parallelFor(chunks, [&](int64_t chunk) {
    DeterministicRandom r(mixSeed(seed, stream, static_cast<uint64_t>(chunk)));
    const size_t b = static_cast<size_t>(chunk) * kChunk,
                 e = std::min(n, b + kChunk);
    for (size_t i = b; i < e; ++i)
      bits[i] = floatToBf16(static_cast<float>(r.normal()));
  });
}

void makePackedBf16Inputs(int64_t numTokens, int64_t numHeads,
                          int64_t numKvHeads, int64_t headDim, uint64_t seed,
                          bool outliers, std::vector<uint16_t> &q,
                          std::vector<uint16_t> &k, std::vector<uint16_t> &v) {
  const int64_t T = numTokens, Hq = numHeads, Hkv = numKvHeads, D = headDim;
  q.assign(static_cast<size_t>(T * Hq * D), 0);
  k.assign(static_cast<size_t>(T * Hkv * D), 0);
  v.assign(static_cast<size_t>(T * Hkv * D), 0);
  fillBf16Normal(q.data(), q.size(), seed, 1);
  fillBf16Normal(k.data(), k.size(), seed, 2);
  fillBf16Normal(v.data(), v.size(), seed, 3);
  if (!outliers)
    return;
  auto scaleBy100 = [](uint16_t &x) {
    x = floatToBf16(bf16ToFloat(x) * 100.0f);
  };
  const std::vector<int64_t> channels = outlierChannels(D);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < Hkv; ++h)
      for (int64_t c : channels)
        scaleBy100(k[(t * Hkv + h) * D + c]);
  for (int64_t t = 7; t < T; t += 61) {
    for (int64_t i = 0; i < Hq * D; ++i)
      scaleBy100(q[t * Hq * D + i]);
    for (int64_t i = 0; i < Hkv * D; ++i)
      scaleBy100(v[t * Hkv * D + i]);
  }
}

AttentionTensors makeSyntheticInputs(const DocumentLayout &docs,
                                     int64_t numHeads, int64_t numKvHeads,
                                     int64_t headDim, InputKind kind,
                                     uint32_t seed) {
  AttentionTensors t;
  const int64_t T = docs.numTokens(), D = headDim;
  t.numTokens = T;
  t.numHeads = numHeads;
  t.numKvHeads = numKvHeads;
  t.headDim = D;
  t.docs = docs;
  NormalGenerator gen(seed);
  auto fill = [&](std::vector<float> &x, int64_t H) {
    x.resize(static_cast<size_t>(T * H * D));
    for (float &y : x)
      y = roundToBf16(gen.next());
  };
  fill(t.q, numHeads);
  fill(t.k, numKvHeads);
  fill(t.v, numKvHeads);
  fill(t.dO, numHeads);
  if (kind == InputKind::SmallGradient)
    for (float &x : t.dO)
      x *= 0x1p-16f; // exact: a power of two, far above bf16's underflow
  if (kind == InputKind::Outlier || kind == InputKind::Massive) {
    const float tokenFactor = kind == InputKind::Massive ? 1e4f : 100.0f;
    // K: outlier channels x100 on every token; Q: the same channels x0.01,
    // so the logits keep their scale (the outliers fill K's quantization
    // blocks without saturating the softmax).
    const std::vector<int64_t> channels = outlierChannels(D);
    for (int64_t tok = 0; tok < T; ++tok)
      for (int64_t c : channels) {
        for (int64_t h = 0; h < numKvHeads; ++h) {
          float &x = t.k[(tok * numKvHeads + h) * D + c];
          x = roundToBf16(x * 100.0f);
        }
        for (int64_t h = 0; h < numHeads; ++h) {
          float &x = t.q[(tok * numHeads + h) * D + c];
          x = roundToBf16(x * 0.01f);
        }
      }
    // V and dO: outlier tokens x100 (Massive: x10^4).
    for (int64_t tok = 7; tok < T; tok += 61) {
      for (int64_t h = 0; h < numHeads; ++h)
        for (int64_t d = 0; d < D; ++d) {
          float &dx = t.dO[(tok * numHeads + h) * D + d];
          dx = roundToBf16(dx * tokenFactor);
        }
      for (int64_t h = 0; h < numKvHeads; ++h)
        for (int64_t d = 0; d < D; ++d) {
          float &vx = t.v[(tok * numKvHeads + h) * D + d];
          vx = roundToBf16(vx * tokenFactor);
        }
    }
  }
  return t;
}

void perturbPackedBf16Tokens(std::vector<uint16_t> &x, int64_t H, int64_t D,
                             int64_t begin, int64_t end, uint64_t seed,
                             bool outlier) {
  if (begin >= end)
    return;
  DeterministicRandom r(mixSeed(seed, static_cast<uint64_t>(begin),
                                static_cast<uint64_t>(end)));
  float maxMagnitude = 0.0f;
  if (outlier)
    for (uint16_t bits : x)
      maxMagnitude = std::max(maxMagnitude, std::fabs(bf16ToFloat(bits)));
  for (int64_t i = begin * H * D; i < end * H * D; ++i)
    x[i] = floatToBf16(static_cast<float>(r.normal()));
  if (outlier) {
    const float big = std::min(maxMagnitude * 1000.0f, 3.38953139e38f);
    for (int64_t i = 0; i < H * D; ++i)
      x[begin * H * D + i] = floatToBf16((i % 2 ? -big : big));
  }
}

} // namespace flamia::numerics
