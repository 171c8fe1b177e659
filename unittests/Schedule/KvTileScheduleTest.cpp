//===- KvTileScheduleTest.cpp - Key-tile items of the dK/dV kernel --------===//
#include "flamia/Schedule/VarlenSchedule.h"

#include "flamia/Schedule/GridSimulator.h"
#include "flamia/Schedule/ScheduleInvariants.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <tuple>

using namespace flamia;

namespace {
VarlenScheduleParams params(int32_t hq, int32_t hkv, bool causal = true) {
  VarlenScheduleParams p;
  p.numQHeads = hq;
  p.numKVHeads = hkv;
  p.causal = causal;
  p.blockM = 128; // the forward's; not used by the key-tile items
  p.blockN = 128;
  p.weights = costWeightsForTarget(ScheduleTarget::Sm90a);
  return p;
}

VarlenSchedule build(const std::vector<int32_t> &cu,
                     const VarlenScheduleParams &p) {
  VarlenSchedule s;
  std::string err;
  EXPECT_TRUE(buildKvTileSchedule(cu.data(), cu.size(), p, s, err)) << err;
  return s;
}

void expectItem(const VarlenWorkItem &it, int32_t keyStart, int32_t keys,
                int32_t docStart, int32_t docEnd, int32_t qHead, int32_t kvHead,
                int32_t blockBase, int32_t tile) {
  EXPECT_EQ(it.q_start, keyStart);
  EXPECT_EQ(it.q_rows, keys);
  EXPECT_EQ(it.doc_start, docStart);
  EXPECT_EQ(it.doc_end, docEnd);
  EXPECT_EQ(it.q_head, qHead);
  EXPECT_EQ(it.kv_head, kvHead);
  EXPECT_EQ(it.doc_block_base, blockBase);
  EXPECT_EQ(it.q_tile_in_doc, tile);
}

// The number of 64-query tiles of a document of `length` tokens that hold a
// query at or after `firstKey`, by enumerating them.
int64_t bruteForceTiles(int64_t length, int64_t firstKey, int64_t step) {
  int64_t n = 0;
  for (int64_t q0 = 0; q0 < length; q0 += step)
    if (std::min(length, q0 + step) > firstKey)
      ++n;
  return n;
}
} // namespace

// Hand-checked: a key tile of 128 keys at 128 in a 300-token document (query
// tiles [0,64) .. [256,300)) is seen by the tiles from [128,192) on: 3 of 5.
TEST(KvTileCost, HandValues) {
  EXPECT_EQ(kvTileCost(300, 0, 128, 64, true, 1), 5);
  EXPECT_EQ(kvTileCost(300, 1, 128, 64, true, 1), 3);
  EXPECT_EQ(kvTileCost(300, 2, 128, 64, true, 1), 1);
  EXPECT_EQ(kvTileCost(300, 2, 128, 64, true, 4), 4); // Hq / Hkv = 4
  EXPECT_EQ(kvTileCost(1, 0, 128, 64, true, 2), 2);
  // Non-causal: every query tile of the document, whatever the key tile.
  EXPECT_EQ(kvTileCost(300, 0, 128, 64, false, 1), 5);
  EXPECT_EQ(kvTileCost(300, 2, 128, 64, false, 3), 15);
  // A key tile starting inside a query tile (block_n 96): that query tile
  // is visited whole.
  EXPECT_EQ(kvTileCost(300, 1, 96, 64, true, 1), 4);
}

TEST(KvTileCost, MatchesEnumeration) {
  for (int32_t blockN : {32, 64, 96, 128, 256})
    for (int64_t length : {1, 31, 63, 64, 65, 127, 128, 129, 300, 1000})
      for (int64_t kt = 0; kt * blockN < length; ++kt) {
        EXPECT_EQ(kvTileCost(length, kt, blockN, 64, true, 1),
                  bruteForceTiles(length, kt * blockN, 64))
            << "block_n " << blockN << " L " << length << " tile " << kt;
        EXPECT_EQ(kvTileCost(length, kt, blockN, 64, false, 2),
                  2 * bruteForceTiles(length, 0, 64));
      }
}

