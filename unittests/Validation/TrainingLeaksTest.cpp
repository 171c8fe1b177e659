//===- TrainingLeaksTest.cpp - L2 isolation with gradients ----------------===//
//
// checkTrainingLeaks with the CPU reference as the "kernels" (forward and
// backward per document by construction: isolated) passes, also with a
// document of NaNs; a run that adds another document's keys into a
// gradient, or changes nothing, fails naming the first output that moved.
//
//===----------------------------------------------------------------------===//
#include "flamia/Validation/Leaks.h"

#include "TrainingReference.h"

#include "flamia/Numerics/SyntheticInputs.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace flamia;
using namespace flamia::validation::device;
using namespace flamia::validation::device::test;

namespace {

/// Documents of 40, 0 and 60 tokens; Hq 2 over Hkv 1; D 32.
struct TrainingLeaks : ::testing::Test {
  OwnedBatch batch = makeBatch({0, 40, 40, 100}, 2, 1, 32);
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
    ASSERT_TRUE(referenceRecipe(makeManifest(32), recipe).ok());
  }

  /// The reference's forward and backward on q, k, v, grad_o.
  TrainingOutputs reference(const std::vector<uint16_t> &q,
                            const std::vector<uint16_t> &k,
                            const std::vector<uint16_t> &v,
                            const std::vector<uint16_t> &dO) {
    return referenceTrainingStep(batch, docs, recipe, q, k, v, dO);
  }

  TrainingOutputs base() {
    return reference(batch.q, batch.k, batch.v, gradO);
  }

  /// The reference on the perturbed batch; `leak` (if set) then adds the
  /// first key's dK of document 2 to document 0's last key (a key-tile item
  /// reading past its document).
  RunTrainingPerturbed kernel(bool leak = false) {
    return [=](const Perturbation &p, TrainingOutputs &out) {
      ++runs;
      std::vector<uint16_t> q = batch.q, k = batch.k, v = batch.v, dO = gradO;
      for (auto [x, H] : {std::pair{&q, batch.Hq}, {&k, batch.Hkv},
                          {&v, batch.Hkv}, {&dO, batch.Hq}}) {
        if (p.allNaN) {
          for (int64_t i = p.begin * H * batch.D; i < p.end * H * batch.D; ++i)
            (*x)[static_cast<size_t>(i)] = 0x7FC0;
        } else {
          numerics::perturbPackedBf16Tokens(*x, H, batch.D, p.begin, p.end,
                                            p.seed, true);
        }
      }
      out = reference(q, k, v, dO);
      if (leak)
        for (int64_t d = 0; d < batch.D; ++d)
          out.dk[39 * batch.D + d] += out.dk[40 * batch.D + d];
      return runtime::Status::success();
    };
  }
};

TEST_F(TrainingLeaks, TheReferenceIsIsolated) {
  std::vector<Check> checks;
  ASSERT_TRUE(checkTrainingLeaks(view, 5, base(), kernel(), checks).ok());
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_EQ(checks[0].name, "L2 isolation with gradients, doc 2 perturbed");
  EXPECT_EQ(checks[1].name, "L2 isolation with gradients, doc 0 perturbed");
  EXPECT_EQ(checks[2].name, "L2 isolation with gradients, doc 2 all NaN");
  for (const Check &c : checks)
    EXPECT_EQ(c.verdict, Verdict::Pass) << c.name << ": " << c.detail;
  // Doc 2 perturbed: the 40 tokens of doc 0 compared, each with O and dQ
  // (2 x 32 each), LSE (2), dK and dV (32 each).
  EXPECT_EQ(checks[0].compared, 40 * (64 + 2 + 64 + 32 + 32));
  EXPECT_EQ(checks[0].detail,
            "other documents bit-identical; 60 of 60 perturbed rows changed");
  EXPECT_EQ(checks[2].detail, "other documents bit-identical; 60 of 60 rows "
                              "changed");
  EXPECT_EQ(runs, 3);
}

TEST_F(TrainingLeaks, AGradientLeakFails) {
  std::vector<Check> checks;
  ASSERT_TRUE(checkTrainingLeaks(view, 5, base(), kernel(true), checks).ok());
  ASSERT_EQ(checks.size(), 3u);
  // Perturbing (or NaN-ing) doc 2 moves doc 0's last dK row.
  EXPECT_EQ(checks[0].verdict, Verdict::Fail);
  EXPECT_EQ(checks[0].detail,
            "32 outputs of other documents changed, first dK[t=39, h=0, d=0]");
  EXPECT_EQ(checks[2].verdict, Verdict::Fail);
  EXPECT_EQ(checks[2].maxAbsDiff, INFINITY);
  // Perturbing doc 0 moves only doc 0 itself: that run passes.
  EXPECT_EQ(checks[1].verdict, Verdict::Pass) << checks[1].detail;
}

TEST_F(TrainingLeaks, AVacuousRunFails) {
  const TrainingOutputs unchanged = base();
  std::vector<Check> checks;
  ASSERT_TRUE(checkTrainingLeaks(
                  view, 5, unchanged,
                  [&](const Perturbation &, TrainingOutputs &out) {
                    out = unchanged;
                    return runtime::Status::success();
                  },
                  checks)
                  .ok());
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_EQ(checks[0].verdict, Verdict::Fail);
  EXPECT_EQ(checks[0].detail,
            "the perturbation changed nothing (vacuous check)");
  EXPECT_EQ(checks[2].detail, "the NaNs changed nothing (vacuous check)");
}

TEST_F(TrainingLeaks, WrongSizesAndSingleDocuments) {
  std::vector<Check> checks;
  runtime::Status s = checkTrainingLeaks(
      view, 5, base(),
      [](const Perturbation &, TrainingOutputs &out) {
        out = TrainingOutputs();
        return runtime::Status::success();
      },
      checks);
  EXPECT_EQ(s.code, runtime::ErrorCode::Internal);
  EXPECT_EQ(s.message.substr(0, 56),
            "a perturbed training run returned arrays of the wrong si");
  // One non-empty document: nothing to isolate from.
  OwnedBatch one = makeBatch({0, 0, 50}, 1, 1, 32);
  BatchView v = one.view();
  checks.clear();
  ASSERT_TRUE(checkTrainingLeaks(v, 5, TrainingOutputs(), kernel(), checks).ok());
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].verdict, Verdict::Skip);
  EXPECT_EQ(checks[0].detail, "a single non-empty document");
  EXPECT_EQ(runs, 0);
}

} // namespace
