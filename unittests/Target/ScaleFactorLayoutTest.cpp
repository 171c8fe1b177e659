//===- ScaleFactorLayoutTest.cpp - The 128x4 tiled scale-factor layout ----===//
//
// The layout as the cuBLAS documentation ("1D Block Scaling Factors Layout"),
// CUTLASS (blackwell_functionality.md, "Scale Factor Layouts") and the cuDNN
// 128x4 blog describe it, and as tcgen05.cp .32x128b.warpx4 copies it (PTX
// ISA 9.0, 9.7.16.9.2: 32 lanes x 128 bits per copy). Tile contents are
// checked on hand-computed examples.
//
//===----------------------------------------------------------------------===//
#include "flamia/Target/ScaleFactorLayout.h"

#include "gtest/gtest.h"

#include <cstring>
#include <vector>

using namespace flamia;

TEST(ScaleFactorLayout, TileOffsetsByHand) {
  // (row % 32) * 16 + (row / 32) * 4 + kBlock
  EXPECT_EQ(sfTileOffset(0, 0), 0u);
  EXPECT_EQ(sfTileOffset(0, 3), 3u);
  EXPECT_EQ(sfTileOffset(32, 0), 4u);
  EXPECT_EQ(sfTileOffset(64, 2), 10u);
  EXPECT_EQ(sfTileOffset(96, 3), 15u);
  EXPECT_EQ(sfTileOffset(1, 0), 16u);
  EXPECT_EQ(sfTileOffset(33, 1), 21u);
  EXPECT_EQ(sfTileOffset(31, 3), 499u);
  EXPECT_EQ(sfTileOffset(127, 3), 511u);
  // The cuDNN/TE description: bytes 0-15 hold rows 0, 32, 64, 96 (4 each),
  // bytes 16-31 rows 1, 33, 65, 97, and so on.
  const uint32_t firstLines[8] = {0, 32, 64, 96, 1, 33, 65, 97};
  for (uint32_t b = 0; b < 32; ++b)
    EXPECT_EQ(sfTileRowAt(b), firstLines[b / 4]) << b;
  // A bijection of the 512 bytes onto 128 rows x 4 k-blocks.
  bool seen[512] = {};
  for (uint32_t r = 0; r < 128; ++r)
    for (uint32_t k = 0; k < 4; ++k) {
      uint32_t o = sfTileOffset(r, k);
      ASSERT_LT(o, 512u);
      EXPECT_FALSE(seen[o]);
      seen[o] = true;
      EXPECT_EQ(sfTileRowAt(o), r);
      EXPECT_EQ(sfTileKBlockAt(o), k);
    }
}

// Independent derivation: DeepGEMM's sm100 kernels load scale factors with
// TMA as one 32-bit word per row (the row's 4 k-blocks, little-endian) and
// then transpose each 128-word group in shared memory so that word
// lane * 4 + i takes word i * 32 + lane, before tcgen05.cp 32x128b.warpx4.
// That must give exactly the 128x4 tile.
TEST(ScaleFactorLayout, AgreesWithTheWordTransposeOfPublishedKernels) {
  uint32_t rowWords[128];
  for (uint32_t r = 0; r < 128; ++r)
    rowWords[r] = ((r * 4 + 0) & 0xFF) | ((r * 4 + 1) & 0xFF) << 8 |
                  ((r * 4 + 2) & 0xFF) << 16 | uint32_t((r * 4 + 3) & 0xFF) << 24;
  uint32_t transposed[128];
  for (uint32_t lane = 0; lane < 32; ++lane)
    for (uint32_t i = 0; i < 4; ++i)
      transposed[lane * 4 + i] = rowWords[i * 32 + lane];
  uint8_t bytes[512];
  std::memcpy(bytes, transposed, sizeof bytes);
  uint8_t tile[512];
  fillSfTile(tile, [](uint32_t r, uint32_t k) { return uint8_t(r * 4 + k); });
  EXPECT_EQ(std::memcmp(bytes, tile, 512), 0);
}

TEST(ScaleFactorLayout, TiledTensorOffsets) {
  // 256 rows x 8 k-blocks: 2 x 2 tiles, K-tiles fastest.
  EXPECT_EQ(sfKTiles(8), 2u);
  EXPECT_EQ(sfTiledBytes(256, 8), 2048u);
  EXPECT_EQ(sfTiledOffset(0, 0, 8), 0u);
  EXPECT_EQ(sfTiledOffset(0, 4, 8), 512u);    // tile (0, 1)
  EXPECT_EQ(sfTiledOffset(128, 0, 8), 1024u); // tile (1, 0)
  // Row 130, k-block 5 -> tile (1, 1) = 3, in-tile (2, 1) -> 2*16 + 1.
  EXPECT_EQ(sfTiledOffset(130, 5, 8), 3u * 512 + 33);
  // Padding: 500 rows x 4 k-blocks (cuDNN's 500-token example) -> 4 tiles.
  EXPECT_EQ(sfTiledBytes(500, 4), 2048u);
  EXPECT_EQ(sfTiledBytes(500, 5), 4096u);
}

