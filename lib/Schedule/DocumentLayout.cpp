//===- DocumentLayout.cpp - Validated cu_seqlens and per-document offsets -===//
#include "flamia/Schedule/DocumentLayout.h"

#include "flamia/Support/Validation.h"

#include <algorithm>

namespace flamia {

namespace {
int64_t ceilDivNonNegative(int64_t a, int64_t b) { return (a + b - 1) / b; }
} // namespace

bool validateCuSeqlens(const int32_t *cuSeqlens, size_t count,
                       int64_t expectedTokens, std::string &error) {
  return validation::validateCuSeqlens(cuSeqlens, count, expectedTokens,
                                       error);
}

int32_t DocumentLayout::longestDocument() const {
  int32_t longest = 0;
  for (size_t d = 0; d < numDocs(); ++d)
    longest = std::max(longest, docLength(d));
  return longest;
}

size_t DocumentLayout::numEmptyDocuments() const {
  size_t empty = 0;
  for (size_t d = 0; d < numDocs(); ++d)
    empty += docLength(d) == 0;
  return empty;
}

bool buildDocumentLayout(const int32_t *cuSeqlens, size_t count, int32_t blockM,
                         DocumentLayout &out, std::string &error) {
  if (blockM <= 0) {
    error = "query tile size must be positive, got " + std::to_string(blockM);
    return false;
  }
  if (!validateCuSeqlens(cuSeqlens, count, -1, error))
    return false;
  out = DocumentLayout();
  out.blockM = blockM;
  out.cuSeqlens.assign(cuSeqlens, cuSeqlens + count);
  out.tileBase.resize(count);
  out.blockBase.resize(count);
  out.tileBase[0] = 0;
  out.blockBase[0] = 0;
  for (size_t d = 0; d + 1 < count; ++d) {
    int64_t length = cuSeqlens[d + 1] - cuSeqlens[d];
    out.tileBase[d + 1] = out.tileBase[d] + ceilDivNonNegative(length, blockM);
    // NB <= T <= INT32_MAX, so this cannot overflow.
    out.blockBase[d + 1] =
        out.blockBase[d] +
        static_cast<int32_t>(ceilDivNonNegative(length, kVarlenScaleBlock));
  }
  return true;
}

} // namespace flamia
