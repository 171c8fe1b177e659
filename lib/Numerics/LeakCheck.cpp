//===- LeakCheck.cpp - The L1/L2/L3/Consistency properties ----------------===//
#include "flamia/Numerics/LeakCheck.h"

#include "flamia/Numerics/Formats.h"
#include "flamia/Numerics/ReferenceAttention.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace flamia::numerics {

std::string PropertyResult::verdict() const {
  if (!checked)
    return name + ": SKIPPED (" + skippedBecause + ")";
  if (pass)
    return name + ": PASS";
  return name + ": FAIL (first differing output: " + firstDifference + ")";
}

bool LeakCheckReport::pass() const {
  for (const PropertyResult &r : results)
    if (r.checked && !r.pass)
      return false;
  return true;
}

namespace {

std::string range(int64_t t0, int64_t t1) {
  if (t1 - t0 == 1)
    return std::to_string(t0);
  return std::to_string(t0) + ".." + std::to_string(t1 - 1);
}

std::string formatDiff(double d) {
  if (std::isinf(d))
    return "inf (NaN or inf against a number)";
  std::ostringstream os;
  os << d;
  return os.str();
}

/// Bitwise comparison of outputs over a token range, accumulated.
struct Comparison {
  int64_t elements = 0;
  double maxAbs = 0;
  std::string first;
  std::vector<std::string> parts;

  void note(float a, float b, const std::string &where) {
    ++elements;
    if (bitsOf(a) == bitsOf(b))
      return;
    double d = std::fabs(static_cast<double>(a) - static_cast<double>(b));
    if (!(d >= 0)) // NaN against a number, or NaN payload change
      d = std::numeric_limits<double>::infinity();
    maxAbs = std::max(maxAbs, d);
    if (first.empty())
      first = where;
  }
  bool identical() const { return first.empty(); }

  /// A [T, H, D] tensor over tokens [t0, t1).
  void tokens(const std::vector<float> &base, const std::vector<float> &other,
              int64_t H, int64_t D, int64_t t0, int64_t t1, const char *name) {
    if (t1 <= t0)
      return;
    int64_t before = elements;
    for (int64_t t = t0; t < t1; ++t)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t d = 0; d < D; ++d) {
          size_t idx = static_cast<size_t>((t * H + h) * D + d);
          if (bitsOf(base[idx]) != bitsOf(other[idx]) && first.empty())
            note(base[idx], other[idx],
                 std::string(name) + "[t=" + std::to_string(t) +
                     ", h=" + std::to_string(h) + ", d=" + std::to_string(d) +
                     "]");
          else
            note(base[idx], other[idx], "");
        }
    parts.push_back(std::string(name) + "[t=" + range(t0, t1) + "] (" +
                    std::to_string(elements - before) + " elements)");
  }
  /// LSE [H, T] over tokens [t0, t1).
  void lse(const std::vector<float> &base, const std::vector<float> &other,
           int64_t H, int64_t T, int64_t t0, int64_t t1) {
    if (t1 <= t0)
      return;
    int64_t before = elements;
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = t0; t < t1; ++t) {
        size_t idx = static_cast<size_t>(h * T + t);
        if (bitsOf(base[idx]) != bitsOf(other[idx]) && first.empty())
          note(base[idx], other[idx],
               "LSE[h=" + std::to_string(h) + ", t=" + std::to_string(t) + "]");
        else
          note(base[idx], other[idx], "");
      }
    parts.push_back("LSE[t=" + range(t0, t1) + "] (" +
                    std::to_string(elements - before) + " elements)");
  }
};

/// Records one comparison in a property's log and verdict.
void record(PropertyResult &result, const std::string &context,
            const std::string &perturbed, const Comparison &c) {
  std::string line = context + ": " +
                     (perturbed.empty() ? "" : "perturbed " + perturbed + ": ") +
                     "compared ";
  for (size_t k = 0; k < c.parts.size(); ++k)
    line += (k ? ", " : "") + c.parts[k];
  line += ": max |diff| " + formatDiff(c.maxAbs);
  if (!c.identical())
    line += "  <-- DIFFERS at " + c.first;
  result.log.push_back(line);
  ++result.runs;
  if (!c.identical() && result.pass) {
    result.pass = false;
    result.firstDifference = c.first + " after perturbing " + perturbed;
  }
}

float largestMagnitude(const std::vector<float> &x) {
  float m = 0;
  for (float v : x)
    if (std::isfinite(v))
      m = std::max(m, std::fabs(v));
  return m == 0 ? 1.0f : m;
}

