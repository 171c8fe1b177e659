//===- VarlenScheduleTest.cpp - Building the work list --------------------===//
#include "flamia/Schedule/VarlenSchedule.h"

#include "flamia/Schedule/ScheduleInvariants.h"

#include "gtest/gtest.h"

#include <cstring>
#include <map>
#include <tuple>

using namespace flamia;

namespace {
VarlenScheduleParams params(int32_t hq, int32_t hkv, bool causal = true,
                            ScheduleTarget target = ScheduleTarget::Sm100a) {
  VarlenScheduleParams p;
  p.numQHeads = hq;
  p.numKVHeads = hkv;
  p.causal = causal;
  p.weights = costWeightsForTarget(target);
  return p;
}

VarlenSchedule build(const std::vector<int32_t> &cu,
                     const VarlenScheduleParams &p) {
  VarlenSchedule s;
  std::string err;
  EXPECT_TRUE(buildVarlenSchedule(cu.data(), cu.size(), p, s, err)) << err;
  return s;
}

void expectItem(const VarlenWorkItem &it, int32_t qStart, int32_t qRows,
                int32_t docStart, int32_t docEnd, int32_t qHead, int32_t kvHead,
                int32_t blockBase, int32_t tile) {
  EXPECT_EQ(it.q_start, qStart);
  EXPECT_EQ(it.q_rows, qRows);
  EXPECT_EQ(it.doc_start, docStart);
  EXPECT_EQ(it.doc_end, docEnd);
  EXPECT_EQ(it.q_head, qHead);
  EXPECT_EQ(it.kv_head, kvHead);
  EXPECT_EQ(it.doc_block_base, blockBase);
  EXPECT_EQ(it.q_tile_in_doc, tile);
}

// (document index, tile, head) of every item, counted.
std::map<std::tuple<int32_t, int32_t, int32_t>, int>
countByKey(const VarlenSchedule &s) {
  std::map<std::tuple<int32_t, int32_t, int32_t>, int> seen;
  for (const VarlenWorkItem &it : s.items) {
    int32_t doc = -1;
    for (int d = 0; d < s.docs.numDocuments(); ++d)
      if (s.docs.begin(d) == it.doc_start && s.docs.end(d) == it.doc_end)
        doc = static_cast<int32_t>(d);
    ++seen[{doc, it.q_tile_in_doc, it.q_head}];
  }
  return seen;
}
} // namespace

// Documents of 300, 0 and 50 tokens, 4 query heads on 2 KV heads, causal,
// sm_100a. Costs: document 0 tiles 3, 4, 5; document 2 tile 0: 3.
// LPT: (0, tile 2) x 4 heads, (0, 1) x 4, then the cost-3 tiles by document.
TEST(VarlenSchedule, SmallBatchItemByItem) {
  VarlenSchedule s = build({0, 300, 300, 350}, params(4, 2));
  ASSERT_EQ(s.items.size(), 16u);
  EXPECT_EQ(s.costs, (std::vector<double>{5, 5, 5, 5, 4, 4, 4, 4, 3, 3, 3, 3, 3,
                                          3, 3, 3}));
  expectItem(s.items[0], 256, 44, 0, 300, 0, 0, 0, 2);
  expectItem(s.items[1], 256, 44, 0, 300, 1, 0, 0, 2);
  expectItem(s.items[2], 256, 44, 0, 300, 2, 1, 0, 2);
  expectItem(s.items[3], 256, 44, 0, 300, 3, 1, 0, 2);
  expectItem(s.items[4], 128, 128, 0, 300, 0, 0, 0, 1);
  expectItem(s.items[8], 0, 128, 0, 300, 0, 0, 0, 0);
  // Document 2 after document 0 among equal costs; 10 blocks precede it.
  expectItem(s.items[12], 300, 50, 300, 350, 0, 0, 10, 0);
  expectItem(s.items[15], 300, 50, 300, 350, 3, 1, 10, 0);
  EXPECT_EQ(s.totalWork(), 60.0);
  EXPECT_EQ(s.largestItem(), 5.0);
  EXPECT_EQ(s.docs.scaleBlocksBefore(),
            (std::vector<int32_t>{0, 10, 10, 12}));
  std::string err;
  EXPECT_TRUE(checkVarlenSchedule(s, err)) << err;
}