namespace {
// K scales [NB = 6, H = 2, C = 4] with K[b][h][c] = 100 + 10b + 3h + c.
std::vector<uint8_t> tokenBlockScales(uint32_t nb, uint32_t h, uint32_t c) {
  std::vector<uint8_t> s(nb * h * c);
  for (uint32_t b = 0; b < nb; ++b)
    for (uint32_t i = 0; i < h; ++i)
      for (uint32_t j = 0; j < c; ++j)
        s[(b * h + i) * c + j] = uint8_t(100 + 10 * b + 3 * i + j);
  return s;
}
} // namespace

TEST(ScaleFactorLayout, KeyTileRepeatsEachBlockScaleOverItsRows) {
  std::vector<uint8_t> ks = tokenBlockScales(6, 2, 4);
  ScaleTensorView k{ks.data(), 6, 2, 4};
  uint8_t tile[512];
  std::string err;
  // Head 1, key tile starting at block 2, 100 real keys (3 blocks + 4 keys),
  // channel blocks 0-3 (head dim 128), pad 0.
  ASSERT_TRUE(fillKeyScaleTile(k, 1, 2, 100, 0, 0, tile, err)) << err;
  // Row 0 (block 2), channel block 0: 100 + 20 + 3 + 0 = 123 at byte 0.
  EXPECT_EQ(tile[0], 123);
  // Byte 89 = line 5, word 2, byte 1 -> row 69 (block 2 + 2 = 4), channel
  // block 1: 100 + 40 + 3 + 1 = 144.
  EXPECT_EQ(tile[89], 144);
  // Row 31 and row 0 share block 2; row 32 is block 3.
  EXPECT_EQ(tile[sfTileOffset(31, 2)], 125);
  EXPECT_EQ(tile[sfTileOffset(32, 2)], 135);
  // Row 99 is the last real key (block 5): 100 + 50 + 3 + 3 = 156 for cb 3.
  EXPECT_EQ(tile[sfTileOffset(99, 3)], 156);
  // Row 100 onwards is past the document: padding.
  for (uint32_t r = 100; r < 128; ++r)
    for (uint32_t kb = 0; kb < 4; ++kb)
      EXPECT_EQ(tile[sfTileOffset(r, kb)], 0);
  // Every real row equals its block's scale.
  for (uint32_t r = 0; r < 100; ++r)
    for (uint32_t kb = 0; kb < 4; ++kb)
      EXPECT_EQ(tile[sfTileOffset(r, kb)], k.at(2 + r / 32, 1, kb));

  // Head dim 64 (2 channel blocks): k-blocks 2 and 3 are padding (0xFF here).
  std::vector<uint8_t> ks64 = tokenBlockScales(6, 2, 2);
  ScaleTensorView k64{ks64.data(), 6, 2, 2};
  ASSERT_TRUE(fillKeyScaleTile(k64, 0, 0, 128, 0, 0xFF, tile, err)) << err;
  EXPECT_EQ(tile[sfTileOffset(40, 1)], 100 + 10 + 1); // block 1, cb 1
  EXPECT_EQ(tile[sfTileOffset(40, 2)], 0xFF);
  EXPECT_EQ(tile[sfTileOffset(127, 3)], 0xFF);
}

TEST(ScaleFactorLayout, ValueTileTransposesBlocksIntoKBlocks) {
  // V scales [NB = 6, H = 2, C = 4]; the tile for head 0, channels 0-127,
  // key blocks 1..4 of which 3 are real: SFB[n][kb] = V[1 + kb][0][n / 32].
  std::vector<uint8_t> vs = tokenBlockScales(6, 2, 4);
  ScaleTensorView v{vs.data(), 6, 2, 4};
  uint8_t tile[512];
  std::string err;
  ASSERT_TRUE(fillValueScaleTile(v, 0, 0, 1, 3, 0, tile, err)) << err;
  // Channel 40, key block 2: byte (40 % 32) * 16 + (40 / 32) * 4 + 2 = 134,
  // value V[3][0][1] = 100 + 30 + 0 + 1 = 131.
  EXPECT_EQ(tile[134], 131);
  // Channel 0 and channel 31 share channel block 0.
  EXPECT_EQ(tile[sfTileOffset(0, 0)], 110);
  EXPECT_EQ(tile[sfTileOffset(31, 0)], 110);
  EXPECT_EQ(tile[sfTileOffset(127, 2)], 100 + 30 + 3);
  // Key block 3 of the tile is past the document.
  for (uint32_t n = 0; n < 128; ++n)
    EXPECT_EQ(tile[sfTileOffset(n, 3)], 0);
  for (uint32_t n = 0; n < 128; ++n)
    for (uint32_t kb = 0; kb < 3; ++kb)
      EXPECT_EQ(tile[sfTileOffset(n, kb)], v.at(1 + kb, 0, n / 32));

  // Head dim 64: channels 64-127 are padding.
  std::vector<uint8_t> vs64 = tokenBlockScales(6, 2, 2);
  ScaleTensorView v64{vs64.data(), 6, 2, 2};
  ASSERT_TRUE(fillValueScaleTile(v64, 1, 0, 0, 4, 0x7F, tile, err)) << err;
  EXPECT_EQ(tile[sfTileOffset(63, 3)], 100 + 30 + 3 + 1);
  EXPECT_EQ(tile[sfTileOffset(64, 0)], 0x7F);
}

