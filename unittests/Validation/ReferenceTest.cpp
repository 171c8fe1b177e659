//===- ReferenceTest.cpp - O and LSE vs the CPU references ----------------===//
//
// O equal to the CPU mxfp8 reference passes with rel L2 0; O past the
// tolerance (or with a NaN) fails with its rel L2 and worst position; the
// head choice and the comparisons give the documented numbers.
//
//===----------------------------------------------------------------------===//
#include "flamia/Validation/Reference.h"

#include "TestBatch.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace flamia;
using namespace flamia::validation::device;
using namespace flamia::validation::device::test;

namespace {

TEST(Compare, RelativeL2AndWorst) {
  // rel L2 = |(0, 0.04)| / |(3, 4)| = 0.008: within 1e-2.
  const float b[] = {3.0f, 4.0f}, within[] = {3.0f, 4.04f},
              past[] = {3.0f, 4.1f};
  Comparison c = compareO(within, b, 1, 1, 1, 1, 2);
  EXPECT_NEAR(c.relL2, 0.008, 1e-7);
  EXPECT_LE(c.relL2, kMaxRelL2O);
  EXPECT_NEAR(c.maxAbs, 0.04, 1e-6);
  EXPECT_EQ(c.worst, 1);
  EXPECT_EQ(c.compared, 2);
  c = compareO(past, b, 1, 1, 1, 1, 2); // 0.1 / 5 = 0.02
  EXPECT_NEAR(c.relL2, 0.02, 1e-7);
  EXPECT_GT(c.relL2, kMaxRelL2O);

  // A NaN is counted, not summed.
  const float withNaN[] = {NAN, 4.0f};
  c = compareO(withNaN, b, 1, 1, 1, 1, 2);
  EXPECT_EQ(c.nan, 1);
  EXPECT_EQ(c.relL2, 0.0);

  // LSE against a per-row tolerance: the largest |diff| / tolerance.
  const float la[] = {1.0f, 2.5f, 3.0f}, lb[] = {1.0f, 2.0f, 3.25f};
  const double tol[] = {1.0, 1.0, 0.125};
  c = compareLse(la, lb, 3, 1, tol);
  EXPECT_EQ(c.relL2, 2.0); // 0.25 / 0.125
  EXPECT_EQ(c.worst, 2);
  EXPECT_EQ(c.maxAbs, 0.5);
}

TEST(Compare, LseToleranceBound) {
  // One document of 2 tokens, 1 head, D 2: q = (1, -2) at t=0, (0.5, 0) at
  // t=1; k L1 norms 3 and 5. Causal: row 0 sees key 0, row 1 keys 0..1.
  const float q[] = {1, -2, 0.5f, 0}, k[] = {1, 2, -5, 0};
  const int32_t cu[] = {0, 2};
  std::vector<double> tol = lseTolerance(q, k, 2, 1, 1, 2, cu, 1, true, 0.5f);
  const double gamma = 2 * std::ldexp(1.0, -24);
  ASSERT_EQ(tol.size(), 2u);
  EXPECT_DOUBLE_EQ(tol[0], kMaxAbsLse + 2 * gamma * 0.5 * 2.0 * 3.0);
  EXPECT_DOUBLE_EQ(tol[1], kMaxAbsLse + 2 * gamma * 0.5 * 0.5 * 5.0);
  tol = lseTolerance(q, k, 2, 1, 1, 2, cu, 1, false, 0.5f);
  EXPECT_DOUBLE_EQ(tol[0], kMaxAbsLse + 2 * gamma * 0.5 * 2.0 * 5.0);
}

TEST(ReferenceHeads, ExplicitAutomaticAll) {
  OwnedBatch batch = makeBatch({0, 100, 300}, 8, 2, 64);
  const BatchView b = batch.view();
  std::string rule;
  EXPECT_TRUE(validReferenceHeads(4, 8, 2, rule));
  EXPECT_FALSE(validReferenceHeads(3, 8, 2, rule));
  EXPECT_EQ(rule, "must be a multiple of Hq / Hkv = 4 and at most Hq = 8");
  EXPECT_FALSE(validReferenceHeads(12, 8, 2, rule));
  ReferenceOptions o;
  o.heads = 0;
  EXPECT_EQ(referenceHeads(b, true, o), 8);
  o.heads = 4;
  EXPECT_EQ(referenceHeads(b, true, o), 4);
  // Causal: (100^2 + 200^2) x 64 = 3.2e6 multiply-adds per head; a budget
  // of one GQA group (4 heads) and a bit more gives one group.
  o.heads = -1;
  o.budget = 4 * 3.2e6 * 1.5;
  EXPECT_EQ(referenceHeads(b, true, o), 4);
  o.budget = 8 * 3.2e6;
  EXPECT_EQ(referenceHeads(b, true, o), 8);
  o.budget = 1.0; // at least one group
  EXPECT_EQ(referenceHeads(b, true, o), 4);
  EXPECT_EQ(referenceHeads(b, false, ReferenceOptions{-1, 8 * 3.2e6, 0}), 4);
}

struct ReferenceCheck : ::testing::Test {
  // Three documents (one empty), Hq 4, Hkv 2, D 64.
  OwnedBatch batch = makeBatch({0, 45, 45, 130}, 4, 2, 64);
  runtime::Manifest manifest = makeManifest(64);
  ReferenceOptions options;
  ReferenceArrays ref; // the references, from a first call

