//===- AttentionCommand.cpp - flamia-ref attention ---------------*- C++ -*-===//
//
// flamia-ref attention --recipe R [--causal] [--cu-seqlens CU.npy]
//     [--softmax-scale S] [--safe-block N] [--strict]
//     Q.npy K.npy V.npy [--backward DO.npy] -o PREFIX
//
//===----------------------------------------------------------------------===//
#include "ArrayFiles.h"
#include "CommandLine.h"
#include "RecipeOptions.h"

#include "flamia/Numerics/ReferenceAttention.h"
#include "flamia/Support/Validation.h"

#include <cstdio>

namespace flamia::ref {

using namespace numerics;

static const char *kAttentionUsage =
    "usage: flamia-ref attention --recipe RECIPE [--causal]\n"
    "           [--cu-seqlens CU.npy] [--softmax-scale S] [--safe-block N]\n"
    "           [--strict] Q.npy K.npy V.npy [--backward DO.npy] -o PREFIX\n"
    "\n"
    "Runs the CPU reference attention (docs/numerics.md) on float32 inputs\n"
    "holding bf16 values: Q [T, Hq, D], K and V [T, Hkv, D] (Hq a multiple of\n"
    "Hkv), DO [T, Hq, D]. Writes PREFIX.o.npy [T, Hq, D] and PREFIX.lse.npy\n"
    "[Hq, T] (natural log), and with --backward PREFIX.dq.npy, PREFIX.dk.npy,\n"
    "PREFIX.dv.npy (float32).\n"
    "\n"
    "  --recipe        mxfp8 (default) | mxfp8-strict | none (float64, no\n"
    "                  quantization) | leaky-token-block-q |\n"
    "                  leaky-no-safe-block | leaky-packed-blocks |\n"
    "                  plain-mxfp8 | per-tensor-fp8\n"
    "  --causal        causal masking (default: none)\n"
    "  --cu-seqlens    int32 [num_docs + 1] (default: one document)\n"
    "  --softmax-scale default 1/sqrt(D)\n"
    "  --safe-block N  0 or a multiple of 32 (default: the recipe's, 128)\n"
    "  --strict        per-token operands for Q K^T and dO V^T (L3)\n";

int runAttentionCommand(int argc, char **argv) {
  const char *cmd = "attention";
  CommandLine cl;
  cl.addString("--recipe", "RECIPE")
      .addString("--cu-seqlens", "CU.npy")
      .addString("--softmax-scale", "S")
      .addString("--safe-block", "N")
      .addString("--backward", "DO.npy")
      .addString("-o", "PREFIX")
      .addFlag("--causal")
      .addFlag("--strict")
      .addFlag({"-h", "--help"});
  std::string error;
  if (!cl.parse(argc, argv, 1, error))
    return badInput(cmd, error + "\n" + kAttentionUsage);
  if (cl.flag("--help")) {
    std::fputs(kAttentionUsage, stdout);
    return 0;
  }
  RecipeConfig recipe;
  if (!recipeFromOptions(cl, "mxfp8", recipe, error))
    return badInput(cmd, error);
  auto prefix = cl.value("-o");
  if (!prefix)
    return badInput(cmd, "missing -o PREFIX");
  if (cl.positional().size() != 3)
    return badInput(cmd, "expected three inputs Q.npy K.npy V.npy, got " +
                             std::to_string(cl.positional().size()));
  float softmaxScale = 0.0f; // 0: the default, 1/sqrt(D)
  if (auto s = cl.value("--softmax-scale"))
    if (!parseSoftmaxScale(*s, softmaxScale, error))
      return badInput(cmd, error);

  NpyArray q, k, v, dO;
  const std::vector<std::string> &pos = cl.positional();
  if (!loadArray(pos[0], "Q", NpyDType::Float32, 3, "[T, Hq, D]", q, error) ||
      !loadArray(pos[1], "K", NpyDType::Float32, 3, "[T, Hkv, D]", k, error) ||
      !loadArray(pos[2], "V", NpyDType::Float32, 3, "[T, Hkv, D]", v, error) ||
      !checkTokenTensor(q, "Q", error))
    return badInput(cmd, error);
  const int64_t T = q.shape[0], Hq = q.shape[1], D = q.shape[2];
  if (k.shape[0] != T || k.shape[2] != D)
    return badInput(cmd, "K has shape " + k.shapeString() + " but Q has " +
                             q.shapeString() +
                             " (expected [T, Hkv, D] with Q's T and D)");
  if (v.shape != k.shape)
    return badInput(cmd, "V has shape " + v.shapeString() +
                             " but K has " + k.shapeString());
  const int64_t Hkv = k.shape[1];
  // Heads: the rule and wording of every tool and the runtime.
  if (!validation::validateHeads(Hq, Hkv, error))
    return badInput(cmd, "Q, K (heads from the shapes): " + error);
  if (D < 1)
    return badInput(cmd, "Q, K and V need at least one channel (D >= 1)");
  if (auto path = cl.value("--backward")) {
    if (!loadArray(*path, "DO", NpyDType::Float32, 3, "[T, Hq, D]", dO, error))
      return badInput(cmd, error);
    if (dO.shape != q.shape)
      return badInput(cmd, "DO has shape " + dO.shapeString() +
                               " but Q has " + q.shapeString());
  }
  if (Status s = recipe.validate(D); !s)
    return badInput(cmd, s.message);
  DocumentLayout docs = DocumentLayout::singleDocument(T);
  if (auto cu = cl.value("--cu-seqlens"))
    if (!loadCuSeqlens(*cu, T, docs, error))
      return badInput(cmd, error);

  AttentionInputs in;
  in.numTokens = T;
  in.numHeads = Hq;
  in.numKvHeads = Hkv;
  in.headDim = D;
  in.q = q.data<float>();
  in.k = k.data<float>();
  in.v = v.data<float>();
  in.docs = &docs;
  in.causal = cl.flag("--causal");
  in.softmaxScale = softmaxScale;
  const bool backward = !dO.bytes.empty() || cl.value("--backward");
  ForwardOutputs f;
  BackwardOutputs g;
  if (Status s = runAttention(in, recipe, backward ? dO.data<float>() : nullptr,
                              f, backward ? &g : nullptr);
      !s)
    return badInput(cmd, s.message);
  std::vector<std::pair<std::string, NpyArray>> outputs = {
      {*prefix + ".o.npy", floatArray({T, Hq, D}, f.o)},
      {*prefix + ".lse.npy", floatArray({Hq, T}, f.lse)}};
  if (backward) {
    outputs.push_back({*prefix + ".dq.npy", floatArray({T, Hq, D}, g.dq)});
    outputs.push_back({*prefix + ".dk.npy", floatArray({T, Hkv, D}, g.dk)});
    outputs.push_back({*prefix + ".dv.npy", floatArray({T, Hkv, D}, g.dv)});
  }
  if (!writeAll(outputs, error))
    return badInput(cmd, error);
  return 0;
}

} // namespace flamia::ref
