//===- ScheduleInvariantsTest.cpp - The checks catch broken schedules -----===//
#include "flamia/Schedule/ScheduleInvariants.h"

#include "flamia/Schedule/VarlenSchedule.h"

#include "gtest/gtest.h"

using namespace flamia;

namespace {
// Documents of 300, 0 and 50 tokens; 4 query heads on 2 KV heads. Items in
// order: (doc 0, tile 2) heads 0-3, (0, 1), (0, 0), (doc 2, tile 0).
class ScheduleInvariants : public ::testing::Test {
protected:
  void SetUp() override {
    p.numQHeads = 4;
    p.numKVHeads = 2;
    std::string err;
    ASSERT_TRUE(buildVarlenSchedule(cu.data(), cu.size(), p, s, err)) << err;
    ASSERT_EQ(s.items.size(), 16u);
    ASSERT_TRUE(checkVarlenSchedule(s, err)) << err;
    bases = s.docs.scaleBlocksBefore();
  }
  bool coverage(std::string &err) {
    return checkScheduleCoverage(cu.data(), cu.size(), p, s.items.data(),
                                 s.items.size(), err);
  }
  bool bounds(std::string &err) {
    return checkScheduleDocumentBounds(p, s.items.data(), s.items.size(), err);
  }
  bool blocks(std::string &err) {
    return checkScaleBlockBases(cu.data(), cu.size(), s.items.data(),
                                s.items.size(), bases.data(), err);
  }
  std::vector<int32_t> cu = {0, 300, 300, 350};
  VarlenScheduleParams p;
  VarlenSchedule s;
  /// doc_block_base as the schedule stores it (corrupted by a test).
  std::vector<int32_t> bases;
};
} // namespace

TEST_F(ScheduleInvariants, DuplicateItem) {
  s.items[5] = s.items[4];
  std::string err;
  EXPECT_FALSE(coverage(err));
  EXPECT_EQ(err,
            "item 5 (q_start 128, q_rows 128, document [0, 300), q_head 0, "
            "tile 1) is scheduled twice");
  EXPECT_FALSE(checkVarlenSchedule(s, err));
}

TEST_F(ScheduleInvariants, MissingItem) {
  s.items.erase(s.items.begin() + 13);
  s.costs.erase(s.costs.begin() + 13);
  std::string err;
  EXPECT_FALSE(coverage(err));
  EXPECT_EQ(err, "15 items, expected 16 (query tiles x query heads); missing "
                 "document 2 tile 0 head 1");
}

TEST_F(ScheduleInvariants, WrongKvHead) {
  s.items[2].kv_head = 0; // query head 2 reads KV head 1
  std::string err;
  EXPECT_FALSE(coverage(err));
  EXPECT_EQ(err, "item 2 (q_start 256, q_rows 44, document [0, 300), q_head 2, "
                 "tile 2): kv_head is 0, GQA maps query head 2 to kv head 1");
}

TEST_F(ScheduleInvariants, ItemNamingNoDocument) {
  // Document 0's tile stretched over document 2: [0, 350) is no document.
  s.items[0].doc_end = 350;
  std::string err;
  EXPECT_FALSE(coverage(err));
  EXPECT_EQ(err, "item 0 (q_start 256, q_rows 44, document [0, 350), q_head 0, "
                 "tile 2) does not name a non-empty document of cu_seqlens");
}

TEST_F(ScheduleInvariants, LastTileReadingTheNextDocument) {
  // A last tile of 128 rows would read rows 300..383 of document 2.
  s.items[0].q_rows = 128;
  std::string err;
  EXPECT_FALSE(bounds(err));
  EXPECT_EQ(err,
            "item 0 (q_start 256, q_rows 128, document [0, 300), q_head 0, "
            "tile 2): rows [256, 384) are not query tile 2 of its "
            "document, clipped at its end");
  // Rows shifted off the tile grid.
  SetUp();
  s.items[4].q_start = 129;
  EXPECT_FALSE(bounds(err));
  // A tile index past the document.
  SetUp();
  s.items[12].q_tile_in_doc = 1;
  EXPECT_FALSE(bounds(err));
  EXPECT_FALSE(coverage(err));
}

TEST_F(ScheduleInvariants, ScaleBlockBases) {
  s.items[12].doc_block_base = 9;
  std::string err;
  EXPECT_FALSE(blocks(err));
  EXPECT_EQ(err, "item 12 (q_start 300, q_rows 50, document [300, 350), q_head "
                 "0, tile 0): doc_block_base is 9, the quantizer numbers 10 "
                 "blocks before document 2");
  SetUp();
  bases[3] = 13; // NB is 10 + ceil(50 / 32) = 12
  EXPECT_FALSE(blocks(err));
  EXPECT_EQ(err, "doc_block_base[3] is 13, the quantizer numbers 12 blocks "
                 "before document 3");
}

TEST_F(ScheduleInvariants, LptOrder) {
  std::swap(s.costs[3], s.costs[4]);
  std::string err;
  EXPECT_FALSE(checkLptOrder(s.costs, err));
  EXPECT_EQ(err, "not in LPT order: item 4 costs 5, more than item 3 (4)");
  EXPECT_FALSE(checkVarlenSchedule(s, err));
}
