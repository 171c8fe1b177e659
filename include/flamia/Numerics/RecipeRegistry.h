//===- RecipeRegistry.h - Every recipe kind and who implements it -*- C++ -*-===//
//
// The one place that says, for each recipe kind of the contract
// (docs/numerics.md, "Recipes"):
//   - how it is spelled: in the manifest and on the tools' command lines
//     (`name`), and in the dialect's #flamia.recipe<...> (`dialectName`,
//     which cannot hold a '-');
//   - what it quantizes how, per GEMM and orientation: its numerics preset
//     (a RecipeConfig: the eight operand uses, P, dS, the safe block), which
//     the CPU reference, the quantizer, the graph passes and the interpreter
//     all read;
//   - which targets and head dims have kernels for it (flamia-compile, the
//     varlen schedule, flamia-tile and flamia-run ask this, not their own
//     list).
// To add a recipe: a RecipeConfig preset (lib/Numerics/RecipeConfig.cpp), a
// row in lib/Numerics/RecipeRegistry.cpp, a case in the dialect's
// RecipeKind enum; kernels list their targets here once they exist.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_NUMERICS_RECIPEREGISTRY_H
#define FLAMIA_NUMERICS_RECIPEREGISTRY_H

#include "flamia/Numerics/RecipeConfig.h"
#include "flamia/Numerics/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace flamia::numerics {

/// The kernels of one target for a recipe kind.
struct RecipeKernels {
  std::string target;            // "sm_90a", "sm_100a"
  std::vector<int64_t> headDims; // the head dims they implement
  bool strict = false;           // whether strict (L3) mode has kernels
  bool backward = false;         // whether the backward kernels exist too
};

struct RecipeKind {
  /// The manifest's and the tools' spelling ("mxfp8", "nvfp4-mixed").
  std::string name;
  /// The dialect enum's spelling (#flamia.recipe<nvfp4_mixed>).
  std::string dialectName;
  /// The numerics presets (recipeFromName) for normal and strict mode;
  /// empty while the numerics library does not implement the kind.
  std::string preset, strictPreset;
  /// The targets with kernels for it (none yet: empty).
  std::vector<RecipeKernels> kernels;
};

/// Every recipe kind, in the dialect enum's order.
const std::vector<RecipeKind> &recipeKinds();
/// The kind spelled `name` (manifest/tool spelling); null if none.
const RecipeKind *findRecipeKind(const std::string &name);
/// A kind by its name or its strict preset's name ("mxfp8-strict"), with
/// `strict` saying which one matched; null if neither.
const RecipeKind *findRecipeKindOrStrictPreset(const std::string &name,
                                               bool &strict);
/// The kind spelled `dialectName` in #flamia.recipe; null if none.
const RecipeKind *findRecipeKindByDialectName(const std::string &dialectName);
/// The same, or an error naming `dialectName` when the registry has no such
/// kind (for the passes and the interpreter, which hold a #flamia.recipe).
Status lookupRecipeKindByDialectName(const std::string &dialectName,
                                     const RecipeKind *&out);
/// "mxfp8, nvfp4-mixed": for messages.
std::string recipeKindNames();

/// What `kind` quantizes how: its numerics preset, strict or not, with the
/// safe block `safeBlock` (0: none). An error names the kind when the
/// numerics library does not implement it.
Status contractRecipe(const RecipeKind &kind, bool strict, int64_t safeBlock,
                      RecipeConfig &out);

/// Whether there are kernels for `kind` (strict or not) on `target` at head
/// dim `headDim`: ok, or an error that says which part is missing (the
/// target, the kind, strict mode or the head dim) and what exists.
Status checkKernels(const RecipeKind &kind, bool strict,
                    const std::string &target, int64_t headDim);

/// checkKernels, and that the target has the backward kernels too (else an
/// error naming the targets that do).
Status checkBackwardKernels(const RecipeKind &kind, bool strict,
                            const std::string &target, int64_t headDim);

/// The targets any kernels exist for ("sm_90a", "sm_100a").
const std::vector<std::string> &kernelTargets();

} // namespace flamia::numerics

#endif // FLAMIA_NUMERICS_RECIPEREGISTRY_H
