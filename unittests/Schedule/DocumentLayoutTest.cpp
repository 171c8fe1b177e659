//===- DocumentLayoutTest.cpp - cu_seqlens validation and offsets ---------===//
#include "flamia/Schedule/DocumentLayout.h"
#include "flamia/Support/Validation.h"

#include "gtest/gtest.h"

using namespace flamia;

namespace {
std::string validate(std::vector<int32_t> cu, std::optional<int64_t> expected) {
  DocumentLayout layout;
  return DocumentLayout::fromCuSeqlens(cu, expected, layout).message;
}
} // namespace

// The rule and the wording are flamia::validation's (the runtime's, every
// tool's): the layout only forwards.
TEST(DocumentLayout, ValidationNamesTheProblem) {
  EXPECT_EQ(validate({0, 0}, std::nullopt), "");
  EXPECT_EQ(validate({0, 0, 5, 5, 9}, 9), "");

  DocumentLayout layout;
  EXPECT_EQ(
      DocumentLayout::fromCuSeqlens(nullptr, 0, std::nullopt, layout).message,
      "cu_seqlens has 0 entries; it needs num_docs + 1 >= 2 (0, then each "
      "document's end)");
  // No documents at all: the runtime and the tools refuse it, so the
  // schedule does too.
  EXPECT_EQ(validate({0}, std::nullopt),
            "cu_seqlens has 1 entries; it needs num_docs + 1 >= 2 (0, then "
            "each document's end)");
  EXPECT_EQ(validate({3, 5}, std::nullopt), "cu_seqlens[0] = 3; it must be 0");
  EXPECT_EQ(validate({0, 10, 7, 12}, std::nullopt),
            "cu_seqlens[2] = 7 is less than cu_seqlens[1] = 10 (it must be "
            "non-decreasing)");
  EXPECT_EQ(validate({0, 10, 12}, 13),
            "cu_seqlens[2] = 12 but the batch has T = 13 tokens (the last "
            "entry must be T)");

  // Each message is the shared one, word for word.
  for (std::vector<int32_t> cu :
       {std::vector<int32_t>{0}, {2, 4}, {0, 9, 8}, {0, 5, 5, 12}}) {
    std::string shared;
    EXPECT_FALSE(
        validation::validateCuSeqlens(cu.data(), cu.size(), 13, shared));
    EXPECT_EQ(validate(cu, 13), shared);
  }
}

// What the numerics library checked: T given, its own message for T < 0.
TEST(DocumentLayout, ValidatesCuSeqlens) {
  DocumentLayout docs;
  Status s = DocumentLayout::fromCuSeqlens({1, 5, 10}, 10, docs);
  // The wording is flamia::validation's, shared by every tool.
  EXPECT_EQ(s.message, "cu_seqlens[0] = 1; it must be 0");
  s = DocumentLayout::fromCuSeqlens({0, 6, 5, 10}, 10, docs);
  EXPECT_EQ(s.message, "cu_seqlens[2] = 5 is less than cu_seqlens[1] = 6 (it "
                       "must be non-decreasing)");
  s = DocumentLayout::fromCuSeqlens({0, 5, 9}, 10, docs);
  EXPECT_EQ(s.message, "cu_seqlens[2] = 9 but the batch has T = 10 tokens "
                       "(the last entry must be T)");
  s = DocumentLayout::fromCuSeqlens({0}, 0, docs);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code, ErrorCode::InvalidArgument);
  EXPECT_EQ(s.message, "cu_seqlens has 1 entries; it needs num_docs + 1 >= 2 "
                       "(0, then each document's end)");
  s = DocumentLayout::fromCuSeqlens(nullptr, 3, 10, docs);
  EXPECT_EQ(s.message, "cu_seqlens is null");
  s = DocumentLayout::fromCuSeqlens({0, 0}, -1, docs);
  EXPECT_EQ(s.message, "the batch has T = -1 tokens; T must be >= 0");
  for (std::vector<int32_t> cu :
       {std::vector<int32_t>{}, {4, 10}, {0, 7, 3, 10}, {0, 3, 11}}) {
    std::string shared;
    EXPECT_FALSE(validation::validateCuSeqlens(cu.data(), cu.size(), 10,
                                               shared));
    EXPECT_EQ(DocumentLayout::fromCuSeqlens(cu, 10, docs).message, shared);
  }
  ASSERT_TRUE(DocumentLayout::fromCuSeqlens({0, 0, 4, 4, 10}, 10, docs).ok());
  EXPECT_EQ(docs.numDocuments(), 4);
  EXPECT_EQ(docs.numTokens(), 10);
  EXPECT_EQ(docs.length(0), 0);
  EXPECT_EQ(docs.documentOf(3), 1);
  EXPECT_EQ(docs.documentOf(4), 3);
  EXPECT_FALSE(docs.hasQueryTiles());
}

TEST(DocumentLayout, SingleDocument) {
  DocumentLayout docs = DocumentLayout::singleDocument(70);
  EXPECT_EQ(docs.numDocuments(), 1);
  EXPECT_EQ(docs.numTokens(), 70);
  EXPECT_EQ(docs.cuSeqlens(), (std::vector<int32_t>{0, 70}));
  EXPECT_EQ(docs.documentOf(69), 0);
  EXPECT_EQ(docs.numScaleBlocks(), 3);
  DocumentLayout none;
  EXPECT_EQ(none.numDocuments(), 0);
  EXPECT_EQ(none.numTokens(), 0);
  EXPECT_EQ(none.numScaleBlocks(), 0);
  EXPECT_EQ(DocumentLayout::singleDocument(0).numDocuments(), 1);
}

