//===- GradientsTest.cpp - dQ, dK, dV and delta vs the CPU reference ------===//
//
// The backward's checks on host arrays: the reference's own gradients pass
// with rel L2 0, a perturbed one fails with its position; delta is the exact
// sum (not fp32's left-to-right one) and is compared bit for bit; copies of
// grad_o are found by "holds" like those of q, k, v.
//
//===----------------------------------------------------------------------===//
#include "flamia/Validation/Gradients.h"

#include "flamia/Validation/QuantizedCopies.h"

#include "TrainingReference.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <map>

using namespace flamia;
using namespace flamia::validation::device;
using namespace flamia::validation::device::test;

namespace {

/// A training step's batch (grad_o with the batch's own LCG values, shifted)
/// and the "GPU" outputs: O and LSE of the CPU reference's forward (bf16 O),
/// and the reference backward's gradients from them.
struct Step {
  OwnedBatch batch;
  std::vector<uint16_t> gradO, o;
  std::vector<float> lse, dq, dk, dv;

  BatchView view() const {
    BatchView b = batch.view();
    b.gradO = gradO.data();
    return b;
  }
  OutputsView outputs() const { return {o.data(), lse.data()}; }
  GradientsView gradients() const { return {dq.data(), dk.data(), dv.data()}; }
};

Step makeStep(std::vector<int32_t> cu, int64_t Hq, int64_t Hkv, int64_t D,
              bool causal = true) {
  Step s;
  s.batch = makeBatch(cu, Hq, Hkv, D);
  // grad_o: q's values, reversed (deterministic, not equal to any input).
  s.gradO.assign(s.batch.q.rbegin(), s.batch.q.rend());
  DocumentLayout docs;
  EXPECT_TRUE(documentsOf(s.batch.view(), docs).ok());
  numerics::RecipeConfig recipe;
  EXPECT_TRUE(referenceRecipe(makeManifest(D, causal), recipe).ok());
  TrainingOutputs out =
      referenceTrainingStep(s.batch, docs, recipe, s.batch.q, s.batch.k,
                            s.batch.v, s.gradO, nullptr, causal);
  s.o = std::move(out.o);
  s.lse = std::move(out.lse);
  s.dq = std::move(out.dq);
  s.dk = std::move(out.dk);
  s.dv = std::move(out.dv);
  return s;
}

ReferenceOptions allHeads() {
  ReferenceOptions o;
  o.heads = 0;
  return o;
}

TEST(Delta, IsTheExactSumRoundedOnce) {
  // dO = (1, 2^-30, -1), O = (1, 1, 1): fp32 left to right gives
  // (1 + 2^-30) - 1 = 0; the exact sum is 2^-30.
  const uint16_t dO[] = {numerics::floatToBf16(1.0f),
                         numerics::floatToBf16(std::ldexp(1.0f, -30)),
                         numerics::floatToBf16(-1.0f)};
  const uint16_t o[] = {numerics::floatToBf16(1.0f),
                        numerics::floatToBf16(1.0f),
                        numerics::floatToBf16(1.0f)};
  std::vector<float> d = referenceDelta(dO, o, 1, 1, 3);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0], std::ldexp(1.0f, -30));
  // [Hq, T] order: T = 1, Hq = 3 heads of D = 1 each.
  d = referenceDelta(dO, o, 1, 3, 1);
  EXPECT_EQ(d, (std::vector<float>{1.0f, std::ldexp(1.0f, -30), -1.0f}));
  // Two tokens, one head: delta[0, t].
  const uint16_t two[] = {numerics::floatToBf16(2.0f),
                          numerics::floatToBf16(-3.0f)};
  d = referenceDelta(two, two, 2, 1, 1);
  EXPECT_EQ(d, (std::vector<float>{4.0f, 9.0f}));
}

