//===- CostModelTest.cpp - Item costs on hand-checked cases ---------------===//
#include "flamia/Schedule/CostModel.h"

#include "gtest/gtest.h"

#include <algorithm>

using namespace flamia;

namespace {
CostModel model(int32_t safeBlock, bool causal, ScheduleTarget target,
                int32_t blockM = 128, int32_t blockN = 128,
                int32_t headDim = 128) {
  CostModel m;
  m.blockM = blockM;
  m.blockN = blockN;
  m.safeBlock = safeBlock;
  m.headDim = headDim;
  m.causal = causal;
  m.weights = costWeightsForTarget(target);
  return m;
}

// Definition by enumeration: classify a key tile by every (query, key) pair.
KeyTileKind classifyByPairs(const CostModel &m, int64_t length, int64_t qTile,
                            int64_t keyTile) {
  int64_t r0 = qTile * m.blockM, r1 = std::min(length, r0 + m.blockM);
  int64_t k0 = keyTile * m.blockN, k1 = std::min(length, k0 + m.blockN);
  bool inside = false, outside = false;
  for (int64_t i = r0; i < r1; ++i)
    for (int64_t j = k0; j < k1; ++j) {
      if (m.causal && j > i)
        continue;
      if (i / m.safeBlock == j / m.safeBlock)
        inside = true;
      else
        outside = true;
    }
  EXPECT_TRUE(inside || outside) << "a visited tile with no visible pair";
  if (inside && outside)
    return KeyTileKind::Mixed;
  return inside ? KeyTileKind::Bf16 : KeyTileKind::Fp8;
}

KeyTileCounts countByPairs(const CostModel &m, int64_t length, int64_t qTile) {
  int64_t r1 = std::min(length, (qTile + 1) * m.blockM);
  int64_t keys = m.causal ? r1 : length;
  KeyTileCounts c;
  for (int64_t k = 0; k * m.blockN < keys; ++k) {
    switch (classifyByPairs(m, length, qTile, k)) {
    case KeyTileKind::Fp8:
      ++c.fp8;
      break;
    case KeyTileKind::Bf16:
      ++c.bf16;
      break;
    case KeyTileKind::Mixed:
      ++c.mixed;
      break;
    }
  }
  return c;
}

std::vector<double> tileCosts(const CostModel &m, int64_t length) {
  std::vector<double> costs;
  for (int64_t t = 0; t * m.blockM < length; ++t)
    costs.push_back(m.itemCost(length, t));
  return costs;
}
} // namespace

TEST(CostModel, TargetPresets) {
  CostWeights b = costWeightsForTarget(ScheduleTarget::Sm100a);
  EXPECT_EQ(b.itemOverhead, 1.0);
  EXPECT_EQ(b.fp8Tile, 1.0);
  EXPECT_EQ(b.bf16Tile, 2.0);
  EXPECT_EQ(b.mixedTile(), 3.0);
  CostWeights h = costWeightsForTarget(ScheduleTarget::Sm90a);
  EXPECT_EQ(h.bf16Tile, 1.0);
  EXPECT_EQ(h.mixedTile(), 2.0);

  ScheduleTarget t;
  std::string err;
  ASSERT_TRUE(parseScheduleTarget("sm_90a", t, err));
  EXPECT_EQ(t, ScheduleTarget::Sm90a);
  ASSERT_TRUE(parseScheduleTarget("sm_100a", t, err));
  EXPECT_EQ(t, ScheduleTarget::Sm100a);
  EXPECT_FALSE(parseScheduleTarget("sm_80", t, err));
  EXPECT_EQ(err, "unknown target 'sm_80' (expected sm_90a or sm_100a)");
}

// Safe block = tile = 128: the diagonal key tile is all bf16, every earlier
// tile all FP8. Tile t of a 512-token document: 1 + t * 1 + 2.
TEST(CostModel, SafeBlock128CausalSm100a) {
  CostModel m = model(128, true, ScheduleTarget::Sm100a);
  EXPECT_EQ(tileCosts(m, 512), (std::vector<double>{3, 4, 5, 6}));
  KeyTileCounts c = m.countKeyTiles(512, 3);
  EXPECT_EQ(c.fp8, 3);
  EXPECT_EQ(c.bf16, 1);
  EXPECT_EQ(c.mixed, 0);
  EXPECT_EQ(m.classifyKeyTile(512, 3, 3), KeyTileKind::Bf16);
  EXPECT_EQ(m.classifyKeyTile(512, 3, 2), KeyTileKind::Fp8);
}

