//===- LeaksTest.cpp - L1/L2 leak checks by perturbation ------------------===//
//
// checkLeaks with a host "kernel": a run whose changes stay inside the
// perturbed tokens passes with the documented counts; one that leaks into
// another document, or changes nothing, fails with the first output that
// moved.
//
//===----------------------------------------------------------------------===//
#include "flamia/Validation/Leaks.h"

#include "TestBatch.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace flamia;
using namespace flamia::validation::device;
using namespace flamia::validation::device::test;

namespace {

/// Documents of 40, 0 and 60 tokens; Hq 2, D 4 (10 outputs per token:
/// 8 of O, 2 of LSE).
struct Leaks : ::testing::Test {
  OwnedBatch batch = makeBatch({0, 40, 40, 100}, 2, 1, 4);
  BatchView view = batch.view();
  std::vector<uint16_t> o0 = std::vector<uint16_t>(100 * 2 * 4, 0);
  std::vector<float> l0 = std::vector<float>(2 * 100, 0.0f);
  std::vector<Perturbation> runs;

  /// A run: O and LSE of the perturbed tokens change to 1 (`inside`), and
  /// `leak` (if >= 0) is an O index outside that changes too.
  RunPerturbed kernel(bool inside = true, int64_t leak = -1) {
    return [=](const Perturbation &p, std::vector<uint16_t> &o,
               std::vector<float> &lse) {
      runs.push_back(p);
      o = o0;
      lse = l0;
      if (inside)
        for (int64_t t = p.begin; t < p.end; ++t) {
          for (int64_t i = 0; i < 8; ++i)
            o[t * 8 + i] = numerics::floatToBf16(1.0f);
          lse[t] = lse[100 + t] = 1.0f;
        }
      if (leak >= 0 && !(leak / 8 >= p.begin && leak / 8 < p.end))
        o[leak] = numerics::floatToBf16(p.allNaN ? NAN : 1.0f);
      return runtime::Status::success();
    };
  }
};

TEST_F(Leaks, DocumentsAndCuts) {
  EXPECT_EQ(leakCheckDocuments(view), (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(causalityCuts(60), (std::vector<int64_t>{0, 30, 31, 32, 45, 58}));
  EXPECT_EQ(causalityCuts(40), (std::vector<int64_t>{0, 20, 31, 32, 38}));
  EXPECT_EQ(causalityCuts(2), (std::vector<int64_t>{0}));
  EXPECT_TRUE(causalityCuts(1).empty());
}

TEST_F(Leaks, IsolatedRunsPass) {
  std::vector<Check> checks;
  ASSERT_TRUE(checkLeaks(view, true, 1, {o0.data(), l0.data()}, kernel(),
                         checks)
                  .ok());
  ASSERT_EQ(checks.size(), 5u);
  EXPECT_EQ(checks[0].name, "L1 causality, doc 2 (L=60)");
  EXPECT_EQ(checks[0].verdict, Verdict::Pass);
  // Cut c perturbs tokens 41 + c .. 99 and compares the 41 + c before
  // them: (41 + c) x 10 outputs per cut.
  EXPECT_EQ(checks[0].compared, (6 * 41 + 0 + 30 + 31 + 32 + 45 + 58) * 10);
  EXPECT_EQ(checks[0].compared, 4420);
  EXPECT_EQ(checks[0].detail,
            "6 cuts, bit-identical before each cut and outside the document; "
            ">= 1 perturbed rows changed");
  EXPECT_EQ(checks[1].name, "L1 causality, doc 0 (L=40)");
  EXPECT_EQ(checks[1].detail.substr(0, 7), "5 cuts,");
  EXPECT_EQ(checks[2].name, "L2 isolation, doc 2 perturbed");
  EXPECT_EQ(checks[2].verdict, Verdict::Pass);
  EXPECT_EQ(checks[2].compared, 400);
  EXPECT_EQ(checks[2].detail,
            "other documents bit-identical; 60 of 60 perturbed rows changed");
  EXPECT_EQ(checks[3].name, "L2 isolation, doc 0 perturbed");
  EXPECT_EQ(checks[3].compared, 600);
  // The first document gets no NaN run.
  EXPECT_EQ(checks[4].name, "L2 isolation, doc 2 all NaN");
  EXPECT_EQ(checks[4].detail,
            "other documents bit-identical; 60 of 60 rows changed");
  EXPECT_EQ(countFailures(checks), 0);

  // The runs asked for: 6 + 5 L1 cuts, 2 L2, 1 NaN; seeds from the run's.
  ASSERT_EQ(runs.size(), 14u);
  EXPECT_EQ(runs[0].begin, 41); // doc 2, cut 0
  EXPECT_EQ(runs[0].end, 100);
  EXPECT_EQ(runs[0].seed, 1000003u + 0);
  EXPECT_EQ(runs[1].seed, 1000003u + 30);
  EXPECT_EQ(runs[11].begin, 40); // L2, doc 2
  EXPECT_EQ(runs[11].seed, 7919u + 2);
  EXPECT_FALSE(runs[11].allNaN);
  EXPECT_TRUE(runs[13].allNaN);
}

TEST_F(Leaks, LeakIntoAnotherDocumentFails) {
  // Every run moves O[t=39, h=1, d=2] (doc 0's last token) unless it
  // perturbs that token itself.
  std::vector<Check> checks;
  ASSERT_TRUE(checkLeaks(view, true, 1, {o0.data(), l0.data()},
                         kernel(true, 39 * 8 + 1 * 4 + 2), checks)
                  .ok());
  ASSERT_EQ(checks.size(), 5u);
  EXPECT_EQ(checks[0].verdict, Verdict::Fail);
  EXPECT_EQ(checks[0].maxAbsDiff, 1.0);
  EXPECT_EQ(checks[0].detail,
            "cut 0: 1 outputs changed, first O[t=39, h=1, d=2]");
  // Doc 0's cuts all perturb token 39 itself: no leak seen.
  EXPECT_EQ(checks[1].verdict, Verdict::Pass);
  EXPECT_EQ(checks[2].verdict, Verdict::Fail);
  EXPECT_EQ(checks[2].detail,
            "1 outputs of other documents changed, first O[t=39, h=1, d=2]");
  EXPECT_EQ(checks[3].verdict, Verdict::Pass); // doc 0 covers token 39
  EXPECT_EQ(checks[4].verdict, Verdict::Fail);
  EXPECT_TRUE(std::isinf(checks[4].maxAbsDiff)); // a NaN leaked
  EXPECT_EQ(countFailures(checks), 3);
}

TEST_F(Leaks, VacuousRunsFail) {
  std::vector<Check> checks;
  ASSERT_TRUE(checkLeaks(view, true, 1, {o0.data(), l0.data()},
                         kernel(/*inside=*/false), checks)
                  .ok());
  EXPECT_EQ(checks[0].verdict, Verdict::Fail);
  EXPECT_EQ(checks[0].detail,
            "cut 0: the perturbation changed nothing (vacuous check)");
  EXPECT_EQ(checks[2].detail, "the perturbation changed nothing (vacuous check)");
  EXPECT_EQ(checks[4].detail, "the NaNs changed nothing (vacuous check)");
}

TEST_F(Leaks, SkipsAndErrors) {
  // Not causal: L1 rows are skipped; L2 runs.
  std::vector<Check> checks;
  ASSERT_TRUE(checkLeaks(view, false, 1, {o0.data(), l0.data()}, kernel(),
                         checks)
                  .ok());
  EXPECT_EQ(checks[0].verdict, Verdict::Skip);
  EXPECT_EQ(checks[0].detail, "the kernels are not causal");
  EXPECT_EQ(checks[2].verdict, Verdict::Pass);

  // No tokens: one Skip row.
  OwnedBatch empty = makeBatch({0, 0}, 2, 1, 4);
  checks.clear();
  ASSERT_TRUE(checkLeaks(empty.view(), true, 1, {nullptr, nullptr}, kernel(),
                         checks)
                  .ok());
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].name, "L1/L2 leak checks");
  EXPECT_EQ(checks[0].detail, "no tokens");

  // A failing run's error is returned.
  checks.clear();
  runtime::Status s = checkLeaks(
      view, true, 1, {o0.data(), l0.data()},
      [](const Perturbation &, std::vector<uint16_t> &, std::vector<float> &) {
        return runtime::Status::error(runtime::ErrorCode::CudaError, "boom");
      },
      checks);
  EXPECT_EQ(s.code, runtime::ErrorCode::CudaError);
  EXPECT_EQ(s.message, "boom");
}

TEST(CompareOutside, FirstChangeAndCounts) {
  OwnedBatch batch = makeBatch({0, 3, 5}, 1, 1, 2);
  std::vector<uint16_t> o0(10, 0), o1(10, 0);
  std::vector<float> l0(5, 0.0f), l1(5, 0.0f);
  o1[2 * 2 + 1] = numerics::floatToBf16(0.25f); // inside [2, 4)
  l1[4] = -3.0f;                                // LSE[h=0, t=4], outside
  LeakComparison c = compareOutside(batch.view(), {o0.data(), l0.data()},
                                    {o1.data(), l1.data()}, 2, 4);
  EXPECT_EQ(c.compared, 3 * 3); // tokens 0, 1, 4: 2 of O + 1 of LSE each
  EXPECT_EQ(c.differing, 1);
  EXPECT_EQ(c.changedInside, 1);
  EXPECT_EQ(c.maxAbs, 3.0);
  EXPECT_EQ(c.first, "LSE[h=0, t=4]");
}

} // namespace
