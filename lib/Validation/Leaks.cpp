//===- Leaks.cpp - L1/L2 leak checks by perturbation ----------------------===//

#include "flamia/Validation/Leaks.h"

#include "Text.h"

#include "flamia/Numerics/Formats.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <set>

namespace flamia::validation::device {

namespace nm = flamia::numerics;
using detail::position;
using runtime::Status;

LeakComparison compareOutside(const BatchView &b, const OutputsView &before,
                              const OutputsView &after, int64_t begin,
                              int64_t end) {
  LeakComparison c;
  const uint16_t *o0 = before.o, *o1 = after.o;
  const float *l0 = before.lse, *l1 = after.lse;
  const int64_t row = b.Hq * b.D;
  for (int64_t t = 0; t < b.T; ++t) {
    const bool inside = t >= begin && t < end;
    bool changed = false;
    const bool sameRow =
        memcmp(&o0[t * row], &o1[t * row], static_cast<size_t>(row) * 2) == 0;
    for (int64_t i = t * row; !sameRow && i < (t + 1) * row; ++i) {
      if (o0[i] == o1[i])
        continue;
      changed = true;
      if (inside)
        break;
      ++c.differing;
      double d = std::fabs(static_cast<double>(nm::bf16ToFloat(o0[i])) -
                           nm::bf16ToFloat(o1[i]));
      c.maxAbs = std::max(c.maxAbs, std::isnan(d) ? INFINITY : d);
      if (c.first.empty())
        c.first = "O" + position(i, b.Hq, b.D);
    }
    for (int64_t h = 0; h < b.Hq; ++h) {
      const int64_t i = h * b.T + t;
      uint32_t x, y;
      memcpy(&x, &l0[i], 4);
      memcpy(&y, &l1[i], 4);
      if (x == y)
        continue;
      changed = true;
      if (inside)
        continue;
      ++c.differing;
      double d = std::fabs(static_cast<double>(l0[i]) - l1[i]);
      c.maxAbs = std::max(c.maxAbs, std::isnan(d) ? INFINITY : d);
      if (c.first.empty())
        c.first =
            "LSE[h=" + std::to_string(h) + ", t=" + std::to_string(t) + "]";
    }
    if (inside)
      c.changedInside += changed;
    else
      c.compared += row + b.Hq;
  }
  return c;
}

std::vector<int64_t> leakCheckDocuments(const BatchView &b) {
  std::vector<int64_t> chosen;
  int64_t longest = -1, firstDoc = -1, lastDoc = -1;
  for (int64_t d = 0; d < b.numDocs; ++d) {
    if (b.docLength(d) == 0)
      continue;
    if (firstDoc < 0)
      firstDoc = d;
    lastDoc = d;
    if (longest < 0 || b.docLength(d) > b.docLength(longest))
      longest = d;
  }
  for (int64_t d : {longest, firstDoc, lastDoc})
    if (d >= 0 && std::find(chosen.begin(), chosen.end(), d) == chosen.end())
      chosen.push_back(d);
  return chosen;
}

std::vector<int64_t> causalityCuts(int64_t L) {
  std::set<int64_t> cuts;
  for (int64_t c :
       {int64_t(0), int64_t(31), int64_t(32), int64_t(45), int64_t(127),
        int64_t(128), int64_t(129), int64_t(150), int64_t(200), int64_t(255),
        int64_t(256), int64_t(1000), L / 2, L - 2})
    if (c >= 0 && c + 1 < L)
      cuts.insert(c);
  return {cuts.begin(), cuts.end()};
}

void judgeIsolation(Check &row, const LeakComparison &c, int64_t docLength,
                    const std::string &cause, const std::string &rows) {
  row.compared = c.compared;
  row.maxAbsDiff = c.maxAbs;
  if (c.differing) {
    row.verdict = Verdict::Fail;
    row.detail = std::to_string(c.differing) +
                 " outputs of other documents changed, first " + c.first;
  } else if (c.changedInside == 0) {
    row.verdict = Verdict::Fail;
    row.detail = cause + " changed nothing (vacuous check)";
  } else {
    row.verdict = Verdict::Pass;
    row.detail = "other documents bit-identical; " +
                 std::to_string(c.changedInside) + " of " +
                 std::to_string(docLength) + " " + rows + " changed";
  }
}

namespace {

/// Runs `p` and compares everything outside [p.begin, p.end) with `base`.
Status perturbAndCompare(const BatchView &b, const RunPerturbed &run,
                         const Perturbation &p, const OutputsView &base,
                         LeakComparison &out) {
  std::vector<uint16_t> o1;
  std::vector<float> l1;
  FLAMIA_RETURN_IF_ERROR(run(p, o1, l1));
  if (o1.size() != static_cast<size_t>(b.T * b.Hq * b.D) ||
      l1.size() != static_cast<size_t>(b.T * b.Hq))
    return Status::error(runtime::ErrorCode::Internal,
                         "a perturbed run returned " +
                             std::to_string(o1.size()) + " O and " +
                             std::to_string(l1.size()) +
                             " LSE elements, expected T x Hq x D and T x Hq");
  out = compareOutside(b, base, {o1.data(), l1.data()}, p.begin, p.end);
  return Status::success();
}

} // namespace

Status checkLeaks(const BatchView &b, bool causal, uint64_t seed,
                  const OutputsView &base, const RunPerturbed &run,
                  std::vector<Check> &out) {
  // Documents to perturb: the longest, the first and the last non-empty one.
  const std::vector<int64_t> chosen = leakCheckDocuments(b);
  int64_t firstDoc = -1, nonEmpty = 0;
  for (int64_t d = 0; d < b.numDocs; ++d)
    if (b.docLength(d) != 0) {
      ++nonEmpty;
      if (firstDoc < 0)
        firstDoc = d;
    }
  if (chosen.empty()) {
    out.push_back({"L1/L2 leak checks", 0, 0, Verdict::Skip, "no tokens"});
    return Status::success();
  }

  // L1: positions <= cut of a document keep their outputs when later
  // positions of the document change (and, in the same runs, every other
  // document keeps its outputs).
  for (int64_t d : chosen) {
    const int64_t L = b.docLength(d), start = b.cu[d], end = b.cu[d + 1];
    Check row;
    row.name = "L1 causality, doc " + std::to_string(d) +
               " (L=" + std::to_string(L) + ")";
    if (!causal) {
      row.verdict = Verdict::Skip;
      row.detail = "the kernels are not causal";
      out.push_back(row);
      continue;
    }
    const std::vector<int64_t> cuts = causalityCuts(L);
    if (cuts.empty()) {
      row.verdict = Verdict::Skip;
      row.detail = "document shorter than 2 tokens";
      out.push_back(row);
      continue;
    }
    row.verdict = Verdict::Pass;
    int64_t minChanged = INT64_MAX;
    for (int64_t cut : cuts) {
      Perturbation p;
      p.begin = start + cut + 1;
      p.end = end;
      p.seed = seed * 1000003 + static_cast<uint64_t>(cut);
      LeakComparison c;
      FLAMIA_RETURN_IF_ERROR(perturbAndCompare(b, run, p, base, c));
      row.compared += c.compared;
      row.maxAbsDiff = std::max(row.maxAbsDiff, c.maxAbs);
      minChanged = std::min(minChanged, c.changedInside);
      if (c.differing && row.verdict == Verdict::Pass) {
        row.verdict = Verdict::Fail;
        row.detail = "cut " + std::to_string(cut) + ": " +
                     std::to_string(c.differing) + " outputs changed, first " +
                     c.first;
      }
      if (c.changedInside == 0 && row.verdict == Verdict::Pass) {
        row.verdict = Verdict::Fail;
        row.detail = "cut " + std::to_string(cut) +
                     ": the perturbation changed nothing (vacuous check)";
      }
    }
    if (row.verdict == Verdict::Pass)
      row.detail = std::to_string(cuts.size()) +
                   " cuts, bit-identical before each cut and outside the "
                   "document; >= " +
                   std::to_string(minChanged) + " perturbed rows changed";
    out.push_back(row);
  }

  // L2: a document's perturbation changes no other document's outputs.
  for (int64_t d : chosen) {
    Check row;
    row.name = "L2 isolation, doc " + std::to_string(d) + " perturbed";
    if (nonEmpty < 2) {
      row.verdict = Verdict::Skip;
      row.detail = "a single non-empty document";
      out.push_back(row);
      continue;
    }
    Perturbation p;
    p.begin = b.cu[d];
    p.end = b.cu[d + 1];
    p.seed = seed * 7919 + static_cast<uint64_t>(d);
    LeakComparison c;
    FLAMIA_RETURN_IF_ERROR(perturbAndCompare(b, run, p, base, c));
    judgeIsolation(row, c, b.docLength(d), "the perturbation",
                   "perturbed rows");
    out.push_back(row);
  }

  // L2 with non-finite inputs: a document of NaNs leaves every other
  // document's outputs bit-identical. The last key tile of the document
  // before it loads some of its rows (masked: P = 0), and 0 x NaN would be
  // NaN if those rows reached the P V product.
  for (int64_t d : chosen) {
    if (d == firstDoc || nonEmpty < 2)
      continue;
    Check row;
    row.name = "L2 isolation, doc " + std::to_string(d) + " all NaN";
    Perturbation p;
    p.begin = b.cu[d];
    p.end = b.cu[d + 1];
    p.allNaN = true;
    LeakComparison c;
    FLAMIA_RETURN_IF_ERROR(perturbAndCompare(b, run, p, base, c));
    judgeIsolation(row, c, b.docLength(d), "the NaNs", "rows");
    out.push_back(row);
  }
  return Status::success();
}

} // namespace flamia::validation::device