// The debug build's S check: the keys inside each document, bit for bit;
// NaN (the fill) is an unwritten entry, columns past a document's end are
// not compared.
TEST(RecomputedScores, KeysInsideTheDocumentBitForBit) {
  // Documents of 3 and 1 tokens, Hq = 2, blockN = 4: T x Hq x 4 floats.
  const std::vector<int32_t> cu = {0, 3, 4};
  const int64_t Hq = 2, bn = 4;
  std::vector<float> fwd(4 * Hq * bn), bwd;
  for (size_t i = 0; i < fwd.size(); ++i)
    fwd[i] = 0.25f * static_cast<float>(i) - 3.0f;
  bwd = fwd;
  // Past the ends (column 3 of document 0, columns 1-3 of document 1): the
  // forward reads the next document's keys, the dQ kernel zeros.
  for (int64_t t = 0; t < 4; ++t)
    for (int64_t h = 0; h < Hq; ++h)
      for (int64_t c = t < 3 ? 3 : 1; c < bn; ++c)
        bwd[(t * Hq + h) * bn + c] = 0.0f;
  Check c = checkRecomputedScores(fwd.data(), bwd.data(), fwd.size(), cu, Hq, bn);
  EXPECT_EQ(c.verdict, Verdict::Pass) << c.detail;
  EXPECT_EQ(c.compared, 3 * 2 * 3 + 1 * 2 * 1);
  EXPECT_EQ(c.detail, "bit-identical");
  // One ulp at [t=1, h=1, key=2]; an entry the dQ kernel never wrote.
  bwd[(1 * Hq + 1) * bn + 2] = std::nextafter(fwd[(1 * Hq + 1) * bn + 2], 100.0f);
  bwd[(3 * Hq + 0) * bn + 0] = std::nanf("");
  c = checkRecomputedScores(fwd.data(), bwd.data(), fwd.size(), cu, Hq, bn);
  EXPECT_EQ(c.verdict, Verdict::Fail);
  EXPECT_EQ(c.detail.substr(0, 52), "1 unwritten, 1 of 19 differ; first [t=1, h=1, key=2]");
  c = checkRecomputedScores(fwd.data(), bwd.data(), 8, cu, Hq, bn);
  EXPECT_EQ(c.verdict, Verdict::Fail);
  EXPECT_EQ(c.detail, "the buffers have 8 floats, T x Hq x 4 = 32 expected");
}

TEST(Delta, BitForBit) {
  const std::vector<float> ref = {1.0f, -2.5f, 0.0f, 3.0f, 7.0f, 0.125f};
  std::vector<uint8_t> gpu(ref.size() * 4);
  memcpy(gpu.data(), ref.data(), gpu.size());
  Check c = checkDelta("delta", ref, gpu.data(), gpu.size(), 3, 2);
  EXPECT_EQ(c.name, "delta (delta = rowsum(dO * O), f32)");
  EXPECT_EQ(c.verdict, Verdict::Pass);
  EXPECT_EQ(c.compared, 6);
  EXPECT_EQ(c.detail, "bit-identical");
  // One ulp off at [h=1, t=1] (index 4 of [Hq = 2, T = 3]).
  float off = std::nextafter(7.0f, 8.0f);
  memcpy(gpu.data() + 16, &off, 4);
  // -0 where the reference has +0: bits differ.
  float negZero = -0.0f;
  memcpy(gpu.data() + 8, &negZero, 4);
  c = checkDelta("delta", ref, gpu.data(), gpu.size(), 3, 2);
  EXPECT_EQ(c.verdict, Verdict::Fail);
  EXPECT_EQ(c.detail.substr(0, 52),
            "2 of 6 differ; first [h=0, t=2] gpu -0 ref 0; max re");
  EXPECT_NEAR(c.maxAbsDiff, std::ldexp(1.0, -21), 1e-12);
  c = checkDelta("delta", ref, gpu.data(), 20, 3, 2);
  EXPECT_EQ(c.verdict, Verdict::Fail);
  EXPECT_EQ(c.detail, "the buffer has 20 bytes, the reference 24 (Hq x T f32)");
}

