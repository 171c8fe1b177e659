//===- ManifestWriterTest.cpp - manifest.json v2: write -> parse -> equal -===//
//
// writeManifestJson and parseManifest are the two halves of one contract:
// what the writer writes the reader reads back into an equal Manifest, for
// every buffer kind and parameter kind, and what the buffers hold ("holds")
// is required, typed and checked.
//
//===----------------------------------------------------------------------===//

#include "flamia/Runtime/Manifest.h"

#include "TestArtifacts.h"

#include <gtest/gtest.h>

using namespace flamia::runtime;
using namespace flamia::runtime::test;

namespace {

Expression expr(const std::string &text) {
  Expression e;
  Status s = Expression::parse(text, e);
  EXPECT_TRUE(s.ok()) << s.message;
  return e;
}

std::vector<Expression> exprs(std::initializer_list<const char *> texts) {
  std::vector<Expression> out;
  for (const char *t : texts)
    out.push_back(expr(t));
  return out;
}

ManifestBuffer buffer(const std::string &name, BufferRole role, DType dtype,
                      std::initializer_list<const char *> shape) {
  ManifestBuffer b;
  b.name = name;
  b.role = role;
  b.dtype = dtype;
  b.shape = exprs(shape);
  return b;
}

ManifestBuffer copy(const std::string &name, HeldTensor tensor,
                    HeldLayout layout, HeldPart part,
                    std::initializer_list<const char *> shape,
                    TileRows rows = TileRows::Tokens) {
  DType dtype = part == HeldPart::Dequantized ? DType::BF16
                : part == HeldPart::Delta       ? DType::F32
                                                : DType::U8;
  ManifestBuffer b = buffer(name, BufferRole::Workspace, dtype, shape);
  b.holds.part = part;
  b.holds.tensor = tensor;
  b.holds.layout = layout;
  b.holds.format = part == HeldPart::Payload       ? HeldFormat::E4M3
                   : part == HeldPart::Dequantized ? HeldFormat::BF16
                   : part == HeldPart::Delta       ? HeldFormat::F32
                                                   : HeldFormat::E8M0;
  b.holds.tileRows = rows;
  return b;
}

ManifestParam ptr(const std::string &name, const Manifest &m,
                  const std::string &bufferName) {
  ManifestParam p;
  p.name = name;
  p.kind = ParamKind::Ptr;
  p.buffer = m.findBuffer(bufferName);
  EXPECT_GE(p.buffer, 0) << bufferName;
  return p;
}

/// A manifest with every buffer kind (inputs, outputs, every workspace copy
/// the compiler writes, scratch, the schedule buffers) and every parameter
/// kind.
Manifest everyKind() {
  Manifest m;
  m.version = kManifestVersion;
  EXPECT_TRUE(parseTarget("sm_100a", m.target));
  m.recipe.kind = kRecipeMxfp8;
  m.recipe.safeBlock = 256;
  m.recipe.strict = false;
  m.headDim = 128;
  m.heads = 8;
  m.kvHeads = 2;
  m.causal = true;
  m.varlen = true;
  m.hasSoftmaxScale = true;
  m.softmaxScale = 0.0883883461f; // fl32(1 / sqrt(128))
  m.schedule.present = true;
  m.schedule.blockM = 128;
  m.schedule.blockN = 128;
  m.schedule.safeBlock = 256;
  m.schedule.costModel = "sm_100a";
  m.schedule.weights =
      flamia::costWeightsForTarget(flamia::ScheduleTarget::Sm100a);

  using BR = BufferRole;
  using HT = HeldTensor;
  using HL = HeldLayout;
  using HP = HeldPart;
  m.buffers = {
      buffer("q", BR::Input, DType::BF16, {"T", "8", "128"}),
      buffer("k", BR::Input, DType::BF16, {"T", "Hkv", "D"}),
      buffer("v", BR::Input, DType::BF16, {"T", "Hkv", "D"}),
      buffer("cu_seqlens", BR::Input, DType::I32, {"NUM_DOCS + 1"}),
      buffer("o", BR::Output, DType::BF16, {"T", "8", "128"}),
      buffer("lse", BR::Output, DType::F32, {"8", "T"}),
      copy("q_pt", HT::Q, HL::PerToken, HP::Payload, {"T", "8", "128"}),
      copy("q_pt_scales", HT::Q, HL::PerToken, HP::Scales, {"T", "8", "4"}),
      copy("q_tb", HT::Q, HL::TokenBlock, HP::Payload, {"T", "8", "128"}),
      copy("q_tb_scales", HT::Q, HL::TokenBlock, HP::Scales, {"NB", "8", "4"}),
      copy("k_tb", HT::K, HL::TokenBlock, HP::Payload, {"T", "2", "128"}),
      copy("k_tb_scales", HT::K, HL::TokenBlock, HP::Scales, {"NB", "2", "4"}),
      copy("v_tb", HT::V, HL::TokenBlock, HP::Payload, {"T", "2", "128"}),
      copy("v_tb_scales", HT::V, HL::TokenBlock, HP::Scales, {"NB", "2", "D / 32"}),
      copy("q_deq", HT::Q, HL::PerToken, HP::Dequantized, {"T", "8", "128"}),
      copy("k_deq", HT::K, HL::TokenBlock, HP::Dequantized, {"T", "2", "128"}),
      copy("v_deq", HT::V, HL::TokenBlock, HP::Dequantized, {"T", "2", "128"}),
      copy("q_sf", HT::Q, HL::PerToken, HP::ScaleTiles, {"NB", "8", "512"}),
      copy("k_sf", HT::K, HL::TokenBlock, HP::ScaleTiles, {"NB", "2", "512"}),
      copy("v_sf", HT::V, HL::TokenBlock, HP::ScaleTiles, {"NB", "2", "512"},
           TileRows::Channels),
      buffer("scratch", BR::Workspace, DType::F32, {"cdiv(T, 128)", "Hq"}),
      buffer("block_info", BR::Schedule, DType::I32, {"NB", "2"}),
      buffer("items", BR::Schedule, DType::I32, {"NUM_ITEMS", "8"}),
      buffer("counter", BR::Schedule, DType::I32, {"1"}),
  };
  m.buffers[20].holds.part = HeldPart::Scratch;

  ManifestKernel quantize;
  quantize.name = "flamia_quantize";
  quantize.cubin = "flamia_quantize.cubin";
  quantize.ptx = "flamia_quantize.ptx";
  quantize.launch = "grid";
  quantize.grid[0] = expr("NB");
  quantize.grid[1] = expr("Hq");
  quantize.grid[2] = expr("1");
  quantize.block[0] = 128;
  quantize.smemBytes = 0;
  quantize.tmemColumns = 0;
  quantize.registers = 40;
  quantize.spillBytes = 0;
  for (const char *b : {"q", "k", "v", "block_info", "q_pt", "q_pt_scales",
                        "q_tb", "q_tb_scales", "k_tb", "k_tb_scales", "v_tb",
                        "v_tb_scales", "q_deq", "k_deq", "v_deq", "q_sf",
                        "k_sf", "v_sf", "scratch"})
    quantize.params.push_back(ptr(b, m, b));

  ManifestKernel fwd;
  fwd.name = "flamia_attention_fwd";
  fwd.cubin = "sub/flamia_attention_fwd.cubin";
  fwd.launch = "persistent"; // no ptx: optional
  fwd.grid[0] = expr("NUM_SMS");
  fwd.grid[1] = expr("1");
  fwd.grid[2] = expr("1");
  fwd.block[0] = 384;
  fwd.cluster[0] = 2;
  fwd.smemBytes = 200000;
  fwd.tmemColumns = 512;
  // registers, spill_bytes: absent (-1)
  ManifestParam map;
  map.name = "q_map";
  map.kind = ParamKind::TensorMap;
  map.buffer = m.findBuffer("q_pt");
  map.tensorMap.dtype = DType::U8;
  map.tensorMap.rows = expr("T");
  map.tensorMap.cols = expr("1024");
  map.tensorMap.boxRows = Expression::constant(128);
  map.tensorMap.boxCols = Expression::constant(128);
  map.tensorMap.swizzle = 128;
  fwd.params.push_back(map);
  ManifestParam kmap = map;
  kmap.name = "k_map";
  kmap.buffer = m.findBuffer("k");
  kmap.tensorMap.dtype = DType::BF16;
  kmap.tensorMap.cols = expr("Hkv * D");
  kmap.tensorMap.boxRows = expr("128");
  kmap.tensorMap.boxCols = Expression::constant(64);
  kmap.tensorMap.l2Promotion = 256;
  fwd.params.push_back(kmap);
  for (const char *b : {"q_sf", "items", "counter", "o", "lse"})
    fwd.params.push_back(ptr(b, m, b));
  ManifestParam n;
  n.name = "num_items";
  n.kind = ParamKind::I32;
  n.value = expr("NUM_ITEMS");
  fwd.params.push_back(n);
  n.name = "tokens";
  n.value = expr("T * Hq + 1");
  fwd.params.push_back(n);
  ManifestParam f;
  f.name = "scale_log2";
  f.kind = ParamKind::F32;
  f.named = NamedValue::SoftmaxScaleLog2;
  fwd.params.push_back(f);
  f.name = "scale";
  f.named = NamedValue::SoftmaxScale;
  fwd.params.push_back(f);
  f.name = "half";
  f.named = NamedValue::FloatLiteral;
  f.floatLiteral = 0.1;
  fwd.params.push_back(f);
  f.name = "two";
  f.named = NamedValue::None;
  f.floatLiteral = 0.0;
  f.value = expr("2");
  fwd.params.push_back(f);
  m.kernels = {quantize, fwd};
  return m;
}

void expectSameExpression(const Expression &a, const Expression &b,
                          const std::string &what) {
  EXPECT_EQ(a.text(), b.text()) << what;
  int64_t ca = 0, cb = 0;
  EXPECT_EQ(a.constantValue(ca), b.constantValue(cb)) << what;
  EXPECT_EQ(ca, cb) << what;
}

/// Field by field: every field of the structs.
void expectEqual(const Manifest &a, const Manifest &b) {
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.target.name, b.target.name);
  EXPECT_EQ(a.target.major, b.target.major);
  EXPECT_EQ(a.target.minor, b.target.minor);
  EXPECT_EQ(a.target.archSpecific, b.target.archSpecific);
  EXPECT_EQ(a.target.familySpecific, b.target.familySpecific);
  EXPECT_EQ(a.recipe.kind, b.recipe.kind);
  EXPECT_EQ(a.recipe.safeBlock, b.recipe.safeBlock);
  EXPECT_EQ(a.recipe.strict, b.recipe.strict);
  EXPECT_EQ(a.headDim, b.headDim);
  EXPECT_EQ(a.causal, b.causal);
  EXPECT_EQ(a.heads, b.heads);
  EXPECT_EQ(a.kvHeads, b.kvHeads);
  EXPECT_EQ(a.varlen, b.varlen);
  EXPECT_EQ(a.hasSoftmaxScale, b.hasSoftmaxScale);
  EXPECT_EQ(a.softmaxScale, b.softmaxScale); // bit for bit
  EXPECT_EQ(a.schedule.present, b.schedule.present);
  EXPECT_EQ(a.schedule.blockM, b.schedule.blockM);
  EXPECT_EQ(a.schedule.blockN, b.schedule.blockN);
  EXPECT_EQ(a.schedule.safeBlock, b.schedule.safeBlock);
  EXPECT_EQ(a.schedule.costModel, b.schedule.costModel);
  EXPECT_EQ(a.schedule.weights.itemOverhead, b.schedule.weights.itemOverhead);
  EXPECT_EQ(a.schedule.weights.fp8Tile, b.schedule.weights.fp8Tile);
  EXPECT_EQ(a.schedule.weights.bf16Tile, b.schedule.weights.bf16Tile);
  ASSERT_EQ(a.buffers.size(), b.buffers.size());
  for (size_t i = 0; i < a.buffers.size(); ++i) {
    const ManifestBuffer &x = a.buffers[i], &y = b.buffers[i];
    SCOPED_TRACE("buffer " + x.name);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.role, y.role);
    EXPECT_EQ(x.dtype, y.dtype);
    ASSERT_EQ(x.shape.size(), y.shape.size());
    for (size_t d = 0; d < x.shape.size(); ++d)
      expectSameExpression(x.shape[d], y.shape[d], "shape");
    if (x.role == BufferRole::Workspace) {
      EXPECT_TRUE(x.holds == y.holds);
      EXPECT_EQ(heldPartName(x.holds.part), heldPartName(y.holds.part));
    }
  }
  ASSERT_EQ(a.kernels.size(), b.kernels.size());
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    const ManifestKernel &x = a.kernels[i], &y = b.kernels[i];
    SCOPED_TRACE("kernel " + x.name);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.cubin, y.cubin);
    EXPECT_EQ(x.ptx, y.ptx);
    EXPECT_EQ(x.launch, y.launch);
    EXPECT_EQ(x.phase, y.phase);
    for (int d = 0; d < 3; ++d) {
      expectSameExpression(x.grid[d], y.grid[d], "grid");
      EXPECT_EQ(x.block[d], y.block[d]);
      EXPECT_EQ(x.cluster[d], y.cluster[d]);
    }
    EXPECT_EQ(x.smemBytes, y.smemBytes);
    EXPECT_EQ(x.registers, y.registers);
    EXPECT_EQ(x.spillBytes, y.spillBytes);
    EXPECT_EQ(x.tmemColumns, y.tmemColumns);
    ASSERT_EQ(x.params.size(), y.params.size());
    for (size_t j = 0; j < x.params.size(); ++j) {
      const ManifestParam &p = x.params[j], &q = y.params[j];
      SCOPED_TRACE("param " + p.name);
      EXPECT_EQ(p.name, q.name);
      EXPECT_EQ(p.kind, q.kind);
      EXPECT_EQ(p.buffer, q.buffer);
      EXPECT_EQ(p.named, q.named);
      if (p.named == NamedValue::None &&
          (p.kind == ParamKind::I32 || p.kind == ParamKind::F32)) {
        expectSameExpression(p.value, q.value, "value");
      }
      if (p.named == NamedValue::FloatLiteral) {
        EXPECT_EQ(p.floatLiteral, q.floatLiteral);
      }
      if (p.kind == ParamKind::TensorMap) {
        const TensorMapSpec &s = p.tensorMap, &t = q.tensorMap;
        EXPECT_EQ(s.dtype, t.dtype);
        expectSameExpression(s.rows, t.rows, "rows");
        expectSameExpression(s.cols, t.cols, "cols");
        expectSameExpression(s.boxRows, t.boxRows, "boxRows");
        expectSameExpression(s.boxCols, t.boxCols, "boxCols");
        EXPECT_EQ(s.swizzle, t.swizzle);
        EXPECT_EQ(s.l2Promotion, t.l2Promotion);
      }
    }
  }
}

