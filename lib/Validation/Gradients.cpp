//===- Gradients.cpp - The backward's results vs the CPU reference --------===//

#include "flamia/Validation/Gradients.h"

#include "Text.h"

#include "flamia/Numerics/ExactSum.h"
#include "flamia/Numerics/Formats.h"
#include "flamia/Numerics/ReferenceAttention.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace flamia::validation::device {

namespace nm = flamia::numerics;
using detail::fmt;
using detail::position;
using runtime::Status;

std::vector<float> gradientValues(const uint8_t *bytes, size_t n,
                                  runtime::DType dtype) {
  std::vector<float> out;
  if (dtype == runtime::DType::F32) {
    out.resize(n);
    memcpy(out.data(), bytes, n * sizeof(float));
  } else if (dtype == runtime::DType::BF16) {
    std::vector<uint16_t> bits(n);
    memcpy(bits.data(), bytes, n * 2);
    out = detail::toFloat(bits.data(), n);
  }
  return out;
}

Check checkGradientsWritten(const GradientsView &g, size_t qElements,
                            size_t kvElements) {
  auto nans = [](const float *x, size_t n) {
    int64_t count = 0;
    for (size_t i = 0; i < n; ++i)
      count += std::isnan(x[i]);
    return count;
  };
  const int64_t q = nans(g.dq, qElements), k = nans(g.dk, kvElements),
                v = nans(g.dv, kvElements);
  Check row;
  row.name = "gradients written (no NaN)";
  row.compared = static_cast<int64_t>(qElements + 2 * kvElements);
  row.verdict = q + k + v == 0 ? Verdict::Pass : Verdict::Fail;
  row.detail = q + k + v == 0
                   ? "dQ, dK, dV"
                   : "NaN: dQ " + std::to_string(q) + ", dK " +
                         std::to_string(k) + ", dV " + std::to_string(v);
  return row;
}

std::vector<float> referenceDelta(const uint16_t *gradO, const uint16_t *o,
                                  int64_t T, int64_t Hq, int64_t D) {
  std::vector<float> delta(static_cast<size_t>(Hq * T));
  std::vector<double> a(static_cast<size_t>(D)), b(static_cast<size_t>(D));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < Hq; ++h) {
      for (int64_t d = 0; d < D; ++d) {
        a[d] = nm::bf16ToFloat(gradO[(t * Hq + h) * D + d]);
        b[d] = nm::bf16ToFloat(o[(t * Hq + h) * D + d]);
      }
      // The exact sum rounded once: what Reference::backward's D_i is
      // (exactDot there, on the same bf16 values).
      delta[h * T + t] =
          nm::exactDot(a.data(), b.data(), D,
                       nm::normUpperBound(a.data(), D) *
                           nm::normUpperBound(b.data(), D));
    }
  return delta;
}

Check checkDelta(const std::string &buffer, const std::vector<float> &expected,
                 const uint8_t *gpu, size_t bytes, int64_t T, int64_t Hq) {
  Check row;
  row.name = buffer + " (delta = rowsum(dO * O), f32)";
  if (bytes != expected.size() * sizeof(float) ||
      expected.size() != static_cast<size_t>(T * Hq)) {
    row.verdict = Verdict::Fail;
    row.detail = "the buffer has " + std::to_string(bytes) +
                 " bytes, the reference " +
                 std::to_string(expected.size() * sizeof(float)) +
                 " (Hq x T f32)";
    return row;
  }
  int64_t mismatches = 0;
  double maxRel = 0;
  std::string firstText;
  for (size_t i = 0; i < expected.size(); ++i) {
    float g;
    memcpy(&g, gpu + 4 * i, 4);
    uint32_t gb, rb;
    memcpy(&gb, &g, 4);
    memcpy(&rb, &expected[i], 4);
    if (gb == rb)
      continue;
    if (mismatches++ == 0)
      firstText = "[h=" + std::to_string(static_cast<int64_t>(i) / T) +
                  ", t=" + std::to_string(static_cast<int64_t>(i) % T) +
                  "] gpu " + fmt("%.9g", g) + " ref " + fmt("%.9g", expected[i]);
    const double diff = std::fabs(static_cast<double>(g) - expected[i]);
    row.maxAbsDiff = std::max(row.maxAbsDiff, std::isnan(diff) ? INFINITY : diff);
    if (expected[i] != 0)
      maxRel = std::max(maxRel, diff / std::fabs(expected[i]));
  }
  row.compared = static_cast<int64_t>(expected.size());
  row.verdict = mismatches == 0 ? Verdict::Pass : Verdict::Fail;
  row.detail = mismatches == 0
                   ? "bit-identical"
                   : std::to_string(mismatches) + " of " +
                         std::to_string(expected.size()) + " differ; first " +
                         firstText + "; max rel " + fmt("%.3g", maxRel);
  return row;
}

