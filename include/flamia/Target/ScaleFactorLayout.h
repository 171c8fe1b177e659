//===- ScaleFactorLayout.h - The 128x4 tiled scale-factor layout -*- C++ -*-===//
//
// Block-scaled tcgen05.mma reads its scale factors from tensor memory, where
// `tcgen05.cp.cta_group::1.32x128b.warpx4` puts them from shared memory: one
// copy moves 32 rows x 128 bits (512 bytes) and multicasts them to the four
// 32-lane quadrants (PTX ISA 9.0, 9.7.16.9.2). The 512 bytes hold the scale
// factors of 128 rows (M of A, or N of B) x 4 K-blocks in the "128x4 tiled"
// layout that cuBLAS, CUTLASS, cuDNN and TransformerEngine document:
//
//   offset(row, kBlock) = (row % 32) * 16 + (row / 32) * 4 + kBlock
//                         (row < 128, kBlock < 4)
//
// i.e. bytes 0-15 hold rows 0, 32, 64, 96 (4 K-blocks each), bytes 16-31
// rows 1, 33, 65, 97, ... The 16-byte line i is what lands in TMEM lane i (and
// i+32, i+64, i+96) as 4 32-bit columns; the MMA picks the byte of each
// 32-bit cell with the scale-factor ID (9.7.16.10.7.2: "SFA_ID specifies the
// byte offset in the Tensor Memory word"), so MMA k-step j of a 4-block K tile
// uses scale-factor ID j. A [rows, kBlocks] scale matrix is stored as
// ceil(rows/128) x ceil(kBlocks/4) such tiles, K-tiles fastest.
//
// FLAMIA's scales (docs/design.md section 4): one E8M0 byte per 32 tokens x 32
// channels for K and V (logical layout [NB, H, D/32], NB document-local
// blocks numbered in document order), one per token x 32 channels for Q
// ([T, H, D/32]). This file maps them into tiles for the three operands that
// carry them:
//
//   S = Q K^T: A = Q   rows = queries,  k-blocks = channel blocks
//              B = K   rows = keys,     k-blocks = channel blocks
//                      (each token-block scale repeated over its 32 rows)
//   O = P V:   A = P   a constant (every row, every key block): the
//                      sm_100a kernel uses E8M0 1.0 (see kFixedPScaleE8M0)
//              B = V   rows = channels, k-blocks = key blocks:
//                      SFB[n][kb] = vscale[kb][h][n / 32]
//
// A key tile must start at a document-local block boundary (its first row is
// the first token of block `firstKeyBlock`), so that the MMA's 32-key groups
// coincide with the token blocks.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_TARGET_SCALEFACTORLAYOUT_H
#define FLAMIA_TARGET_SCALEFACTORLAYOUT_H

#include <cstdint>
#include <string>

