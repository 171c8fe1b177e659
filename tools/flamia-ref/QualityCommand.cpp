//===- QualityCommand.cpp - flamia-ref quality -------------------*- C++ -*-===//
//
// flamia-ref quality [--tokens T | --doc-lengths L,...] [--heads H]
//     [--kv-heads HKV] [--head-dim D] [--inputs random,outlier,massive,small-grad]
//     [--recipes R[:SAFE],...] [--seed S]
//
// Measures each recipe against the float64 reference (recipe none) on
// synthetic inputs: cosine similarity and relative L2 error of O, dQ, dK,
// dV, and the wall time of the reference forward + backward.
//
//===----------------------------------------------------------------------===//
#include "ArrayFiles.h"
#include "CommandLine.h"

#include "flamia/Numerics/Parallel.h"
#include "flamia/Numerics/ReferenceAttention.h"
#include "flamia/Numerics/SyntheticInputs.h"
#include "flamia/Support/Validation.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace flamia::ref {

using namespace numerics;

static const char *kQualityUsage =
    "usage: flamia-ref quality [--tokens T | --doc-lengths L,...]\n"
    "           [--heads H] [--kv-heads HKV] [--head-dim D]\n"
    "           [--inputs random,outlier,massive,small-grad] [--recipes R[:SAFE],...]\n"
    "           [--seed S]\n"
    "\n"
    "Prints a markdown table: for each input kind and recipe, the cosine\n"
    "similarity and relative L2 error (||x - ref|| / ||ref||) of O, dQ, dK,\n"
    "dV against the float64 reference (recipe none), causal attention, and\n"
    "the wall time of the recipe's forward + backward.\n"
    "Defaults: --tokens 4096 (one document), --heads 2, --kv-heads = heads,\n"
    "--head-dim 128, --inputs random,outlier,massive,\n"
    "--recipes mxfp8:32,mxfp8:128,plain-mxfp8,per-tensor-fp8, --seed 1.\n"
    "RECIPE:SAFE overrides the safe block. Inputs: see\n"
    "include/flamia/Numerics/SyntheticInputs.h.\n";

namespace {
struct Metric {
  double cosine, relL2;
};
Metric compare(const std::vector<float> &x, const std::vector<float> &ref) {
  double xr = 0, xx = 0, rr = 0, dd = 0;
  for (size_t k = 0; k < x.size(); ++k) {
    double a = x[k], b = ref[k];
    xr += a * b;
    xx += a * a;
    rr += b * b;
    dd += (a - b) * (a - b);
  }
  return {xr / std::sqrt(xx * rr), std::sqrt(dd / rr)};
}
std::vector<std::string> split(const std::string &s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    out.push_back(item);
  return out;
}
} // namespace

