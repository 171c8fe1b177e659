//===- ScheduleBuffersTest.cpp - block_info and items from cu_seqlens -----===//

#include "flamia/Runtime/ScheduleBuffers.h"
#include "flamia/Support/Validation.h"

#include "TestArtifacts.h"

#include <gtest/gtest.h>

using namespace flamia;
using namespace flamia::runtime;
using namespace flamia::runtime::test;

namespace {

Manifest standard() {
  Manifest m;
  Status s = parseManifest(standardManifest(), m);
  EXPECT_TRUE(s.ok()) << s.message;
  return m;
}

void expectItem(const VarlenWorkItem &it, int qStart, int qRows, int docStart,
                int docEnd, int qHead, int kvHead, int blockBase, int tile) {
  EXPECT_EQ(it.q_start, qStart);
  EXPECT_EQ(it.q_rows, qRows);
  EXPECT_EQ(it.doc_start, docStart);
  EXPECT_EQ(it.doc_end, docEnd);
  EXPECT_EQ(it.q_head, qHead);
  EXPECT_EQ(it.kv_head, kvHead);
  EXPECT_EQ(it.doc_block_base, blockBase);
  EXPECT_EQ(it.q_tile_in_doc, tile);
}

TEST(ScheduleBuffers, ValidatesCuSeqlens) {
  const int32_t good[] = {0, 5, 5, 70};
  EXPECT_TRUE(validateCuSeqlens(good, 4, 70).ok());
  const int32_t allEmpty[] = {0, 0};
  EXPECT_TRUE(validateCuSeqlens(allEmpty, 2, 0).ok());

  Status s = validateCuSeqlens(nullptr, 4, 70);
  EXPECT_EQ(s.code, ErrorCode::InvalidArgument);
  EXPECT_EQ(s.message, "cu_seqlens is null");
  s = validateCuSeqlens(good, 1, 0);
  EXPECT_EQ(s.message, "cu_seqlens has 1 entries; it needs num_docs + 1 >= 2 "
                       "(0, then each document's end)");
  const int32_t notZero[] = {1, 5, 70};
  s = validateCuSeqlens(notZero, 3, 70);
  EXPECT_EQ(s.message, "cu_seqlens[0] = 1; it must be 0");
  const int32_t decreasing[] = {0, 10, 7, 70};
  s = validateCuSeqlens(decreasing, 4, 70);
  EXPECT_EQ(s.message, "cu_seqlens[2] = 7 is less than cu_seqlens[1] = 10 (it "
                       "must be non-decreasing)");
  s = validateCuSeqlens(good, 4, 71);
  EXPECT_EQ(s.message, "cu_seqlens[3] = 70 but the batch has T = 71 tokens "
                       "(the last entry must be T)");
}

// One rule, one wording: the runtime's check is the shared one.
TEST(ScheduleBuffers, CuSeqlensMessagesAreTheSharedOnes) {
  const std::vector<std::vector<int32_t>> bad = {
      {}, {0}, {2, 70}, {0, 40, 39, 70}, {0, 35, 69}};
  for (const std::vector<int32_t> &cu : bad) {
    std::string shared;
    EXPECT_FALSE(
        validation::validateCuSeqlens(cu.data(), cu.size(), 70, shared));
    Status s = validateCuSeqlens(cu.data(), cu.size(), 70);
    EXPECT_EQ(s.code, ErrorCode::InvalidArgument);
    EXPECT_EQ(s.message, shared);
  }
}

TEST(ScheduleBuffers, BlockInfoIsDocumentLocal) {
  // Documents of 5, 0 and 65 tokens: blocks (0,5) | - | (5,32) (37,32) (69,1).
  const int32_t cu[] = {0, 5, 5, 70};
  EXPECT_EQ(countScaleBlocks(cu, 4), 4);
  EXPECT_EQ(makeBlockInfo(cu, 4),
            (std::vector<int32_t>{0, 5, 5, 32, 37, 32, 69, 1}));
  const int32_t exact[] = {0, 64};
  EXPECT_EQ(makeBlockInfo(exact, 2), (std::vector<int32_t>{0, 32, 32, 32}));
  const int32_t empty[] = {0, 0, 0};
  EXPECT_EQ(countScaleBlocks(empty, 3), 0);
  EXPECT_TRUE(makeBlockInfo(empty, 3).empty());
}

TEST(ScheduleBuffers, ItemsOfASmallBatchByHand) {
  // Documents of 5, 0 and 65 tokens, Hq = 2 sharing one KV head. Each
  // document is one query tile visiting one (bf16, diagonal) key tile: every
  // item costs overhead 1 + bf16 tile 1 on sm_90a, so the LPT order falls
  // back to (document, tile, head).
  ScheduleContents c;
  Status s = buildScheduleContents(standard(), {0, 5, 5, 70}, 2, 1, true, c);
  ASSERT_TRUE(s.ok()) << s.message;
  EXPECT_EQ(c.numBlocks, 4);
  EXPECT_EQ(c.blockInfo, (std::vector<int32_t>{0, 5, 5, 32, 37, 32, 69, 1}));
  ASSERT_TRUE(c.hasItems);
  ASSERT_EQ(c.items.size(), 4u);
  expectItem(c.items[0], 0, 5, 0, 5, 0, 0, 0, 0);
  expectItem(c.items[1], 0, 5, 0, 5, 1, 0, 0, 0);
  expectItem(c.items[2], 5, 65, 5, 70, 0, 0, 1, 0);
  expectItem(c.items[3], 5, 65, 5, 70, 1, 0, 1, 0);
  for (double cost : c.costs)
    EXPECT_EQ(cost, 2.0);
}

TEST(ScheduleBuffers, LongestItemsFirst) {
  // One document of 300 tokens: query tiles of 128, 128, 44 visiting 1, 2, 3
  // key tiles (the diagonal one bf16, earlier ones FP8): costs 2, 3, 4.
  ScheduleContents c;
  ASSERT_TRUE(buildScheduleContents(standard(), {0, 300}, 1, 1, true, c).ok());
  ASSERT_EQ(c.items.size(), 3u);
  expectItem(c.items[0], 256, 44, 0, 300, 0, 0, 0, 2);
  expectItem(c.items[1], 128, 128, 0, 300, 0, 0, 0, 1);
  expectItem(c.items[2], 0, 128, 0, 300, 0, 0, 0, 0);
  EXPECT_EQ(c.costs, (std::vector<double>{4, 3, 2}));
  EXPECT_EQ(c.numBlocks, 10); // ceil(300 / 32)
}

TEST(ScheduleBuffers, GqaHeadsAndBlockBases) {
  // Hq 4 over Hkv 2: heads 0,1 -> kv 0 and 2,3 -> kv 1. Second document
  // starts after ceil(40 / 32) = 2 blocks.
  ScheduleContents c;
  ASSERT_TRUE(
      buildScheduleContents(standard(), {0, 40, 50}, 4, 2, true, c).ok());
  ASSERT_EQ(c.items.size(), 8u);
  for (const VarlenWorkItem &it : c.items) {
    EXPECT_EQ(it.kv_head, it.q_head / 2);
    EXPECT_EQ(it.doc_block_base, it.doc_start == 0 ? 0 : 2);
  }
}

// The manifest's order, or the caller's; sm_90a sections count the bf16 K
// and V copies (4 x 128 bytes per token and kv head).
TEST(ScheduleBuffers, ScheduleOrder) {
  Manifest m = standard();
  EXPECT_EQ(sectionBytesPerToken(m, false, 1), 512);
  EXPECT_EQ(sectionBytesPerToken(m, true, 4), 2048);
  m.schedule.order = ScheduleOrder::L2Sections;
  m.schedule.l2SectionBytes = 600 * 512;
  // Documents of 300 and 400 tokens (3 and 4 query tiles), 2 heads, 600
  // tokens per section: {(400, h0)}, {(400, h1)} (800 would not fit), then
  // {(300, h0), (300, h1)}, each longest first.
  ScheduleContents c;
  ASSERT_TRUE(buildScheduleContents(m, {0, 300, 700}, 2, 2, true, c).ok());
  ASSERT_EQ(c.items.size(), 14u);
  for (size_t k = 0; k < 8; ++k) {
    EXPECT_EQ(c.items[k].doc_start, 300);
    EXPECT_EQ(c.items[k].q_head, k < 4 ? 0 : 1);
    EXPECT_EQ(c.items[k].q_tile_in_doc, 3 - int(k % 4));
  }
  expectItem(c.items[8], 256, 44, 0, 300, 0, 0, 0, 2);
  expectItem(c.items[13], 0, 128, 0, 300, 1, 1, 0, 0);
  // The caller's order wins.
  ASSERT_TRUE(buildScheduleContents(m, {0, 300, 700}, 2, 2, true, c,
                                    ScheduleOrder::LongestFirst)
                  .ok());
  for (size_t k = 1; k < c.costs.size(); ++k)
    EXPECT_GE(c.costs[k - 1], c.costs[k]);
  EXPECT_EQ(c.items[1].doc_start, 300);
  EXPECT_EQ(c.items[1].q_head, 1);
}

TEST(ScheduleBuffers, NoScheduleSectionMeansNoItems) {
  Manifest m;
  ASSERT_TRUE(
      parseManifest(R"({"flamia_manifest_version": 2, "target": "sm_90a",
    "head_dim": 128, "causal": true,
    "buffers": [{"name": "block_info", "role": "schedule", "dtype": "i32",
                 "shape": ["NB", 2]}],
    "kernels": [{"name": "k", "cubin": "k.cubin", "grid": ["NB", 1, 1],
                 "block": [128, 1, 1], "params": []}]})",
                    m)
          .ok());
  ScheduleContents c;
  ASSERT_TRUE(buildScheduleContents(m, {0, 33}, 2, 2, false, c).ok());
  EXPECT_FALSE(c.hasItems);
  EXPECT_TRUE(c.items.empty());
  EXPECT_EQ(c.blockInfo, (std::vector<int32_t>{0, 32, 32, 1}));
}

TEST(ScheduleBuffers, BadHeadsAreReported) {
  ScheduleContents c;
  Status s = buildScheduleContents(standard(), {0, 64}, 3, 2, false, c);
  EXPECT_EQ(s.code, ErrorCode::InvalidArgument);
  EXPECT_EQ(s.message, "building the varlen schedule: query heads (3) must be "
                       "a multiple of kv heads (2)");
  s = buildScheduleContents(standard(), {0, 70, 64}, 1, 1, false, c);
  EXPECT_EQ(s.message, "cu_seqlens[2] = 64 is less than cu_seqlens[1] = 70 "
                       "(it must be non-decreasing)");
}

} // namespace