namespace flamia {

constexpr uint32_t kSfTileRows = 128;
constexpr uint32_t kSfTileKBlocks = 4;
constexpr uint32_t kSfTileBytes = 512;
/// Tokens (or channels) one scale factor covers in FLAMIA's MXFP8 recipe.
constexpr uint32_t kScaleBlock = 32;

/// P's scale byte in the alternative encoding where the MMA undoes the fixed
/// scale: P's E4M3 codes hold P * 2^8 (docs/design.md section 4, "fixed scale
/// 2^8"), and a scale of 2^-8 = 2^(119 - 127) would give P V directly. The
/// sm_100a kernel does not use it: it fills P's scale factors with E8M0 1.0
/// (byte 127; kUnitScales in lib/Transforms/TileAttentionSm100.cpp), so
/// that O accumulates P * 2^8 V like the bf16 safe-block P, and
/// flamia.attn.store divides O by 2^8 once. Both are exact (powers of two).
constexpr uint8_t kFixedPScaleE8M0 = 119;

/// Byte offset of (row, kBlock) inside a 512-byte tile.
constexpr uint32_t sfTileOffset(uint32_t row, uint32_t kBlock) {
  return (row % 32) * 16 + (row / 32) * 4 + kBlock;
}
/// Inverse of sfTileOffset for offset < 512.
constexpr uint32_t sfTileRowAt(uint32_t offset) {
  return (offset / 16) + 32 * ((offset % 16) / 4);
}
constexpr uint32_t sfTileKBlockAt(uint32_t offset) { return offset % 4; }

/// Tiles along K of a matrix with `kBlocks` scale columns.
constexpr uint32_t sfKTiles(uint32_t kBlocks) { return (kBlocks + 3) / 4; }
/// Bytes of the tiled layout of a [rows, kBlocks] scale matrix (rows padded
/// to 128, k-blocks to 4).
constexpr uint64_t sfTiledBytes(uint64_t rows, uint32_t kBlocks) {
  return ((rows + 127) / 128) * sfKTiles(kBlocks) * uint64_t(kSfTileBytes);
}
/// Byte offset of (row, kBlock) in the tiled layout of a matrix with
/// `kBlocks` scale columns: tile (row / 128, kBlock / 4), K-tiles fastest.
constexpr uint64_t sfTiledOffset(uint64_t row, uint32_t kBlock,
                                 uint32_t kBlocks) {
  return ((row / 128) * sfKTiles(kBlocks) + kBlock / 4) * uint64_t(kSfTileBytes) +
         sfTileOffset(static_cast<uint32_t>(row % 128), kBlock % 4);
}

/// Fills a 512-byte tile: tile[sfTileOffset(r, k)] = scaleAt(r, k).
template <typename ScaleAt>
void fillSfTile(uint8_t *tile, ScaleAt &&scaleAt) {
  for (uint32_t r = 0; r < kSfTileRows; ++r)
    for (uint32_t k = 0; k < kSfTileKBlocks; ++k)
      tile[sfTileOffset(r, k)] = scaleAt(r, k);
}

/// A read-only view of an E8M0 scale tensor [rows, heads, channelBlocks]
/// (row-major): FLAMIA's token-block scales [NB, H, D/32] or per-token
/// scales [T, H, D/32].
struct ScaleTensorView {
  const uint8_t *data = nullptr;
  uint64_t rows = 0;
  uint32_t heads = 0;
  uint32_t channelBlocks = 0;
  uint8_t at(uint64_t row, uint32_t head, uint32_t channelBlock) const {
    return data[(row * heads + head) * channelBlocks + channelBlock];
  }
};

/// Operand B of S = Q K^T: 128 keys from the first token of token block
/// `firstKeyBlock` (`validKeys` <= 128 of them belong to the document; the
/// rest, and channel blocks past the head dim, get `pad`), channel blocks
/// [firstChannelBlock, firstChannelBlock + 4).
bool fillKeyScaleTile(const ScaleTensorView &kScales, uint32_t head,
                      uint64_t firstKeyBlock, uint32_t validKeys,
                      uint32_t firstChannelBlock, uint8_t pad, uint8_t *tile,
                      std::string &error);

/// Operand B of O = P V: 128 channels from `firstChannel` (a multiple of 32;
/// channels at or past the head dim get `pad`), key blocks
/// [firstKeyBlock, firstKeyBlock + 4), the first `validKeyBlocks` of which
/// belong to the document (the rest get `pad`):
/// SFB[n][kb] = vScales[firstKeyBlock + kb][head][(firstChannel + n) / 32].
bool fillValueScaleTile(const ScaleTensorView &vScales, uint32_t head,
                        uint32_t firstChannel, uint64_t firstKeyBlock,
                        uint32_t validKeyBlocks, uint8_t pad, uint8_t *tile,
                        std::string &error);

/// Operand A of S = Q K^T with per-token Q scales: 128 queries from token
/// `firstToken` (`validQueries` of them real), channel blocks
/// [firstChannelBlock, firstChannelBlock + 4).
bool fillQueryScaleTile(const ScaleTensorView &qScales, uint32_t head,
                        uint64_t firstToken, uint32_t validQueries,
                        uint32_t firstChannelBlock, uint8_t pad, uint8_t *tile,
                        std::string &error);

/// The global index (in [0, NB)) of the document-local token block holding
/// `token`, given `cuSeqlens` (numDocs + 1 non-decreasing offsets, the first
/// 0): blocks of `blockTokens` restart at every document's first token and
/// are numbered in document order. Returns false if `token` is outside
/// [0, cuSeqlens[numDocs]) or the offsets are malformed.
bool documentTokenBlock(const int32_t *cuSeqlens, uint32_t numDocs,
                        uint64_t token, uint32_t blockTokens, uint64_t &block,
                        std::string &error);

} // namespace flamia

#endif // FLAMIA_TARGET_SCALEFACTORLAYOUT_H