int runQualityCommand(int argc, char **argv) {
  const char *cmd = "quality";
  CommandLine cl;
  cl.addInteger("--tokens", "T", 1, kMaxSyntheticTokens)
      .addString("--doc-lengths", "L1,L2,...")
      .addInteger("--heads", "H", 1, validation::kMaxHeads)
      .addInteger("--kv-heads", "HKV", 1, validation::kMaxHeads)
      .addInteger("--head-dim", "D", 1, kMaxHeadDim)
      .addString("--inputs", "KINDS")
      .addString("--recipes", "RECIPES")
      .addInteger("--seed", "S", 0, 0xffffffffll)
      .addFlag({"-h", "--help"});
  std::string error;
  if (!cl.parse(argc, argv, 1, error))
    return badInput(cmd, error + "\n" + kQualityUsage);
  if (cl.flag("--help")) {
    std::fputs(kQualityUsage, stdout);
    return 0;
  }
  if (!cl.positional().empty())
    return badInput(cmd, "quality takes no input files");
  int64_t T = 4096, H = 2, D = 128, seed = 1;
  if (!cl.getInteger("--tokens", T, error) ||
      !cl.getInteger("--heads", H, error) ||
      !cl.getInteger("--head-dim", D, error) ||
      !cl.getInteger("--seed", seed, error))
    return badInput(cmd, error);
  int64_t Hkv = H;
  if (!cl.getInteger("--kv-heads", Hkv, error))
    return badInput(cmd, error);
  if (!validation::validateHeads(H, Hkv, error))
    return badInput(cmd, "--heads/--kv-heads: " + error);
  std::vector<int32_t> cu = {0, static_cast<int32_t>(T)};
  if (auto dl = cl.value("--doc-lengths")) {
    if (cl.value("--tokens"))
      return badInput(cmd, "give --tokens or --doc-lengths, not both");
    std::vector<int64_t> lengths;
    if (!parseIntList(*dl, lengths))
      return badInput(cmd, "malformed --doc-lengths '" + *dl + "'");
    if (!validation::cuSeqlensFromLengths(lengths.data(), lengths.size(),
                                          kMaxSyntheticTokens, cu, error))
      return badInput(cmd, "--doc-lengths: " + error);
  }
  if (!validation::validateProblemSize(cu.back(), H, Hkv, D,
                                       kMaxSyntheticElements, error))
    return badInput(cmd, error);
  DocumentLayout docs;
  if (Status s = DocumentLayout::fromCuSeqlens(cu, cu.back(), docs); !s)
    return badInput(cmd, s.message);
  std::vector<InputKind> kinds;
  for (const std::string &k :
       split(cl.value("--inputs").value_or("random,outlier,massive"))) {
    InputKind kind;
    if (!inputKindFromName(k, kind))
      return badInput(cmd, "unknown input kind '" + k + "' (expected " +
                               inputKindNames() + ")");
    kinds.push_back(kind);
  }
  struct RecipeRun {
    std::string label;
    RecipeConfig recipe;
  };
  std::vector<RecipeRun> recipes;
  for (const std::string &spec :
       split(cl.value("--recipes")
                 .value_or("mxfp8:32,mxfp8:128,plain-mxfp8,per-tensor-fp8"))) {
    RecipeRun run;
    std::string name = spec;
    size_t colon = spec.find(':');
    if (colon != std::string::npos)
      name = spec.substr(0, colon);
    if (Status s = recipeFromName(name, run.recipe); !s)
      return badInput(cmd, s.message);
    if (colon != std::string::npos) {
      int64_t sb;
      if (!parseInt(spec.substr(colon + 1), sb) || sb < 0 || sb % 32 != 0 ||
          sb > (1 << 20))
        return badInput(cmd, "malformed safe block in '" + spec +
                                 "' (expected a multiple of 32)");
      run.recipe.safeBlock = sb;
    }
    if (Status s = run.recipe.validate(D); !s)
      return badInput(cmd, spec + ": " + s.message);
    run.label = spec;
    recipes.push_back(run);
  }

  std::printf("quality: T=%lld in %d document(s), causal, Hq=%lld, Hkv=%lld, "
              "D=%lld, seed %lld, %d threads; metrics against recipe none "
              "(float64)\n\n",
              static_cast<long long>(cu.back()), docs.numDocuments(),
              static_cast<long long>(H), static_cast<long long>(Hkv),
              static_cast<long long>(D), static_cast<long long>(seed),
              numThreads());
  std::printf("| inputs | recipe | safe block | O cos | O rel L2 | dQ cos | "
              "dQ rel L2 | dK cos | dK rel L2 | dV cos | dV rel L2 | fwd+bwd "
              "time |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::fflush(stdout);
  RecipeConfig none;
  (void)recipeFromName("none", none);
  for (InputKind kind : kinds) {
    AttentionTensors t = makeSyntheticInputs(docs, H, Hkv, D, kind,
                                             static_cast<uint32_t>(seed));
    AttentionInputs in = t.inputs();
    ForwardOutputs refF;
    BackwardOutputs refB;
    auto t0 = std::chrono::steady_clock::now();
    if (Status s = runAttention(in, none, t.dO.data(), refF, &refB); !s)
      return badInput(cmd, s.message);
    double refSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    std::printf("| %s | none (float64) | - | 1 | 0 | 1 | 0 | 1 | 0 | 1 | 0 | "
                "%.2f s |\n",
                inputKindName(kind), refSeconds);
    std::fflush(stdout);
    for (const RecipeRun &run : recipes) {
      ForwardOutputs f;
      BackwardOutputs g;
      t0 = std::chrono::steady_clock::now();
      if (Status s = runAttention(in, run.recipe, t.dO.data(), f, &g); !s)
        return badInput(cmd, s.message);
      double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
              .count();
      Metric mo = compare(f.o, refF.o), mq = compare(g.dq, refB.dq),
             mk = compare(g.dk, refB.dk), mv = compare(g.dv, refB.dv);
      std::string safe = run.recipe.safeBlock
                             ? std::to_string(run.recipe.safeBlock)
                             : std::string("none");
      std::printf("| %s | %s | %s | %.6f | %.3e | %.6f | %.3e | %.6f | %.3e | "
                  "%.6f | %.3e | %.2f s |\n",
                  inputKindName(kind), run.recipe.name.c_str(), safe.c_str(),
                  mo.cosine, mo.relL2, mq.cosine, mq.relL2, mk.cosine,
                  mk.relL2, mv.cosine, mv.relL2, seconds);
      std::fflush(stdout);
    }
  }
  return 0;
}

} // namespace flamia::ref
