//===- DocumentLayout.cpp - Packed documents from cu_seqlens --------------===//
#include "flamia/Numerics/DocumentLayout.h"

#include "flamia/Support/Validation.h"

#include <string>

namespace flamia::numerics {

Status DocumentLayout::fromCuSeqlens(const int32_t *cu, int64_t count,
                                     int64_t numTokens, DocumentLayout &out) {
  // The rule and its wording are every tool's and the runtime's.
  if (numTokens < 0)
    return Status::error("the batch has T = " + std::to_string(numTokens) +
                         " tokens; T must be >= 0");
  std::string error;
  if (!validation::validateCuSeqlens(cu, count < 0 ? 0 : size_t(count),
                                     numTokens, error))
    return Status::error(error);
  DocumentLayout layout;
  layout.numTokens_ = numTokens;
  layout.starts_.assign(cu, cu + count);
  layout.documentOfToken_.resize(static_cast<size_t>(numTokens));
  for (int64_t d = 0; d + 1 < count; ++d)
    for (int64_t t = cu[d]; t < cu[d + 1]; ++t)
      layout.documentOfToken_[t] = static_cast<int32_t>(d);
  out = std::move(layout);
  return Status::success();
}

DocumentLayout DocumentLayout::singleDocument(int64_t numTokens) {
  DocumentLayout layout;
  layout.numTokens_ = numTokens;
  layout.starts_ = {0, numTokens};
  layout.documentOfToken_.assign(static_cast<size_t>(numTokens), 0);
  return layout;
}

} // namespace flamia::numerics
