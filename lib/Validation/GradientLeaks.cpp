//===- GradientLeaks.cpp - L2 isolation of a training step's outputs ------===//
//
// The forward's L2 checks (Leaks.cpp) over every output of a training step:
// a document's q, k, v and grad_o changed (fresh values or all NaN) must
// leave every other document's O, LSE, dQ, dK and dV bit-identical. dK and
// dV are where a backward leak shows first: a key-tile item that read query
// rows of the next document (its last query tile) would add their dS^T Q and
// P^T dO to this document's keys.
//
//===----------------------------------------------------------------------===//

#include "flamia/Validation/Leaks.h"

#include "Text.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace flamia::validation::device {

using detail::position;
using runtime::Status;

namespace {

/// Rows of tokens outside [begin, end) of a float32 [T, H, D] gradient,
/// bit for bit; marks `changed[t]` for tokens with any element changed.
void compareGradient(const char *name, const std::vector<float> &a,
                     const std::vector<float> &b, int64_t T, int64_t H,
                     int64_t D, int64_t begin, int64_t end,
                     std::vector<bool> &changed, LeakComparison &c) {
  const int64_t row = H * D;
  for (int64_t t = 0; t < T; ++t) {
    const bool inside = t >= begin && t < end;
    const float *x = &a[static_cast<size_t>(t * row)],
                *y = &b[static_cast<size_t>(t * row)];
    if (!inside)
      c.compared += row;
    if (memcmp(x, y, static_cast<size_t>(row) * 4) == 0)
      continue;
    changed[static_cast<size_t>(t)] = true;
    if (inside)
      continue;
    for (int64_t i = 0; i < row; ++i) {
      if (memcmp(&x[i], &y[i], 4) == 0)
        continue;
      ++c.differing;
      const double d = std::fabs(static_cast<double>(x[i]) - y[i]);
      c.maxAbs = std::max(c.maxAbs, std::isnan(d) ? INFINITY : d);
      if (c.first.empty())
        c.first = std::string(name) + position(t * row + i, H, D);
    }
  }
}

} // namespace

LeakComparison compareTrainingOutside(const BatchView &b,
                                      const TrainingOutputs &before,
                                      const TrainingOutputs &after,
                                      int64_t begin, int64_t end) {
  // O and LSE as the forward's check has them; then the gradients.
  LeakComparison c = compareOutside(b, {before.o.data(), before.lse.data()},
                                    {after.o.data(), after.lse.data()}, begin,
                                    end);
  std::vector<bool> changed(static_cast<size_t>(b.T), false);
  compareGradient("dQ", before.dq, after.dq, b.T, b.Hq, b.D, begin, end,
                  changed, c);
  compareGradient("dK", before.dk, after.dk, b.T, b.Hkv, b.D, begin, end,
                  changed, c);
  compareGradient("dV", before.dv, after.dv, b.T, b.Hkv, b.D, begin, end,
                  changed, c);
  // changedInside: the tokens inside with any output changed (the union of
  // the forward's outputs and the gradients).
  const int64_t row = b.Hq * b.D;
  c.changedInside = 0;
  for (int64_t t = begin; t < end; ++t) {
    bool any = changed[static_cast<size_t>(t)] ||
               memcmp(&before.o[static_cast<size_t>(t * row)],
                      &after.o[static_cast<size_t>(t * row)],
                      static_cast<size_t>(row) * 2) != 0;
    for (int64_t h = 0; h < b.Hq && !any; ++h)
      any = memcmp(&before.lse[static_cast<size_t>(h * b.T + t)],
                   &after.lse[static_cast<size_t>(h * b.T + t)], 4) != 0;
    c.changedInside += any;
  }
  return c;
}

