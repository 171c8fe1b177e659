//===- L2SectionsTest.cpp - The L2-section order of the work list ---------===//
#include "flamia/Schedule/GridSimulator.h"
#include "flamia/Schedule/ScheduleInvariants.h"
#include "flamia/Schedule/StandardWorkloads.h"
#include "flamia/Schedule/VarlenSchedule.h"

#include "gtest/gtest.h"

#include <set>
#include <utility>

using namespace flamia;

namespace {
VarlenScheduleParams sectioned(int32_t hq, int32_t hkv) {
  VarlenScheduleParams p;
  p.numQHeads = hq;
  p.numKVHeads = hkv;
  p.weights = costWeightsForTarget(ScheduleTarget::Sm90a);
  p.order = ScheduleOrder::L2Sections;
  return p;
}

VarlenSchedule build(const std::vector<int32_t> &cu,
                     const VarlenScheduleParams &p) {
  VarlenSchedule s;
  std::string err;
  EXPECT_TRUE(buildVarlenSchedule(cu.data(), cu.size(), p, s, err)) << err;
  EXPECT_TRUE(checkVarlenSchedule(s, err)) << err;
  return s;
}

// (document start, kv head) of items [begin, end).
std::set<std::pair<int32_t, int32_t>> pairsIn(const VarlenSchedule &s,
                                              size_t begin, size_t end) {
  std::set<std::pair<int32_t, int32_t>> pairs;
  for (size_t k = begin; k < end; ++k)
    pairs.insert({s.items[k].doc_start, s.items[k].kv_head});
  return pairs;
}
} // namespace

// Documents of 300, 0, 50 and 256 tokens, 2 heads, one byte per token: pair
// bytes are the lengths. Longest first: (doc 0, h0) 300 | (doc 0, h1) 300 +
// (doc 3, h0) 256 = 556 | (doc 3, h1) 256 + (doc 2, h0) 50 + (doc 2, h1) 50,
// with a budget of 560 bytes.
TEST(L2Sections, SectionsByHand) {
  VarlenScheduleParams p = sectioned(2, 2);
  p.sectionBytesPerToken = 1;
  p.l2SectionBytes = 560;
  VarlenSchedule s = build({0, 300, 300, 350, 606}, p);
  ASSERT_EQ(s.items.size(), 12u);
  EXPECT_EQ(s.sectionBegins, (std::vector<size_t>{0, 3, 8}));
  using Pairs = std::set<std::pair<int32_t, int32_t>>;
  EXPECT_EQ(pairsIn(s, 0, 3), (Pairs{{0, 0}}));
  EXPECT_EQ(pairsIn(s, 3, 8), (Pairs{{0, 1}, {350, 0}}));
  EXPECT_EQ(pairsIn(s, 8, 12), (Pairs{{350, 1}, {300, 0}, {300, 1}}));
  // Inside a section: longest first, so the last (clipped) tile of the
  // 300-token document leads; ties by document, tile, head.
  EXPECT_EQ(s.items[0].q_tile_in_doc, 2);
  EXPECT_EQ(s.items[2].q_tile_in_doc, 0);
  for (size_t k = 1; k < 3; ++k)
    EXPECT_GE(s.costs[k - 1], s.costs[k]);
  EXPECT_EQ(s.items[3].doc_start, 0);
  EXPECT_EQ(s.items[3].q_tile_in_doc, 2);
  EXPECT_EQ(s.items[3].q_head, 1);
}

// GQA: a kv head's query heads are in its section and adjacent.
TEST(L2Sections, QueryHeadsOfAKvHeadStayTogether) {
  VarlenScheduleParams p = sectioned(8, 2);
  p.sectionBytesPerToken = 1;
  p.l2SectionBytes = 1000;
  VarlenSchedule s = build({0, 1000, 1500}, p);
  // (doc 0, kv 0) | (doc 0, kv 1) | (doc 1, kv 0) + (doc 1, kv 1).
  ASSERT_EQ(s.sectionBegins.size(), 3u);
  EXPECT_EQ(s.sectionBegins[1], 8u * 4);
  EXPECT_EQ(s.sectionBegins[2], 16u * 4);
  for (size_t k = 0; k < s.items.size(); k += 4)
    for (size_t j = 0; j < 4; ++j) {
      EXPECT_EQ(s.items[k + j].q_head, s.items[k].kv_head * 4 + int32_t(j));
      EXPECT_EQ(s.items[k + j].q_tile_in_doc, s.items[k].q_tile_in_doc);
    }
}

// One pair larger than the budget is a section of its own; the sm_90a
// default (bf16 K and V, 4 x 128 bytes per token, 16 MiB) puts one of the 16
// heads of a 32k document (16 MiB) in a section and 16 (doc, head) pairs of
// 2k (1 MiB each).
TEST(L2Sections, DefaultBudget) {
  VarlenScheduleParams p = sectioned(16, 16);
  p.l2SectionBytes = 1000;
  VarlenSchedule tiny = build({0, 4096}, p);
  EXPECT_EQ(tiny.sectionBegins.size(), 16u);

  p = sectioned(16, 16);
  EXPECT_EQ(p.bytesPerSectionToken(), 512);
  std::vector<int32_t> cu;
  std::string err;
  ASSERT_TRUE(
      makeStandardWorkload(StandardWorkload::Single32k, 32768, cu, err));
  EXPECT_EQ(p.l2SectionBytes, int64_t{16} << 20);
  EXPECT_EQ(build(cu, p).sectionBegins.size(), 16u);
  ASSERT_TRUE(makeStandardWorkload(StandardWorkload::Fixed2k, 32768, cu, err));
  VarlenSchedule fixed = build(cu, p);
  ASSERT_EQ(fixed.sectionBegins.size(), 16u);
  EXPECT_EQ(pairsIn(fixed, 0, fixed.sectionBegins[1]).size(), 16u);
}

