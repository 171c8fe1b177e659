//===- ScaleLayout.h - Token-block x channel-block scale layouts --*- C++ -*-===//
//
// A scale layout (token_block, channel_block) groups a [T, H, D] tensor into
// blocks of token_block consecutive tokens x channel_block consecutive
// channels of one head; each block gets one scale. 1x32 is per-token
// (standard MX along the head dim), 32x32 a 2-D token block.
//
// How token blocks are placed:
//   DocumentLocal  blocks start at each document's first token and never
//                  straddle two documents; a document's last block may be
//                  partial. (docs/design.md section 4: the only leak-free choice.)
//   Packed         blocks of token_block aligned to the start of the packed
//                  tensor, ignoring documents: they straddle document
//                  boundaries. Only to demonstrate leaks (and plain MX).
//   PerTensor      one block holding every token and every channel of a head
//                  (the per-tensor FP8 baseline): scales [1, H, 1].
//
// Scales are stored in the logical layout [NB, H, D / channel_block] with
// the blocks numbered in token order (document order for DocumentLocal):
// NB = sum over documents of ceil(L / token_block) for DocumentLocal,
// ceil(T / token_block) for Packed, 1 for PerTensor.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_NUMERICS_SCALELAYOUT_H
#define FLAMIA_NUMERICS_SCALELAYOUT_H

#include "flamia/Schedule/DocumentLayout.h"
#include "flamia/Numerics/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace flamia::numerics {

enum class TokenBlocking { DocumentLocal, Packed, PerTensor };

struct ScaleLayout {
  int64_t tokenBlock = 1;
  int64_t channelBlock = 32;
  TokenBlocking blocking = TokenBlocking::DocumentLocal;

  static ScaleLayout perToken(int64_t channelBlock) {
    return {1, channelBlock, TokenBlocking::DocumentLocal};
  }
  static ScaleLayout documentLocal(int64_t tokenBlock, int64_t channelBlock) {
    return {tokenBlock, channelBlock, TokenBlocking::DocumentLocal};
  }
  static ScaleLayout packed(int64_t tokenBlock, int64_t channelBlock) {
    return {tokenBlock, channelBlock, TokenBlocking::Packed};
  }
  static ScaleLayout perTensor() { return {0, 0, TokenBlocking::PerTensor}; }

  /// Channels per scale for a head dim D (D itself for PerTensor).
  int64_t channelsPerScale(int64_t headDim) const {
    return blocking == TokenBlocking::PerTensor ? headDim : channelBlock;
  }
  /// Scales per (token block, head).
  int64_t scaleChannels(int64_t headDim) const {
    return blocking == TokenBlocking::PerTensor ? 1 : headDim / channelBlock;
  }
  /// "1x32", "32x32", "32x32 packed", "tensor".
  std::string name() const;
  /// Checks the block sizes against a head dim: positive sizes, D divisible
  /// by the channel block.
  Status validate(int64_t headDim) const;

  bool operator==(const ScaleLayout &o) const {
    return blocking == o.blocking &&
           (blocking == TokenBlocking::PerTensor ||
            (tokenBlock == o.tokenBlock && channelBlock == o.channelBlock));
  }
  bool operator!=(const ScaleLayout &o) const { return !(*this == o); }
};

/// A partition of the tokens [0, T) into the token blocks of a layout.
struct TokenBlocks {
  std::vector<int64_t> begin; // first token of each block
  std::vector<int64_t> end;   // one past its last token
  std::vector<int32_t> blockOfToken;

  int64_t numBlocks() const { return static_cast<int64_t>(begin.size()); }
};

/// The token blocks of `layout` over `docs`, numbered in token order.
TokenBlocks makeTokenBlocks(const DocumentLayout &docs,
                            const ScaleLayout &layout);

/// The token blocks of size `blockSize` over `docs` with the given placement
/// (used for layouts and for the blocks of dS along its contraction axis).
TokenBlocks makeTokenBlocks(const DocumentLayout &docs, int64_t blockSize,
                            TokenBlocking blocking);

} // namespace flamia::numerics

#endif // FLAMIA_NUMERICS_SCALELAYOUT_H