TEST(CostModel, SafeBlock128CausalSm90a) {
  CostModel m = model(128, true, ScheduleTarget::Sm90a);
  EXPECT_EQ(tileCosts(m, 512), (std::vector<double>{2, 3, 4, 5}));
}

// Safe block 32 < tile: the diagonal tile holds 32x32 bf16 blocks and FP8
// pairs below them, so both MMAs run: 1 + t + (1 + 2).
TEST(CostModel, SafeBlock32MakesTheDiagonalTileMixed) {
  CostModel m = model(32, true, ScheduleTarget::Sm100a);
  EXPECT_EQ(tileCosts(m, 512), (std::vector<double>{4, 5, 6, 7}));
  EXPECT_EQ(m.classifyKeyTile(512, 2, 2), KeyTileKind::Mixed);
  EXPECT_EQ(m.classifyKeyTile(512, 2, 1), KeyTileKind::Fp8);
}

// Safe block 256 = two tiles. Tile 0: key tile 0 bf16 -> 1 + 2 = 3.
// Tile 1 (rows 128..255, safe block [0, 256)): key tiles 0, 1 bf16 -> 5.
// Tile 2 (rows 256..383): key tiles 0, 1 FP8, 2 bf16 -> 1 + 2 + 2 = 5.
// Tile 3: FP8 0, 1; bf16 2, 3 -> 1 + 2 + 4 = 7.
TEST(CostModel, SafeBlock256SpansTwoKeyTiles) {
  CostModel m = model(256, true, ScheduleTarget::Sm100a);
  EXPECT_EQ(tileCosts(m, 512), (std::vector<double>{3, 5, 5, 7}));
  KeyTileCounts c = m.countKeyTiles(512, 3);
  EXPECT_EQ(c.fp8, 2);
  EXPECT_EQ(c.bf16, 2);
  EXPECT_EQ(c.mixed, 0);
}

// Non-causal: every tile visits all 4 key tiles of a 512-token document.
TEST(CostModel, NonCausalVisitsTheWholeDocument) {
  // One bf16 tile (the rows' own safe block) and three FP8: 1 + 3 + 2.
  EXPECT_EQ(tileCosts(model(128, false, ScheduleTarget::Sm100a), 512),
            (std::vector<double>{6, 6, 6, 6}));
  // Safe block 256: two bf16 tiles, two FP8: 1 + 2 + 4.
  EXPECT_EQ(tileCosts(model(256, false, ScheduleTarget::Sm100a), 512),
            (std::vector<double>{7, 7, 7, 7}));
  // Safe block 32: the diagonal tile is mixed (pairs above the diagonal
  // count now): 1 + 3 + 3.
  CostModel m32 = model(32, false, ScheduleTarget::Sm100a);
  EXPECT_EQ(tileCosts(m32, 512), (std::vector<double>{7, 7, 7, 7}));
  EXPECT_EQ(m32.numVisitedKeyTiles(512, 0), 4);
  EXPECT_EQ(m32.classifyKeyTile(512, 0, 3), KeyTileKind::Fp8);
}

// A document of 300 tokens: tiles of 128, 128, 44 rows. The last tile's
// key tile 2 holds keys 256..299 only and is still a whole tile's cost.
TEST(CostModel, ClippedLastTile) {
  CostModel m = model(128, true, ScheduleTarget::Sm100a);
  EXPECT_EQ(tileCosts(m, 300), (std::vector<double>{3, 4, 5}));
  EXPECT_EQ(m.numVisitedKeyTiles(300, 2), 3);
  // Safe block 32: rows 256..299 span blocks [256, 288) and [288, 320).
  CostModel m32 = model(32, true, ScheduleTarget::Sm100a);
  EXPECT_EQ(tileCosts(m32, 300), (std::vector<double>{4, 5, 6}));
  // Non-causal: 3 key tiles, the own one bf16: 1 + 2 + 2 everywhere.
  EXPECT_EQ(tileCosts(model(128, false, ScheduleTarget::Sm100a), 300),
            (std::vector<double>{5, 5, 5}));
}

