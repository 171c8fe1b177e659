//===- DocumentLayout.cpp - Packed documents from cu_seqlens --------------===//
#include "flamia/Schedule/DocumentLayout.h"

#include "flamia/Support/Validation.h"

#include <algorithm>
#include <string>

namespace flamia {

namespace {
int64_t ceilDivNonNegative(int64_t a, int64_t b) { return (a + b - 1) / b; }
} // namespace

Status DocumentLayout::fromCuSeqlens(const int32_t *cu, int64_t count,
                                     std::optional<int64_t> numTokens,
                                     DocumentLayout &out,
                                     std::optional<int32_t> queryTile) {
  // The rule and its wording are every tool's and the runtime's.
  if (numTokens && *numTokens < 0)
    return Status::error("the batch has T = " + std::to_string(*numTokens) +
                         " tokens; T must be >= 0");
  if (queryTile && *queryTile <= 0)
    return Status::error("query tile size must be positive, got " +
                         std::to_string(*queryTile));
  std::string error;
  if (!validation::validateCuSeqlens(cu, count < 0 ? 0 : size_t(count),
                                     numTokens ? *numTokens : -1, error))
    return Status::error(error);
  DocumentLayout layout;
  const size_t n = static_cast<size_t>(count);
  layout.cu_.assign(cu, cu + n);
  layout.scaleBlocksBefore_.assign(n, 0);
  for (size_t d = 0; d + 1 < n; ++d)
    // NB <= T <= INT32_MAX, so this cannot overflow.
    layout.scaleBlocksBefore_[d + 1] =
        layout.scaleBlocksBefore_[d] +
        static_cast<int32_t>(
            ceilDivNonNegative(cu[d + 1] - cu[d], kVarlenScaleBlock));
  if (queryTile) {
    layout.queryTile_ = *queryTile;
    layout.queryTilesBefore_.assign(n, 0);
    for (size_t d = 0; d + 1 < n; ++d)
      layout.queryTilesBefore_[d + 1] =
          layout.queryTilesBefore_[d] +
          ceilDivNonNegative(cu[d + 1] - cu[d], *queryTile);
  }
  out = std::move(layout);
  return Status::success();
}

DocumentLayout DocumentLayout::singleDocument(int64_t numTokens) {
  DocumentLayout layout;
  const int32_t T = static_cast<int32_t>(numTokens);
  // Always valid for 0 <= T <= INT32_MAX.
  (void)fromCuSeqlens({0, T}, std::nullopt, layout);
  return layout;
}

int DocumentLayout::documentOf(int64_t t) const {
  // The last entry <= t: skips the zero-length documents starting at t.
  auto it = std::upper_bound(cu_.begin(), cu_.end(), t,
                             [](int64_t v, int32_t e) { return v < e; });
  return static_cast<int>(it - cu_.begin()) - 1;
}

int64_t DocumentLayout::longestDocument() const {
  int64_t longest = 0;
  for (int d = 0; d < numDocuments(); ++d)
    longest = std::max(longest, length(d));
  return longest;
}

int DocumentLayout::numEmptyDocuments() const {
  int empty = 0;
  for (int d = 0; d < numDocuments(); ++d)
    empty += length(d) == 0;
  return empty;
}

} // namespace flamia