TEST(VarlenSchedule, EveryDocumentHeadAndTileExactlyOnce) {
  std::vector<int32_t> cu = {0, 1, 129, 129, 385, 1000, 1128, 1129, 2000};
  VarlenSchedule s = build(cu, params(6, 3));
  auto seen = countByKey(s);
  size_t expected = 0;
  for (size_t d = 0; d + 1 < cu.size(); ++d) {
    int32_t tiles = (cu[d + 1] - cu[d] + 127) / 128;
    for (int32_t t = 0; t < tiles; ++t)
      for (int32_t h = 0; h < 6; ++h) {
        auto it = seen.find({static_cast<int32_t>(d), t, h});
        ASSERT_NE(it, seen.end())
            << "doc " << d << " tile " << t << " head " << h;
        EXPECT_EQ(it->second, 1);
        ++expected;
      }
  }
  EXPECT_EQ(seen.size(), expected);
  EXPECT_EQ(s.items.size(), expected);
  std::string err;
  EXPECT_TRUE(checkVarlenSchedule(s, err)) << err;
}

TEST(VarlenSchedule, GqaHeadMapping) {
  for (auto [hq, hkv] : std::vector<std::pair<int32_t, int32_t>>{
           {16, 4}, {16, 1}, {16, 16}, {8, 2}}) {
    VarlenSchedule s = build({0, 200}, params(hq, hkv));
    ASSERT_EQ(s.items.size(), static_cast<size_t>(2 * hq));
    for (const VarlenWorkItem &it : s.items)
      EXPECT_EQ(it.kv_head, it.q_head / (hq / hkv));
  }
  // Explicitly: 16 query heads on 4 KV heads.
  VarlenSchedule s = build({0, 100}, params(16, 4));
  std::vector<int32_t> kv;
  for (const VarlenWorkItem &it : s.items)
    kv.push_back(it.kv_head);
  EXPECT_EQ(kv, (std::vector<int32_t>{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3,
                                      3, 3}));
}

TEST(VarlenSchedule, ZeroLengthDocumentsProduceNothing) {
  VarlenSchedule s = build({0, 0, 0, 10, 10, 10}, params(2, 2));
  ASSERT_EQ(s.items.size(), 2u);
  expectItem(s.items[0], 0, 10, 0, 10, 0, 0, 0, 0);
  expectItem(s.items[1], 0, 10, 0, 10, 1, 1, 0, 0);
  EXPECT_EQ(s.docs.numEmptyDocuments(), 4);
  EXPECT_EQ(s.docs.scaleBlocksBefore(),
            (std::vector<int32_t>{0, 0, 0, 1, 1, 1}));

  VarlenSchedule none = build({0, 0, 0}, params(2, 2));
  EXPECT_TRUE(none.items.empty());
  EXPECT_EQ(none.totalWork(), 0.0);
  EXPECT_EQ(none.largestItem(), 0.0);
  std::string err;
  EXPECT_TRUE(checkVarlenSchedule(none, err)) << err;
}

TEST(VarlenSchedule, DocumentsShorterThanOneTile) {
  VarlenSchedule s = build({0, 1, 34, 161}, params(1, 1));
  ASSERT_EQ(s.items.size(), 3u);
  // All cost 3 (one bf16 tile); document order.
  EXPECT_EQ(s.costs, (std::vector<double>{3, 3, 3}));
  expectItem(s.items[0], 0, 1, 0, 1, 0, 0, 0, 0);
  expectItem(s.items[1], 1, 33, 1, 34, 0, 0, 1, 0);
  expectItem(s.items[2], 34, 127, 34, 161, 0, 0, 3, 0);
}

// One document of 32768 tokens, 16 heads: 256 tiles, tile t costs 1 + t + 2.
TEST(VarlenSchedule, OneDocumentCoveringTheBatch) {
  VarlenSchedule s = build({0, 32768}, params(16, 16));
  ASSERT_EQ(s.items.size(), 256u * 16u);
  expectItem(s.items.front(), 32640, 128, 0, 32768, 0, 0, 0, 255);
  expectItem(s.items.back(), 0, 128, 0, 32768, 15, 15, 0, 0);
  EXPECT_EQ(s.costs.front(), 258.0);
  EXPECT_EQ(s.costs.back(), 3.0);
  // sum over t of (3 + t), times 16 heads.
  EXPECT_EQ(s.totalWork(), 16.0 * (256 * 3 + 255 * 256 / 2));
  EXPECT_EQ(s.docs.numScaleBlocks(), 1024);
  std::string err;
  EXPECT_TRUE(checkVarlenSchedule(s, err)) << err;
}