Manifest parseOk(const std::string &text) {
  Manifest m;
  Status s = parseManifest(text, m);
  EXPECT_TRUE(s.ok()) << s.message << "\n" << text;
  return m;
}

std::string parseError(const std::string &text) {
  Manifest m;
  Status s = parseManifest(text, m);
  EXPECT_FALSE(s.ok()) << text;
  EXPECT_EQ(s.code, ErrorCode::InvalidManifest);
  return s.message;
}

/// The written everyKind() manifest with `from` replaced by `to`.
std::string everyKindWith(const std::string &from, const std::string &to) {
  bool found = false;
  std::string text = replaceOnce(writeManifestJson(everyKind()), from, to,
                                 &found);
  EXPECT_TRUE(found) << "test bug: '" << from << "' not in the manifest";
  return text;
}

#define EXPECT_CONTAINS(haystack, needle)                                      \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos)             \
      << "'" << (haystack) << "' lacks '" << (needle) << "'"

TEST(ManifestWriter, EveryKindRoundTrips) {
  const Manifest m = everyKind();
  const std::string text = writeManifestJson(m);
  Manifest back = parseOk(text);
  expectEqual(m, back);
  EXPECT_EQ(writeManifestJson(back), text); // a fixed point
}

TEST(ManifestWriter, EveryHoldsValueRoundTrips) {
  const Manifest m = everyKind();
  Manifest back = parseOk(writeManifestJson(m));
  // The part, tensor, layout, format and tile rows of each workspace buffer.
  const BufferContents &v = back.buffers[back.findBuffer("v_sf")].holds;
  EXPECT_EQ(v.part, HeldPart::ScaleTiles);
  EXPECT_EQ(v.tensor, HeldTensor::V);
  EXPECT_EQ(v.layout, HeldLayout::TokenBlock);
  EXPECT_EQ(v.format, HeldFormat::E8M0);
  EXPECT_EQ(v.tileRows, TileRows::Channels);
  const BufferContents &q = back.buffers[back.findBuffer("q_deq")].holds;
  EXPECT_EQ(q.part, HeldPart::Dequantized);
  EXPECT_EQ(q.layout, HeldLayout::PerToken);
  EXPECT_EQ(q.format, HeldFormat::BF16);
  EXPECT_EQ(back.buffers[back.findBuffer("scratch")].holds.part,
            HeldPart::Scratch);
  int parts[6] = {};
  for (const ManifestBuffer &b : back.buffers)
    if (b.role == BufferRole::Workspace)
      ++parts[static_cast<int>(b.holds.part)];
  EXPECT_EQ(parts[static_cast<int>(HeldPart::Payload)], 4);
  EXPECT_EQ(parts[static_cast<int>(HeldPart::Scales)], 4);
  EXPECT_EQ(parts[static_cast<int>(HeldPart::Dequantized)], 3);
  EXPECT_EQ(parts[static_cast<int>(HeldPart::ScaleTiles)], 3);
  EXPECT_EQ(parts[static_cast<int>(HeldPart::Scratch)], 1);
}

