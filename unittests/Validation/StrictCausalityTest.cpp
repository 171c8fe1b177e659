//===- StrictCausalityTest.cpp - L3 of a training step by perturbation ----===//
//
// checkStrictCausality with the CPU reference as the "kernels": strict
// mxfp8 passes, plain mxfp8 fails (dO's 32x32 blocks in dP = dO V^T mix a
// token with later ones, K's in S = Q K^T with earlier ones), a backward
// fed the perturbed forward's O and LSE fails "dK, dV vs past" (so the check
// must hold them fixed), and a run that changes nothing is vacuous.
//
//===----------------------------------------------------------------------===//
#include "flamia/Validation/Leaks.h"

#include "TrainingReference.h"

#include "flamia/Numerics/SyntheticInputs.h"

#include "gtest/gtest.h"

using namespace flamia;
using namespace flamia::validation::device;
using namespace flamia::validation::device::test;

namespace {

/// Documents of 100, 0 and 70 tokens; Hq 2 over Hkv 1; D 32; a safe block
/// of 32, so that most pairs take the quantized path.
struct StrictCausality : ::testing::Test {
  OwnedBatch batch = makeBatch({0, 100, 100, 170}, 2, 1, 32);
  std::vector<uint16_t> gradO;
  BatchView view;
  DocumentLayout docs;
  numerics::RecipeConfig recipe;
  int runs = 0;

  void SetUp() override {
    gradO.assign(batch.q.rbegin(), batch.q.rend());
    view = batch.view();
    view.gradO = gradO.data();
    ASSERT_TRUE(documentsOf(view, docs).ok());
  }
  void useRecipe(bool strict) {
    runtime::Manifest m = makeManifest(32);
    m.recipe.safeBlock = 32;
    m.recipe.strict = strict;
    ASSERT_TRUE(referenceRecipe(m, recipe).ok());
  }

  /// The reference's forward on q, k, v, then its backward on grad_o with
  /// the forward's O and LSE, or with `given`'s.
  TrainingOutputs reference(const std::vector<uint16_t> &q,
                            const std::vector<uint16_t> &k,
                            const std::vector<uint16_t> &v,
                            const std::vector<uint16_t> &dO,
                            const TrainingOutputs *given = nullptr) {
    return referenceTrainingStep(batch, docs, recipe, q, k, v, dO, given);
  }
  TrainingOutputs base() { return reference(batch.q, batch.k, batch.v, gradO); }