// Prefix sums: tiles of 128 rows, 32-token scale blocks, zero-length
// documents included.
TEST(DocumentLayout, PrefixSums) {
  std::vector<int32_t> cu = {0, 300, 300, 350, 478, 479};
  DocumentLayout layout;
  ASSERT_TRUE(
      DocumentLayout::fromCuSeqlens(cu, std::nullopt, layout, 128).ok());
  EXPECT_EQ(layout.numDocuments(), 5);
  EXPECT_EQ(layout.numTokens(), 479);
  ASSERT_TRUE(layout.hasQueryTiles());
  EXPECT_EQ(layout.queryTile(), 128);
  std::vector<int64_t> tiles;
  for (int d = 0; d <= layout.numDocuments(); ++d)
    tiles.push_back(layout.queryTilesBefore(d));
  EXPECT_EQ(tiles, (std::vector<int64_t>{0, 3, 3, 4, 5, 6}));
  // ceil(L / 32) = 10, 0, 2, 4, 1.
  EXPECT_EQ(layout.scaleBlocksBefore(),
            (std::vector<int32_t>{0, 10, 10, 12, 16, 17}));
  EXPECT_EQ(layout.scaleBlocksBefore(3), 12);
  EXPECT_EQ(layout.numScaleBlocks(), 17);
  EXPECT_EQ(layout.numQueryTiles(), 6);
  EXPECT_EQ(layout.longestDocument(), 300);
  EXPECT_EQ(layout.numEmptyDocuments(), 1);
  EXPECT_EQ(layout.queryTilesIn(3), 1);

  Status s = DocumentLayout::fromCuSeqlens(cu, std::nullopt, layout, 0);
  EXPECT_EQ(s.message, "query tile size must be positive, got 0");
}

// The quantizer numbers 32-token blocks by walking the tokens: a new block
// starts at every document start and every 32 tokens into a document.
TEST(DocumentLayout, BlockBasesMatchATokenWalk) {
  std::vector<int32_t> cu = {0, 1, 1, 33, 64, 64, 64, 200, 232, 233, 1000};
  DocumentLayout layout;
  ASSERT_TRUE(
      DocumentLayout::fromCuSeqlens(cu, std::nullopt, layout, 128).ok());
  int32_t block = -1;
  std::vector<int32_t> firstBlockOfDoc(cu.size() - 1, -1);
  for (size_t d = 0; d + 1 < cu.size(); ++d) {
    for (int32_t t = cu[d]; t < cu[d + 1]; ++t) {
      if (t == cu[d] || (t - cu[d]) % 32 == 0)
        ++block;
      if (t == cu[d])
        firstBlockOfDoc[d] = block;
    }
  }
  int32_t nb = block + 1;
  EXPECT_EQ(layout.numScaleBlocks(), nb);
  for (size_t d = 0; d + 1 < cu.size(); ++d) {
    if (cu[d + 1] > cu[d]) {
      EXPECT_EQ(layout.scaleBlocksBefore(static_cast<int>(d)),
                firstBlockOfDoc[d])
          << "document " << d;
    }
  }
}

// documentOf and the prefix sums tell the same story, empty documents (at
// the start, in the middle, runs of them, at the end) included: token t's
// document d holds t, is never empty, and t's query tile and scale block
// fall within d's share of the prefix sums.
TEST(DocumentLayout, PrefixSumsAgreeWithDocumentOf) {
  std::vector<int32_t> cu = {0, 0, 0, 5, 5, 40, 40, 40, 41, 105, 105};
  const int32_t blockM = 16;
  DocumentLayout layout;
  ASSERT_TRUE(DocumentLayout::fromCuSeqlens(cu, 105, layout, blockM).ok());
  ASSERT_EQ(layout.numDocuments(), 10);
  int64_t tile = -1, block = -1;
  for (int64_t t = 0; t < layout.numTokens(); ++t) {
    const int d = layout.documentOf(t);
    ASSERT_GE(d, 0);
    ASSERT_LT(d, layout.numDocuments());
    EXPECT_GT(layout.length(d), 0) << "token " << t;
    EXPECT_LE(layout.begin(d), t) << "token " << t;
    EXPECT_LT(t, layout.end(d)) << "token " << t;
    // The token walk numbers tiles and blocks in document order.
    const int64_t offset = t - layout.begin(d);
    if (offset % blockM == 0)
      ++tile;
    if (offset % kVarlenScaleBlock == 0)
      ++block;
    EXPECT_EQ(tile, layout.queryTilesBefore(d) + offset / blockM)
        << "token " << t;
    EXPECT_EQ(block, layout.scaleBlocksBefore(d) + offset / kVarlenScaleBlock)
        << "token " << t;
    EXPECT_LT(tile, layout.queryTilesBefore(d + 1));
    EXPECT_LT(block, layout.scaleBlocksBefore(d + 1));
  }
  EXPECT_EQ(tile + 1, layout.numQueryTiles());
  EXPECT_EQ(block + 1, layout.numScaleBlocks());
  // Empty documents own no tiles, no blocks and no token.
  for (int d = 0; d < layout.numDocuments(); ++d)
    if (layout.length(d) == 0) {
      EXPECT_EQ(layout.queryTilesIn(d), 0) << "document " << d;
      EXPECT_EQ(layout.scaleBlocksBefore(d + 1), layout.scaleBlocksBefore(d))
          << "document " << d;
    }
  EXPECT_EQ(layout.numEmptyDocuments(), 6);
}
