//===- ScheduleSerializationTest.cpp - The metadata buffer ----------------===//
#include "flamia/Schedule/ScheduleSerialization.h"

#include "flamia/Schedule/VarlenSchedule.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace flamia;

namespace {
VarlenSchedule smallSchedule() {
  std::vector<int32_t> cu = {0, 300, 300, 350};
  VarlenScheduleParams p;
  p.numQHeads = 4;
  p.numKVHeads = 2;
  p.safeBlock = 64;
  VarlenSchedule s;
  std::string err;
  EXPECT_TRUE(buildVarlenSchedule(cu.data(), cu.size(), p, s, err)) << err;
  return s;
}

int32_t int32At(const std::vector<uint8_t> &b, size_t offset) {
  int32_t v;
  std::memcpy(&v, b.data() + offset, 4);
  return v;
}
} // namespace

// 80-byte header, 16 items of 32 bytes at 80, 4 block bases at 592, 608
// bytes in all.
TEST(ScheduleSerialization, Layout) {
  VarlenSchedule s = smallSchedule();
  std::vector<uint8_t> bytes;
  std::string err;
  ASSERT_TRUE(serializeVarlenSchedule(s, bytes, err)) << err;
  ASSERT_EQ(bytes.size(), 608u);
  EXPECT_EQ(std::memcmp(bytes.data(), "FLVS", 4), 0);
  EXPECT_EQ(int32At(bytes, 4), 1);    // version
  EXPECT_EQ(int32At(bytes, 8), 80);   // header_bytes
  EXPECT_EQ(int32At(bytes, 12), 32);  // item_bytes
  EXPECT_EQ(int32At(bytes, 16), 16);  // num_items
  EXPECT_EQ(int32At(bytes, 20), 3);   // num_docs
  EXPECT_EQ(int32At(bytes, 24), 350); // total_tokens
  EXPECT_EQ(int32At(bytes, 28), 12);  // NB
  EXPECT_EQ(int32At(bytes, 32), 4);   // Hq
  EXPECT_EQ(int32At(bytes, 36), 2);   // Hkv
  EXPECT_EQ(int32At(bytes, 40), 128); // D
  EXPECT_EQ(int32At(bytes, 44), 128); // block_m
  EXPECT_EQ(int32At(bytes, 48), 128); // block_n
  EXPECT_EQ(int32At(bytes, 52), 64);  // safe_block
  EXPECT_EQ(int32At(bytes, 56), 32);  // scale_block
  EXPECT_EQ(int32At(bytes, 60), 1);   // causal
  EXPECT_EQ(int32At(bytes, 64), 80);  // items_offset
  EXPECT_EQ(int32At(bytes, 68), 592); // doc_block_base_offset
  EXPECT_EQ(int32At(bytes, 72), 608); // total_bytes
  // Safe block 64: document 0's tiles 1 (FP8 + mixed) and 2 (2 FP8 + bf16)
  // both cost 5, so item 0 is tile 1: rows [128, 256) of [0, 300), head 0.
  EXPECT_EQ(int32At(bytes, 80), 128);
  EXPECT_EQ(int32At(bytes, 84), 128);
  EXPECT_EQ(int32At(bytes, 92), 300);
  // Item 12 (document 2): doc_block_base 10, at 80 + 12 * 32 + 24.
  EXPECT_EQ(int32At(bytes, 80 + 12 * 32), 300);
  EXPECT_EQ(int32At(bytes, 80 + 12 * 32 + 24), 10);
  // Block bases 0 10 10 12.
  EXPECT_EQ(int32At(bytes, 592), 0);
  EXPECT_EQ(int32At(bytes, 596), 10);
  EXPECT_EQ(int32At(bytes, 600), 10);
  EXPECT_EQ(int32At(bytes, 604), 12);
}

TEST(ScheduleSerialization, RoundTrip) {
  VarlenSchedule s = smallSchedule();
  std::vector<uint8_t> bytes;
  std::string err;
  ASSERT_TRUE(serializeVarlenSchedule(s, bytes, err)) << err;
  ParsedVarlenSchedule parsed;
  ASSERT_TRUE(
      parseVarlenScheduleBuffer(bytes.data(), bytes.size(), parsed, err))
      << err;
  EXPECT_EQ(parsed.header.num_items, 16);
  EXPECT_EQ(parsed.header.safe_block, 64);
  ASSERT_EQ(parsed.items.size(), s.items.size());
  EXPECT_EQ(std::memcmp(parsed.items.data(), s.items.data(),
                        s.items.size() * sizeof(VarlenWorkItem)),
            0);
  EXPECT_EQ(parsed.docBlockBase, s.docs.scaleBlocksBefore());
}

// No items (all documents empty): the block-base array still follows the
// header at the next 16-byte boundary.
TEST(ScheduleSerialization, EmptySchedule) {
  std::vector<int32_t> cu = {0, 0};
  VarlenScheduleParams p;
  p.numQHeads = p.numKVHeads = 1;
  VarlenSchedule s;
  std::string err;
  ASSERT_TRUE(buildVarlenSchedule(cu.data(), cu.size(), p, s, err)) << err;
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(serializeVarlenSchedule(s, bytes, err)) << err;
  EXPECT_EQ(bytes.size(), 96u);
  ParsedVarlenSchedule parsed;
  ASSERT_TRUE(
      parseVarlenScheduleBuffer(bytes.data(), bytes.size(), parsed, err))
      << err;
  EXPECT_TRUE(parsed.items.empty());
  EXPECT_EQ(parsed.docBlockBase, (std::vector<int32_t>{0, 0}));
}

TEST(ScheduleSerialization, CorruptBuffersAreRejected) {
  VarlenSchedule s = smallSchedule();
  std::vector<uint8_t> good;
  std::string err;
  ASSERT_TRUE(serializeVarlenSchedule(s, good, err)) << err;
  ParsedVarlenSchedule parsed;

  EXPECT_FALSE(parseVarlenScheduleBuffer(good.data(), 40, parsed, err));
  EXPECT_EQ(err,
            "schedule buffer of 40 bytes is shorter than its 80-byte header");

  std::vector<uint8_t> b = good;
  b[0] = 'X';
  EXPECT_FALSE(parseVarlenScheduleBuffer(b.data(), b.size(), parsed, err));
  EXPECT_NE(err.find("bad magic"), std::string::npos) << err;

  b = good;
  b[4] = 2;
  EXPECT_FALSE(parseVarlenScheduleBuffer(b.data(), b.size(), parsed, err));
  EXPECT_EQ(err, "bad schedule buffer: version 2, this reader knows 1");

  EXPECT_FALSE(
      parseVarlenScheduleBuffer(good.data(), good.size() - 16, parsed, err));
  EXPECT_EQ(err, "bad schedule buffer: total_bytes 608 but the buffer has 592");

  b = good;
  int32_t items = 40; // more items than fit before the block bases
  std::memcpy(b.data() + 16, &items, 4);
  EXPECT_FALSE(parseVarlenScheduleBuffer(b.data(), b.size(), parsed, err));
  EXPECT_EQ(err, "bad schedule buffer: sections out of place: items at 80, "
                 "block bases at 592, 608 bytes");
}