TEST(ManifestWriter, TheStandardManifestRoundTrips) {
  Manifest m = parseOk(standardManifest());
  Manifest back = parseOk(writeManifestJson(m));
  expectEqual(m, back);
}

TEST(ManifestWriter, OptionalPartsRoundTrip) {
  Manifest m = everyKind();
  m.recipe.kind.clear(); // no "recipe" (the reader's defaults)
  m.recipe.safeBlock = 128;
  m.schedule = ManifestSchedule();
  m.heads = m.kvHeads = 0;
  m.hasSoftmaxScale = false;
  m.softmaxScale = 0;
  m.varlen = false;
  m.causal = false;
  m.buffers.resize(21); // without the schedule buffers (items needs it)
  m.kernels[1].params.erase(m.kernels[1].params.begin() + 3,
                            m.kernels[1].params.begin() + 5); // items, counter
  m.kernels[1].params.erase(m.kernels[1].params.begin() + 5); // NUM_ITEMS
  m.kernels[0].params.erase(m.kernels[0].params.begin() + 3); // block_info
  m.kernels[1].grid[0] = expr("cdiv(T, 128)");
  const std::string text = writeManifestJson(m);
  EXPECT_EQ(text.find("\"recipe\""), std::string::npos);
  EXPECT_EQ(text.find("\"schedule\""), std::string::npos);
  EXPECT_EQ(text.find("\"heads\""), std::string::npos);
  EXPECT_NE(text.find("\"softmax_scale\": null"), std::string::npos);
  expectEqual(m, parseOk(text));
}