// Documents of 300, 0, 1 and 160 tokens; Hq = 4 on Hkv = 2 (groups of 2).
// Costs (2 x query tiles of 64 at or after the key tile's first key):
// doc 0 tiles 10, 6, 2; doc 2 tile 2; doc 3 tiles 6, 2. LPT, ties by
// (document, key tile), kv heads ascending within a tile.
TEST(KvTileSchedule, SmallBatchItemByItem) {
  VarlenSchedule s = build({0, 300, 300, 301, 461}, params(4, 2));
  ASSERT_EQ(s.items.size(), 12u);
  EXPECT_EQ(s.costs,
            (std::vector<double>{10, 10, 6, 6, 6, 6, 2, 2, 2, 2, 2, 2}));
  expectItem(s.items[0], 0, 128, 0, 300, 0, 0, 0, 0);
  expectItem(s.items[1], 0, 128, 0, 300, 2, 1, 0, 0);
  expectItem(s.items[2], 128, 128, 0, 300, 0, 0, 0, 1);
  expectItem(s.items[3], 128, 128, 0, 300, 2, 1, 0, 1);
  // Document 3 (10 + 0 + 1 scale blocks before it) after document 0.
  expectItem(s.items[4], 301, 128, 301, 461, 0, 0, 11, 0);
  expectItem(s.items[5], 301, 128, 301, 461, 2, 1, 11, 0);
  // The last tile of document 0 ends inside the tile: 44 keys.
  expectItem(s.items[6], 256, 44, 0, 300, 0, 0, 0, 2);
  expectItem(s.items[7], 256, 44, 0, 300, 2, 1, 0, 2);
  // The single-token document (the empty one contributes nothing).
  expectItem(s.items[8], 300, 1, 300, 301, 0, 0, 10, 0);
  expectItem(s.items[9], 300, 1, 300, 301, 2, 1, 10, 0);
  expectItem(s.items[10], 429, 32, 301, 461, 0, 0, 11, 1);
  expectItem(s.items[11], 429, 32, 301, 461, 2, 1, 11, 1);
  EXPECT_EQ(s.totalWork(), 56.0);
  std::string err;
  EXPECT_TRUE(checkKvTileSchedule(s, err)) << err;
}

TEST(KvTileSchedule, NonCausalCostsEveryQueryTile) {
  VarlenSchedule s = build({0, 300, 300, 301, 461}, params(4, 2, false));
  ASSERT_EQ(s.items.size(), 12u);
  EXPECT_EQ(s.costs,
            (std::vector<double>{10, 10, 10, 10, 10, 10, 6, 6, 6, 6, 2, 2}));
  // Equal costs by (document, key tile): document 0's tiles 0, 1, 2.
  for (int k = 0; k < 6; ++k)
    EXPECT_EQ(s.items[k].q_tile_in_doc, k / 2);
  expectItem(s.items[6], 301, 128, 301, 461, 0, 0, 11, 0);
  expectItem(s.items[11], 300, 1, 300, 301, 2, 1, 10, 0);
  std::string err;
  EXPECT_TRUE(checkKvTileSchedule(s, err)) << err;
}

TEST(KvTileSchedule, DocumentOrderKeepsTheTokensOrder) {
  VarlenScheduleParams p = params(4, 2);
  p.order = ScheduleOrder::DocumentOrder;
  VarlenSchedule s = build({0, 300, 300, 301, 461}, p);
  ASSERT_EQ(s.items.size(), 12u);
  std::vector<int32_t> starts;
  for (const VarlenWorkItem &it : s.items)
    starts.push_back(it.q_start);
  EXPECT_EQ(starts, (std::vector<int32_t>{0, 0, 128, 128, 256, 256, 300, 300,
                                          301, 301, 429, 429}));
}

// Every (document, kv head, key tile) exactly once, order non-increasing in
// cost and the same on every build, over GQA shapes and awkward lengths.
TEST(KvTileSchedule, CoverageAndOrderSweep) {
  const std::vector<std::vector<int32_t>> batches = {
      {0, 1},
      {0, 0, 0, 5},
      {0, 127, 128, 129, 385, 385, 1000},
      {0, 2048, 2048 + 34, 2048 + 68, 4096},
  };
  for (const auto &cu : batches)
    for (auto [hq, hkv] : {std::pair{1, 1}, {4, 2}, {8, 1}, {6, 3}})
      for (bool causal : {true, false}) {
        VarlenSchedule s = build(cu, params(hq, hkv, causal));
        std::string err;
        EXPECT_TRUE(checkKvTileSchedule(s, err)) << err;
        std::map<std::tuple<int64_t, int32_t, int32_t>, int> seen;
        int64_t expected = 0;
        for (size_t d = 0; d + 1 < cu.size(); ++d)
          expected += (cu[d + 1] - cu[d] + 127) / 128 * hkv;
        for (size_t k = 0; k < s.items.size(); ++k) {
          const VarlenWorkItem &it = s.items[k];
          ++seen[{it.doc_start, it.q_tile_in_doc, it.kv_head}];
          EXPECT_EQ(it.q_head, it.kv_head * (hq / hkv));
          if (k > 0) {
            EXPECT_LE(s.costs[k], s.costs[k - 1]);
          }
        }
        EXPECT_EQ(static_cast<int64_t>(seen.size()), expected);
        for (const auto &entry : seen)
          EXPECT_EQ(entry.second, 1);
        VarlenSchedule again = build(cu, params(hq, hkv, causal));
        ASSERT_EQ(again.items.size(), s.items.size());
        for (size_t k = 0; k < s.items.size(); ++k)
          EXPECT_EQ(std::memcmp(&again.items[k], &s.items[k],
                                sizeof(VarlenWorkItem)),
                    0);
      }
}

