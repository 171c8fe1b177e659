//===- Reference.cpp - O and LSE vs the CPU references --------------------===//

#include "flamia/Validation/Reference.h"

#include "Text.h"

#include "flamia/Numerics/Formats.h"
#include "flamia/Numerics/ReferenceAttention.h"

#include <algorithm>
#include <cmath>

namespace flamia::validation::device {

namespace nm = flamia::numerics;
using detail::fmt;
using detail::position;
using runtime::Status;

Comparison compareO(const float *a, const float *b, int64_t T, int64_t Ha,
                    int64_t Hb, int64_t heads, int64_t D) {
  Comparison c;
  double num = 0, den = 0;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t d = 0; d < D; ++d) {
        const int64_t ia = (t * Ha + h) * D + d, ib = (t * Hb + h) * D + d;
        const double x = a[ia], y = b[ib];
        ++c.compared;
        if (std::isnan(x) || std::isnan(y)) {
          ++c.nan;
          continue;
        }
        num += (x - y) * (x - y);
        den += y * y;
        if (std::fabs(x - y) > c.maxAbs) {
          c.maxAbs = std::fabs(x - y);
          c.worst = ia;
        }
      }
  c.relL2 = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  return c;
}

Comparison compareLse(const float *a, const float *b, int64_t T, int64_t heads,
                      const double *tolerance) {
  Comparison c;
  for (int64_t i = 0; i < heads * T; ++i) {
    ++c.compared;
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      ++c.nan;
      continue;
    }
    const double diff = std::fabs(static_cast<double>(a[i]) - b[i]);
    if (diff > c.maxAbs)
      c.maxAbs = diff;
    const double ratio = tolerance ? diff / tolerance[i] : diff;
    if (ratio > c.relL2 || c.worst < 0) {
      c.relL2 = ratio;
      c.worst = i;
    }
  }
  return c;
}

std::vector<double> lseTolerance(const float *q, const float *k, int64_t T,
                                 int64_t heads, int64_t kvHeads, int64_t D,
                                 const int32_t *cu, int64_t numDocs,
                                 bool causal, float scale) {
  const int64_t group = heads / kvHeads;
  std::vector<double> kL1(static_cast<size_t>(T * kvHeads), 0.0);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t g = 0; g < kvHeads; ++g) {
      double sum = 0;
      for (int64_t d = 0; d < D; ++d)
        sum += std::fabs(k[(t * kvHeads + g) * D + d]);
      kL1[t * kvHeads + g] = sum;
    }
  // Per document: the largest key L1 norm up to each position (causal) or
  // over the whole document.
  std::vector<double> seen(kL1.size(), 0.0);
  for (int64_t doc = 0; doc < numDocs; ++doc) {
    for (int64_t g = 0; g < kvHeads; ++g) {
      double running = 0, whole = 0;
      for (int64_t t = cu[doc]; t < cu[doc + 1]; ++t)
        whole = std::max(whole, kL1[t * kvHeads + g]);
      for (int64_t t = cu[doc]; t < cu[doc + 1]; ++t) {
        running = std::max(running, kL1[t * kvHeads + g]);
        seen[t * kvHeads + g] = causal ? running : whole;
      }
    }
  }
  const double gamma = static_cast<double>(D) * std::ldexp(1.0, -24);
  std::vector<double> tol(static_cast<size_t>(heads * T));
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t t = 0; t < T; ++t) {
      double qInf = 0;
      for (int64_t d = 0; d < D; ++d)
        qInf = std::max(
            qInf, static_cast<double>(std::fabs(q[(t * heads + h) * D + d])));
      tol[h * T + t] = kMaxAbsLse + 2.0 * gamma * scale * qInf *
                                        seen[t * kvHeads + h / group];
    }
  return tol;
}

bool validReferenceHeads(int64_t heads, int64_t Hq, int64_t Hkv,
                         std::string &rule) {
  const int64_t group = Hq / Hkv;
  if (heads % group == 0 && heads <= Hq)
    return true;
  rule = "must be a multiple of Hq / Hkv = " + std::to_string(group) +
         " and at most Hq = " + std::to_string(Hq);
  return false;
}