TEST(ManifestWriter, CustomCostModelAndNvfp4RoundTrip) {
  Manifest m = everyKind();
  m.recipe.kind = kRecipeNvfp4Mixed;
  m.schedule.costModel = "custom";
  m.schedule.weights.itemOverhead = 0.25;
  m.schedule.weights.fp8Tile = 1.5;
  m.schedule.weights.bf16Tile = 3;
  const std::string text = writeManifestJson(m);
  EXPECT_NE(text.find("\"kind\": \"nvfp4-mixed\""), std::string::npos);
  expectEqual(m, parseOk(text));
}

TEST(ManifestWriter, ScheduleOrderRoundTrips) {
  Manifest m = everyKind();
  ASSERT_TRUE(m.schedule.present);
  EXPECT_EQ(writeManifestJson(m).find("\"order\""), std::string::npos);
  m.schedule.order = flamia::ScheduleOrder::L2Sections;
  m.schedule.l2SectionBytes = 12345678;
  const std::string text = writeManifestJson(m);
  EXPECT_NE(text.find("\"order\": \"l2-sections\""), std::string::npos);
  Manifest back = parseOk(text);
  EXPECT_EQ(back.schedule.order, flamia::ScheduleOrder::L2Sections);
  EXPECT_EQ(back.schedule.l2SectionBytes, 12345678);
}

TEST(ManifestWriter, NumbersReadBackExactly) {
  Manifest m = everyKind();
  for (float scale : {0.125f, 0.1f, 1e-30f, 3.4e38f, 0.0883883461f}) {
    m.softmaxScale = scale;
    expectEqual(m, parseOk(writeManifestJson(m)));
  }
  // The shortest text: 0.1f is written "0.1", not 0.10000000149011612.
  m.softmaxScale = 0.1f;
  EXPECT_NE(writeManifestJson(m).find("\"softmax_scale\": 0.1,"),
            std::string::npos);
}

TEST(ManifestWriter, PtxOnlyKernelsAreWrittenWithANullCubin) {
  Manifest m = everyKind();
  m.kernels[0].cubin.clear();
  const std::string text = writeManifestJson(m);
  EXPECT_NE(text.find("\"cubin\": null"), std::string::npos);
  EXPECT_CONTAINS(parseError(text),
                  "kernels[0].cubin: kernel 'flamia_quantize' has no cubin "
                  "(compiled with flamia-compile --ptx-only)");
}

