//===- DocumentLayout.h - Packed documents from cu_seqlens -------*- C++ -*-===//
//
// A packed tensor [T, H, D] holds documents back to back; cu_seqlens (int32,
// num_docs + 1 entries) gives their boundaries: document d is the token range
// [cu[d], cu[d+1]). Zero-length documents are allowed.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_NUMERICS_DOCUMENTLAYOUT_H
#define FLAMIA_NUMERICS_DOCUMENTLAYOUT_H

#include "flamia/Numerics/Status.h"

#include <cstdint>
#include <vector>

namespace flamia::numerics {

class DocumentLayout {
public:
  /// Validates cu_seqlens against T >= 0 tokens with the rule every tool and
  /// the runtime share (flamia::validation::validateCuSeqlens: at least two
  /// entries, starts at 0, non-decreasing, ends at T), and its message.
  static Status fromCuSeqlens(const int32_t *cu, int64_t count,
                              int64_t numTokens, DocumentLayout &out);
  static Status fromCuSeqlens(const std::vector<int32_t> &cu,
                              int64_t numTokens, DocumentLayout &out) {
    return fromCuSeqlens(cu.data(), static_cast<int64_t>(cu.size()),
                         numTokens, out);
  }
  /// The whole tensor as one document.
  static DocumentLayout singleDocument(int64_t numTokens);

  int64_t numTokens() const { return numTokens_; }
  int numDocuments() const { return static_cast<int>(starts_.size()) - 1; }
  int64_t begin(int doc) const { return starts_[doc]; }
  int64_t end(int doc) const { return starts_[doc + 1]; }
  int64_t length(int doc) const { return end(doc) - begin(doc); }
  /// The document holding token t.
  int documentOf(int64_t t) const { return documentOfToken_[t]; }
  const std::vector<int64_t> &cuSeqlens() const { return starts_; }

private:
  int64_t numTokens_ = 0;
  std::vector<int64_t> starts_{0};
  std::vector<int32_t> documentOfToken_;
};

} // namespace flamia::numerics

#endif // FLAMIA_NUMERICS_DOCUMENTLAYOUT_H
