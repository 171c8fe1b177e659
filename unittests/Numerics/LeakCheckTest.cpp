//===- LeakCheckTest.cpp - L1/L2/L3 hold, and leaky variants are caught -*- C++ -*-===//
//
// The same perturbation checks pass bit for bit on recipe mxfp8 and catch
// each deliberately leaky variant.
//
//===----------------------------------------------------------------------===//
#include "flamia/Numerics/LeakCheck.h"

#include "gtest/gtest.h"

using namespace flamia::numerics;
using flamia::DocumentLayout;

namespace {

/// Documents whose boundaries are not multiples of 32 (so packed blocks
/// straddle them), one longer than the safe block, one zero-length.
AttentionTensors problem(InputKind kind = InputKind::Outlier) {
  DocumentLayout docs;
  EXPECT_TRUE(DocumentLayout::fromCuSeqlens({0, 300, 345, 345, 560}, 560, docs).ok());
  return makeSyntheticInputs(docs, 2, 1, 64, kind, 42);
}

LeakCheckReport check(const char *recipeName, LeakCheckOptions options,
                      const AttentionTensors &t = problem()) {
  RecipeConfig r;
  EXPECT_TRUE(recipeFromName(recipeName, r).ok());
  LeakCheckReport report;
  Status s = runLeakCheck(t, r, options, report);
  EXPECT_TRUE(s.ok()) << s.message;
  return report;
}

const PropertyResult &result(const LeakCheckReport &r, const std::string &name) {
  for (const PropertyResult &p : r.results)
    if (p.name == name)
      return p;
  static PropertyResult none;
  ADD_FAILURE() << "no result " << name;
  return none;
}

TEST(LeakCheck, Mxfp8PassesL1L2AndConsistency) {
  LeakCheckReport r = check("mxfp8", LeakCheckOptions());
  const PropertyResult &l1 = result(r, "L1");
  EXPECT_EQ(l1.verdict(), "L1: PASS");
  // 8 cuts in document 0, 3 in document 1 (length 45), 8 in document 3,
  // four perturbed runs each.
  EXPECT_EQ(l1.runs, (8 + 3 + 8) * 4);
  EXPECT_EQ(result(r, "L2").verdict(), "L2: PASS");
  EXPECT_EQ(result(r, "L2").runs, 3 * 5);
  EXPECT_EQ(result(r, "Consistency").verdict(), "Consistency: PASS");
  EXPECT_TRUE(r.pass());
  // The log says what was compared.
  bool found = false;
  for (const std::string &line : l1.log)
    found |= line ==
             "L1 doc 0 cut t=127: perturbed K[t=128, d=3] (outlier): compared "
             "O[t=0..127] (16384 elements), LSE[t=0..127] (256 elements): max "
             "|diff| 0";
  EXPECT_TRUE(found);
}

TEST(LeakCheck, TokenBlockQIsCaughtByL1) {
  LeakCheckOptions o;
  o.checkL2 = o.checkConsistency = false;
  LeakCheckReport r = check("leaky-token-block-q", o);
  const PropertyResult &l1 = result(r, "L1");
  EXPECT_FALSE(l1.pass);
  // The first leak: query 128 (its block-mate 129 carries the outlier) reads
  // the 32x32 Q block [128, 160) for its keys outside the safe block.
  EXPECT_EQ(l1.verdict().substr(0, 45),
            "L1: FAIL (first differing output: O[t=128, h=");
  EXPECT_NE(l1.firstDifference.find("after perturbing Q[t=129, d="),
            std::string::npos)
      << l1.firstDifference;
  EXPECT_FALSE(r.pass());
}

TEST(LeakCheck, NoSafeBlockIsCaughtByL1) {
  LeakCheckOptions o;
  o.checkL2 = o.checkConsistency = false;
  LeakCheckReport r = check("leaky-no-safe-block", o);
  const PropertyResult &l1 = result(r, "L1");
  EXPECT_FALSE(l1.pass);
  // Already at cut 0: key 1's outlier sets the scale of K block [0, 32), so
  // query 0's score (hence LSE; its O is V_0 whatever the score) changes.
  EXPECT_EQ(l1.firstDifference.substr(0, 14), "LSE[h=0, t=0] ")
      << l1.firstDifference;
  EXPECT_NE(l1.firstDifference.find("after perturbing K[t=1, d=10]"),
            std::string::npos)
      << l1.firstDifference;
}

TEST(LeakCheck, PackedBlocksAreCaughtByL2) {
  LeakCheckOptions o;
  o.checkL1 = o.checkConsistency = false;
  LeakCheckReport r = check("leaky-packed-blocks", o);
  EXPECT_FALSE(result(r, "L2").pass);
  // mxfp8 itself, same inputs: isolated.
  EXPECT_TRUE(result(check("mxfp8", o), "L2").pass);
}

TEST(LeakCheck, BaselinesLeak) {
  LeakCheckOptions o;
  o.checkConsistency = false;
  o.cutOffsets = {150};
  LeakCheckOptions l1Only = o;
  l1Only.checkL2 = false;
  EXPECT_FALSE(result(check("plain-mxfp8", l1Only), "L1").pass);
  LeakCheckReport pt = check("per-tensor-fp8", o);
  EXPECT_FALSE(result(pt, "L1").pass);
  EXPECT_FALSE(result(pt, "L2").pass);
}

TEST(LeakCheck, StrictPassesL3AndDefaultFailsIt) {
  LeakCheckOptions o;
  o.checkL1 = o.checkL2 = o.checkConsistency = false;
  o.checkL3 = true;
  o.cutOffsets = {150};
  DocumentLayout docs;
  ASSERT_TRUE(DocumentLayout::fromCuSeqlens({0, 200, 245, 245, 405}, 405, docs).ok());
  AttentionTensors t = makeSyntheticInputs(docs, 2, 1, 64, InputKind::Outlier, 7);
  LeakCheckReport strict = check("mxfp8-strict", o, t);
  EXPECT_EQ(result(strict, "L3").verdict(), "L3: PASS");
  // Cuts: one in documents 0 and 3 against the future (dQ), the same
  // against the past (dK, dV); six outliers and one random run each.
  EXPECT_EQ(result(strict, "L3").runs, 2 * 2 * 7);
  LeakCheckReport plain = check("mxfp8", o, t);
  const PropertyResult &l3 = result(plain, "L3");
  EXPECT_FALSE(l3.pass);
  // The concrete pair: dQ of query 128 changes when dO at 151 changes: they
  // share the 32x32 dO block [128, 160) used for dP against keys < 128.
  EXPECT_EQ(l3.firstDifference.substr(0, 14), "dQ[t=128, h=0,") << l3.firstDifference;
  EXPECT_NE(l3.firstDifference.find("after perturbing dO[t=151"),
            std::string::npos)
      << l3.firstDifference;
}

TEST(LeakCheck, Float64ReferenceIsIsolatedAndNonCausalSkipsL1) {
  LeakCheckOptions o;
  o.cutOffsets = {31};
  LeakCheckReport r = check("none", o);
  EXPECT_EQ(result(r, "L1").verdict(), "L1: PASS");
  EXPECT_EQ(result(r, "L2").verdict(), "L2: PASS");
  EXPECT_FALSE(result(r, "Consistency").checked);
  EXPECT_TRUE(r.pass());
  AttentionTensors t = problem(InputKind::Random);
  t.causal = false;
  LeakCheckReport nc = check("mxfp8", o, t);
  EXPECT_EQ(result(nc, "L1").verdict(), "L1: SKIPPED (non-causal attention)");
  EXPECT_EQ(result(nc, "L2").verdict(), "L2: PASS");
  EXPECT_EQ(result(nc, "Consistency").verdict(), "Consistency: PASS");
}

} // namespace
