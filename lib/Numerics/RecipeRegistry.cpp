//===- RecipeRegistry.cpp - Every recipe kind and who implements it -------===//
#include "flamia/Numerics/RecipeRegistry.h"

namespace flamia::numerics {

const std::vector<RecipeKind> &recipeKinds() {
  static const std::vector<RecipeKind> kinds = {
      {"mxfp8",
       "mxfp8",
       "mxfp8",
       "mxfp8-strict",
       // The forward and backward kernels of both targets. Strict mode (K
       // per token in Q K^T, dO and V per token in dO V^T) on sm_90a only:
       // sm_100a's kernels quantize K in 32x32 token blocks.
       {{"sm_90a", {64, 128}, true, true},
        {"sm_100a", {64, 128}, false, true}}},
      // The mixed NVFP4/FP8 recipe (issue 14): NVFP4 per-token Q, K, V, dO
      // where the head dim is contracted, MXFP8 token blocks elsewhere.
      // sm_90a dequantizes them to bf16 for wgmma; sm_100a's forward and
      // backward read the E2M1 payloads (Q K^T, dO V^T and their
      // transposes by kind::mxf4nvf4.block_scale.scale_vec::4X). Strict
      // mode changes none of its layouts (Q K^T and dO V^T are per token
      // already): its strict preset has the same numerics, and the same
      // kernels.
      {"nvfp4-mixed",
       "nvfp4_mixed",
       "nvfp4-mixed",
       "nvfp4-mixed-strict",
       {{"sm_90a", {64, 128}, true, true},
        {"sm_100a", {64, 128}, true, true}}},
  };
  return kinds;
}

const RecipeKind *findRecipeKind(const std::string &name) {
  for (const RecipeKind &k : recipeKinds())
    if (k.name == name)
      return &k;
  return nullptr;
}

const RecipeKind *findRecipeKindOrStrictPreset(const std::string &name,
                                               bool &strict) {
  strict = false;
  for (const RecipeKind &k : recipeKinds()) {
    if (k.name == name)
      return &k;
    if (k.strictPreset == name) {
      strict = true;
      return &k;
    }
  }
  return nullptr;
}

const RecipeKind *findRecipeKindByDialectName(const std::string &dialectName) {
  for (const RecipeKind &k : recipeKinds())
    if (k.dialectName == dialectName)
      return &k;
  return nullptr;
}

Status lookupRecipeKindByDialectName(const std::string &dialectName,
                                     const RecipeKind *&out) {
  out = findRecipeKindByDialectName(dialectName);
  if (!out)
    return Status::error("recipe " + dialectName +
                         " is not in the recipe registry");
  return Status::success();
}

/// "a, b, c".
static std::string joined(const std::vector<std::string> &items) {
  std::string s;
  for (const std::string &i : items)
    s += (s.empty() ? "" : ", ") + i;
  return s;
}

/// The names of the kinds, all or only those with a numerics preset.
static std::string kindNames(bool withPresetOnly) {
  std::vector<std::string> names;
  for (const RecipeKind &k : recipeKinds())
    if (!withPresetOnly || !k.preset.empty())
      names.push_back(k.name);
  return joined(names);
}

std::string recipeKindNames() { return kindNames(/*withPresetOnly=*/false); }

Status contractRecipe(const RecipeKind &kind, bool strict, int64_t safeBlock,
                      RecipeConfig &out) {
  const std::string &preset = strict ? kind.strictPreset : kind.preset;
  if (preset.empty())
    return Status::error("recipe " + kind.name +
                         (strict ? " (strict)" : "") +
                         " is not implemented by the numerics library (it "
                         "implements " +
                         kindNames(/*withPresetOnly=*/true) + ")");
  RecipeConfig r;
  if (Status s = recipeFromName(preset, r); !s)
    return s;
  r.safeBlock = safeBlock;
  out = r;
  return Status::success();
}

const std::vector<std::string> &kernelTargets() {
  static const std::vector<std::string> targets = [] {
    std::vector<std::string> t;
    for (const RecipeKind &k : recipeKinds())
      for (const RecipeKernels &kernels : k.kernels) {
        bool seen = false;
        for (const std::string &s : t)
          seen |= s == kernels.target;
        if (!seen)
          t.push_back(kernels.target);
      }
    return t;
  }();
  return targets;
}

Status checkKernels(const RecipeKind &kind, bool strict,
                    const std::string &target, int64_t headDim) {
  bool known = false;
  for (const std::string &t : kernelTargets())
    known |= t == target;
  if (!known)
    return Status::error("unsupported target '" + target + "' (" +
                         joined(kernelTargets()) + ")");
  const RecipeKernels *kernels = nullptr;
  for (const RecipeKernels &k : kind.kernels)
    if (k.target == target)
      kernels = &k;
  if (!kernels) {
    std::vector<std::string> withKernels;
    for (const RecipeKind &k : recipeKinds())
      for (const RecipeKernels &kk : k.kernels)
        if (kk.target == target)
          withKernels.push_back(k.name);
    return Status::error("no " + target + " kernels implement recipe " +
                         kind.name + " yet (they implement " +
                         joined(withKernels) + ")");
  }
  if (strict && !kernels->strict)
    return Status::error("no " + target + " kernels implement strict " +
                         kind.name + " (L3 causality: K quantized per token) "
                         "yet; they quantize K in 32x32 token blocks");
  for (int64_t d : kernels->headDims)
    if (d == headDim)
      return Status::success();
  std::vector<std::string> dims;
  for (int64_t d : kernels->headDims)
    dims.push_back(std::to_string(d));
  return Status::error("head dim " + std::to_string(headDim) +
                       " is not implemented by the kernels (" + joined(dims) +
                       ")");
}

Status checkBackwardKernels(const RecipeKind &kind, bool strict,
                            const std::string &target, int64_t headDim) {
  if (Status s = checkKernels(kind, strict, target, headDim); !s)
    return s;
  std::vector<std::string> withBackward;
  for (const RecipeKernels &k : kind.kernels) {
    if (k.target == target && k.backward)
      return Status::success();
    if (k.backward)
      withBackward.push_back(k.target);
  }
  return Status::error("no " + target + " backward kernels implement recipe " +
                       kind.name + " yet (" +
                       (withBackward.empty()
                            ? std::string("no target has them")
                            : "they exist for " + joined(withBackward)) +
                       "); the forward kernels do");
}

} // namespace flamia::numerics