TEST(ManifestWriter, StringsAreEscaped) {
  Manifest m = everyKind();
  m.kernels[0].ptx = "a \"b\"\\c\n\td";
  EXPECT_EQ(parseOk(writeManifestJson(m)).kernels[0].ptx, m.kernels[0].ptx);
}

TEST(ManifestHolds, AWorkspaceBufferWithoutHoldsIsAnError) {
  // The error names the buffer.
  std::string text = everyKindWith(
      R"(,
      "holds": {
        "part": "scales",
        "tensor": "k",
        "layout": "token_block",
        "format": "e8m0"
      })",
      "");
  EXPECT_CONTAINS(parseError(text),
                  "buffers[11]: workspace buffer 'k_tb_scales' has no "
                  "\"holds\"");
  // The scratch buffer too.
  EXPECT_CONTAINS(parseError(everyKindWith(R"(,
      "holds": {
        "part": "scratch"
      })",
                                           "")),
                  "workspace buffer 'scratch' has no \"holds\"");
}

TEST(ManifestHolds, OnlyWorkspaceBuffersHoldCopies) {
  EXPECT_CONTAINS(
      parseError(everyKindWith(R"("name": "counter",
      "role": "schedule",
      "dtype": "i32",
      "shape": [
        "1"
      ])",
                               R"("name": "counter",
      "role": "schedule",
      "dtype": "i32",
      "shape": ["1"], "holds": {"part": "scratch"})")),
      "buffers[23].holds: schedule buffer 'counter' has \"holds\"; only "
      "workspace buffers say what they hold");
}