// The simulator ignores memory, so sections can only lose against LPT in
// balance; on the standard workloads they lose less than 2% (132 SMs).
TEST(L2Sections, BalanceCloseToLpt) {
  for (StandardWorkload w :
       {StandardWorkload::Lognormal1k, StandardWorkload::Fixed2k,
        StandardWorkload::Single32k, StandardWorkload::Tiny34}) {
    std::vector<int32_t> cu;
    std::string err;
    ASSERT_TRUE(
        makeStandardWorkload(w, standardWorkloadDefaultTokens(w), cu, err));
    VarlenScheduleParams p = sectioned(16, 16);
    VarlenSchedule sec = build(cu, p);
    p.order = ScheduleOrder::LongestFirst;
    VarlenSchedule lpt = build(cu, p);
    double sectionSpan = simulatePersistentGrid(sec.costs, 132).makespan;
    double lptSpan = simulatePersistentGrid(lpt.costs, 132).makespan;
    EXPECT_LE(sectionSpan, 1.02 * lptSpan) << standardWorkloadName(w);
  }
}

// Key-tile items take the same order, one item per kv head.
TEST(L2Sections, KeyTileItems) {
  VarlenScheduleParams p = sectioned(4, 2);
  p.sectionBytesPerToken = 1;
  p.l2SectionBytes = 600;
  std::vector<int32_t> cu = {0, 300, 600};
  VarlenSchedule s;
  std::string err;
  ASSERT_TRUE(buildKvTileSchedule(cu.data(), cu.size(), p, s, err)) << err;
  EXPECT_TRUE(checkKvTileSchedule(s, err)) << err;
  ASSERT_EQ(s.items.size(), 12u);
  // Both 300-token documents, 2 pairs of 300 bytes per section.
  EXPECT_EQ(s.sectionBegins, (std::vector<size_t>{0, 6}));
  EXPECT_EQ(pairsIn(s, 0, 6),
            (std::set<std::pair<int32_t, int32_t>>{{0, 0}, {0, 1}}));
}

TEST(L2Sections, CheckCatchesBrokenSections) {
  VarlenScheduleParams p = sectioned(2, 2);
  p.sectionBytesPerToken = 1;
  p.l2SectionBytes = 560;
  const VarlenSchedule good = build({0, 300, 300, 350, 606}, p);
  std::string err;

  VarlenSchedule s = good;
  std::swap(s.costs[3], s.costs[4]);
  EXPECT_FALSE(checkL2Sections(s, err));
  EXPECT_EQ(err.rfind("section 1 is not in LPT order: item 4 costs", 0), 0u)
      << err;

  // (doc 0, h1) split over sections 0 and 1.
  s = good;
  s.sectionBegins[1] = 4;
  EXPECT_FALSE(checkL2Sections(s, err));
  EXPECT_NE(err.find("is in sections 0 and 1"), std::string::npos) << err;

  s = good;
  s.params.l2SectionBytes = 500;
  EXPECT_FALSE(checkVarlenSchedule(s, err));
  EXPECT_EQ(err, "section 1 holds 556 bytes in 2 pairs, more than the 500 "
                 "allowed");

  s = good;
  s.sectionBegins = {3, 8};
  EXPECT_FALSE(checkL2Sections(s, err));
  EXPECT_EQ(err, "the first section does not start at item 0");
  s.sectionBegins = {0, 8, 8};
  EXPECT_FALSE(checkL2Sections(s, err));
  EXPECT_EQ(err, "section 1 is empty or out of range");
}

TEST(L2Sections, BadParameters) {
  VarlenScheduleParams p = sectioned(1, 1);
  p.l2SectionBytes = 0;
  std::vector<int32_t> cu = {0, 100};
  VarlenSchedule s;
  std::string err;
  EXPECT_FALSE(buildVarlenSchedule(cu.data(), cu.size(), p, s, err));
  EXPECT_EQ(err, "L2 section bytes must be positive and bytes per token "
                 "non-negative, got 0 and 0");
  ScheduleOrder o;
  EXPECT_FALSE(parseScheduleOrder("l2", o, err));
  EXPECT_EQ(
      err,
      "unknown schedule order 'l2' (expected lpt, document or l2-sections)");
  // A kernel set runs in lpt or l2-sections order, never the baseline.
  EXPECT_FALSE(parseKernelScheduleOrder("document", o, err));
  EXPECT_EQ(err, "unknown order 'document' (expected lpt or l2-sections)");
  ASSERT_TRUE(parseKernelScheduleOrder("lpt", o, err));
  EXPECT_EQ(o, ScheduleOrder::LongestFirst);
  ASSERT_TRUE(parseScheduleOrder("l2-sections", o, err));
  EXPECT_EQ(o, ScheduleOrder::L2Sections);
  EXPECT_STREQ(scheduleOrderName(ScheduleOrder::LongestFirst), "lpt");
}
