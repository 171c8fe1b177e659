//===- DocumentLayoutTest.cpp - cu_seqlens validation and offsets ---------===//
#include "flamia/Schedule/DocumentLayout.h"
#include "flamia/Support/Validation.h"

#include "gtest/gtest.h"

using namespace flamia;

namespace {
bool validate(std::vector<int32_t> cu, int64_t expected, std::string &err) {
  return validateCuSeqlens(cu.data(), cu.size(), expected, err);
}
} // namespace

// The rule and the wording are flamia::validation's (the runtime's, every
// tool's): FlamiaSchedule only forwards.
TEST(DocumentLayout, ValidationNamesTheProblem) {
  std::string err;
  EXPECT_TRUE(validate({0, 0}, -1, err));
  EXPECT_TRUE(validate({0, 0, 5, 5, 9}, 9, err));

  EXPECT_FALSE(validateCuSeqlens(nullptr, 0, -1, err));
  EXPECT_EQ(err, "cu_seqlens has 0 entries; it needs num_docs + 1 >= 2 (0, "
                 "then each document's end)");
  // No documents at all: the runtime and the tools refuse it, so the
  // schedule does too.
  EXPECT_FALSE(validate({0}, -1, err));
  EXPECT_EQ(err, "cu_seqlens has 1 entries; it needs num_docs + 1 >= 2 (0, "
                 "then each document's end)");
  EXPECT_FALSE(validate({3, 5}, -1, err));
  EXPECT_EQ(err, "cu_seqlens[0] = 3; it must be 0");
  EXPECT_FALSE(validate({0, 10, 7, 12}, -1, err));
  EXPECT_EQ(err, "cu_seqlens[2] = 7 is less than cu_seqlens[1] = 10 (it must "
                 "be non-decreasing)");
  EXPECT_FALSE(validate({0, 10, 12}, 13, err));
  EXPECT_EQ(err, "cu_seqlens[2] = 12 but the batch has T = 13 tokens (the "
                 "last entry must be T)");

  // Each message is the shared one, word for word.
  for (std::vector<int32_t> cu :
       {std::vector<int32_t>{0}, {2, 4}, {0, 9, 8}, {0, 5, 5, 12}}) {
    std::string shared;
    EXPECT_FALSE(validate(cu, 13, err));
    EXPECT_FALSE(
        validation::validateCuSeqlens(cu.data(), cu.size(), 13, shared));
    EXPECT_EQ(err, shared);
  }
}

// Prefix sums: tiles of 128 rows, 32-token scale blocks, zero-length
// documents included.
TEST(DocumentLayout, PrefixSums) {
  std::vector<int32_t> cu = {0, 300, 300, 350, 478, 479};
  DocumentLayout layout;
  std::string err;
  ASSERT_TRUE(buildDocumentLayout(cu.data(), cu.size(), 128, layout, err))
      << err;
  EXPECT_EQ(layout.numDocs(), 5u);
  EXPECT_EQ(layout.totalTokens(), 479);
  EXPECT_EQ(layout.tileBase, (std::vector<int64_t>{0, 3, 3, 4, 5, 6}));
  // ceil(L / 32) = 10, 0, 2, 4, 1.
  EXPECT_EQ(layout.blockBase, (std::vector<int32_t>{0, 10, 10, 12, 16, 17}));
  EXPECT_EQ(layout.totalScaleBlocks(), 17);
  EXPECT_EQ(layout.totalQueryTiles(), 6);
  EXPECT_EQ(layout.longestDocument(), 300);
  EXPECT_EQ(layout.numEmptyDocuments(), 1u);
  EXPECT_EQ(layout.numQueryTiles(3), 1);

  EXPECT_FALSE(buildDocumentLayout(cu.data(), cu.size(), 0, layout, err));
  EXPECT_EQ(err, "query tile size must be positive, got 0");
}

// The quantizer numbers 32-token blocks by walking the tokens: a new block
// starts at every document start and every 32 tokens into a document.
TEST(DocumentLayout, BlockBasesMatchATokenWalk) {
  std::vector<int32_t> cu = {0, 1, 1, 33, 64, 64, 64, 200, 232, 233, 1000};
  DocumentLayout layout;
  std::string err;
  ASSERT_TRUE(buildDocumentLayout(cu.data(), cu.size(), 128, layout, err))
      << err;
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
  EXPECT_EQ(layout.totalScaleBlocks(), nb);
  for (size_t d = 0; d + 1 < cu.size(); ++d) {
    if (cu[d + 1] > cu[d]) {
      EXPECT_EQ(layout.blockBase[d], firstBlockOfDoc[d]) << "document " << d;
    }
  }
}