  void SetUp() override {
    options.heads = 0;
    options.softmaxScale = 0.125f; // 1 / sqrt(64)
    std::vector<uint16_t> o(static_cast<size_t>(130 * 4 * 64), 0);
    std::vector<float> lse(130 * 4, 0.0f);
    std::vector<Check> checks;
    ASSERT_TRUE(checkReference(batch.view(), manifest, options,
                               {o.data(), lse.data()}, checks, &ref)
                    .ok());
    ASSERT_FALSE(ref.skipped);
    ASSERT_EQ(ref.heads, 4);
    ASSERT_EQ(ref.refO.size(), o.size());
    ASSERT_EQ(ref.refLse.size(), lse.size());
  }

  /// The five checks for O = `scale` x the mxfp8 reference (bf16 of it),
  /// LSE = the reference's.
  std::vector<Check> run(float scale, bool nan = false) {
    std::vector<uint16_t> o(ref.refO.size());
    for (size_t i = 0; i < o.size(); ++i)
      o[i] = numerics::floatToBf16(ref.refO[i] * scale);
    if (nan)
      o[(7 * 4 + 2) * 64 + 1] = 0x7FC0;
    std::vector<Check> checks;
    EXPECT_TRUE(checkReference(batch.view(), manifest, options,
                               {o.data(), ref.refLse.data()}, checks)
                    .ok());
    return checks;
  }
};

TEST_F(ReferenceCheck, EqualToTheMxfp8ReferencePasses) {
  std::vector<Check> c = run(1.0f);
  ASSERT_EQ(c.size(), 5u);
  EXPECT_EQ(c[0].name, "O vs CPU mxfp8 reference");
  EXPECT_EQ(c[0].verdict, Verdict::Pass);
  EXPECT_EQ(c[0].compared, 130 * 4 * 64);
  EXPECT_EQ(c[0].maxAbsDiff, 0.0);
  EXPECT_EQ(c[0].detail, "rel L2 0 (<= 0.01)");
  EXPECT_EQ(c[1].name, "LSE vs CPU mxfp8 reference");
  EXPECT_EQ(c[1].verdict, Verdict::Pass);
  EXPECT_EQ(c[1].compared, 130 * 4);
  EXPECT_EQ(c[1].detail.rfind("|diff| / tolerance <= 0 (tolerance 0.001", 0),
            0u)
      << c[1].detail;
  EXPECT_EQ(c[2].verdict, Verdict::Info);
  EXPECT_EQ(c[3].verdict, Verdict::Info);
  // The GPU is the mxfp8 reference: ratio 0, whichever verdict the
  // recipe's own error gives the row.
  EXPECT_NE(c[4].verdict, Verdict::Fail);
  EXPECT_EQ(countFailures(c), 0);
}

TEST_F(ReferenceCheck, TwiceTheReferenceFails) {
  // O x 2 exactly (bf16): sum (2y - y)^2 / sum y^2 = 1.
  std::vector<Check> c = run(2.0f);
  EXPECT_EQ(c[0].verdict, Verdict::Fail);
  EXPECT_EQ(c[0].detail.rfind("rel L2 1 (<= 0.01), worst at [t=", 0), 0u)
      << c[0].detail;
  double maxRef = 0;
  for (float y : ref.refO)
    maxRef = std::max(maxRef, std::fabs(static_cast<double>(y)));
  EXPECT_EQ(c[0].maxAbsDiff, maxRef);
  EXPECT_EQ(c[1].verdict, Verdict::Pass); // LSE unchanged
  EXPECT_GE(countFailures(c), 1);
}

TEST_F(ReferenceCheck, WithinTolerancePassesPastFails) {
  // 1 + 2^-8: rel L2 about 0.0039 (bf16 rounding of each element moves it
  // a little), within 0.01; 1 + 2^-5: about 0.031, past it.
  std::vector<Check> c = run(1.0f + 1.0f / 256);
  EXPECT_EQ(c[0].verdict, Verdict::Pass) << c[0].detail;
  c = run(1.0f + 1.0f / 32);
  EXPECT_EQ(c[0].verdict, Verdict::Fail) << c[0].detail;
}

TEST_F(ReferenceCheck, NaNFails) {
  std::vector<Check> c = run(1.0f, /*nan=*/true);
  EXPECT_EQ(c[0].verdict, Verdict::Fail);
  EXPECT_EQ(c[0].detail, "rel L2 0 (<= 0.01), 1 NaN");
}

TEST_F(ReferenceCheck, HeadSubsetNamedInTheDetail) {
  options.heads = 2;
  std::vector<Check> c = run(1.0f);
  EXPECT_EQ(c[0].compared, 130 * 2 * 64);
  EXPECT_EQ(c[0].detail, "rel L2 0 (<= 0.01) (query heads 0..1 of 4)");
  EXPECT_EQ(c[1].compared, 130 * 2);
}

TEST_F(ReferenceCheck, InvalidHeadsAndTheManifestsRecipe) {
  options.heads = 3;
  std::vector<uint16_t> o(ref.refO.size());
  std::vector<Check> checks;
  runtime::Status s = checkReference(batch.view(), manifest, options,
                                     {o.data(), ref.refLse.data()}, checks);
  EXPECT_EQ(s.code, runtime::ErrorCode::InvalidArgument);
  EXPECT_EQ(s.message, "reference heads 3 must be a multiple of Hq / Hkv = 2 "
                       "and at most Hq = 4");
  // The check computes the manifest's recipe: the mxfp8 reference's own
  // outputs pass an mxfp8 check and fail an nvfp4-mixed one (NVFP4 Q and K).
  // These documents (45 and 85 tokens) fit in one safe block of 128, where
  // both recipes are bf16: without a safe block they differ.
  options.heads = 0;
  manifest.recipe.safeBlock = 0;
  ReferenceArrays mx;
  ASSERT_TRUE(checkReference(batch.view(), manifest, options,
                             {o.data(), ref.refLse.data()}, checks, &mx)
                  .ok());
  for (size_t i = 0; i < o.size(); ++i)
    o[i] = numerics::floatToBf16(mx.refO[i]);
  checks.clear();
  ASSERT_TRUE(checkReference(batch.view(), manifest, options,
                             {o.data(), mx.refLse.data()}, checks)
                  .ok());
  EXPECT_EQ(checks[0].name, "O vs CPU mxfp8 reference");
  EXPECT_EQ(checks[0].verdict, Verdict::Pass) << checks[0].detail;
  manifest.recipe.kind = runtime::kRecipeNvfp4Mixed;
  checks.clear();
  ASSERT_TRUE(checkReference(batch.view(), manifest, options,
                             {o.data(), mx.refLse.data()}, checks)
                  .ok());
  ASSERT_EQ(checks.size(), 5u);
  EXPECT_EQ(checks[0].name, "O vs CPU nvfp4-mixed reference");
  EXPECT_EQ(checks[0].verdict, Verdict::Fail) << checks[0].detail;
  // Every row names the recipe it compares with.
  EXPECT_EQ(checks[1].name, "LSE vs CPU nvfp4-mixed reference");
  EXPECT_EQ(checks[3].name, "O: nvfp4-mixed ref vs float64 ref");
  EXPECT_EQ(checks[4].name, "O: closer to nvfp4-mixed than to float64");
}

} // namespace
