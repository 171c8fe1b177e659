//===- QuantizedCopiesTest.cpp - Workspace copies vs the quantizer --------===//
//
// A copy equal to the CPU quantizer's passes; one byte off, a NaN or a
// wrong size fails with the position and the numbers; checkQuantizedCopies
// picks each buffer's reference by its manifest "holds".
//
//===----------------------------------------------------------------------===//
#include "flamia/Validation/QuantizedCopies.h"

#include "TestBatch.h"

#include "flamia/Target/ScaleFactorLayout.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <map>

using namespace flamia;
using namespace flamia::validation::device;
using namespace flamia::validation::device::test;
using runtime::BufferContents;
using runtime::HeldLayout;
using runtime::HeldPart;
using runtime::HeldTensor;

namespace {

/// An MXFP8 copy's contents (e4m3 payload, e8m0 scales, bf16 dequantized).
BufferContents holds(HeldPart part, HeldTensor tensor, HeldLayout layout) {
  BufferContents c;
  c.part = part;
  c.tensor = tensor;
  c.layout = layout;
  c.format = part == HeldPart::Payload       ? runtime::HeldFormat::E4M3
             : part == HeldPart::Dequantized ? runtime::HeldFormat::BF16
                                             : runtime::HeldFormat::E8M0;
  return c;
}

/// Two documents (20 and 44 tokens), Hq 2, Hkv 1, D 64, every element 1.0:
/// every 1x32 and 32x32 block has amax 1, so every scale is 2^-8 (E8M0 119)
/// and every payload 256 (E4M3 0x78).
struct Ones : ::testing::Test {
  OwnedBatch batch = makeBatch({0, 20, 64}, 2, 1, 64, 1.0f);
  BatchView view = batch.view();
  DocumentLayout docs;
  void SetUp() override { ASSERT_TRUE(documentsOf(view, docs).ok()); }
};

TEST_F(Ones, QuantizerReferenceOfConstantInput) {
  QuantizedReference ref(view, docs);
  const numerics::QuantizedTensor *q = nullptr;
  ASSERT_TRUE(ref.get(HeldTensor::Q, HeldLayout::PerToken, q).ok());
  ASSERT_EQ(q->codes.size(), 64u * 2 * 64);
  EXPECT_EQ(q->codes[0], 0x78);
  EXPECT_EQ(q->scales.size(), 64u * 2 * 2); // [T, H, D / 32]
  EXPECT_EQ(q->scales[0], 119);
  // The same object on the second call (made once).
  const numerics::QuantizedTensor *again = nullptr;
  ASSERT_TRUE(ref.get(HeldTensor::Q, HeldLayout::PerToken, again).ok());
  EXPECT_EQ(q, again);
}

TEST_F(Ones, PayloadEqualPasses) {
  QuantizedReference ref(view, docs);
  const numerics::QuantizedTensor *q = nullptr;
  ASSERT_TRUE(ref.get(HeldTensor::Q, HeldLayout::PerToken, q).ok());
  std::vector<uint8_t> gpu = q->codes;
  Check c = checkQuantizedCopy(
      "q_pt", holds(HeldPart::Payload, HeldTensor::Q, HeldLayout::PerToken),
      *q, gpu.data(), gpu.size());
  EXPECT_EQ(c.name, "q_pt (E4M3 payload)");
  EXPECT_EQ(c.verdict, Verdict::Pass);
  EXPECT_EQ(c.compared, 8192);
  EXPECT_EQ(c.maxAbsDiff, 0.0);
  EXPECT_EQ(c.detail, "bit-identical");
}

TEST_F(Ones, PayloadOneByteOffFails) {
  QuantizedReference ref(view, docs);
  const numerics::QuantizedTensor *q = nullptr;
  ASSERT_TRUE(ref.get(HeldTensor::Q, HeldLayout::PerToken, q).ok());
  std::vector<uint8_t> gpu = q->codes;
  // [t=3, h=1, d=5]: 256 -> 288 (E4M3 0x79: one mantissa step at 2^8).
  gpu[(3 * 2 + 1) * 64 + 5] = 0x79;
  Check c = checkQuantizedCopy(
      "q_pt", holds(HeldPart::Payload, HeldTensor::Q, HeldLayout::PerToken),
      *q, gpu.data(), gpu.size());
  EXPECT_EQ(c.verdict, Verdict::Fail);
  EXPECT_EQ(c.compared, 8192);
  EXPECT_EQ(c.maxAbsDiff, 32.0);
  EXPECT_EQ(c.detail, "1 differ; first [t=3, h=1, d=5] gpu 0x79 ref 0x78");
}

TEST_F(Ones, PayloadNaNFailsWithInfiniteDifference) {
  QuantizedReference ref(view, docs);
  const numerics::QuantizedTensor *k = nullptr;
  ASSERT_TRUE(ref.get(HeldTensor::K, HeldLayout::TokenBlock, k).ok());
  std::vector<uint8_t> gpu = k->codes;
  gpu[(40 * 1 + 0) * 64 + 63] = 0x7F; // E4M3 NaN at [t=40, h=0, d=63]
  gpu[(41 * 1 + 0) * 64 + 0] = 0x70;  // and 128 at [t=41, h=0, d=0]
  Check c = checkQuantizedCopy(
      "k_tb", holds(HeldPart::Payload, HeldTensor::K, HeldLayout::TokenBlock),
      *k, gpu.data(), gpu.size());
  EXPECT_EQ(c.verdict, Verdict::Fail);
  EXPECT_EQ(c.compared, 64 * 64);
  EXPECT_TRUE(std::isinf(c.maxAbsDiff));
  EXPECT_EQ(c.detail, "2 differ; first [t=40, h=0, d=63] gpu 0x7F ref 0x78");
}

TEST_F(Ones, ScalesOneByteOffFails) {
  QuantizedReference ref(view, docs);
  const numerics::QuantizedTensor *q = nullptr;
  ASSERT_TRUE(ref.get(HeldTensor::Q, HeldLayout::TokenBlock, q).ok());
  // 32x32 blocks, document-local: [0, 20), [20, 52), [52, 64): 3 blocks.
  ASSERT_EQ(q->scales.size(), 3u * 2 * 2);
  std::vector<uint8_t> gpu = q->scales;
  gpu[(2 * 2 + 1) * 2 + 0] = 121; // [block=2, h=1, c=0]: 2 exponents off
  Check c = checkQuantizedCopy(
      "q_tb_scales",
      holds(HeldPart::Scales, HeldTensor::Q, HeldLayout::TokenBlock), *q,
      gpu.data(), gpu.size());
  EXPECT_EQ(c.name, "q_tb_scales (E8M0 scales)");
  EXPECT_EQ(c.verdict, Verdict::Fail);
  EXPECT_EQ(c.compared, 12);
  EXPECT_EQ(c.maxAbsDiff, 2.0);
  EXPECT_EQ(c.detail, "1 differ; first [block=2, h=1, c=0] gpu 0x79 ref 0x77");
}

TEST_F(Ones, SizeMismatchFails) {
  QuantizedReference ref(view, docs);
  const numerics::QuantizedTensor *v = nullptr;
  ASSERT_TRUE(ref.get(HeldTensor::V, HeldLayout::TokenBlock, v).ok());
  std::vector<uint8_t> gpu(v->codes.size() - 1);
  Check c = checkQuantizedCopy(
      "v_tb", holds(HeldPart::Payload, HeldTensor::V, HeldLayout::TokenBlock),
      *v, gpu.data(), gpu.size());
  EXPECT_EQ(c.verdict, Verdict::Fail);
  EXPECT_EQ(c.compared, 0);
  EXPECT_EQ(c.detail, "the buffer has 4095 bytes, the reference 4096");
}

TEST_F(Ones, DequantizedCopy) {
  QuantizedReference ref(view, docs);
  const numerics::QuantizedTensor *q = nullptr;
  ASSERT_TRUE(ref.get(HeldTensor::Q, HeldLayout::PerToken, q).ok());
  // 256 x 2^-8 = 1.0 everywhere.
  std::vector<uint16_t> deq(q->codes.size(), numerics::floatToBf16(1.0f));
  std::vector<uint8_t> gpu(deq.size() * 2);
  memcpy(gpu.data(), deq.data(), gpu.size());
  const BufferContents h =
      holds(HeldPart::Dequantized, HeldTensor::Q, HeldLayout::PerToken);
  Check c = checkQuantizedCopy("q_deq", h, *q, gpu.data(), gpu.size());
  EXPECT_EQ(c.name, "q_deq (1x32 dequantized, bf16)");
  EXPECT_EQ(c.verdict, Verdict::Pass);
  EXPECT_EQ(c.compared, 8192);
  EXPECT_EQ(c.detail, "bit-identical");

  deq[(10 * 2 + 0) * 64 + 7] = numerics::floatToBf16(1.5f);
  deq[(11 * 2 + 0) * 64 + 7] = 0x7FC0; // NaN where the reference is 1
  memcpy(gpu.data(), deq.data(), gpu.size());
  c = checkQuantizedCopy("q_deq", h, *q, gpu.data(), gpu.size());
  EXPECT_EQ(c.verdict, Verdict::Fail);
  EXPECT_TRUE(std::isinf(c.maxAbsDiff));
  EXPECT_EQ(c.detail, "2 differ; first [t=10, h=0, d=7] gpu 1.5 ref 1");
}

TEST(QuantizedCopies, DequantizedNaNMatchesNaN) {
  // A NaN input element: its 1x32 block's copy is NaN on both sides.
  OwnedBatch batch = makeBatch({0, 1}, 1, 1, 32, 1.0f); // one token
  batch.q[5] = 0x7FC0;
  BatchView view = batch.view();
  DocumentLayout docs;
  ASSERT_TRUE(documentsOf(view, docs).ok());
  QuantizedReference ref(view, docs);
  const numerics::QuantizedTensor *q = nullptr;
  ASSERT_TRUE(ref.get(HeldTensor::Q, HeldLayout::PerToken, q).ok());
  std::vector<uint16_t> deq(32);
  for (int64_t d = 0; d < 32; ++d)
    deq[d] = numerics::floatToBf16(static_cast<float>(q->dequantize(0, 0, d)));
  deq[5] = 0x7FC1; // another NaN payload
  std::vector<uint8_t> gpu(64);
  memcpy(gpu.data(), deq.data(), 64);
  Check c = checkQuantizedCopy(
      "q_deq", holds(HeldPart::Dequantized, HeldTensor::Q, HeldLayout::PerToken),
      *q, gpu.data(), gpu.size());
  EXPECT_TRUE(std::isnan(q->dequantize(0, 0, 5)));
  EXPECT_EQ(c.verdict, Verdict::Pass) << c.detail;
}

TEST_F(Ones, ScaleTilesPerTokenBlock) {
  QuantizedReference ref(view, docs);
  const numerics::QuantizedTensor *k = nullptr;
  ASSERT_TRUE(ref.get(HeldTensor::K, HeldLayout::TokenBlock, k).ok());
  // 3 token blocks x 1 head: 3 slots of 512 bytes. Slot b0 holds blocks
  // b0 .. b0 + 3 as K-blocks 0..3 of rows 32 j + r; channel block c in
  // column c; 127 past the last block; the other columns are not read.
  const BufferContents h =
      holds(HeldPart::ScaleTiles, HeldTensor::K, HeldLayout::TokenBlock);
  std::vector<uint8_t> gpu(3 * 512, 0xEE);
  for (int b0 = 0; b0 < 3; ++b0)
    for (uint32_t j = 0; j < 4; ++j)
      for (uint32_t r = 0; r < 32; ++r)
        for (uint32_t c = 0; c < 2; ++c)
          gpu[b0 * 512 + sfTileOffset(32 * j + r, c)] =
              b0 + static_cast<int>(j) < 3 ? 119 : 127;
  Check c = checkScaleTiles("k_sf", h, *k, *k, gpu.data(), gpu.size());
  EXPECT_EQ(c.name, "k_sf (scale-factor tiles, 128x4 layout)");
  EXPECT_EQ(c.verdict, Verdict::Pass) << c.detail;
  EXPECT_EQ(c.compared, 3 * 4 * 32 * 2);
  EXPECT_EQ(c.detail, "every scale byte of every slot where the MMA reads it");

  gpu[1 * 512 + sfTileOffset(32 * 3 + 4, 1)] = 119; // block 4 does not exist
  c = checkScaleTiles("k_sf", h, *k, *k, gpu.data(), gpu.size());
  EXPECT_EQ(c.verdict, Verdict::Fail);
  EXPECT_EQ(c.detail,
            "1 bytes differ; first: slot (block 1, head 0) byte " +
                std::to_string(sfTileOffset(100, 1)) +
                " (block 4, row 4, channel block 1): gpu 119, expected 127");

  c = checkScaleTiles("k_sf", h, *k, *k, gpu.data(), 512);
  EXPECT_EQ(c.verdict, Verdict::Fail);
  EXPECT_EQ(c.detail, "the buffer has 512 bytes, expected NB x H x 512 = 1536");
}

TEST_F(Ones, CheckQuantizedCopiesFollowsHolds) {
  runtime::Manifest m = makeManifest(64);
  auto buffer = [&](const char *name, runtime::BufferRole role,
                    BufferContents c) {
    runtime::ManifestBuffer b;
    b.name = name;
    b.role = role;
    b.holds = c;
    m.buffers.push_back(b);
  };
  buffer("q", runtime::BufferRole::Input, BufferContents());
  buffer("q_pt", runtime::BufferRole::Workspace,
         holds(HeldPart::Payload, HeldTensor::Q, HeldLayout::PerToken));
  buffer("tmp", runtime::BufferRole::Workspace, BufferContents()); // scratch
  buffer("v_tb_scales", runtime::BufferRole::Workspace,
         holds(HeldPart::Scales, HeldTensor::V, HeldLayout::TokenBlock));

  std::vector<std::string> fetched;
  std::map<std::string, std::vector<uint8_t>> device;
  device["q_pt"] = std::vector<uint8_t>(8192, 0x78);
  device["v_tb_scales"] = std::vector<uint8_t>(3 * 1 * 2, 119);
  device["v_tb_scales"][5] = 118;
  FetchBuffer fetch = [&](const std::string &name, std::vector<uint8_t> &out) {
    fetched.push_back(name);
    out = device.at(name);
    return runtime::Status::success();
  };
  std::vector<Check> checks;
  ASSERT_TRUE(checkQuantizedCopies(view, m, fetch, checks).ok());
  EXPECT_EQ(fetched, (std::vector<std::string>{"q_pt", "v_tb_scales"}));
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_EQ(checks[0].name, "q_pt (E4M3 payload)");
  EXPECT_EQ(checks[0].verdict, Verdict::Pass);
  EXPECT_EQ(checks[1].name, "workspace tmp");
  EXPECT_EQ(checks[1].verdict, Verdict::Info);
  EXPECT_EQ(checks[1].detail, "not checked: the kernels' scratch memory");
  EXPECT_EQ(checks[2].verdict, Verdict::Fail);
  EXPECT_EQ(checks[2].detail,
            "1 differ; first [block=2, h=0, c=1] gpu 0x76 ref 0x77");
  EXPECT_EQ(countFailures(checks), 1);

  // A fetch error is returned as is.
  fetch = [](const std::string &name, std::vector<uint8_t> &) {
    return runtime::Status::error(runtime::ErrorCode::NotFound, name);
  };
  checks.clear();
  runtime::Status s = checkQuantizedCopies(view, m, fetch, checks);
  EXPECT_EQ(s.code, runtime::ErrorCode::NotFound);
  EXPECT_EQ(s.message, "q_pt");
}

/// With every element 1.0, an NVFP4 1x16 block has amax 1: its scale is the
/// smallest E4M3 s with 1 <= 6 s, 0.171875 (0x23), and 1 / s = 5.82 rounds
/// to E2M1 6 (0x7): every payload byte holds two of them, 0x77, and every
/// dequantized value is 6 x 0.171875 = 1.03125.
TEST_F(Ones, Nvfp4PayloadScalesAndDequantized) {
  QuantizedReference ref(view, docs);
  const numerics::QuantizedTensor *q = nullptr;
  ASSERT_TRUE(ref.get(HeldTensor::Q, HeldLayout::PerToken, q, true).ok());
  ASSERT_EQ(q->codes.size(), 64u * 2 * 64);
  ASSERT_EQ(q->scales.size(), 64u * 2 * 4); // [T, H, D / 16]
  EXPECT_EQ(q->codes[0], 0x7);
  EXPECT_EQ(q->scales[0], 0x23);
  // Not the MXFP8 copy of the same tensor and layout.
  const numerics::QuantizedTensor *mx = nullptr;
  ASSERT_TRUE(ref.get(HeldTensor::Q, HeldLayout::PerToken, mx).ok());
  EXPECT_NE(q, mx);
  EXPECT_EQ(mx->codes[0], 0x78);

  BufferContents payload =
      holds(HeldPart::Payload, HeldTensor::Q, HeldLayout::PerToken);
  payload.format = runtime::HeldFormat::E2M1;
  std::vector<uint8_t> gpu(64 * 2 * 32, 0x77);
  Check c = checkQuantizedCopy("q_pt", payload, *q, gpu.data(), gpu.size());
  EXPECT_EQ(c.name, "q_pt (E2M1 payload, 2 a byte)");
  EXPECT_EQ(c.verdict, Verdict::Pass) << c.detail;
  EXPECT_EQ(c.compared, 8192);
  // The high nibble of byte (t=3, h=1, byte 2) is element d = 5: 6 -> 4.
  gpu[(3 * 2 + 1) * 32 + 2] = 0x67;
  c = checkQuantizedCopy("q_pt", payload, *q, gpu.data(), gpu.size());
  EXPECT_EQ(c.verdict, Verdict::Fail);
  EXPECT_EQ(c.maxAbsDiff, 2.0);
  EXPECT_EQ(c.detail, "1 differ; first [t=3, h=1, d=5] gpu 0x6 ref 0x7");
  // One code per byte (unpacked) is the wrong size.
  c = checkQuantizedCopy("q_pt", payload, *q, q->codes.data(), q->codes.size());
  EXPECT_EQ(c.verdict, Verdict::Fail);
  EXPECT_EQ(c.detail, "the buffer has 8192 bytes, the reference 4096");

  BufferContents scales =
      holds(HeldPart::Scales, HeldTensor::Q, HeldLayout::PerToken);
  scales.format = runtime::HeldFormat::E4M3;
  std::vector<uint8_t> sc(64 * 2 * 4, 0x23);
  sc[7] = 0x24; // [t=0, h=1, c=3]: 0.1875 for 0.171875
  c = checkQuantizedCopy("q_pt_scales", scales, *q, sc.data(), sc.size());
  EXPECT_EQ(c.name, "q_pt_scales (UE4M3 scales)");
  EXPECT_EQ(c.verdict, Verdict::Fail);
  EXPECT_EQ(c.maxAbsDiff, 0.015625);
  EXPECT_EQ(c.detail, "1 differ; first [block=0, h=1, c=3] gpu 0x24 ref 0x23");

  std::vector<uint16_t> deq(8192, numerics::floatToBf16(1.03125f));
  std::vector<uint8_t> bytes(deq.size() * 2);
  memcpy(bytes.data(), deq.data(), bytes.size());
  c = checkQuantizedCopy(
      "q_deq",
      holds(HeldPart::Dequantized, HeldTensor::Q, HeldLayout::PerToken), *q,
      bytes.data(), bytes.size());
  EXPECT_EQ(c.name, "q_deq (1x16 dequantized, bf16)");
  EXPECT_EQ(c.verdict, Verdict::Pass) << c.detail;
}

/// NVFP4 per-token scale tiles (scale_vec::4X): at D = 128 each slot holds
/// two 512-byte tiles, scales 0-3 and 4-7 of a row; 0 past a short block's
/// end, UE4M3 1.0 (0x38) past the last block.
TEST(QuantizedCopies, Nvfp4ScaleTilesTwoPerSlot) {
  // One document of 40 tokens: blocks [0, 32) and [32, 40).
  OwnedBatch batch = makeBatch({0, 40}, 1, 1, 128, 1.0f);
  BatchView view = batch.view();
  DocumentLayout docs;
  ASSERT_TRUE(documentsOf(view, docs).ok());
  QuantizedReference ref(view, docs);
  const numerics::QuantizedTensor *blocks = nullptr, *scales = nullptr;
  ASSERT_TRUE(ref.get(HeldTensor::K, HeldLayout::TokenBlock, blocks).ok());
  ASSERT_TRUE(ref.get(HeldTensor::K, HeldLayout::PerToken, scales, true).ok());
  ASSERT_EQ(blocks->blocks.numBlocks(), 2);
  ASSERT_EQ(scales->scaleChannels, 8);
  BufferContents h =
      holds(HeldPart::ScaleTiles, HeldTensor::K, HeldLayout::PerToken);
  h.format = runtime::HeldFormat::E4M3;
  std::vector<uint8_t> gpu(2 * 1024, 0xEE);
  for (int b0 = 0; b0 < 2; ++b0)
    for (uint32_t j = 0; j < 4; ++j)
      for (uint32_t r = 0; r < 32; ++r)
        for (uint32_t c = 0; c < 8; ++c) {
          const int blk = b0 + static_cast<int>(j);
          const int token = 32 * blk + static_cast<int>(r);
          gpu[b0 * 1024 + (c / 4) * 512 + sfTileOffset(32 * j + r, c % 4)] =
              blk >= 2     ? 0x38
              : token < 40 ? 0x23
                           : 0;
        }
  Check c =
      checkScaleTiles("k_sf", h, *blocks, *scales, gpu.data(), gpu.size());
  EXPECT_EQ(c.name, "k_sf (UE4M3 scale-factor tiles, 128x4 layout)");
  EXPECT_EQ(c.verdict, Verdict::Pass) << c.detail;
  EXPECT_EQ(c.compared, 2 * 4 * 32 * 8);
  // Scale 6 of token 33 (block 1, row 1) in slot 0 (position j = 1): tile
  // 1, column 2.
  const uint32_t at = 512 + sfTileOffset(32 + 1, 2);
  gpu[at] = 0x24;
  c = checkScaleTiles("k_sf", h, *blocks, *scales, gpu.data(), gpu.size());
  EXPECT_EQ(c.verdict, Verdict::Fail);
  EXPECT_EQ(c.detail, "1 bytes differ; first: slot (block 0, head 0) byte " +
                          std::to_string(at) +
                          " (block 1, row 1, channel block 6): gpu 36, "
                          "expected 35");
  c = checkScaleTiles("k_sf", h, *blocks, *scales, gpu.data(), 1024);
  EXPECT_EQ(c.verdict, Verdict::Fail);
  EXPECT_EQ(c.detail,
            "the buffer has 1024 bytes, expected NB x H x 1024 = 2048");
}

TEST_F(Ones, Nvfp4NeedsPerTokenLayout) {
  QuantizedReference ref(view, docs);
  const numerics::QuantizedTensor *k = nullptr;
  runtime::Status s = ref.get(HeldTensor::K, HeldLayout::TokenBlock, k, true);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message, "an NVFP4 copy of k in layout token_block is to be "
                       "checked; NVFP4 copies are per token (1x16)");
}