// 8192 documents of 34 tokens x 16 heads = 131072 items, all of cost 3, in
// (document, head) order. Built by prefix sums and one sort; the test checks
// the result, not the time.
TEST(VarlenSchedule, ManyTinyDocuments) {
  std::vector<int32_t> cu(8193);
  for (int32_t d = 0; d <= 8192; ++d)
    cu[d] = 34 * d;
  VarlenSchedule s = build(cu, params(16, 16));
  ASSERT_EQ(s.items.size(), 131072u);
  for (size_t k = 0; k < s.items.size(); k += 1237) {
    int32_t d = static_cast<int32_t>(k / 16), h = static_cast<int32_t>(k % 16);
    expectItem(s.items[k], 34 * d, 34, 34 * d, 34 * d + 34, h, h, 2 * d, 0);
    EXPECT_EQ(s.costs[k], 3.0);
  }
  EXPECT_EQ(s.docs.numScaleBlocks(), 16384);
  std::string err;
  EXPECT_TRUE(checkVarlenSchedule(s, err)) << err;
}

// Emulates the kernel's reads: every query row and every key row an item
// loads (clipped at doc_end as the kernel does) belongs to the item's
// document; in particular the last tile of a document stops at its end.
TEST(VarlenSchedule, NoItemReadsAnotherDocument) {
  std::vector<int32_t> cu = {0, 1, 128, 256, 385, 640, 641, 941, 941, 1070};
  std::vector<int32_t> docOfToken(static_cast<size_t>(cu.back()));
  for (size_t d = 0; d + 1 < cu.size(); ++d)
    for (int32_t t = cu[d]; t < cu[d + 1]; ++t)
      docOfToken[static_cast<size_t>(t)] = static_cast<int32_t>(d);
  for (bool causal : {true, false})
    for (int32_t bn : {64, 128, 256}) {
      VarlenScheduleParams p = params(2, 1, causal);
      p.blockN = bn;
      VarlenSchedule s = build(cu, p);
      for (const VarlenWorkItem &it : s.items) {
        int32_t doc = docOfToken[static_cast<size_t>(it.doc_start)];
        for (int32_t r = it.q_start; r < it.q_start + it.q_rows; ++r)
          ASSERT_EQ(docOfToken[static_cast<size_t>(r)], doc);
        int32_t keyEnd = varlenItemKeyEnd(it, bn, causal);
        for (int32_t k = it.doc_start; k < keyEnd; ++k)
          ASSERT_EQ(docOfToken[static_cast<size_t>(k)], doc);
        // The item sees every key it needs (causal: up to its last row;
        // a key tile may go on past it, masked, but never past doc_end).
        EXPECT_GE(keyEnd, causal ? it.q_start + it.q_rows : it.doc_end);
        EXPECT_LE(keyEnd, it.doc_end);
        // A last tile ends exactly at its document's end.
        if (it.q_start + 128 >= it.doc_end) {
          EXPECT_EQ(it.q_start + it.q_rows, it.doc_end);
        }
      }
      std::string err;
      EXPECT_TRUE(checkVarlenSchedule(s, err)) << err;
    }
}

// LPT, ties by (document, tile, head): heads of one tile adjacent.
TEST(VarlenSchedule, OrderIsLptWithADeterministicTieBreak) {
  std::vector<int32_t> cu = {0, 700, 1000, 1600, 1601, 3000};
  VarlenSchedule s = build(cu, params(4, 2, true, ScheduleTarget::Sm90a));
  for (size_t k = 1; k < s.items.size(); ++k) {
    ASSERT_GE(s.costs[k - 1], s.costs[k]);
    if (s.costs[k - 1] == s.costs[k]) {
      const VarlenWorkItem &a = s.items[k - 1], &b = s.items[k];
      EXPECT_LT(std::make_tuple(a.doc_start, a.q_tile_in_doc, a.q_head),
                std::make_tuple(b.doc_start, b.q_tile_in_doc, b.q_head));
    }
  }
  for (size_t k = 0; k < s.items.size(); k += 4)
    for (int32_t h = 0; h < 4; ++h) {
      EXPECT_EQ(s.items[k + h].q_head, h);
      EXPECT_EQ(s.items[k + h].q_start, s.items[k].q_start);
    }
  // Building twice gives the same bytes.
  VarlenSchedule again = build(cu, params(4, 2, true, ScheduleTarget::Sm90a));
  ASSERT_EQ(again.items.size(), s.items.size());
  EXPECT_EQ(std::memcmp(again.items.data(), s.items.data(),
                        s.items.size() * sizeof(VarlenWorkItem)),
            0);
}