TEST(GradientsWritten, CountsNaN) {
  std::vector<float> dq(6, 1.0f), dk(4, 0.5f), dv(4, -1.0f);
  Check c = checkGradientsWritten({dq.data(), dk.data(), dv.data()}, 6, 4);
  EXPECT_EQ(c.name, "gradients written (no NaN)");
  EXPECT_EQ(c.verdict, Verdict::Pass);
  EXPECT_EQ(c.compared, 14);
  dk[3] = NAN;
  dv[0] = dv[1] = NAN;
  c = checkGradientsWritten({dq.data(), dk.data(), dv.data()}, 6, 4);
  EXPECT_EQ(c.verdict, Verdict::Fail);
  EXPECT_EQ(c.detail, "NaN: dQ 0, dK 1, dV 2");
}

TEST(GradientValues, Bf16AndF32) {
  const float f[] = {1.5f, -2.0f};
  std::vector<float> out = gradientValues(reinterpret_cast<const uint8_t *>(f),
                                          2, runtime::DType::F32);
  EXPECT_EQ(out, (std::vector<float>{1.5f, -2.0f}));
  const uint16_t b[] = {numerics::floatToBf16(0.75f),
                        numerics::floatToBf16(-3.0f)};
  out = gradientValues(reinterpret_cast<const uint8_t *>(b), 2,
                       runtime::DType::BF16);
  EXPECT_EQ(out, (std::vector<float>{0.75f, -3.0f}));
  EXPECT_TRUE(gradientValues(reinterpret_cast<const uint8_t *>(b), 2,
                             runtime::DType::U8)
                  .empty());
}

// Documents of 70, 0 and 150 tokens (the second crosses the 128 safe block),
// GQA 4 over 2, D 64.
TEST(Gradients, TheReferencesOwnGradientsPass) {
  Step s = makeStep({0, 70, 70, 220}, 4, 2, 64);
  std::vector<Check> checks;
  GradientArrays arrays;
  ASSERT_TRUE(checkGradients(s.view(), makeManifest(64), allHeads(),
                             s.outputs(), s.gradients(), checks, &arrays)
                  .ok());
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_EQ(checks[0].name, "dQ vs CPU mxfp8 reference");
  EXPECT_EQ(checks[1].name, "dK vs CPU mxfp8 reference");
  EXPECT_EQ(checks[2].name, "dV vs CPU mxfp8 reference");
  for (const Check &c : checks) {
    EXPECT_EQ(c.verdict, Verdict::Pass) << c.name << ": " << c.detail;
    EXPECT_EQ(c.maxAbsDiff, 0.0) << c.name;
    EXPECT_EQ(c.detail.substr(0, 19), "rel L2 0 (<= 0.01)") << c.detail;
    EXPECT_EQ(c.detail.find("ill-conditioned"), std::string::npos) << c.detail;
  }
  EXPECT_EQ(checks[0].compared, 220 * 4 * 64);
  EXPECT_EQ(checks[1].compared, 220 * 2 * 64);
  EXPECT_EQ(arrays.heads, 4);
  EXPECT_EQ(arrays.refDq, s.dq);
}

// With bf16 gradient buffers the row also reports the error against the
// reference rounded to bf16 (the kernel's own error, without the output's
// rounding): 0 for the reference's own gradients rounded, while the plain
// relative L2 shows the rounding.
TEST(Gradients, Bf16GradientsAreAlsoComparedWithTheRoundedReference) {
  Step s = makeStep({0, 70, 70, 220}, 4, 2, 64);
  for (std::vector<float> *g : {&s.dq, &s.dk, &s.dv})
    for (float &x : *g)
      x = numerics::roundToBf16(x);
  runtime::Manifest m = makeManifest(64);
  for (const char *name : {"dq", "dk", "dv"}) {
    runtime::ManifestBuffer b;
    b.name = name;
    b.role = runtime::BufferRole::Output;
    b.dtype = runtime::DType::BF16;
    m.buffers.push_back(b);
  }
  std::vector<Check> checks;
  ASSERT_TRUE(checkGradients(s.view(), m, allHeads(), s.outputs(),
                             s.gradients(), checks, nullptr)
                  .ok());
  ASSERT_EQ(checks.size(), 3u);
  for (const Check &c : checks) {
    EXPECT_EQ(c.verdict, Verdict::Pass) << c.name << ": " << c.detail;
    EXPECT_GT(c.maxAbsDiff, 0.0) << c.name;
    EXPECT_NE(c.detail.find("; vs the reference rounded to bf16: 0"),
              std::string::npos)
        << c.detail;
  }
  // f32 buffers (the default manifest here has none: not bf16) say nothing.
  checks.clear();
  ASSERT_TRUE(checkGradients(s.view(), makeManifest(64), allHeads(),
                             s.outputs(), s.gradients(), checks, nullptr)
                  .ok());
  for (const Check &c : checks)
    EXPECT_EQ(c.detail.find("rounded to bf16"), std::string::npos) << c.detail;
}