TEST(ManifestHolds, Nvfp4CopiesArePerToken) {
  const std::string qpt = R"("part": "payload",
        "tensor": "q",
        "layout": "per_token",
        "format": "e4m3")";
  // NVFP4 (recipe nvfp4-mixed): e2m1 payloads and e4m3 scales, per token.
  Manifest m = parseOk(everyKindWith(qpt, R"("part": "payload", "tensor": "q",
        "layout": "per_token", "format": "e2m1")"));
  ASSERT_GT(m.buffers.size(), 6u);
  EXPECT_EQ(m.buffers[6].holds.format, HeldFormat::E2M1);
  EXPECT_STREQ(heldFormatName(HeldFormat::E2M1), "e2m1");
  m = parseOk(everyKindWith(qpt, R"("part": "scales", "tensor": "q",
        "layout": "per_token", "format": "e4m3")"));
  EXPECT_EQ(m.buffers[6].holds.part, HeldPart::Scales);
  EXPECT_EQ(m.buffers[6].holds.format, HeldFormat::E4M3);
  // ... and round-trip through the writer.
  expectEqual(m, parseOk(writeManifestJson(m)));
  auto with = [&](const std::string &holds) {
    return parseError(everyKindWith(qpt, holds));
  };
  EXPECT_CONTAINS(with(R"("part": "payload", "tensor": "k",
                          "layout": "token_block", "format": "e2m1")"),
                  "buffers[6].holds.format: workspace buffer 'q_pt' holds "
                  "NVFP4 payload (e2m1) in layout token_block; NVFP4 copies "
                  "are per_token (1x16 blocks)");
  EXPECT_CONTAINS(with(R"("part": "scales", "tensor": "k",
                          "layout": "token_block", "format": "e4m3")"),
                  "holds NVFP4 scales (e4m3) in layout token_block");
  EXPECT_CONTAINS(with(R"("part": "scales", "tensor": "q",
                          "layout": "per_token", "format": "e2m1")"),
                  "holds scales in format e2m1; scales are e8m0 or e4m3");
  // NVFP4 scale tiles (scale_vec::4X): per token, rows are tokens.
  m = parseOk(everyKindWith(qpt, R"("part": "scale_tiles", "tensor": "q",
        "layout": "per_token", "format": "e4m3", "tile_rows": "tokens")"));
  EXPECT_EQ(m.buffers[6].holds.part, HeldPart::ScaleTiles);
  EXPECT_EQ(m.buffers[6].holds.format, HeldFormat::E4M3);
  EXPECT_CONTAINS(with(R"("part": "scale_tiles", "tensor": "k",
                          "layout": "token_block", "format": "e4m3",
                          "tile_rows": "tokens")"),
                  "holds NVFP4 scale_tiles (e4m3) in layout token_block");
  EXPECT_CONTAINS(with(R"("part": "scale_tiles", "tensor": "q",
                          "layout": "per_token", "format": "e4m3",
                          "tile_rows": "channels")"),
                  "buffers[6].holds.tile_rows: workspace buffer 'q_pt' holds "
                  "NVFP4 scale tiles with rows channels; an NVFP4 copy is per "
                  "token, its tile rows are tokens");
  EXPECT_CONTAINS(with(R"("part": "scale_tiles", "tensor": "q",
                          "layout": "per_token", "format": "e2m1",
                          "tile_rows": "tokens")"),
                  "holds scale_tiles in format e2m1; scale_tiles are e8m0 or "
                  "e4m3");
}

TEST(ManifestHolds, InvalidValuesAreErrors) {
  const std::string qpt = R"("part": "payload",
        "tensor": "q",
        "layout": "per_token",
        "format": "e4m3")";
  auto with = [&](const std::string &holds) {
    return parseError(everyKindWith(qpt, holds));
  };
  EXPECT_CONTAINS(with(R"("part": "data", "tensor": "q")"),
                  "buffers[6].holds.part: unknown part 'data' (expected one "
                  "of: payload, scales, dequantized, scale_tiles, scratch, delta)");
  EXPECT_CONTAINS(with(R"("tensor": "q")"),
                  "buffers[6].holds: missing required key \"part\"");
  EXPECT_CONTAINS(with(R"("part": "payload", "layout": "per_token",
                          "format": "e4m3")"),
                  "buffers[6].holds: missing required key \"tensor\"");
  EXPECT_CONTAINS(with(R"("part": "payload", "tensor": "o",
                          "layout": "per_token", "format": "e4m3")"),
                  "buffers[6].holds.tensor: unknown tensor 'o' (expected one "
                  "of: q, k, v, grad_o)");
  EXPECT_CONTAINS(with(R"("part": "payload", "tensor": "q",
                          "format": "e4m3")"),
                  "buffers[6].holds: missing required key \"layout\"");
  EXPECT_CONTAINS(with(R"("part": "payload", "tensor": "q",
                          "layout": "pt", "format": "e4m3")"),
                  "buffers[6].holds.layout: unknown layout 'pt' (expected "
                  "one of: per_token, token_block)");
  EXPECT_CONTAINS(with(R"("part": "payload", "tensor": "q",
                          "layout": "per_token")"),
                  "buffers[6].holds: missing required key \"format\"");
  EXPECT_CONTAINS(with(R"("part": "payload", "tensor": "q",
                          "layout": "per_token", "format": "e5m2")"),
                  "buffers[6].holds.format: unknown format 'e5m2' (expected "
                  "one of: e4m3, e8m0, bf16, f32, e2m1)");
  EXPECT_CONTAINS(with(R"("part": "payload", "tensor": "q",
                          "layout": "per_token", "format": "e8m0")"),
                  "buffers[6].holds.format: workspace buffer 'q_pt' holds "
                  "payload in format e8m0; payload are e4m3 or e2m1");
  EXPECT_CONTAINS(with(R"("part": "dequantized", "tensor": "q",
                          "layout": "per_token", "format": "bf16")"),
                  "buffers[6].holds: workspace buffer 'q_pt' holds bf16 "
                  "dequantized; its dtype must be bf16, not u8");
  EXPECT_CONTAINS(with(R"("part": "scale_tiles", "tensor": "q",
                          "layout": "per_token", "format": "e8m0")"),
                  "buffers[6].holds: missing required key \"tile_rows\"");
  EXPECT_CONTAINS(with(R"("part": "scale_tiles", "tensor": "q",
                          "layout": "per_token", "format": "e8m0",
                          "tile_rows": "rows")"),
                  "buffers[6].holds.tile_rows: unknown tile rows 'rows' "
                  "(expected one of: tokens, channels)");
  EXPECT_CONTAINS(with(qpt + R"(, "tile_rows": "tokens")"),
                  "buffers[6].holds.tile_rows: unknown key \"tile_rows\" "
                  "(expected one of: part, tensor, layout, format)");
  EXPECT_CONTAINS(with(R"("part": "scratch", "tensor": "q")"),
                  "buffers[6].holds.tensor: unknown key \"tensor\" (expected "
                  "one of: part)");
  EXPECT_CONTAINS(with(qpt + R"(, "scale": 1)"),
                  "buffers[6].holds.scale: unknown key \"scale\"");
  EXPECT_CONTAINS(
      parseError(everyKindWith(R"("holds": {
        "part": "payload",)",
                               R"("holds": "payload", "x-old": {
        "part": "payload",)")),
      "buffers[6].holds: expected object, found string");
}

TEST(ManifestRecipe, OneSpelling) {
  // The dialect's spelling is not the manifest's.
  EXPECT_CONTAINS(parseError(everyKindWith("\"kind\": \"mxfp8\"",
                                           "\"kind\": \"nvfp4_mixed\"")),
                  "recipe.kind: unknown recipe 'nvfp4_mixed' (expected one "
                  "of: mxfp8, nvfp4-mixed)");
  EXPECT_EQ(parseOk(everyKindWith("\"kind\": \"mxfp8\"",
                                  "\"kind\": \"nvfp4-mixed\""))
                .recipe.kind,
            kRecipeNvfp4Mixed);
}

TEST(ManifestVersion, VersionOneIsRejected) {
  EXPECT_CONTAINS(parseError(everyKindWith("\"flamia_manifest_version\": 2",
                                           "\"flamia_manifest_version\": 1")),
                  "flamia_manifest_version: unsupported manifest version 1 "
                  "(this runtime reads version 2; compile the kernels again "
                  "with flamia-compile)");
}

// ---- The backward kernels (docs/runtime-abi.md, "The backward kernels of
// recipe mxfp8 (sm_90a)"): phase, grad_o, the gradients, delta, kv_items,
// NUM_KV_ITEMS.

/// everyKind() extended to a training step: the gradient of O in, dq (f32),
/// dk (bf16), dv (f32) out, grad_o's quantized copies, delta, Q's token-block
/// dequantized copy, kv_items, and the three backward kernels.
Manifest trainingStep() {
  Manifest m = everyKind();
  using BR = BufferRole;
  using HT = HeldTensor;
  using HL = HeldLayout;
  using HP = HeldPart;
  for (ManifestBuffer b :
       {buffer("grad_o", BR::Input, DType::BF16, {"T", "Hq", "D"}),
        buffer("dq", BR::Output, DType::F32, {"T", "Hq", "D"}),
        buffer("dk", BR::Output, DType::BF16, {"T", "Hkv", "D"}),
        buffer("dv", BR::Output, DType::F32, {"T", "Hkv", "D"}),
        copy("q_tb_deq", HT::Q, HL::TokenBlock, HP::Dequantized,
             {"T", "Hq", "D"}),
        copy("do_tb", HT::GradO, HL::TokenBlock, HP::Payload, {"T", "Hq", "D"}),
        copy("do_tb_scales", HT::GradO, HL::TokenBlock, HP::Scales,
             {"NB", "Hq", "D / 32"}),
        copy("do_deq", HT::GradO, HL::TokenBlock, HP::Dequantized,
             {"T", "Hq", "D"}),
        copy("delta", HT::GradO, HL::PerToken, HP::Delta, {"Hq", "T"}),
        buffer("kv_items", BR::Schedule, DType::I32, {"NUM_KV_ITEMS", "8"})})
    m.buffers.push_back(b);

  auto kernel = [&](const char *name, const char *grid0,
                    std::initializer_list<const char *> buffers) {
    ManifestKernel k;
    k.name = name;
    k.cubin = std::string(name) + ".cubin";
    k.phase = KernelPhase::Backward;
    k.launch = std::string(grid0) == "NUM_SMS" ? "persistent" : "grid";
    k.grid[0] = expr(grid0);
    k.grid[1] = expr(std::string(grid0) == "NB" ? "Hq" : "1");
    k.grid[2] = expr("1");
    k.block[0] = std::string(grid0) == "NB" ? 128 : 384;
    for (const char *b : buffers)
      k.params.push_back(ptr(b, m, b));
    return k;
  };
  m.kernels.push_back(kernel("flamia_quantize_grad", "NB",
                             {"grad_o", "o", "block_info", "do_tb",
                              "do_tb_scales", "do_deq", "delta"}));
  ManifestKernel dq = kernel("flamia_attention_dq", "NUM_SMS",
                             {"items", "counter", "do_deq", "delta", "lse",
                              "dq"});
  ManifestParam n;
  n.name = "num_items";
  n.kind = ParamKind::I32;
  n.value = expr("NUM_ITEMS");
  dq.params.push_back(n);
  m.kernels.push_back(dq);
  ManifestKernel dkdv = kernel("flamia_attention_dkdv", "NUM_SMS",
                               {"kv_items", "counter", "q_tb_deq", "do_deq",
                                "delta", "lse", "dk", "dv"});
  n.name = "num_kv_items";
  n.value = expr("NUM_KV_ITEMS");
  dkdv.params.push_back(n);
  m.kernels.push_back(dkdv);
  return m;
}

std::string trainingStepWith(const std::string &from, const std::string &to) {
  bool found = false;
  std::string text =
      replaceOnce(writeManifestJson(trainingStep()), from, to, &found);
  EXPECT_TRUE(found) << "test bug: '" << from << "' not in the manifest";
  return text;
}

TEST(ManifestBackward, TrainingStepRoundTrips) {
  const Manifest m = trainingStep();
  const std::string text = writeManifestJson(m);
  Manifest back = parseOk(text);
  expectEqual(m, back);
  EXPECT_EQ(writeManifestJson(back), text); // a fixed point
  ASSERT_EQ(back.kernels.size(), 5u);
  EXPECT_EQ(back.kernels[0].phase, KernelPhase::Forward);
  EXPECT_EQ(back.kernels[1].phase, KernelPhase::Forward);
  for (size_t k = 2; k < 5; ++k)
    EXPECT_EQ(back.kernels[k].phase, KernelPhase::Backward) << k;
  EXPECT_TRUE(back.hasBackward());
  EXPECT_FALSE(everyKind().hasBackward());
  const ManifestBuffer &delta = back.buffers[back.findBuffer("delta")];
  EXPECT_EQ(delta.dtype, DType::F32);
  EXPECT_EQ(delta.holds.part, HeldPart::Delta);
  EXPECT_EQ(delta.holds.tensor, HeldTensor::GradO);
  EXPECT_EQ(delta.holds.layout, HeldLayout::PerToken);
  EXPECT_EQ(delta.holds.format, HeldFormat::F32);
  EXPECT_EQ(back.buffers[back.findBuffer("do_tb_scales")].holds.tensor,
            HeldTensor::GradO);
  EXPECT_EQ(back.buffers[back.findBuffer("dq")].dtype, DType::F32);
  EXPECT_EQ(back.buffers[back.findBuffer("dk")].dtype, DType::BF16);
  EXPECT_TRUE(back.buffers[back.findBuffer("kv_items")].shape[0].uses(
      Symbol::NumKvItems));
  EXPECT_TRUE(back.kernels[4].params.back().value.uses(Symbol::NumKvItems));
  // The spellings on the page.
  EXPECT_NE(text.find("\"phase\": \"backward\""), std::string::npos);
  EXPECT_NE(text.find("\"tensor\": \"grad_o\""), std::string::npos);
  EXPECT_NE(text.find("\"part\": \"delta\""), std::string::npos);
  EXPECT_NE(text.find("\"format\": \"f32\""), std::string::npos);
}

TEST(ManifestBackward, PhaseIsAlwaysWrittenAndDefaultsToForward) {
  const std::string text = writeManifestJson(everyKind());
  EXPECT_NE(text.find("\"phase\": \"forward\""), std::string::npos);
  // A manifest without "phase" (written before the backward): forward.
  std::string old = text;
  for (size_t at; (at = old.find("\"phase\": \"forward\",")) !=
                  std::string::npos;)
    old.erase(at, std::string("\"phase\": \"forward\",").size());
  EXPECT_EQ(old.find("\"phase\""), std::string::npos);
  Manifest m = parseOk(old);
  for (const ManifestKernel &k : m.kernels)
    EXPECT_EQ(k.phase, KernelPhase::Forward) << k.name;
}

TEST(ManifestBackward, UnknownPhaseIsAnError) {
  EXPECT_CONTAINS(parseError(trainingStepWith("\"phase\": \"backward\"",
                                              "\"phase\": \"sideways\"")),
                  "kernels[2].phase: unknown kernel phase 'sideways' "
                  "(expected one of: forward, backward)");
  EXPECT_CONTAINS(parseError(trainingStepWith("\"phase\": \"backward\"",
                                              "\"phase\": 1")),
                  "kernels[2].phase: expected string");
}

TEST(ManifestBackward, DeltaHoldsAreChecked) {
  const std::string delta = R"("part": "delta",
        "tensor": "grad_o",
        "layout": "per_token",
        "format": "f32")";
  auto with = [&](const std::string &holds) {
    return parseError(trainingStepWith(delta, holds));
  };
  EXPECT_CONTAINS(with(R"("part": "delta", "tensor": "q",
                          "layout": "per_token", "format": "f32")"),
                  "holds.tensor: workspace buffer 'delta' holds delta of "
                  "tensor q; delta (rowsum(dO * O)) is of tensor grad_o");
  EXPECT_CONTAINS(with(R"("part": "delta", "tensor": "grad_o",
                          "layout": "token_block", "format": "f32")"),
                  "holds.layout: workspace buffer 'delta' holds delta in "
                  "layout token_block; delta has one value per token and "
                  "head (per_token)");
  EXPECT_CONTAINS(with(R"("part": "delta", "tensor": "grad_o",
                          "layout": "per_token", "format": "bf16")"),
                  "holds.format: workspace buffer 'delta' holds delta in "
                  "format bf16; delta are f32");
  // An f32 format on a payload is not a payload.
  EXPECT_CONTAINS(parseError(trainingStepWith(
                      R"("part": "payload",
        "tensor": "grad_o",
        "layout": "token_block",
        "format": "e4m3")",
                      R"("part": "payload", "tensor": "grad_o",
        "layout": "token_block", "format": "f32")")),
                  "workspace buffer 'do_tb' holds payload in format f32; "
                  "payload are e4m3 or e2m1");
}

