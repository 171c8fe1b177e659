//===- Check.cpp - Device-result validation: results and inputs -----------===//

#include "flamia/Validation/Check.h"

#include "flamia/Numerics/RecipeRegistry.h"

#include "Text.h"

#include "flamia/Numerics/Formats.h"
#include "flamia/Numerics/Parallel.h"

#include <algorithm>
#include <cmath>

namespace flamia::validation::device {

namespace nm = flamia::numerics;
using runtime::Status;

const char *verdictName(Verdict v) {
  switch (v) {
  case Verdict::Pass:
    return "PASS";
  case Verdict::Fail:
    return "FAIL";
  case Verdict::Info:
    return "info";
  case Verdict::Skip:
    return "skip";
  }
  return "?";
}

int countFailures(const std::vector<Check> &checks) {
  int n = 0;
  for (const Check &c : checks)
    n += c.verdict == Verdict::Fail;
  return n;
}

Status referenceRecipe(const runtime::Manifest &m, nm::RecipeConfig &recipe) {
  // What the recipe quantizes how: the registry's numerics preset.
  const nm::RecipeKind *kind = nm::findRecipeKind(m.recipe.kind);
  if (!kind)
    return runtime::invalidArgument("the manifest's recipe '" + m.recipe.kind +
                                    "' is not in the recipe registry (" +
                                    nm::recipeKindNames() + ")");
  nm::Status s =
      nm::contractRecipe(*kind, m.recipe.strict, m.recipe.safeBlock, recipe);
  if (!s)
    return runtime::invalidArgument("the CPU reference: " + s.message);
  if (m.schedule.present)
    recipe.tile = m.schedule.blockN;
  s = recipe.validate(m.headDim);
  if (!s)
    return runtime::invalidArgument("reference recipe: " + s.message);
  return Status::success();
}

Status documentsOf(const BatchView &b, DocumentLayout &docs) {
  nm::Status s =
      DocumentLayout::fromCuSeqlens(b.cu, b.numDocs + 1, b.T, docs);
  if (!s)
    return runtime::invalidArgument(s.message);
  return Status::success();
}

Check checkOutputsWritten(const uint16_t *o, size_t oElements,
                          const float *lse, size_t lseElements) {
  int64_t nanO = 0, nanLse = 0;
  for (size_t i = 0; i < oElements; ++i)
    nanO += std::isnan(nm::bf16ToFloat(o[i]));
  for (size_t i = 0; i < lseElements; ++i)
    nanLse += std::isnan(lse[i]);
  Check row;
  row.name = "outputs written (no NaN)";
  row.compared = static_cast<int64_t>(oElements + lseElements);
  row.maxAbsDiff = 0;
  row.verdict = nanO + nanLse == 0 ? Verdict::Pass : Verdict::Fail;
  row.detail = nanO + nanLse == 0
                   ? "O and LSE hold no NaN (both were filled with NaN first)"
                   : std::to_string(nanO) + " O and " + std::to_string(nanLse) +
                         " LSE elements are NaN (unwritten, or NaN computed)";
  return row;
}

namespace detail {

std::vector<float> toFloat(const uint16_t *x, size_t n) {
  std::vector<float> out(n);
  nm::parallelFor(static_cast<int64_t>((n + 65535) / 65536),
                  [&](int64_t chunk) {
                    size_t b = static_cast<size_t>(chunk) * 65536;
                    size_t e = std::min(n, b + 65536);
                    for (size_t i = b; i < e; ++i)
                      out[i] = nm::bf16ToFloat(x[i]);
                  });
  return out;
}

} // namespace detail

} // namespace flamia::validation::device
