//===- WorkspaceTest.cpp - Buffer sizes and the arena layout --------------===//

#include "flamia/Runtime/Workspace.h"

#include "TestArtifacts.h"

#include <gtest/gtest.h>

using namespace flamia::runtime;
using namespace flamia::runtime::test;

namespace {

SymbolValues smallBatch() {
  // cu_seqlens [0, 5, 5, 70], Hq 4, Hkv 2: NB = 1 + 0 + 3, 2 tiles x 4 heads.
  SymbolValues s;
  s.set(Symbol::T, 70);
  s.set(Symbol::Hq, 4);
  s.set(Symbol::Hkv, 2);
  s.set(Symbol::D, 128);
  s.set(Symbol::NumDocs, 3);
  s.set(Symbol::NB, 4);
  s.set(Symbol::NumItems, 8);
  s.set(Symbol::NumSms, 132);
  return s;
}

TEST(Workspace, SizesAndArenaOffsetsOfTheStandardManifest) {
  Manifest m;
  ASSERT_TRUE(parseManifest(standardManifest(), m).ok());
  BufferPlan plan;
  Status s = planBuffers(m, smallBatch(), plan);
  ASSERT_TRUE(s.ok()) << s.message;
  auto at = [&](const char *name) { return m.findBuffer(name); };
  // Caller-owned buffers take no arena space.
  EXPECT_EQ(plan.bytes[at("q")], 70u * 4 * 128 * 2);
  EXPECT_EQ(plan.offsets[at("q")], kNotInArena);
  EXPECT_EQ(plan.bytes[at("k")], 70u * 2 * 128 * 2);
  EXPECT_EQ(plan.bytes[at("cu_seqlens")], 16u);
  EXPECT_EQ(plan.shapes[at("lse")], (std::vector<int64_t>{4, 70}));
  EXPECT_EQ(plan.bytes[at("lse")], 4u * 70 * 4);
  EXPECT_EQ(plan.offsets[at("o")], kNotInArena);
  // Workspace and schedule buffers, in manifest order, 256-byte aligned
  // (worked by hand: 35840 + 1120 -> 37120, + 32 -> 37376, + 71680 = 109056,
  // + 32 -> 109312, + 256 = 109568, + 4 -> 109824).
  EXPECT_EQ(plan.offsets[at("q_pt")], 0u);
  EXPECT_EQ(plan.bytes[at("q_pt")], 35840u);
  EXPECT_EQ(plan.offsets[at("q_pt_scales")], 35840u);
  EXPECT_EQ(plan.bytes[at("q_pt_scales")], 1120u);
  EXPECT_EQ(plan.offsets[at("k_tb_scales")], 37120u);
  EXPECT_EQ(plan.shapes[at("k_tb_scales")], (std::vector<int64_t>{4, 2, 4}));
  EXPECT_EQ(plan.offsets[at("q_deq")], 37376u);
  EXPECT_EQ(plan.bytes[at("q_deq")], 71680u);
  EXPECT_EQ(plan.offsets[at("block_info")], 109056u);
  EXPECT_EQ(plan.bytes[at("block_info")], 32u);
  EXPECT_EQ(plan.offsets[at("items")], 109312u);
  EXPECT_EQ(plan.bytes[at("items")], 256u);
  EXPECT_EQ(plan.offsets[at("counter")], 109568u);
  EXPECT_EQ(plan.bytes[at("counter")], 4u);
  EXPECT_EQ(plan.arenaBytes, 109824u);
  for (size_t i = 0; i < m.buffers.size(); ++i) {
    if (plan.offsets[i] != kNotInArena) {
      EXPECT_EQ(plan.offsets[i] % kWorkspaceAlignment, 0u) << m.buffers[i].name;
    }
  }
}

TEST(Workspace, EmptyBatchHasZeroSizedBuffers) {
  Manifest m;
  ASSERT_TRUE(parseManifest(standardManifest(), m).ok());
  SymbolValues s = smallBatch();
  s.set(Symbol::T, 0);
  s.set(Symbol::NB, 0);
  s.set(Symbol::NumItems, 0);
  BufferPlan plan;
  ASSERT_TRUE(planBuffers(m, s, plan).ok());
  EXPECT_EQ(plan.bytes[m.findBuffer("q_pt")], 0u);
  EXPECT_EQ(plan.bytes[m.findBuffer("counter")], 4u);
  // Empty buffers still get (distinct, aligned) offsets.
  EXPECT_EQ(plan.arenaBytes, 256u);
}

TEST(Workspace, NegativeSizesAndOverflowAreErrors) {
  bool found;
  std::string text = replaceOnce(
      standardManifest(), "\"D / 32\"], \"holds\": {\"part\": \"scales\", \"tensor\": \"q\"",
      "\"D / 32 - 5\"], \"holds\": {\"part\": \"scales\", \"tensor\": \"q\"", &found);
  ASSERT_TRUE(found);
  Manifest m;
  ASSERT_TRUE(parseManifest(text, m).ok());
  BufferPlan plan;
  Status s = planBuffers(m, smallBatch(), plan);
  EXPECT_EQ(s.code, ErrorCode::InvalidArgument);
  EXPECT_EQ(s.message, "buffer 'q_pt_scales' shape[2] 'D / 32 - 5' is -1 "
                       "(negative size)");

  text = replaceOnce(
      standardManifest(),
      "\"shape\": [\"T\", \"Hq\", \"D\"], \"holds\": {\"part\": \"payload\", \"tensor\": \"q\"",
      "\"shape\": [\"T\", \"Hq\", \"D\", 4611686018427387904], "
      "\"holds\": {\"part\": \"payload\", \"tensor\": \"q\"",
      &found);
  ASSERT_TRUE(found);
  ASSERT_TRUE(parseManifest(text, m).ok());
  s = planBuffers(m, smallBatch(), plan);
  EXPECT_EQ(s.message, "buffer 'q_pt' has more elements than int64 holds");

  SymbolValues onlyT;
  onlyT.set(Symbol::T, 70);
  ASSERT_TRUE(parseManifest(standardManifest(), m).ok());
  s = planBuffers(m, onlyT, plan);
  EXPECT_EQ(s.message, "buffer 'q' shape[1]: symbol Hq has no value (in 'Hq')");
}

TEST(Workspace, ShapeString) {
  EXPECT_EQ(shapeString({}), "[]");
  EXPECT_EQ(shapeString({4096, 16, 128}), "[4096, 16, 128]");
}

} // namespace