TEST(Gradients, APerturbedGradientFails) {
  Step s = makeStep({0, 70, 70, 220}, 4, 2, 64);
  // dK of one key (token 100, kv head 1) negated: a real bug's size.
  for (int64_t d = 0; d < 64; ++d)
    s.dk[(100 * 2 + 1) * 64 + d] *= -1.0f;
  // dV: one NaN.
  s.dv[(5 * 2 + 0) * 64 + 3] = NAN;
  std::vector<Check> checks;
  ASSERT_TRUE(checkGradients(s.view(), makeManifest(64), allHeads(),
                             s.outputs(), s.gradients(), checks)
                  .ok());
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_EQ(checks[0].verdict, Verdict::Pass);
  EXPECT_EQ(checks[1].verdict, Verdict::Fail) << checks[1].detail;
  EXPECT_NE(checks[1].detail.find("worst at [t=100, h=1, d="),
            std::string::npos)
      << checks[1].detail;
  EXPECT_EQ(checks[2].verdict, Verdict::Fail);
  EXPECT_NE(checks[2].detail.find(", 1 NaN"), std::string::npos)
      << checks[2].detail;
}

// The tolerance admits fp32-level differences of the inputs the GPU feeds
// the backward (its own LSE, here perturbed by 2^-20 relative, ~8 ulp) and
// rejects an LSE off by 0.1 (a wrong log-sum-exp: P off by 10%).
TEST(Gradients, ToleranceSeparatesRoundingFromBugs) {
  Step s = makeStep({0, 300}, 2, 1, 64);
  auto rerun = [&](float relative, float absolute) {
    Step t = s;
    for (size_t i = 0; i < t.lse.size(); ++i)
      t.lse[i] = t.lse[i] * (1.0f + (i % 2 ? relative : -relative)) + absolute;
    std::vector<Check> checks;
    EXPECT_TRUE(checkGradients(t.view(), makeManifest(64), allHeads(),
                               t.outputs(), s.gradients(), checks)
                    .ok());
    return checks;
  };
  std::vector<Check> rounding = rerun(std::ldexp(1.0f, -20), 0.0f);
  for (const Check &c : rounding)
    EXPECT_EQ(c.verdict, Verdict::Pass) << c.name << ": " << c.detail;
  std::vector<Check> bug = rerun(0.0f, 0.1f);
  EXPECT_EQ(countFailures(bug), 3);
  for (const Check &c : rounding)
    std::printf("fp32-level LSE noise: %s: %s\n", c.name.c_str(),
                c.detail.c_str());
  for (const Check &c : bug)
    std::printf("LSE + 0.1: %s: %s\n", c.name.c_str(), c.detail.c_str());
}

// c 2^-24 max|q| max|k|: the largest Euclidean norms of the batch.
TEST(Gradients, ScoreRoundingExponent) {
  const float q[] = {0, 1, 3, 4};  // norms 1 and 5
  const float k[] = {1, 1, 0, -2}; // norms sqrt(2) and 2
  EXPECT_DOUBLE_EQ(scoreRoundingExponent(q, 2, k, 2, 2, 0.5f),
                   0.5 * 1.4426950408889634 * 10 * std::ldexp(1.0, -24));
  EXPECT_EQ(scoreRoundingExponent(q, 0, k, 2, 2, 0.5f), 0.0);
}