/// x[t, h, channel] = value for every head.
void setOutlier(std::vector<float> &x, int64_t H, int64_t D, int64_t t,
                int64_t channel, float value) {
  for (int64_t h = 0; h < H; ++h)
    x[static_cast<size_t>((t * H + h) * D + channel)] = value;
}

void randomize(std::vector<float> &x, int64_t H, int64_t D, int64_t t0,
               int64_t t1, NormalGenerator &gen) {
  for (int64_t t = t0; t < t1; ++t)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t d = 0; d < D; ++d)
        x[static_cast<size_t>((t * H + h) * D + d)] = roundToBf16(gen.next());
}

class Checker {
public:
  Checker(const AttentionTensors &base, const RecipeConfig &recipe,
          const LeakCheckOptions &options)
      : base_(base), recipe_(recipe), opt_(options), T_(base.numTokens),
        Hq_(base.numHeads), Hkv_(base.numKvHeads), D_(base.headDim) {}

  Status run(LeakCheckReport &report) {
    ScoreTrace trace;
    const bool traced = !recipe_.float64Reference && opt_.checkConsistency;
    AttentionInputs in = base_.inputs();
    if (Status s = runAttention(in, recipe_, base_.dO.data(), baseF_, &baseB_,
                                traced ? &trace : nullptr);
        !s)
      return s;
    if (opt_.checkL1)
      report.results.push_back(checkL1());
    if (opt_.checkL2)
      report.results.push_back(checkL2());
    if (opt_.checkL3)
      report.results.push_back(checkL3());
    if (opt_.checkConsistency)
      report.results.push_back(checkConsistency(traced ? &trace : nullptr));
    return Status::success();
  }

private:
  const std::vector<float> *tensor(const AttentionTensors &t, char which) const {
    switch (which) {
    case 'Q':
      return &t.q;
    case 'K':
      return &t.k;
    case 'V':
      return &t.v;
    default:
      return &t.dO;
    }
  }
  int64_t heads(char which) const {
    return (which == 'K' || which == 'V') ? Hkv_ : Hq_;
  }
  std::vector<float> &mutableTensor(AttentionTensors &t, char which) const {
    return const_cast<std::vector<float> &>(*tensor(t, which));
  }
  int64_t channelFor(int64_t t) const { return (t * 7 + 3) % D_; }
  std::vector<int64_t> cuts(int doc, bool needFuture, bool needPast) const {
    std::vector<int64_t> out;
    const int64_t b = base_.docs.begin(doc), L = base_.docs.length(doc);
    for (int64_t off : opt_.cutOffsets) {
      if (off < 0 || off >= L)
        continue;
      if (needFuture && off + 1 >= L)
        continue;
      if (needPast && off == 0)
        continue;
      out.push_back(b + off);
    }
    return out;
  }
  std::string docContext(const char *prop, int doc, int64_t cut) const {
    return std::string(prop) + " doc " + std::to_string(doc) + " cut t=" +
           std::to_string(cut);
  }

  PropertyResult checkL1() {
    PropertyResult r;
    r.name = "L1";
    if (!base_.causal) {
      r.skippedBecause = "non-causal attention";
      return r;
    }
    r.checked = true;
    for (int doc = 0; doc < base_.docs.numDocuments(); ++doc) {
      const int64_t b = base_.docs.begin(doc), e = base_.docs.end(doc);
      for (int64_t c : cuts(doc, true, false)) {
        auto compare = [&](const AttentionTensors &t, const std::string &what) {
          ForwardOutputs f;
          (void)runAttention(t.inputs(), recipe_, nullptr, f, nullptr);
          Comparison cmp;
          cmp.tokens(baseF_.o, f.o, Hq_, D_, b, c + 1, "O");
          cmp.lse(baseF_.lse, f.lse, Hq_, T_, b, c + 1);
          record(r, docContext("L1", doc, c), what, cmp);
        };
        for (char x : {'Q', 'K', 'V'}) {
          AttentionTensors t = base_;
          std::vector<float> &v = mutableTensor(t, x);
          setOutlier(v, heads(x), D_, c + 1, channelFor(c + 1),
                     roundToBf16(opt_.outlierFactor * largestMagnitude(v)));
          compare(t, std::string(1, x) + "[t=" + std::to_string(c + 1) +
                         ", d=" + std::to_string(channelFor(c + 1)) +
                         "] (outlier)");
        }
        AttentionTensors t = base_;
        NormalGenerator gen(opt_.seed + static_cast<uint32_t>(c));
        for (char x : {'Q', 'K', 'V'})
          randomize(mutableTensor(t, x), heads(x), D_, c + 1, e, gen);
        compare(t, "Q,K,V[t=" + range(c + 1, e) + "] (random)");
      }
    }
    return r;
  }