namespace {

Status runAndCompare(const BatchView &b, const RunTrainingPerturbed &run,
                     const Perturbation &p, const TrainingOutputs &base,
                     LeakComparison &out) {
  TrainingOutputs after;
  FLAMIA_RETURN_IF_ERROR(run(p, after));
  const size_t q = static_cast<size_t>(b.T * b.Hq * b.D),
               kv = static_cast<size_t>(b.T * b.Hkv * b.D);
  if (after.o.size() != q || after.lse.size() != static_cast<size_t>(b.T * b.Hq) ||
      after.dq.size() != q || after.dk.size() != kv || after.dv.size() != kv)
    return Status::error(runtime::ErrorCode::Internal,
                         "a perturbed training run returned arrays of the "
                         "wrong size (O, dQ: T x Hq x D; LSE: Hq x T; dK, dV: "
                         "T x Hkv x D)");
  out = compareTrainingOutside(b, base, after, p.begin, p.end);
  return Status::success();
}

} // namespace

Status checkTrainingLeaks(const BatchView &b, uint64_t seed,
                          const TrainingOutputs &base,
                          const RunTrainingPerturbed &run,
                          std::vector<Check> &out) {
  const std::vector<int64_t> chosen = leakCheckDocuments(b);
  int64_t firstDoc = -1, nonEmpty = 0;
  for (int64_t d = 0; d < b.numDocs; ++d)
    if (b.docLength(d) != 0) {
      ++nonEmpty;
      if (firstDoc < 0)
        firstDoc = d;
    }
  if (chosen.empty()) {
    out.push_back({"L2 leak checks with gradients", 0, 0, Verdict::Skip,
                   "no tokens"});
    return Status::success();
  }
  for (bool allNaN : {false, true})
    for (int64_t d : chosen) {
      // No earlier document can load the first one's NaN rows.
      if (allNaN && (d == firstDoc || nonEmpty < 2))
        continue;
      Check row;
      row.name = "L2 isolation with gradients, doc " + std::to_string(d) +
                 (allNaN ? " all NaN" : " perturbed");
      if (nonEmpty < 2) {
        row.verdict = Verdict::Skip;
        row.detail = "a single non-empty document";
        out.push_back(row);
        continue;
      }
      Perturbation p;
      p.begin = b.cu[d];
      p.end = b.cu[d + 1];
      // Seeds apart from the forward's L2 runs (Leaks.cpp: seed * 7919 + d).
      p.seed = seed * 7927 + static_cast<uint64_t>(d);
      p.allNaN = allNaN;
      LeakComparison c;
      FLAMIA_RETURN_IF_ERROR(runAndCompare(b, run, p, base, c));
      judgeIsolation(row, c, b.docLength(d),
                     allNaN ? "the NaNs" : "the perturbation",
                     allNaN ? "rows" : "perturbed rows");
      out.push_back(row);
    }
  return Status::success();
}

namespace {

/// Rows [begin, end) of a float32 [T, H, D] gradient: `differing` counts
/// the elements whose bits differ, `first` names the first.
struct RowDiff {
  int64_t compared = 0, differing = 0;
  double maxAbs = 0;
  std::string first;
};
void diffRows(const char *name, const std::vector<float> &a,
              const std::vector<float> &b, int64_t H, int64_t D, int64_t begin,
              int64_t end, RowDiff &d) {
  const int64_t row = H * D;
  for (int64_t i = begin * row; i < end * row; ++i) {
    ++d.compared;
    if (memcmp(&a[static_cast<size_t>(i)], &b[static_cast<size_t>(i)], 4) == 0)
      continue;
    ++d.differing;
    const double x = std::fabs(static_cast<double>(a[static_cast<size_t>(i)]) -
                               b[static_cast<size_t>(i)]);
    d.maxAbs = std::max(d.maxAbs, std::isnan(x) ? INFINITY : x);
    if (d.first.empty())
      d.first = std::string(name) + position(i, H, D);
  }
}

Status runStrict(const BatchView &b, const RunStrictPerturbed &run,
                 const Perturbation &p, bool baseOutputs,
                 TrainingOutputs &after) {
  FLAMIA_RETURN_IF_ERROR(run(p, baseOutputs, after));
  const size_t q = static_cast<size_t>(b.T * b.Hq * b.D),
               kv = static_cast<size_t>(b.T * b.Hkv * b.D);
  if (after.dq.size() != q || after.dk.size() != kv || after.dv.size() != kv)
    return Status::error(runtime::ErrorCode::Internal,
                         "a perturbed training run returned gradients of the "
                         "wrong size (dQ: T x Hq x D; dK, dV: T x Hkv x D)");
  return Status::success();
}

} // namespace