int64_t referenceHeads(const BatchView &b, bool causal,
                       const ReferenceOptions &options) {
  const int64_t group = b.Hq / b.Hkv;
  if (options.heads > 0)
    return options.heads;
  if (options.heads == 0)
    return b.Hq;
  double perHead = 0; // multiply-adds of Q K^T and P V, causal half
  for (int64_t d = 0; d < b.numDocs; ++d) {
    const double L = static_cast<double>(b.docLength(d));
    perHead += (causal ? 1.0 : 2.0) * L * L * static_cast<double>(b.D);
  }
  int64_t groups =
      perHead > 0 ? static_cast<int64_t>(options.budget / (perHead * group))
                  : b.Hkv;
  groups = std::max<int64_t>(1, std::min<int64_t>(groups, b.Hkv));
  return groups * group;
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

} // namespace

Status checkReference(const BatchView &b, const runtime::Manifest &m,
                      const ReferenceOptions &options,
                      const OutputsView &outputs, std::vector<Check> &out,
                      ReferenceArrays *arrays) {
  nm::RecipeConfig recipe, exact;
  Status rs = referenceRecipe(m, recipe);
  if (!rs.ok()) {
    out.push_back({"O, LSE vs reference", 0, 0, Verdict::Skip, rs.message});
    if (arrays)
      arrays->skipped = true;
    return Status::success();
  }
  nm::Status ns = nm::recipeFromName("none", exact);
  if (!ns)
    return runtime::invalidArgument(ns.message);
  DocumentLayout docs;
  FLAMIA_RETURN_IF_ERROR(documentsOf(b, docs));

  // Heads compared: whole GQA groups.
  const int64_t group = b.Hq / b.Hkv;
  std::string rule;
  if (options.heads > 0 && !validReferenceHeads(options.heads, b.Hq, b.Hkv, rule))
    return runtime::invalidArgument("reference heads " +
                                    std::to_string(options.heads) + " " + rule);
  const int64_t heads = referenceHeads(b, m.causal, options);
  std::string headNote;
  if (heads < b.Hq)
    headNote = " (query heads 0.." + std::to_string(heads - 1) + " of " +
               std::to_string(b.Hq) + ")";

  const int64_t kvHeads = heads / group;
  std::vector<float> q = sliceHeads(b.q, b.T, b.Hq, heads, b.D);
  std::vector<float> k = sliceHeads(b.k, b.T, b.Hkv, kvHeads, b.D);
  std::vector<float> v = sliceHeads(b.v, b.T, b.Hkv, kvHeads, b.D);
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
  nm::ForwardOutputs ref, f64;
  ns = nm::runAttention(in, recipe, nullptr, ref, nullptr);
  if (!ns)
    return runtime::invalidArgument("CPU reference: " + ns.message);
  ns = nm::runAttention(in, exact, nullptr, f64, nullptr);
  if (!ns)
    return runtime::invalidArgument("float64 reference: " + ns.message);

  std::vector<float> gpuO =
      detail::toFloat(outputs.o, static_cast<size_t>(b.T * b.Hq * b.D));
  Comparison oRef =
      compareO(gpuO.data(), ref.o.data(), b.T, b.Hq, heads, heads, b.D);
  Comparison oF64 =
      compareO(gpuO.data(), f64.o.data(), b.T, b.Hq, heads, heads, b.D);
  Comparison refF64 =
      compareO(ref.o.data(), f64.o.data(), b.T, heads, heads, heads, b.D);
  const std::vector<double> lseTol =
      lseTolerance(q.data(), k.data(), b.T, heads, kvHeads, b.D, b.cu,
                   b.numDocs, m.causal, in.softmaxScale);
  double minTol = INFINITY, maxTol = 0;
  for (double t : lseTol) {
    minTol = std::min(minTol, t);
    maxTol = std::max(maxTol, t);
  }
  Comparison lRef =
      compareLse(outputs.lse, ref.lse.data(), b.T, heads, lseTol.data());
  Comparison lF64 = compareLse(outputs.lse, f64.lse.data(), b.T, heads);

  Check row;
  row.name = "O vs CPU " + recipe.name + " reference";
  row.compared = oRef.compared;
  row.maxAbsDiff = oRef.maxAbs;
  row.verdict =
      oRef.nan == 0 && oRef.relL2 <= kMaxRelL2O ? Verdict::Pass : Verdict::Fail;
  row.detail =
      "rel L2 " + fmt("%.3g", oRef.relL2) + " (<= " + fmt("%g", kMaxRelL2O) +
      ")" + (oRef.nan ? ", " + std::to_string(oRef.nan) + " NaN" : "") +
      (oRef.worst >= 0 ? ", worst at " + position(oRef.worst, b.Hq, b.D) : "") +
      headNote;
  out.push_back(row);

  row = Check();
  row.name = "LSE vs CPU " + recipe.name + " reference";
  row.compared = lRef.compared;
  row.maxAbsDiff = lRef.maxAbs;
  // lRef.relL2 holds the largest |diff| / tolerance.
  row.verdict =
      lRef.nan == 0 && lRef.relL2 <= 1.0 ? Verdict::Pass : Verdict::Fail;
  row.detail = "|diff| / tolerance <= " + fmt("%.3g", lRef.relL2) +
               " (tolerance " + fmt("%.3g", minTol) +
               (maxTol > minTol * 1.001 ? " .. " + fmt("%.3g", maxTol) : "") +
               ")" +
               (lRef.nan ? ", " + std::to_string(lRef.nan) + " NaN" : "") +
               (lRef.worst >= 0 && lRef.maxAbs > 0
                    ? ", worst at [h=" + std::to_string(lRef.worst / b.T) +
                          ", t=" + std::to_string(lRef.worst % b.T) + "]"
                    : "");
  out.push_back(row);

  row = Check();
  row.name = "O: GPU vs float64 reference";
  row.compared = oF64.compared;
  row.maxAbsDiff = oF64.maxAbs;
  row.verdict = Verdict::Info;
  row.detail = "rel L2 " + fmt("%.3g", oF64.relL2) + "; LSE max abs " +
               fmt("%.3g", lF64.maxAbs);
  out.push_back(row);

  row = Check();
  row.name = "O: " + recipe.name + " ref vs float64 ref";
  row.compared = refF64.compared;
  row.maxAbsDiff = refF64.maxAbs;
  row.verdict = Verdict::Info;
  row.detail = "rel L2 " + fmt("%.3g", refF64.relL2) +
               " (the recipe's own error: the scale to compare with)";
  out.push_back(row);

  row = Check();
  row.name = "O: closer to " + recipe.name + " than to float64";
  row.compared = oRef.compared;
  row.maxAbsDiff = oRef.maxAbs;
  const double ratio = oF64.relL2 > 0 ? oRef.relL2 / oF64.relL2 : 0.0;
  if (refF64.relL2 < kMinQuantizationErrorForRatio) {
    row.verdict = Verdict::Info;
    row.detail = "n/a: the recipe's error " + fmt("%.3g", refF64.relL2) +
                 " is within bf16 rounding (< " +
                 fmt("%.3g", kMinQuantizationErrorForRatio) + "); ratio " +
                 fmt("%.3g", ratio);
  } else {
    row.verdict =
        ratio <= kMaxRatioToQuantizationError ? Verdict::Pass : Verdict::Fail;
    row.detail = "rel L2 to " + recipe.name +
                 " / rel L2 to float64 = " + fmt("%.3g", ratio) +
                 " (<= " + fmt("%g", kMaxRatioToQuantizationError) + ")";
  }
  out.push_back(row);

  if (arrays) {
    arrays->skipped = false;
    arrays->heads = heads;
    arrays->o = std::move(gpuO);
    arrays->refO = std::move(ref.o);
    arrays->refLse = std::move(ref.lse);
    arrays->f64O = std::move(f64.o);
    arrays->f64Lse = std::move(f64.lse);
  }
  return Status::success();
}

} // namespace flamia::validation::device
