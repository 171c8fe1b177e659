//===- SyntheticInputs.cpp - Seeded random attention inputs ---------------===//
#include "flamia/Numerics/SyntheticInputs.h"

#include "flamia/Numerics/Formats.h"

#include <cmath>
#include <vector>

namespace flamia::numerics {

const char *inputKindName(InputKind kind) {
  return kind == InputKind::Random ? "random" : "outlier";
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
  if (kind == InputKind::Outlier) {
    std::vector<int64_t> channels;
    for (int64_t c : {int64_t(3), int64_t(17), int64_t(64), D - 5}) {
      c = ((c % D) + D) % D;
      bool seen = false;
      for (int64_t x : channels)
        seen |= x == c;
      if (!seen)
        channels.push_back(c);
    }
    for (int64_t tok = 0; tok < T; ++tok)
      for (int64_t h = 0; h < numKvHeads; ++h)
        for (int64_t c : channels) {
          float &x = t.k[(tok * numKvHeads + h) * D + c];
          x = roundToBf16(x * 100.0f);
        }
    for (int64_t tok = 7; tok < T; tok += 61) {
      for (int64_t h = 0; h < numHeads; ++h)
        for (int64_t d = 0; d < D; ++d) {
          float &qx = t.q[(tok * numHeads + h) * D + d];
          qx = roundToBf16(qx * 100.0f);
          float &dx = t.dO[(tok * numHeads + h) * D + d];
          dx = roundToBf16(dx * 100.0f);
        }
      for (int64_t h = 0; h < numKvHeads; ++h)
        for (int64_t d = 0; d < D; ++d) {
          float &vx = t.v[(tok * numKvHeads + h) * D + d];
          vx = roundToBf16(vx * 100.0f);
        }
    }
  }
  return t;
}

} // namespace flamia::numerics