// At a softmax scale where the scores' fp32 rounding alone moves P by more
// than 2^(1/16), the rows say that the comparison is ill-conditioned; the
// verdict stays the comparison's (here a failure: the "GPU" gradients are the
// reference's at the default scale).
TEST(Gradients, LargeSoftmaxScalesAreFlaggedIllConditioned) {
  Step s = makeStep({0, 70, 70, 220}, 4, 2, 64);
  ReferenceOptions options = allHeads();
  options.softmaxScale = 1e6f;
  std::vector<Check> checks;
  ASSERT_TRUE(checkGradients(s.view(), makeManifest(64), options, s.outputs(),
                             s.gradients(), checks)
                  .ok());
  ASSERT_EQ(checks.size(), 3u);
  for (const Check &c : checks) {
    EXPECT_EQ(c.verdict, Verdict::Fail) << c.name << ": " << c.detail;
    EXPECT_NE(c.detail.find("; ill-conditioned at softmax scale 1e+06: the "
                            "scores' fp32 rounding alone moves P by up to 2^"),
              std::string::npos)
        << c.detail;
  }
}

TEST(Gradients, WholeGqaGroupsOnly) {
  Step s = makeStep({0, 96}, 4, 2, 64);
  // Damage kv head 1: with the first group only (heads 0, 1 -> kv head 0)
  // it is not compared; with every head it fails.
  for (int64_t t = 0; t < 96; ++t)
    s.dv[(t * 2 + 1) * 64] += 10.0f;
  ReferenceOptions first;
  first.heads = 2;
  std::vector<Check> checks;
  ASSERT_TRUE(checkGradients(s.view(), makeManifest(64), first, s.outputs(),
                             s.gradients(), checks)
                  .ok());
  EXPECT_EQ(countFailures(checks), 0);
  EXPECT_NE(checks[2].detail.find("(query heads 0..1 of 4)"), std::string::npos)
      << checks[2].detail;
  checks.clear();
  ASSERT_TRUE(checkGradients(s.view(), makeManifest(64), allHeads(),
                             s.outputs(), s.gradients(), checks)
                  .ok());
  EXPECT_EQ(checks[2].verdict, Verdict::Fail);
  // An explicit head count that splits a group is refused.
  first.heads = 3;
  runtime::Status st = checkGradients(s.view(), makeManifest(64), first,
                                      s.outputs(), s.gradients(), checks);
  EXPECT_EQ(st.message, "reference heads 3 must be a multiple of Hq / Hkv = 2 "
                        "and at most Hq = 4");
  // No grad_o.
  BatchView noGrad = s.batch.view();
  st = checkGradients(noGrad, makeManifest(64), allHeads(), s.outputs(),
                      s.gradients(), checks);
  EXPECT_EQ(st.message,
            "checking the gradients needs grad_o (the batch has none)");
}

