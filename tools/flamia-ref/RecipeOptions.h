//===- RecipeOptions.h - --recipe, --safe-block, --strict --------*- C++ -*-===//
#ifndef FLAMIA_TOOLS_FLAMIAREF_RECIPEOPTIONS_H
#define FLAMIA_TOOLS_FLAMIAREF_RECIPEOPTIONS_H

#include "ArrayFiles.h"
#include "CommandLine.h"

#include "flamia/Numerics/RecipeConfig.h"

#include <string>

namespace flamia::ref {

/// The recipe named by --recipe (default `fallback`), with --safe-block N
/// and --strict applied. On failure sets `error`.
inline bool recipeFromOptions(const CommandLine &cl, const char *fallback,
                              numerics::RecipeConfig &recipe,
                              std::string &error) {
  std::string name = cl.value("--recipe").value_or(fallback);
  if (numerics::Status s = numerics::recipeFromName(name, recipe); !s) {
    error = s.message;
    return false;
  }
  if (auto sb = cl.value("--safe-block")) {
    int64_t n;
    if (!parseInt(*sb, n) || n < 0 || n % 32 != 0 || n > (1 << 20)) {
      error = "--safe-block must be 0 (none) or a positive multiple of 32 "
              "up to 2^20, got '" + *sb + "'";
      return false;
    }
    if (recipe.float64Reference) {
      error = "--safe-block does not apply to recipe none";
      return false;
    }
    recipe.safeBlock = n;
  }
  if (cl.flag("--strict")) {
    if (recipe.float64Reference) {
      error = "--strict does not apply to recipe none";
      return false;
    }
    numerics::makeStrict(recipe);
  }
  return true;
}

} // namespace flamia::ref

#endif // FLAMIA_TOOLS_FLAMIAREF_RECIPEOPTIONS_H