Status checkStrictCausality(const BatchView &b, bool causal, uint64_t seed,
                            const TrainingOutputs &base,
                            const RunStrictPerturbed &run,
                            std::vector<Check> &out) {
  if (!causal) {
    out.push_back({"L3 strict backward causality", 0, 0, Verdict::Skip,
                   "non-causal attention"});
    return Status::success();
  }
  const std::vector<int64_t> chosen = leakCheckDocuments(b);
  if (chosen.empty()) {
    out.push_back(
        {"L3 strict backward causality", 0, 0, Verdict::Skip, "no tokens"});
    return Status::success();
  }
  for (int64_t doc : chosen) {
    const int64_t begin = b.cu[doc], L = b.docLength(doc);
    const std::string suffix =
        ", doc " + std::to_string(doc) + " (L=" + std::to_string(L) + ")";
    for (bool future : {true, false}) {
      Check row;
      row.name =
          std::string(future ? "L3 dQ vs future" : "L3 dK,dV vs past") + suffix;
      std::vector<int64_t> cuts;
      for (int64_t c : causalityCuts(L))
        if (future || c >= 1)
          cuts.push_back(c);
      if (cuts.empty()) {
        row.verdict = Verdict::Skip;
        row.detail = "a document of fewer than 2 tokens";
        out.push_back(row);
        continue;
      }
      RowDiff kept;
      int64_t vacuousCut = -1, firstFailCut = -1;
      for (int64_t c : cuts) {
        Perturbation p;
        // dQ vs future: tokens after c; dK, dV vs past: tokens before c.
        p.begin = future ? begin + c + 1 : begin;
        p.end = future ? begin + L : begin + c;
        p.seed = seed * 7933 + static_cast<uint64_t>(doc) * 4099 +
                 static_cast<uint64_t>(c) + (future ? 0 : 1u << 20);
        TrainingOutputs after;
        FLAMIA_RETURN_IF_ERROR(runStrict(b, run, p, !future, after));
        RowDiff inside;
        if (future) {
          diffRows("dQ", base.dq, after.dq, b.Hq, b.D, begin, begin + c + 1,
                   kept);
          diffRows("dQ", base.dq, after.dq, b.Hq, b.D, p.begin, p.end, inside);
        } else {
          diffRows("dK", base.dk, after.dk, b.Hkv, b.D, begin + c, begin + L,
                   kept);
          diffRows("dV", base.dv, after.dv, b.Hkv, b.D, begin + c, begin + L,
                   kept);
          diffRows("dK", base.dk, after.dk, b.Hkv, b.D, p.begin, p.end, inside);
          diffRows("dV", base.dv, after.dv, b.Hkv, b.D, p.begin, p.end, inside);
        }
        if (kept.differing != 0 && firstFailCut < 0)
          firstFailCut = c;
        if (inside.differing == 0 && vacuousCut < 0)
          vacuousCut = c;
      }
      row.compared = kept.compared;
      row.maxAbsDiff = kept.maxAbs;
      const std::string what =
          future ? "dQ of tokens <= the cut" : "dK, dV of tokens >= the cut";
      if (kept.differing) {
        row.verdict = Verdict::Fail;
        row.detail = std::to_string(kept.differing) + " elements of " + what +
                     " changed, first " + kept.first + " at cut " +
                     std::to_string(firstFailCut);
      } else if (vacuousCut >= 0) {
        row.verdict = Verdict::Fail;
        row.detail = "the perturbation at cut " + std::to_string(vacuousCut) +
                     " changed none of its own tokens' gradients (vacuous "
                     "check)";
      } else {
        row.verdict = Verdict::Pass;
        row.detail = what + " bit-identical over " +
                     std::to_string(cuts.size()) + " cuts";
      }
      out.push_back(row);
    }
  }
  return Status::success();
}

} // namespace flamia::validation::device
