//===- LeakCheckCommand.cpp - flamia-ref leakcheck ---------------*- C++ -*-===//
//
// flamia-ref leakcheck [--recipe R] [--strict] [--l3] [--safe-block N]
//     [--cu-seqlens CU.npy | --doc-lengths L0,L1,...] [--heads H]
//     [--kv-heads HKV] [--head-dim D] [--inputs random|outlier|massive|small-grad] [--seed S]
//     [--cuts C0,C1,...] [--no-l1] [--no-l2] [Q.npy K.npy V.npy DO.npy]
//
//===----------------------------------------------------------------------===//
#include "ArrayFiles.h"
#include "CommandLine.h"
#include "RecipeOptions.h"

#include "flamia/Numerics/LeakCheck.h"
#include "flamia/Support/Validation.h"

#include <cstdio>
#include <cstring>

namespace flamia::ref {

using namespace numerics;

static const char *kLeakCheckUsage =
    "usage: flamia-ref leakcheck [--recipe RECIPE] [--strict] [--l3]\n"
    "           [--safe-block N] [--cu-seqlens CU.npy | --doc-lengths L,...]\n"
    "           [--heads H] [--kv-heads HKV] [--head-dim D]\n"
    "           [--inputs random|outlier|massive|small-grad] [--seed S] [--cuts C,...]\n"
    "           [--no-l1] [--no-l2] [Q.npy K.npy V.npy DO.npy]\n"
    "\n"
    "Checks the properties of docs/numerics.md on the CPU reference (causal\n"
    "attention) by perturbing inputs and comparing outputs bit for bit:\n"
    "  L1 forward causality, L2 document isolation, Consistency of the\n"
    "  backward's recomputed scores, and for a strict recipe (or with --l3)\n"
    "  L3 strict backward causality. --strict makes the recipe strict.\n"
    "Prints every comparison and one verdict line per property; exit status\n"
    "0 if all pass, 1 if one fails, 2 on bad input.\n"
    "\n"
    "Inputs: Q K V DO files (float32, [T, Hq, D] / [T, Hkv, D]) with\n"
    "--cu-seqlens, or (default) synthetic bf16 inputs: --doc-lengths\n"
    "(default 300,45,0,215), --heads 2, --kv-heads 1, --head-dim 64,\n"
    "--inputs outlier, --seed 1.\n"
    "--cuts: cut points as offsets in each document (default\n"
    "0,31,32,45,127,128,150,200).\n";

/// " (strict)" for a recipe made strict by --strict; nothing when the
/// recipe's own name says so ("mxfp8-strict").
static const char *strictSuffix(const RecipeConfig &recipe) {
  const std::string tail = "-strict";
  bool named = recipe.name.size() > tail.size() &&
               recipe.name.compare(recipe.name.size() - tail.size(),
                                   tail.size(), tail) == 0;
  return recipe.strict && !named ? " (strict)" : "";
}

int runLeakCheckCommand(int argc, char **argv) {
  const char *cmd = "leakcheck";
  CommandLine cl;
  cl.addString("--recipe", "RECIPE")
      .addString("--safe-block", "N")
      .addString("--cu-seqlens", "CU.npy")
      .addString("--doc-lengths", "L1,L2,...")
      .addInteger("--heads", "H", 1, validation::kMaxHeads)
      .addInteger("--kv-heads", "HKV", 1, validation::kMaxHeads)
      .addInteger("--head-dim", "D", 1, kMaxHeadDim)
      .addString("--inputs", "KIND")
      .addInteger("--seed", "S", 0, 0xffffffffll)
      .addString("--cuts", "C1,C2,...")
      .addFlag("--strict")
      .addFlag("--l3")
      .addFlag("--no-l1")
      .addFlag("--no-l2")
      .addFlag({"-h", "--help"});
  std::string error;
  if (!cl.parse(argc, argv, 1, error))
    return badInput(cmd, error + "\n" + kLeakCheckUsage);
  if (cl.flag("--help")) {
    std::fputs(kLeakCheckUsage, stdout);
    return 0;
  }
  RecipeConfig recipe;
  if (!recipeFromOptions(cl, "mxfp8", recipe, error))
    return badInput(cmd, error);
  LeakCheckOptions options;
  options.checkL1 = !cl.flag("--no-l1");
  options.checkL2 = !cl.flag("--no-l2");
  // A strict recipe promises L3, whether --strict or its name made it so.
  options.checkL3 = recipe.strict || cl.flag("--l3");
  if (auto cuts = cl.value("--cuts")) {
    if (!parseIntList(*cuts, options.cutOffsets))
      return badInput(cmd, "malformed --cuts '" + *cuts +
                               "' (expected comma-separated integers)");
    for (int64_t c : options.cutOffsets)
      if (c < 0 || c > validation::kMaxTokens)
        return badInput(cmd, "--cuts: cut offset " + std::to_string(c) +
                                 " must be in [0, " +
                                 std::to_string(validation::kMaxTokens) + "]");
  }
  int64_t seed = 1;
  if (!cl.getInteger("--seed", seed, error))
    return badInput(cmd, error);
  options.seed = static_cast<uint32_t>(seed) * 2654435761u + 12345u;

  AttentionTensors tensors;
  const std::vector<std::string> &pos = cl.positional();
  if (pos.size() == 4) {
    if (cl.value("--doc-lengths") || cl.value("--heads") ||
        cl.value("--kv-heads") || cl.value("--head-dim") || cl.value("--inputs"))
      return badInput(cmd, "--doc-lengths, --heads, --kv-heads, --head-dim "
                           "and --inputs describe synthetic inputs; with "
                           "input files use --cu-seqlens");
    NpyArray q, k, v, dO;
    if (!loadArray(pos[0], "Q", NpyDType::Float32, 3, "[T, Hq, D]", q, error) ||
        !loadArray(pos[1], "K", NpyDType::Float32, 3, "[T, Hkv, D]", k, error) ||
        !loadArray(pos[2], "V", NpyDType::Float32, 3, "[T, Hkv, D]", v, error) ||
        !loadArray(pos[3], "DO", NpyDType::Float32, 3, "[T, Hq, D]", dO, error) ||
        !checkTokenTensor(q, "Q", error))
      return badInput(cmd, error);
    const int64_t T = q.shape[0], Hq = q.shape[1], D = q.shape[2];
    if (k.shape[0] != T || k.shape[2] != D || v.shape != k.shape ||
        dO.shape != q.shape)
      return badInput(cmd, "inconsistent shapes: Q " + q.shapeString() +
                               ", K " + k.shapeString() + ", V " +
                               v.shapeString() + ", DO " + dO.shapeString());
    if (!validation::validateHeads(Hq, k.shape[1], error))
      return badInput(cmd, "Q, K (heads from the shapes): " + error);
    if (D < 1)
      return badInput(cmd, "Q, K and V need at least one channel (D >= 1)");
    tensors.numTokens = T;
    tensors.numHeads = Hq;
    tensors.numKvHeads = k.shape[1];
    tensors.headDim = D;
    auto floats = [](const NpyArray &a) {
      return std::vector<float>(a.data<float>(), a.data<float>() + a.numElements());
    };
    tensors.q = floats(q);
    tensors.k = floats(k);
    tensors.v = floats(v);
    tensors.dO = floats(dO);
    tensors.docs = DocumentLayout::singleDocument(T);
    if (auto cu = cl.value("--cu-seqlens"))
      if (!loadCuSeqlens(*cu, T, tensors.docs, error))
        return badInput(cmd, error);
  } else if (pos.empty()) {
    std::vector<int64_t> lengths = {300, 45, 0, 215};
    if (auto dl = cl.value("--doc-lengths"))
      if (!parseIntList(*dl, lengths))
        return badInput(cmd, "malformed --doc-lengths '" + *dl + "'");
    int64_t H = 2, Hkv = 1, D = 64;
    if (!cl.getInteger("--heads", H, error) ||
        !cl.getInteger("--kv-heads", Hkv, error) ||
        !cl.getInteger("--head-dim", D, error))
      return badInput(cmd, error);
    if (!validation::validateHeads(H, Hkv, error))
      return badInput(cmd, "--heads/--kv-heads: " + error);
    InputKind kind = InputKind::Outlier;
    if (auto s = cl.value("--inputs"); s && !inputKindFromName(*s, kind))
      return badInput(cmd, std::string("--inputs must be ") +
                               inputKindNames() + ", got '" + *s + "'");
    DocumentLayout docs;
    if (auto cu = cl.value("--cu-seqlens")) {
      return badInput(cmd, "--cu-seqlens needs input files; use "
                           "--doc-lengths for synthetic inputs");
    }
    std::vector<int32_t> cu;
    if (!validation::cuSeqlensFromLengths(lengths.data(), lengths.size(),
                                          kMaxSyntheticTokens, cu, error))
      return badInput(cmd, "--doc-lengths: " + error);
    if (!validation::validateProblemSize(cu.back(), H, Hkv, D,
                                         kMaxSyntheticElements, error))
      return badInput(cmd, error);
    (void)DocumentLayout::fromCuSeqlens(cu, cu.back(), docs);
    tensors = makeSyntheticInputs(docs, H, Hkv, D, kind,
                                  static_cast<uint32_t>(seed));
  } else {
    return badInput(cmd, "expected four input files Q.npy K.npy V.npy DO.npy "
                         "or none (synthetic inputs), got " +
                             std::to_string(pos.size()));
  }
  tensors.causal = true;
  if (Status s = recipe.validate(tensors.headDim); !s)
    return badInput(cmd, s.message);

  std::printf("leakcheck: recipe %s%s, T=%lld, Hq=%lld, Hkv=%lld, D=%lld, "
              "causal, cu_seqlens [",
              recipe.name.c_str(), strictSuffix(recipe),
              static_cast<long long>(tensors.numTokens),
              static_cast<long long>(tensors.numHeads),
              static_cast<long long>(tensors.numKvHeads),
              static_cast<long long>(tensors.headDim));
  const auto &cuv = tensors.docs.cuSeqlens();
  for (size_t k = 0; k < cuv.size(); ++k)
    std::printf("%s%lld", k ? ", " : "", static_cast<long long>(cuv[k]));
  std::printf("]%s\n", pos.empty() ? (std::string(", synthetic ") +
                                      (cl.value("--inputs").value_or("outlier")) +
                                      " inputs").c_str()
                                   : ", inputs from files");
  std::fputs(recipe.describe().c_str(), stdout);
  LeakCheckReport report;
  if (Status s = runLeakCheck(tensors, recipe, options, report); !s)
    return badInput(cmd, s.message);
  for (const PropertyResult &r : report.results)
    for (const std::string &line : r.log)
      std::printf("%s\n", line.c_str());
  for (const PropertyResult &r : report.results)
    std::printf("%s\n", r.verdict().c_str());
  std::fflush(stdout);
  return report.pass() ? 0 : 1;
}

} // namespace flamia::ref