  PropertyResult checkL2() {
    PropertyResult r;
    r.name = "L2";
    int nonEmpty = 0;
    for (int doc = 0; doc < base_.docs.numDocuments(); ++doc)
      nonEmpty += base_.docs.length(doc) > 0;
    if (nonEmpty < 2) {
      r.skippedBecause = "needs at least two non-empty documents";
      return r;
    }
    r.checked = true;
    for (int doc = 0; doc < base_.docs.numDocuments(); ++doc) {
      const int64_t b = base_.docs.begin(doc), e = base_.docs.end(doc);
      if (e == b)
        continue;
      auto compare = [&](const AttentionTensors &t, const std::string &what) {
        ForwardOutputs f;
        BackwardOutputs g;
        (void)runAttention(t.inputs(), recipe_, t.dO.data(), f, &g);
        Comparison cmp;
        for (auto [t0, t1] : {std::pair<int64_t, int64_t>(0, b),
                              std::pair<int64_t, int64_t>(e, T_)}) {
          cmp.tokens(baseF_.o, f.o, Hq_, D_, t0, t1, "O");
          cmp.lse(baseF_.lse, f.lse, Hq_, T_, t0, t1);
          cmp.tokens(baseB_.dq, g.dq, Hq_, D_, t0, t1, "dQ");
          cmp.tokens(baseB_.dk, g.dk, Hkv_, D_, t0, t1, "dK");
          cmp.tokens(baseB_.dv, g.dv, Hkv_, D_, t0, t1, "dV");
        }
        record(r, "L2 doc " + std::to_string(doc) + " [t=" + range(b, e) + "]",
               what, cmp);
      };
      for (char x : {'Q', 'K', 'V', 'O' /* dO */}) {
        AttentionTensors t = base_;
        std::vector<float> &v = mutableTensor(t, x);
        setOutlier(v, heads(x), D_, e - 1, channelFor(e - 1),
                   roundToBf16(opt_.outlierFactor * largestMagnitude(v)));
        compare(t, std::string(x == 'O' ? "dO" : std::string(1, x)) + "[t=" +
                       std::to_string(e - 1) + ", d=" +
                       std::to_string(channelFor(e - 1)) + "] (outlier)");
      }
      AttentionTensors t = base_;
      NormalGenerator gen(opt_.seed + 7919u * static_cast<uint32_t>(doc + 1));
      for (char x : {'Q', 'K', 'V', 'O'})
        randomize(mutableTensor(t, x), heads(x), D_, b, e, gen);
      compare(t, "Q,K,V,dO[t=" + range(b, e) + "] (random)");
    }
    return r;
  }

