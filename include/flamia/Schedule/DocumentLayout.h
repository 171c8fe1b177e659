//===- DocumentLayout.h - Validated cu_seqlens, offsets ---------*- C++ -*-===//
//
// The packed batch as the scheduler sees it: documents given by cu_seqlens
// (int32, num_docs + 1 entries, starting at 0, non-decreasing; zero-length
// documents allowed), with two prefix sums computed once:
//   - query tiles before each document (tiles start at the document's first
//     token and are clipped at its last), so item groups are numbered without
//     scanning cu_seqlens per item;
//   - 32-token scale blocks before each document, in the quantizer's
//     numbering (docs/design.md section 4: NB = sum over documents of ceil(L/32),
//     blocks in document order), so a kernel finds a document's K/V scales.
//
// Plain C++17, no exceptions: errors are returned as `false` plus a message.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_SCHEDULE_DOCUMENTLAYOUT_H
#define FLAMIA_SCHEDULE_DOCUMENTLAYOUT_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace flamia {

/// Token block of the K/V (and dO, Q^tb) scales: the 32x32 token blocks of
/// docs/design.md section 4.
constexpr int32_t kVarlenScaleBlock = 32;

/// Checks cu_seqlens with the rule every tool and the runtime share
/// (flamia::validation::validateCuSeqlens, whose message this returns):
/// num_docs + 1 >= 2 entries, cu[0] == 0, non-decreasing, and, when
/// `expectedTokens` >= 0, cu[count - 1] == expectedTokens.
bool validateCuSeqlens(const int32_t *cuSeqlens, size_t count,
                       int64_t expectedTokens, std::string &error);

struct DocumentLayout {
  /// cu_seqlens as given (num_docs + 1 entries).
  std::vector<int32_t> cuSeqlens;
  /// tileBase[d]: query tiles (of blockM rows) in documents < d; the last
  /// entry is the number of (document, query tile) pairs.
  std::vector<int64_t> tileBase;
  /// blockBase[d]: 32-token scale blocks in documents < d; the last entry is
  /// NB.
  std::vector<int32_t> blockBase;
  int32_t blockM = 0;

  size_t numDocs() const {
    return cuSeqlens.empty() ? 0 : cuSeqlens.size() - 1;
  }
  int32_t totalTokens() const {
    return cuSeqlens.empty() ? 0 : cuSeqlens.back();
  }
  int32_t docStart(size_t d) const { return cuSeqlens[d]; }
  int32_t docEnd(size_t d) const { return cuSeqlens[d + 1]; }
  int32_t docLength(size_t d) const { return cuSeqlens[d + 1] - cuSeqlens[d]; }
  int64_t numQueryTiles(size_t d) const {
    return tileBase[d + 1] - tileBase[d];
  }
  int64_t totalQueryTiles() const {
    return tileBase.empty() ? 0 : tileBase.back();
  }
  int32_t totalScaleBlocks() const {
    return blockBase.empty() ? 0 : blockBase.back();
  }
  int32_t longestDocument() const;
  size_t numEmptyDocuments() const;
};

/// Validates `cuSeqlens` (as validateCuSeqlens with no expected total) and
/// computes the prefix sums for query tiles of `blockM` rows. O(num_docs).
bool buildDocumentLayout(const int32_t *cuSeqlens, size_t count, int32_t blockM,
                         DocumentLayout &out, std::string &error);

} // namespace flamia

#endif // FLAMIA_SCHEDULE_DOCUMENTLAYOUT_H