/// Recipe nvfp4-mixed: q's copies are NVFP4 by their formats, q_deq by its
/// payload's; k_deq (no payload or scales in the manifest) by the recipe,
/// which reads K per token in NVFP4; v's copies stay MXFP8.
TEST_F(Ones, CheckQuantizedCopiesNvfp4) {
  runtime::Manifest m = makeManifest(64);
  m.recipe.kind = runtime::kRecipeNvfp4Mixed;
  auto buffer = [&](const char *name, HeldPart part, HeldTensor tensor,
                    HeldLayout layout, runtime::HeldFormat format) {
    runtime::ManifestBuffer b;
    b.name = name;
    b.role = runtime::BufferRole::Workspace;
    b.holds = holds(part, tensor, layout);
    b.holds.format = format;
    m.buffers.push_back(b);
  };
  using runtime::HeldFormat;
  buffer("q_pt", HeldPart::Payload, HeldTensor::Q, HeldLayout::PerToken,
         HeldFormat::E2M1);
  buffer("q_pt_scales", HeldPart::Scales, HeldTensor::Q, HeldLayout::PerToken,
         HeldFormat::E4M3);
  buffer("q_deq", HeldPart::Dequantized, HeldTensor::Q, HeldLayout::PerToken,
         HeldFormat::BF16);
  buffer("k_deq", HeldPart::Dequantized, HeldTensor::K, HeldLayout::PerToken,
         HeldFormat::BF16);
  buffer("v_tb_scales", HeldPart::Scales, HeldTensor::V, HeldLayout::TokenBlock,
         HeldFormat::E8M0);

  auto bf16Bytes = [](size_t n, float value) {
    std::vector<uint16_t> v(n, numerics::floatToBf16(value));
    std::vector<uint8_t> b(2 * n);
    memcpy(b.data(), v.data(), b.size());
    return b;
  };
  std::map<std::string, std::vector<uint8_t>> device;
  device["q_pt"] = std::vector<uint8_t>(64 * 2 * 32, 0x77);
  device["q_pt_scales"] = std::vector<uint8_t>(64 * 2 * 4, 0x23);
  device["q_deq"] = bf16Bytes(64 * 2 * 64, 1.03125f);
  device["k_deq"] = bf16Bytes(64 * 1 * 64, 1.03125f);
  device["v_tb_scales"] = std::vector<uint8_t>(3 * 1 * 2, 119);
  FetchBuffer fetch = [&](const std::string &name, std::vector<uint8_t> &out) {
    out = device.at(name);
    return runtime::Status::success();
  };
  std::vector<Check> checks;
  ASSERT_TRUE(checkQuantizedCopies(view, m, fetch, checks).ok());
  ASSERT_EQ(checks.size(), 5u);
  EXPECT_EQ(checks[0].name, "q_pt (E2M1 payload, 2 a byte)");
  EXPECT_EQ(checks[1].name, "q_pt_scales (UE4M3 scales)");
  EXPECT_EQ(checks[2].name, "q_deq (1x16 dequantized, bf16)");
  EXPECT_EQ(checks[3].name, "k_deq (1x16 dequantized, bf16)");
  EXPECT_EQ(checks[4].name, "v_tb_scales (E8M0 scales)");
  EXPECT_EQ(countFailures(checks), 0) << checks[3].detail;

  // The MXFP8 dequantized value (1.0) is not the NVFP4 copy.
  device["k_deq"] = bf16Bytes(64 * 1 * 64, 1.0f);
  checks.clear();
  ASSERT_TRUE(checkQuantizedCopies(view, m, fetch, checks).ok());
  EXPECT_EQ(countFailures(checks), 1);
  EXPECT_EQ(checks[3].detail,
            "4096 differ; first [t=0, h=0, d=0] gpu 1 ref 1.03125");
}

TEST(OutputsWritten, CountsNaN) {
  std::vector<uint16_t> o(8, numerics::floatToBf16(0.5f));
  std::vector<float> lse(4, 1.0f);
  Check c = checkOutputsWritten(o.data(), o.size(), lse.data(), lse.size());
  EXPECT_EQ(c.verdict, Verdict::Pass);
  EXPECT_EQ(c.compared, 12);
  o[3] = 0xFFFF; // the NaN fill
  lse[2] = NAN;
  lse[3] = NAN;
  c = checkOutputsWritten(o.data(), o.size(), lse.data(), lse.size());
  EXPECT_EQ(c.verdict, Verdict::Fail);
  EXPECT_EQ(c.detail,
            "1 O and 2 LSE elements are NaN (unwritten, or NaN computed)");
  EXPECT_STREQ(verdictName(c.verdict), "FAIL");
}

} // namespace