  PropertyResult checkL3() {
    PropertyResult r;
    r.name = "L3";
    if (!base_.causal) {
      r.skippedBecause = "non-causal attention";
      return r;
    }
    if (recipe_.float64Reference) {
      r.skippedBecause = "recipe none has no backward that takes O and LSE";
      return r;
    }
    r.checked = true;
    // The backward's inputs: Q, K, V, dO and the forward's O, LSE.
    struct BwdInputs {
      AttentionTensors t;
      std::vector<float> o, lse;
    };
    auto runBwd = [&](const BwdInputs &x, BackwardOutputs &g) {
      (void)referenceBackward(x.t.inputs(), recipe_, x.t.dO.data(), x.o.data(),
                              x.lse.data(), g);
    };
    BwdInputs base{base_, baseF_.o, baseF_.lse};
    const float oOutlier =
        roundToBf16(opt_.outlierFactor * largestMagnitude(baseF_.o));
    // Perturbs one of Q K V dO O LSE at token t (outlier) or at [t0, t1).
    auto outlier = [&](BwdInputs &x, const std::string &which, int64_t t) {
      const int64_t ch = channelFor(t);
      if (which == "O") {
        setOutlier(x.o, Hq_, D_, t, ch, oOutlier);
      } else if (which == "LSE") {
        for (int64_t h = 0; h < Hq_; ++h)
          x.lse[h * T_ + t] += 10.0f;
      } else {
        char c = which == "dO" ? 'O' : which[0];
        std::vector<float> &v = mutableTensor(x.t, c);
        setOutlier(v, heads(c), D_, t, ch,
                   roundToBf16(opt_.outlierFactor * largestMagnitude(v)));
      }
      return which + "[t=" + std::to_string(t) +
             (which == "LSE" ? "] (+10)" : ", d=" + std::to_string(ch) +
                                               "] (outlier)");
    };
    auto randomAll = [&](BwdInputs &x, int64_t t0, int64_t t1, uint32_t seed) {
      NormalGenerator gen(seed);
      for (char c : {'Q', 'K', 'V', 'O'})
        randomize(mutableTensor(x.t, c), heads(c), D_, t0, t1, gen);
      randomize(x.o, Hq_, D_, t0, t1, gen);
      for (int64_t h = 0; h < Hq_; ++h)
        for (int64_t t = t0; t < t1; ++t)
          x.lse[h * T_ + t] += gen.next();
      return "Q,K,V,dO,O,LSE[t=" + range(t0, t1) + "] (random)";
    };
    const char *names[] = {"Q", "K", "V", "dO", "O", "LSE"};
    for (int doc = 0; doc < base_.docs.numDocuments(); ++doc) {
      const int64_t b = base_.docs.begin(doc), e = base_.docs.end(doc);
      // dQ_i for i <= c against the future.
      for (int64_t c : cuts(doc, true, false)) {
        auto compare = [&](const BwdInputs &x, const std::string &what) {
          BackwardOutputs g;
          runBwd(x, g);
          Comparison cmp;
          cmp.tokens(baseB_.dq, g.dq, Hq_, D_, b, c + 1, "dQ");
          record(r, docContext("L3 (dQ vs future)", doc, c), what, cmp);
        };
        for (const char *which : names) {
          BwdInputs x = base;
          std::string what = outlier(x, which, c + 1);
          compare(x, what);
        }
        BwdInputs x = base;
        std::string what =
            randomAll(x, c + 1, e, opt_.seed + 31u * static_cast<uint32_t>(c));
        compare(x, what);
      }
      // dK_j, dV_j for j >= c against the past.
      for (int64_t c : cuts(doc, false, true)) {
        auto compare = [&](const BwdInputs &x, const std::string &what) {
          BackwardOutputs g;
          runBwd(x, g);
          Comparison cmp;
          cmp.tokens(baseB_.dk, g.dk, Hkv_, D_, c, e, "dK");
          cmp.tokens(baseB_.dv, g.dv, Hkv_, D_, c, e, "dV");
          record(r, docContext("L3 (dK,dV vs past)", doc, c), what, cmp);
        };
        for (const char *which : names) {
          BwdInputs x = base;
          std::string what = outlier(x, which, c - 1);
          compare(x, what);
        }
        BwdInputs x = base;
        std::string what =
            randomAll(x, b, c, opt_.seed + 37u * static_cast<uint32_t>(c));
        compare(x, what);
      }
    }
    return r;
  }

  PropertyResult checkConsistency(const ScoreTrace *trace) {
    PropertyResult r;
    r.name = "Consistency";
    if (!trace) {
      r.skippedBecause = "recipe none computes in float64 without a "
                         "recomputed-score trace";
      return r;
    }
    r.checked = true;
    AttentionInputs in = base_.inputs();
    for (int which = 0; which < 2; ++which) {
      const std::vector<float> &rec =
          which == 0 ? trace->backwardRows : trace->backwardColumns;
      Comparison cmp;
      for (int64_t h = 0; h < Hq_; ++h)
        for (int64_t i = 0; i < T_; ++i) {
          int doc = base_.docs.documentOf(i);
          int64_t b = base_.docs.begin(doc);
          int64_t keyEnd = base_.causal ? i + 1 : base_.docs.end(doc);
          for (int64_t j = b; j < keyEnd; ++j) {
            int64_t idx = trace->index(in, h, i, j);
            cmp.note(trace->forward[idx], rec[idx],
                     bitsOf(trace->forward[idx]) != bitsOf(rec[idx])
                         ? "S[h=" + std::to_string(h) + ", i=" +
                               std::to_string(i) + ", j=" + std::to_string(j) +
                               "]"
                         : std::string());
          }
        }
      cmp.parts.push_back("forward S vs backward S (" +
                          std::string(which == 0 ? "dQ pass" : "dK/dV pass") +
                          ", " + std::to_string(cmp.elements) +
                          " unmasked pairs)");
      record(r, "Consistency", "", cmp);
    }
    return r;
  }

  const AttentionTensors &base_;
  const RecipeConfig &recipe_;
  const LeakCheckOptions &opt_;
  const int64_t T_, Hq_, Hkv_, D_;
  ForwardOutputs baseF_;
  BackwardOutputs baseB_;
};

} // namespace

Status runLeakCheck(const AttentionTensors &base, const RecipeConfig &recipe,
                    const LeakCheckOptions &options, LeakCheckReport &report) {
  AttentionInputs in = base.inputs();
  if (Status s = validateAttentionInputs(in); !s)
    return s;
  if (Status s = recipe.validate(base.headDim); !s)
    return s;
  Checker checker(base, recipe, options);
  return checker.run(report);
}

} // namespace flamia::numerics