  /// The reference on the perturbed batch, the backward given the base O
  /// and LSE when asked (unless `ignoreBase`).
  RunStrictPerturbed kernel(const TrainingOutputs &baseOut,
                            bool ignoreBase = false) {
    return [=, &baseOut](const Perturbation &p, bool baseOutputs,
                         TrainingOutputs &out) {
      ++runs;
      std::vector<uint16_t> q = batch.q, k = batch.k, v = batch.v, dO = gradO;
      for (auto [x, H] : {std::pair{&q, batch.Hq},
                          {&k, batch.Hkv},
                          {&v, batch.Hkv},
                          {&dO, batch.Hq}})
        numerics::perturbPackedBf16Tokens(*x, H, batch.D, p.begin, p.end,
                                          p.seed, true);
      out = reference(q, k, v, dO,
                      baseOutputs && !ignoreBase ? &baseOut : nullptr);
      return runtime::Status::success();
    };
  }
};

TEST_F(StrictCausality, StrictMxfp8Passes) {
  useRecipe(/*strict=*/true);
  const TrainingOutputs b = base();
  std::vector<Check> checks;
  ASSERT_TRUE(
      checkStrictCausality(view, /*causal=*/true, 3, b, kernel(b), checks)
          .ok());
  // The longest document (0) and the last (2), each in both directions.
  ASSERT_EQ(checks.size(), 4u);
  EXPECT_EQ(checks[0].name, "L3 dQ vs future, doc 0 (L=100)");
  EXPECT_EQ(checks[1].name, "L3 dK,dV vs past, doc 0 (L=100)");
  EXPECT_EQ(checks[2].name, "L3 dQ vs future, doc 2 (L=70)");
  EXPECT_EQ(checks[3].name, "L3 dK,dV vs past, doc 2 (L=70)");
  for (const Check &c : checks)
    EXPECT_EQ(c.verdict, Verdict::Pass) << c.name << ": " << c.detail;
  // Cuts of 100 tokens: 0, 31, 32, 45, 50, 98 (dK, dV: without 0).
  EXPECT_EQ(checks[0].detail,
            "dQ of tokens <= the cut bit-identical over 6 cuts");
  EXPECT_EQ(checks[1].detail,
            "dK, dV of tokens >= the cut bit-identical over 5 cuts");
  // dQ rows <= c of both heads: (1 + 32 + 33 + 46 + 51 + 99) x 64.
  EXPECT_EQ(checks[0].compared, 262 * 64);
  EXPECT_EQ(runs, 6 + 5 + 6 + 5);
}

TEST_F(StrictCausality, Mxfp8Fails) {
  useRecipe(/*strict=*/false);
  const TrainingOutputs b = base();
  std::vector<Check> checks;
  ASSERT_TRUE(
      checkStrictCausality(view, /*causal=*/true, 3, b, kernel(b), checks)
          .ok());
  ASSERT_EQ(checks.size(), 4u);
  // dQ vs future in both documents; dK, dV vs past where a cut's 32-token
  // K block gets a new scale (document 2's cut 31).
  EXPECT_EQ(checks[0].verdict, Verdict::Fail);
  EXPECT_EQ(checks[2].verdict, Verdict::Fail);
  EXPECT_EQ(checks[3].verdict, Verdict::Fail);
  EXPECT_NE(checks[0].detail.find("elements of dQ of tokens <= the cut "
                                  "changed, first dQ["),
            std::string::npos)
      << checks[0].detail;
  EXPECT_EQ(checks[3].detail, "64 elements of dK, dV of tokens >= the cut "
                              "changed, first dK[t=131, h=0, d=0] at cut 31");
}

TEST_F(StrictCausality, TheBackwardMustReadTheBaseForwardOutputs) {
  // Earlier tokens move O and LSE of later queries, which the backward of
  // later keys reads: fed the perturbed forward's, strict dK fails too.
  useRecipe(/*strict=*/true);
  const TrainingOutputs b = base();
  std::vector<Check> checks;
  ASSERT_TRUE(checkStrictCausality(view, true, 3, b,
                                   kernel(b, /*ignoreBase=*/true), checks)
                  .ok());
  ASSERT_EQ(checks.size(), 4u);
  EXPECT_EQ(checks[0].verdict, Verdict::Pass) << checks[0].detail;
  EXPECT_EQ(checks[1].verdict, Verdict::Fail);
}

TEST_F(StrictCausality, VacuousNonCausalAndWrongSizes) {
  useRecipe(/*strict=*/true);
  const TrainingOutputs b = base();
  std::vector<Check> checks;
  auto unchanged = [&](const Perturbation &, bool, TrainingOutputs &out) {
    out = b;
    return runtime::Status::success();
  };
  ASSERT_TRUE(checkStrictCausality(view, true, 3, b, unchanged, checks).ok());
  ASSERT_EQ(checks.size(), 4u);
  EXPECT_EQ(checks[0].verdict, Verdict::Fail);
  EXPECT_EQ(checks[0].detail,
            "the perturbation at cut 0 changed none of its own tokens' "
            "gradients (vacuous check)");
  checks.clear();
  ASSERT_TRUE(checkStrictCausality(view, false, 3, b, unchanged, checks).ok());
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].verdict, Verdict::Skip);
  EXPECT_EQ(checks[0].detail, "non-causal attention");
  runtime::Status s = checkStrictCausality(
      view, true, 3, b,
      [](const Perturbation &, bool, TrainingOutputs &out) {
        out = TrainingOutputs();
        return runtime::Status::success();
      },
      checks);
  EXPECT_EQ(s.code, runtime::ErrorCode::Internal);
  // A single token has no cut: both rows Skip.
  OwnedBatch one = makeBatch({0, 1}, 1, 1, 32);
  checks.clear();
  ASSERT_TRUE(
      checkStrictCausality(one.view(), true, 3, b, unchanged, checks).ok());
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0].verdict, Verdict::Skip);
  EXPECT_EQ(checks[0].detail, "a document of fewer than 2 tokens");
}

} // namespace