// The baseline order keeps the tokens' order: (document, tile, head).
TEST(VarlenSchedule, DocumentOrderBaseline) {
  VarlenScheduleParams p = params(2, 1);
  p.order = ScheduleOrder::DocumentOrder;
  VarlenSchedule s = build({0, 300, 300, 350}, p);
  ASSERT_EQ(s.items.size(), 8u);
  EXPECT_EQ(s.costs, (std::vector<double>{3, 3, 4, 4, 5, 5, 3, 3}));
  expectItem(s.items[0], 0, 128, 0, 300, 0, 0, 0, 0);
  expectItem(s.items[3], 128, 128, 0, 300, 1, 0, 0, 1);
  expectItem(s.items[7], 300, 50, 300, 350, 1, 0, 10, 0);
  EXPECT_EQ(s.largestItem(), 5.0);
  // Every invariant but the LPT order holds.
  std::string err;
  EXPECT_TRUE(checkVarlenSchedule(s, err)) << err;
  EXPECT_FALSE(checkLptOrder(s.costs, err));
}

TEST(VarlenSchedule, BadInputIsAnError) {
  VarlenSchedule s;
  std::string err;
  std::vector<int32_t> cu = {0, 100};
  auto fails = [&](VarlenScheduleParams p, const std::string &message) {
    EXPECT_FALSE(buildVarlenSchedule(cu.data(), cu.size(), p, s, err));
    EXPECT_EQ(err, message);
  };
  fails(params(0, 1), "number of query heads must be positive, got 0");
  fails(params(4, 0), "number of kv heads must be positive, got 0");
  fails(params(4, 3), "query heads (4) must be a multiple of kv heads (3)");
  VarlenScheduleParams p = params(4, 4);
  p.headDim = 96;
  fails(p, "head dim must be 64, 128, 192 or 256, got 96");
  p = params(4, 4);
  p.safeBlock = 48;
  fails(p, "safe block must be a positive multiple of 32, got 48");
  p = params(4, 4);
  p.blockM = 0;
  fails(p,
        "query tile size (block_m) must be a positive multiple of 32, got 0");
  p = params(4, 4);
  p.blockN = 100;
  fails(p,
        "key tile size (block_n) must be a positive multiple of 32, got 100");
  p = params(4, 4);
  p.weights.bf16Tile = 0;
  fails(p, "cost weight bf16_tile must be finite and > 0, got 0");

  cu = {2, 100};
  EXPECT_FALSE(buildVarlenSchedule(cu.data(), cu.size(), params(1, 1), s, err));
  EXPECT_EQ(err, "cu_seqlens[0] = 2; it must be 0");
  cu = {0, 100, 99};
  EXPECT_FALSE(buildVarlenSchedule(cu.data(), cu.size(), params(1, 1), s, err));
  EXPECT_EQ(err, "cu_seqlens[2] = 99 is less than cu_seqlens[1] = 100 (it "
                 "must be non-decreasing)");
  // No documents (cu_seqlens = [0]): refused, as by the runtime.
  cu = {0};
  EXPECT_FALSE(buildVarlenSchedule(cu.data(), cu.size(), params(1, 1), s, err));
  EXPECT_EQ(err, "cu_seqlens has 1 entries; it needs num_docs + 1 >= 2 (0, "
                 "then each document's end)");

  // More items than int32 can count.
  cu = {0, 2147483647};
  EXPECT_FALSE(
      buildVarlenSchedule(cu.data(), cu.size(), params(128, 1), s, err));
  EXPECT_EQ(err, "too many work items (2147483648 = query tiles x heads): at "
                 "most 2^31 - 1");
}