TEST(ManifestBackward, GradientBuffersAreTyped) {
  EXPECT_CONTAINS(parseError(trainingStepWith(R"("name": "dk",
      "role": "output",
      "dtype": "bf16")",
                                              R"("name": "dk",
      "role": "output",
      "dtype": "i32")")),
                  "buffer 'dk' must be bf16 or f32 (flamia_attention_args), "
                  "not i32");
  EXPECT_CONTAINS(parseError(trainingStepWith(R"("name": "grad_o",
      "role": "input",
      "dtype": "bf16")",
                                              R"("name": "grad_o",
      "role": "input",
      "dtype": "f32")")),
                  "buffer 'grad_o' must be bf16 (flamia_attention_args), not "
                  "f32");
  // An output's shape may not use the schedule's counts.
  EXPECT_CONTAINS(parseError(trainingStepWith(R"("name": "dv",
      "role": "output",
      "dtype": "f32",
      "shape": [
        "T")",
                                              R"("name": "dv",
      "role": "output",
      "dtype": "f32",
      "shape": [
        "NUM_KV_ITEMS")")),
                  "output buffer 'dv' uses NUM_KV_ITEMS; inputs and outputs "
                  "may use T, Hq, Hkv, D and NUM_DOCS only");
}

TEST(ManifestBackward, KvItemsNeedTheSchedule) {
  // Without a schedule section NUM_KV_ITEMS has no value: the shape names it.
  Manifest m = trainingStep();
  m.schedule = ManifestSchedule();
  m.buffers.erase(m.buffers.begin() + m.findBuffer("items"));
  m.kernels.resize(1);
  m.kernels[0].params.clear();
  EXPECT_CONTAINS(parseError(writeManifestJson(m)),
                  "buffers[32].shape[0]: 'NUM_KV_ITEMS' uses NUM_KV_ITEMS but "
                  "the manifest has no \"schedule\"");
  // With a constant shape the buffer itself is refused.
  m.buffers[m.findBuffer("kv_items")].shape = exprs({"4", "8"});
  EXPECT_CONTAINS(parseError(writeManifestJson(m)),
                  "buffers[32]: schedule buffer 'kv_items' needs the "
                  "manifest's \"schedule\" section (block sizes and cost "
                  "model)");
  // NUM_KV_ITEMS in a parameter.
  m.buffers.erase(m.buffers.begin() + m.findBuffer("kv_items"));
  ManifestParam n;
  n.name = "num_kv_items";
  n.kind = ParamKind::I32;
  n.value = expr("NUM_KV_ITEMS");
  m.kernels[0].params.push_back(n);
  EXPECT_CONTAINS(parseError(writeManifestJson(m)),
                  "kernels[0].params[0].value: 'NUM_KV_ITEMS' uses "
                  "NUM_KV_ITEMS but the manifest has no \"schedule\"");
}

} // namespace