// Shorter than one tile: one key tile, all inside the safe block (128), or
// mixed (32: rows 32..33 see keys 0..31 outside their block).
TEST(CostModel, DocumentShorterThanATile) {
  EXPECT_EQ(model(128, true, ScheduleTarget::Sm100a).itemCost(34, 0), 3.0);
  EXPECT_EQ(model(128, true, ScheduleTarget::Sm90a).itemCost(34, 0), 2.0);
  EXPECT_EQ(model(32, true, ScheduleTarget::Sm100a).itemCost(34, 0), 4.0);
  // 32 tokens and safe block 32: only inside pairs.
  EXPECT_EQ(model(32, true, ScheduleTarget::Sm100a).itemCost(32, 0), 3.0);
  EXPECT_EQ(model(128, true, ScheduleTarget::Sm100a).itemCost(1, 0), 3.0);
}

TEST(CostModel, HeadDimScalesTheWholeCost) {
  EXPECT_EQ(
      model(128, true, ScheduleTarget::Sm100a, 128, 128, 64).itemCost(300, 2),
      2.5);
  EXPECT_EQ(
      model(128, true, ScheduleTarget::Sm100a, 128, 128, 192).itemCost(300, 2),
      7.5);
  EXPECT_EQ(
      model(128, true, ScheduleTarget::Sm100a, 128, 128, 256).itemCost(300, 2),
      10.0);
}

// Key tiles smaller than query tiles: BM 128, BN 64, safe block 128. Query
// tile 1 (rows 128..255) visits key tiles 0..3; 0, 1 lie before its safe
// block (FP8), 2, 3 inside it (bf16): 1 + 2 + 4 = 7.
TEST(CostModel, KeyTilesSmallerThanQueryTiles) {
  CostModel m = model(128, true, ScheduleTarget::Sm100a, 128, 64);
  EXPECT_EQ(m.numVisitedKeyTiles(512, 1), 4);
  EXPECT_EQ(m.itemCost(512, 1), 7.0);
  // Query tiles of 64, key tiles of 128, safe block 128: query tile 1 (rows
  // 64..127) visits key tile 0 only, inside: 1 + 2.
  CostModel n = model(128, true, ScheduleTarget::Sm100a, 64, 128);
  EXPECT_EQ(n.itemCost(512, 1), 3.0);
  // Query tile 2 (rows 128..191): key tile 0 FP8, key tile 1 bf16: 1 + 1 + 2.
  EXPECT_EQ(n.itemCost(512, 2), 4.0);
}

TEST(CostModel, WeightsAreUsedAsGiven) {
  CostModel m = model(32, true, ScheduleTarget::Sm100a);
  m.weights.itemOverhead = 0.5;
  m.weights.bf16Tile = 4;
  // Tile 2 of 512 with safe block 32: 2 FP8 + 1 mixed = 0.5 + 2 + 5.
  EXPECT_EQ(m.itemCost(512, 2), 7.5);
}

// The constant-time counting agrees with classifying every pair, over a sweep
// of tile sizes, safe blocks (aligned or not to the tiles) and lengths.
TEST(CostModel, CountsMatchPairEnumeration) {
  int checked = 0;
  for (bool causal : {true, false})
    for (int32_t bm : {32, 64, 128})
      for (int32_t bn : {32, 64, 128})
        for (int32_t safe : {32, 64, 96, 128, 160, 256})
          for (int64_t length : {1, 31, 33, 100, 128, 129, 300, 517}) {
            CostModel m = model(safe, causal, ScheduleTarget::Sm100a, bm, bn);
            for (int64_t t = 0; t * bm < length; ++t) {
              KeyTileCounts fast = m.countKeyTiles(length, t);
              KeyTileCounts slow = countByPairs(m, length, t);
              ASSERT_EQ(fast.fp8, slow.fp8)
                  << "causal " << causal << " bm " << bm << " bn " << bn
                  << " safe " << safe << " L " << length << " tile " << t;
              ASSERT_EQ(fast.bf16, slow.bf16);
              ASSERT_EQ(fast.mixed, slow.mixed);
              ASSERT_EQ(fast.total(), m.numVisitedKeyTiles(length, t));
              for (int64_t k = 0; k < fast.total(); ++k)
                ASSERT_EQ(m.classifyKeyTile(length, t, k),
                          classifyByPairs(m, length, t, k));
              ++checked;
            }
          }
  // causal x block_n x safe block x (query tiles over lengths, per block_m)
  EXPECT_EQ(checked, 2 * 3 * 6 *
                         (1 + 1 + 2 + 4 + 4 + 5 + 10 + 17 + // bm 32
                          1 + 1 + 1 + 2 + 2 + 3 + 5 + 9 +   // bm 64
                          1 + 1 + 1 + 1 + 1 + 2 + 3 + 5));  // bm 128
}