// The checker is not vacuous: a duplicated item, a wrong q_head, a tile not
// clipped at the document's end and a swapped order each fail it.
TEST(KvTileSchedule, CheckerCatchesBrokenLists) {
  VarlenSchedule good = build({0, 300, 300, 301, 461}, params(4, 2));
  std::string err;
  VarlenSchedule s = good;
  s.items[1] = s.items[0];
  EXPECT_FALSE(checkKvTileSchedule(s, err));
  EXPECT_NE(err.find("is scheduled twice"), std::string::npos) << err;
  s = good;
  s.items[1].q_head = 1;
  EXPECT_FALSE(checkKvTileSchedule(s, err));
  EXPECT_NE(err.find("group's first query head"), std::string::npos) << err;
  s = good;
  s.items[6].q_rows = 128;
  EXPECT_FALSE(checkKvTileSchedule(s, err));
  EXPECT_NE(err.find("are not key tile 2"), std::string::npos) << err;
  s = good;
  std::swap(s.costs[0], s.costs[11]);
  EXPECT_FALSE(checkKvTileSchedule(s, err));
  EXPECT_NE(err.find("not in LPT order"), std::string::npos) << err;
}

TEST(KvTileSchedule, BadInputKeepsTheQueryBuildersMessages) {
  VarlenSchedule s;
  std::string err;
  std::vector<int32_t> cu = {2, 100};
  EXPECT_FALSE(buildKvTileSchedule(cu.data(), cu.size(), params(1, 1), s, err));
  EXPECT_EQ(err, "cu_seqlens[0] = 2; it must be 0");
  cu = {0, 100, 99};
  EXPECT_FALSE(buildKvTileSchedule(cu.data(), cu.size(), params(1, 1), s, err));
  EXPECT_EQ(err, "cu_seqlens[2] = 99 is less than cu_seqlens[1] = 100 (it "
                 "must be non-decreasing)");
  cu = {0};
  EXPECT_FALSE(buildKvTileSchedule(cu.data(), cu.size(), params(1, 1), s, err));
  EXPECT_EQ(err, "cu_seqlens has 1 entries; it needs num_docs + 1 >= 2 (0, "
                 "then each document's end)");
  cu = {0, 100};
  EXPECT_FALSE(buildKvTileSchedule(cu.data(), cu.size(), params(4, 3), s, err));
  EXPECT_EQ(err, "query heads (4) must be a multiple of kv heads (3)");
  VarlenScheduleParams p = params(1, 1);
  p.blockN = 100;
  EXPECT_FALSE(buildKvTileSchedule(cu.data(), cu.size(), p, s, err));
  EXPECT_EQ(err,
            "key tile size (block_n) must be a positive multiple of 32, got 100");
  // 2^24 key tiles of 128 x 128 kv heads: one more item than int32 counts.
  cu = {0, 2147483647};
  EXPECT_FALSE(
      buildKvTileSchedule(cu.data(), cu.size(), params(128, 128), s, err));
  EXPECT_EQ(err, "too many work items (2147483648 = key tiles x kv heads): at "
                 "most 2^31 - 1");
}

// LPT by this cost against the lower bound of any schedule, as for the
// forward (docs/scheduling.md): a 32k document's causal key tiles on 132 SMs
// at 16 heads on 16 kv heads (4096 items) finish within 1% of the bound.
// The tokens' order is LPT already for one causal document (earlier key tiles
// cost more); with documents of increasing length it ends on the longest
// items and is measurably worse.
TEST(KvTileSchedule, SimulatedMakespanNearTheBound) {
  VarlenSchedule s = build({0, 32768}, params(16, 16));
  ASSERT_EQ(s.items.size(), 4096u);
  GridSimulation sim = simulatePersistentGrid(s.costs, 132);
  EXPECT_EQ(sim.largestItem, 512.0);
  EXPECT_LT(sim.ratio(), 1.01) << sim.makespan << " vs " << sim.lowerBound;

  std::vector<int32_t> cu = {0};
  for (int32_t length : {128, 256, 512, 1024, 2048, 4096, 8192})
    cu.push_back(cu.back() + length);
  VarlenSchedule lpt = build(cu, params(16, 4));
  GridSimulation lptSim = simulatePersistentGrid(lpt.costs, 132);
  EXPECT_LT(lptSim.ratio(), 1.05)
      << lptSim.makespan << " vs " << lptSim.lowerBound;
  VarlenScheduleParams p = params(16, 4);
  p.order = ScheduleOrder::DocumentOrder;
  VarlenSchedule tokensOrder = build(cu, p);
  GridSimulation tokensSim = simulatePersistentGrid(tokensOrder.costs, 132);
  EXPECT_GT(tokensSim.makespan, lptSim.makespan);
  std::printf("kv LPT: one 32k document %.4f x the bound; 128..8192: LPT %.4f, "
              "tokens' order %.4f\n",
              sim.ratio(), lptSim.ratio(), tokensSim.ratio());
}