Check checkRecomputedScores(const float *forward, const float *backward,
                            size_t elements, const std::vector<int32_t> &cu,
                            int64_t Hq, int64_t blockN) {
  Check row;
  row.name = "S recomputed by the dQ kernel vs the forward's (s_dq, s_fwd: "
             "first key tile)";
  const int64_t T = cu.empty() ? 0 : cu.back();
  if (elements != static_cast<size_t>(T * Hq * blockN)) {
    row.verdict = Verdict::Fail;
    row.detail = "the buffers have " + std::to_string(elements) +
                 " floats, T x Hq x " + std::to_string(blockN) + " = " +
                 std::to_string(T * Hq * blockN) + " expected";
    return row;
  }
  int64_t compared = 0, unwritten = 0, mismatches = 0;
  std::string firstText;
  for (size_t doc = 0; doc + 1 < cu.size(); ++doc) {
    const int64_t begin = cu[doc], end = cu[doc + 1];
    const int64_t keys = std::min<int64_t>(blockN, end - begin);
    for (int64_t t = begin; t < end; ++t)
      for (int64_t h = 0; h < Hq; ++h)
        for (int64_t c = 0; c < keys; ++c) {
          const size_t i = static_cast<size_t>((t * Hq + h) * blockN + c);
          ++compared;
          if (std::isnan(forward[i]) || std::isnan(backward[i])) {
            ++unwritten;
            continue;
          }
          uint32_t fb, bb;
          memcpy(&fb, &forward[i], 4);
          memcpy(&bb, &backward[i], 4);
          if (fb == bb)
            continue;
          if (mismatches++ == 0)
            firstText = "[t=" + std::to_string(t) + ", h=" + std::to_string(h) +
                        ", key=" + std::to_string(begin + c) + "] forward " +
                        fmt("%.9g", forward[i]) + " backward " +
                        fmt("%.9g", backward[i]);
          row.maxAbsDiff = std::max(
              row.maxAbsDiff,
              std::fabs(static_cast<double>(forward[i]) - backward[i]));
        }
  }
  row.compared = compared;
  row.verdict =
      unwritten == 0 && mismatches == 0 ? Verdict::Pass : Verdict::Fail;
  if (row.verdict == Verdict::Pass)
    row.detail = "bit-identical";
  else
    row.detail = std::to_string(unwritten) + " unwritten, " +
                 std::to_string(mismatches) + " of " +
                 std::to_string(compared - unwritten) + " differ" +
                 (mismatches ? "; first " + firstText : std::string());
  return row;
}

double scoreRoundingExponent(const float *q, int64_t numQ, const float *k,
                             int64_t numK, int64_t D, float softmaxScale) {
  auto maxNorm = [D](const float *x, int64_t rows) {
    double best = 0;
    for (int64_t r = 0; r < rows; ++r) {
      double sum = 0;
      for (int64_t d = 0; d < D; ++d)
        sum += static_cast<double>(x[r * D + d]) * x[r * D + d];
      best = std::max(best, sum);
    }
    return std::sqrt(best);
  };
  const double c = static_cast<double>(softmaxScale) * 1.4426950408889634;
  return c * std::ldexp(maxNorm(q, numQ) * maxNorm(k, numK), -24);
}

namespace {

std::vector<float> sliceHeads(const uint16_t *x, int64_t T, int64_t H,
                              int64_t heads, int64_t D) {
  std::vector<float> out(static_cast<size_t>(T * heads * D));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t d = 0; d < D; ++d)
        out[(t * heads + h) * D + d] = nm::bf16ToFloat(x[(t * H + h) * D + d]);
  return out;
}

Check gradientRow(const char *name, const std::string &recipe, const float *gpu,
                  const float *ref, int64_t T, int64_t H, int64_t heads,
                  int64_t D, const std::string &headNote, bool bf16Output,
                  const std::string &conditionNote) {
  const Comparison c = compareO(gpu, ref, T, H, heads, heads, D);
  // A bf16 gradient carries its own rounding (relative 2^-9 at most, about
  // 1.1e-3 in relative L2): against the reference rounded the same way the
  // kernel's own error shows (printed; the verdict keeps the tolerance).
  std::string rounded;
  if (bf16Output) {
    std::vector<float> refBf16(ref, ref + static_cast<size_t>(T) * heads * D);
    for (float &x : refBf16)
      x = nm::roundToBf16(x);
    const Comparison r = compareO(gpu, refBf16.data(), T, H, heads, heads, D);
    rounded = "; vs the reference rounded to bf16: " + fmt("%.3g", r.relL2);
  }
  Check row;
  row.name = std::string(name) + " vs CPU " + recipe + " reference";
  row.compared = c.compared;
  row.maxAbsDiff = c.maxAbs;
  row.verdict = c.nan == 0 && c.relL2 <= kMaxRelL2Grad ? Verdict::Pass
                                                        : Verdict::Fail;
  row.detail = "rel L2 " + fmt("%.3g", c.relL2) + " (<= " +
               fmt("%g", kMaxRelL2Grad) + ")" +
               (c.nan ? ", " + std::to_string(c.nan) + " NaN" : "") +
               (c.worst >= 0 ? ", worst at " + position(c.worst, H, D) : "") +
               rounded + headNote + conditionNote;
  return row;
}

} // namespace