TEST(ScaleFactorLayout, QueryTileIsPerToken) {
  // Per-token Q scales [T = 300, H = 1, C = 4], Q[t][0][c] = (t + 7c) % 256.
  std::vector<uint8_t> qs(300 * 4);
  for (uint32_t t = 0; t < 300; ++t)
    for (uint32_t c = 0; c < 4; ++c)
      qs[t * 4 + c] = uint8_t((t + 7 * c) % 256);
  ScaleTensorView q{qs.data(), 300, 1, 4};
  uint8_t tile[512];
  std::string err;
  // Queries 200..299 (100 real), channel blocks 0-3.
  ASSERT_TRUE(fillQueryScaleTile(q, 0, 200, 100, 0, 0, tile, err)) << err;
  EXPECT_EQ(tile[sfTileOffset(0, 0)], 200);
  EXPECT_EQ(tile[sfTileOffset(5, 2)], (205 + 14) % 256);
  EXPECT_EQ(tile[sfTileOffset(99, 3)], (299 + 21) % 256);
  EXPECT_EQ(tile[sfTileOffset(100, 0)], 0);
  // A constant tile (P's alternative 2^-8 encoding; the kernel uses 1.0).
  fillSfTile(tile, [](uint32_t, uint32_t) { return kFixedPScaleE8M0; });
  for (uint8_t b : tile)
    EXPECT_EQ(b, 119);
}

TEST(ScaleFactorLayout, RejectsOutOfRangeTiles) {
  std::vector<uint8_t> ks = tokenBlockScales(6, 2, 4);
  ScaleTensorView k{ks.data(), 6, 2, 4};
  uint8_t tile[512];
  std::string err;
  EXPECT_FALSE(fillKeyScaleTile(k, 2, 0, 128, 0, 0, tile, err));
  EXPECT_NE(err.find("head 2"), std::string::npos) << err;
  EXPECT_FALSE(fillKeyScaleTile(k, 0, 4, 128, 0, 0, tile, err)); // blocks 4..7
  EXPECT_NE(err.find("outside the 6 token blocks"), std::string::npos) << err;
  EXPECT_FALSE(fillKeyScaleTile(k, 0, 0, 129, 0, 0, tile, err));
  EXPECT_FALSE(fillKeyScaleTile(k, 0, 0, 128, 4, 0, tile, err));
  EXPECT_FALSE(fillValueScaleTile(k, 0, 16, 0, 4, 0, tile, err));
  EXPECT_NE(err.find("multiple of 32"), std::string::npos) << err;
  EXPECT_FALSE(fillValueScaleTile(k, 0, 128, 0, 4, 0, tile, err));
  EXPECT_FALSE(fillValueScaleTile(k, 0, 0, 3, 4, 0, tile, err)); // blocks 3..6
  EXPECT_FALSE(fillQueryScaleTile(k, 0, 0, 7, 0, 0, tile, err)); // 6 rows only
}

TEST(ScaleFactorLayout, DocumentLocalTokenBlocks) {
  // Documents of 50, 70 and 32 tokens: blocks [0-31], [32-49] | [50-81],
  // [82-113], [114-119] | [120-151] -> 2 + 3 + 1 = 6 blocks.
  const int32_t cu[] = {0, 50, 120, 152};
  uint64_t b = 0;
  std::string err;
  auto blockOf = [&](uint64_t t) {
    EXPECT_TRUE(documentTokenBlock(cu, 3, t, 32, b, err)) << err;
    return b;
  };
  EXPECT_EQ(blockOf(0), 0u);
  EXPECT_EQ(blockOf(31), 0u);
  EXPECT_EQ(blockOf(32), 1u);
  EXPECT_EQ(blockOf(49), 1u);
  EXPECT_EQ(blockOf(50), 2u); // a new document starts a new block
  EXPECT_EQ(blockOf(81), 2u);
  EXPECT_EQ(blockOf(82), 3u);
  EXPECT_EQ(blockOf(119), 4u);
  EXPECT_EQ(blockOf(120), 5u);
  EXPECT_EQ(blockOf(151), 5u);
  EXPECT_FALSE(documentTokenBlock(cu, 3, 152, 32, b, err));
  const int32_t bad[] = {0, 50, 40};
  EXPECT_FALSE(documentTokenBlock(bad, 2, 45, 32, b, err));
  EXPECT_NE(err.find("decreases"), std::string::npos) << err;
}
