//===- DocumentLayout.h - Packed documents from cu_seqlens -------*- C++ -*-===//
//
// A packed tensor [T, H, D] holds documents back to back; cu_seqlens (int32,
// num_docs + 1 entries, starting at 0, non-decreasing, ending at T) gives
// their boundaries: document d is the token range [cu[d], cu[d+1]).
// Zero-length documents are allowed.
//
// The one class for it: the CPU reference, the quantizer, the leak checks,
// the validation library, the interpreter, the scheduler and the runtime's
// schedule buffers all read documents through it. Besides the boundaries it
// holds two prefix sums, computed once in O(num_docs):
//   - scale blocks before each document: 32-token blocks in the quantizer's
//     numbering (docs/design.md section 4: NB = sum over documents of
//     ceil(L/32), blocks in document order), so a kernel finds a document's
//     K/V scales (always computed);
//   - query tiles before each document (tiles of `queryTile` rows start at
//     the document's first token and are clipped at its last), so the
//     scheduler numbers item groups without scanning cu_seqlens per item
//     (computed when a query tile size is given).
// documentOf(t) is a binary search over the documents (O(log num_docs)): no
// T-sized map for callers that never ask.
//
// Plain C++17, no exceptions: errors are returned as a flamia::Status.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_SCHEDULE_DOCUMENTLAYOUT_H
#define FLAMIA_SCHEDULE_DOCUMENTLAYOUT_H

#include "flamia/Support/Status.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace flamia {

/// Token block of the K/V (and dO, Q^tb) scales: the 32x32 token blocks of
/// docs/design.md section 4.
constexpr int32_t kVarlenScaleBlock = 32;

class DocumentLayout {
public:
  /// Validates cu_seqlens (`count` entries) with the rule every tool and the
  /// runtime share (flamia::validation::validateCuSeqlens: at least two
  /// entries, starts at 0, non-decreasing, and, when `numTokens` is given,
  /// ends at T = numTokens >= 0), and its message. Without `numTokens`, T is
  /// cu_seqlens' last entry. With `queryTile` (> 0, else "query tile size
  /// must be positive, got N") the query-tile prefix sums are computed too.
  static Status fromCuSeqlens(const int32_t *cu, int64_t count,
                              std::optional<int64_t> numTokens,
                              DocumentLayout &out,
                              std::optional<int32_t> queryTile = std::nullopt);
  static Status fromCuSeqlens(const std::vector<int32_t> &cu,
                              std::optional<int64_t> numTokens,
                              DocumentLayout &out,
                              std::optional<int32_t> queryTile = std::nullopt) {
    return fromCuSeqlens(cu.data(), static_cast<int64_t>(cu.size()),
                         numTokens, out, queryTile);
  }
  /// The whole tensor as one document (0 <= numTokens <= INT32_MAX).
  static DocumentLayout singleDocument(int64_t numTokens);

  /// Documents and tokens.
  int numDocuments() const { return static_cast<int>(cu_.size()) - 1; }
  int64_t numTokens() const { return cu_.back(); }
  int64_t begin(int doc) const { return cu_[doc]; }
  int64_t end(int doc) const { return cu_[doc + 1]; }
  int64_t length(int doc) const { return end(doc) - begin(doc); }
  /// The document holding token t (0 <= t < T): never a zero-length one.
  int documentOf(int64_t t) const;
  /// cu_seqlens as given (num_docs + 1 entries).
  const std::vector<int32_t> &cuSeqlens() const { return cu_; }
  int64_t longestDocument() const;
  int numEmptyDocuments() const;

  /// 32-token scale blocks in documents < doc (doc in [0, num_docs]).
  int32_t scaleBlocksBefore(int doc) const { return scaleBlocksBefore_[doc]; }
  /// All of them (num_docs + 1 entries): the schedule's doc_block_base.
  const std::vector<int32_t> &scaleBlocksBefore() const {
    return scaleBlocksBefore_;
  }
  /// NB, the scale blocks of all documents.
  int32_t numScaleBlocks() const { return scaleBlocksBefore_.back(); }

  /// Whether the query-tile prefix sums were computed, and their tile size
  /// (0 when not).
  bool hasQueryTiles() const { return queryTile_ > 0; }
  int32_t queryTile() const { return queryTile_; }
  /// Query tiles in documents < doc (doc in [0, num_docs]); needs
  /// hasQueryTiles().
  int64_t queryTilesBefore(int doc) const { return queryTilesBefore_[doc]; }
  /// Query tiles of document `doc` (ceil(length / queryTile)).
  int64_t queryTilesIn(int doc) const {
    return queryTilesBefore(doc + 1) - queryTilesBefore(doc);
  }
  /// The number of (document, query tile) pairs.
  int64_t numQueryTiles() const { return queryTilesBefore_.back(); }

private:
  std::vector<int32_t> cu_{0};
  std::vector<int32_t> scaleBlocksBefore_{0};
  std::vector<int64_t> queryTilesBefore_{0};
  int32_t queryTile_ = 0;
};

} // namespace flamia

#endif // FLAMIA_SCHEDULE_DOCUMENTLAYOUT_H