// grad_o's copies and delta, found by "holds" (not by name).
TEST(Gradients, QuantizedCopiesOfGradOAndDelta) {
  Step s = makeStep({0, 20, 64}, 2, 1, 64);
  BatchView view = s.view();
  DocumentLayout docs;
  ASSERT_TRUE(documentsOf(view, docs).ok());
  QuantizedReference reference(view, docs);
  const numerics::QuantizedTensor *tb = nullptr;
  ASSERT_TRUE(reference
                  .get(runtime::HeldTensor::GradO,
                       runtime::HeldLayout::TokenBlock, tb)
                  .ok());

  runtime::Manifest m = makeManifest(64);
  auto workspace = [&](const char *name, runtime::HeldPart part,
                       runtime::HeldLayout layout) {
    runtime::ManifestBuffer b;
    b.name = name;
    b.role = runtime::BufferRole::Workspace;
    b.holds.part = part;
    b.holds.tensor = runtime::HeldTensor::GradO;
    b.holds.layout = layout;
    b.holds.format =
        part == runtime::HeldPart::Payload  ? runtime::HeldFormat::E4M3
        : part == runtime::HeldPart::Scales ? runtime::HeldFormat::E8M0
        : part == runtime::HeldPart::Delta  ? runtime::HeldFormat::F32
                                            : runtime::HeldFormat::BF16;
    m.buffers.push_back(b);
  };
  // Deliberately misleading names: the checks read "holds".
  workspace("a", runtime::HeldPart::Payload, runtime::HeldLayout::TokenBlock);
  workspace("b", runtime::HeldPart::Scales, runtime::HeldLayout::TokenBlock);
  workspace("c", runtime::HeldPart::Dequantized,
            runtime::HeldLayout::TokenBlock);
  workspace("d", runtime::HeldPart::Delta, runtime::HeldLayout::PerToken);

  std::map<std::string, std::vector<uint8_t>> device;
  device["a"] = tb->codes;
  device["b"] = tb->scales;
  std::vector<uint16_t> deq(tb->codes.size());
  for (size_t i = 0; i < deq.size(); ++i)
    deq[i] = numerics::floatToBf16(static_cast<float>(
        tb->dequantize(static_cast<int64_t>(i) / 128,
                       static_cast<int64_t>(i) / 64 % 2,
                       static_cast<int64_t>(i) % 64)));
  device["c"].resize(deq.size() * 2);
  memcpy(device["c"].data(), deq.data(), device["c"].size());
  std::vector<float> delta = referenceDelta(s.gradO.data(), s.o.data(), 64, 2, 64);
  device["d"].resize(delta.size() * 4);
  memcpy(device["d"].data(), delta.data(), device["d"].size());
  FetchBuffer fetch = [&](const std::string &name, std::vector<uint8_t> &out) {
    out = device.at(name);
    return runtime::Status::success();
  };
  std::vector<Check> checks;
  ASSERT_TRUE(checkQuantizedCopies(view, m, fetch, checks, s.o.data()).ok());
  ASSERT_EQ(checks.size(), 4u);
  EXPECT_EQ(checks[0].name, "a (E4M3 payload)");
  EXPECT_EQ(checks[1].name, "b (E8M0 scales)");
  EXPECT_EQ(checks[2].name, "c (32x32 dequantized, bf16)");
  EXPECT_EQ(checks[3].name, "d (delta = rowsum(dO * O), f32)");
  for (const Check &c : checks)
    EXPECT_EQ(c.verdict, Verdict::Pass) << c.name << ": " << c.detail;

  // grad_o's copy compared with grad_o's quantization: q's would differ.
  const numerics::QuantizedTensor *qtb = nullptr;
  ASSERT_TRUE(
      reference.get(runtime::HeldTensor::Q, runtime::HeldLayout::TokenBlock, qtb)
          .ok());
  device["a"] = qtb->codes;
  device["d"][0] ^= 1; // one bit of delta[h=0, t=0]
  checks.clear();
  ASSERT_TRUE(checkQuantizedCopies(view, m, fetch, checks, s.o.data()).ok());
  EXPECT_EQ(checks[0].verdict, Verdict::Fail);
  EXPECT_EQ(checks[3].verdict, Verdict::Fail);
  EXPECT_EQ(checks[3].detail.substr(0, 33), "1 of 128 differ; first [h=0, t=0]");

  // Without the run's O, delta is a Skip row; without grad_o, its copies
  // are an error that names it.
  checks.clear();
  ASSERT_TRUE(checkQuantizedCopies(view, m, fetch, checks).ok());
  EXPECT_EQ(checks[3].verdict, Verdict::Skip);
  EXPECT_EQ(checks[3].detail, "needs grad_o and the run's O");
  checks.clear();
  runtime::Status st =
      checkQuantizedCopies(s.batch.view(), m, fetch, checks, s.o.data());
  EXPECT_EQ(st.message, "a workspace copy of grad_o is to be checked but the "
                        "batch has no grad_o");
}

} // namespace
