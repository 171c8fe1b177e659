//===- DocumentLayout.cpp - Packed documents from cu_seqlens --------------===//
#include "flamia/Numerics/DocumentLayout.h"

#include <string>

namespace flamia::numerics {

Status DocumentLayout::fromCuSeqlens(const int32_t *cu, int64_t count,
                                     int64_t numTokens, DocumentLayout &out) {
  if (count < 2)
    return Status::error("cu_seqlens must have at least 2 entries "
                         "(num_docs + 1), got " +
                         std::to_string(count));
  if (cu[0] != 0)
    return Status::error("cu_seqlens must start at 0, got cu_seqlens[0] = " +
                         std::to_string(cu[0]));
  for (int64_t k = 1; k < count; ++k)
    if (cu[k] < cu[k - 1])
      return Status::error(
          "cu_seqlens must be non-decreasing, got cu_seqlens[" +
          std::to_string(k) + "] = " + std::to_string(cu[k]) +
          " < cu_seqlens[" + std::to_string(k - 1) +
          "] = " + std::to_string(cu[k - 1]));
  if (cu[count - 1] != numTokens)
    return Status::error("cu_seqlens must end at T = " +
                         std::to_string(numTokens) + " (the number of tokens)" +
                         ", got cu_seqlens[" + std::to_string(count - 1) +
                         "] = " + std::to_string(cu[count - 1]));
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