Status checkGradients(const BatchView &b, const runtime::Manifest &m,
                      const ReferenceOptions &options,
                      const OutputsView &outputs, const GradientsView &grads,
                      std::vector<Check> &out, GradientArrays *arrays) {
  nm::RecipeConfig recipe;
  Status rs = referenceRecipe(m, recipe);
  if (!rs.ok()) {
    out.push_back({"dQ, dK, dV vs reference", 0, 0, Verdict::Skip, rs.message});
    if (arrays)
      arrays->skipped = true;
    return Status::success();
  }
  if (!b.gradO)
    return runtime::invalidArgument(
        "checking the gradients needs grad_o (the batch has none)");
  DocumentLayout docs;
  FLAMIA_RETURN_IF_ERROR(documentsOf(b, docs));

  const int64_t group = b.Hq / b.Hkv;
  std::string rule;
  if (options.heads > 0 &&
      !validReferenceHeads(options.heads, b.Hq, b.Hkv, rule))
    return runtime::invalidArgument("reference heads " +
                                    std::to_string(options.heads) + " " + rule);
  ReferenceOptions backward = options;
  backward.budget = options.budget / 2.5;
  const int64_t heads = referenceHeads(b, m.causal, backward);
  const int64_t kvHeads = heads / group;
  std::string headNote;
  if (heads < b.Hq)
    headNote = " (query heads 0.." + std::to_string(heads - 1) + " of " +
               std::to_string(b.Hq) + ")";

  std::vector<float> q = sliceHeads(b.q, b.T, b.Hq, heads, b.D);
  std::vector<float> k = sliceHeads(b.k, b.T, b.Hkv, kvHeads, b.D);
  std::vector<float> v = sliceHeads(b.v, b.T, b.Hkv, kvHeads, b.D);
  std::vector<float> dO = sliceHeads(b.gradO, b.T, b.Hq, heads, b.D);
  std::vector<float> o = sliceHeads(outputs.o, b.T, b.Hq, heads, b.D);
  // LSE is [Hq, T]: the first `heads` rows.
  std::vector<float> lse(outputs.lse, outputs.lse + heads * b.T);
  nm::AttentionInputs in;
  in.numTokens = b.T;
  in.numHeads = heads;
  in.numKvHeads = kvHeads;
  in.headDim = b.D;
  in.q = q.data();
  in.k = k.data();
  in.v = v.data();
  in.docs = &docs;
  in.causal = m.causal;
  in.softmaxScale = options.softmaxScale;
  nm::BackwardOutputs ref;
  nm::Status ns = nm::referenceBackward(in, recipe, dO.data(), o.data(),
                                        lse.data(), ref);
  if (!ns)
    return runtime::invalidArgument("CPU reference backward: " + ns.message);

  // The gradients' dtype, from the manifest's output buffers.
  auto isBf16 = [&](const char *name) {
    for (const runtime::ManifestBuffer &buf : m.buffers)
      if (buf.name == name)
        return buf.dtype == runtime::DType::BF16;
    return false;
  };
  // The reference recomputes exact scores but takes the GPU's LSE: at large
  // softmax scales the scores' fp32 rounding alone moves P (see
  // scoreRoundingExponent), and the row says so.
  const float scale =
      options.softmaxScale > 0
          ? options.softmaxScale
          : static_cast<float>(1.0 / std::sqrt(static_cast<double>(b.D)));
  const double sensitivity = scoreRoundingExponent(
      q.data(), b.T * heads, k.data(), b.T * kvHeads, b.D, scale);
  std::string conditionNote;
  if (sensitivity > kIllConditionedExponent)
    conditionNote = "; ill-conditioned at softmax scale " + fmt("%g", scale) +
                    ": the scores' fp32 rounding alone moves P by up to 2^" +
                    fmt("%.2g", sensitivity) +
                    " (over 2^(1/16), the tolerance cannot separate "
                    "rounding from bugs; docs/runtime.md)";
  out.push_back(gradientRow("dQ", recipe.name, grads.dq, ref.dq.data(), b.T,
                            b.Hq, heads, b.D, headNote, isBf16("dq"),
                            conditionNote));
  out.push_back(gradientRow("dK", recipe.name, grads.dk, ref.dk.data(), b.T,
                            b.Hkv, kvHeads, b.D, headNote, isBf16("dk"),
                            conditionNote));
  out.push_back(gradientRow("dV", recipe.name, grads.dv, ref.dv.data(), b.T,
                            b.Hkv, kvHeads, b.D, headNote, isBf16("dv"),
                            conditionNote));
  if (arrays) {
    arrays->skipped = false;
    arrays->heads = heads;
    arrays->refDq = std::move(ref.dq);
    arrays->refDk = std::move(ref.dk);
    arrays->refDv = std::move(ref.dv);
  }
  return Status::success();
}

} // namespace flamia::validation::device
