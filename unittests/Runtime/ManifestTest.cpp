//===- ManifestTest.cpp - manifest.json v2 parsing and validation ---------===//

#include "flamia/Runtime/Manifest.h"

#include "TestArtifacts.h"

#include <gtest/gtest.h>

#include <cstdio>

using namespace flamia::runtime;
using namespace flamia::runtime::test;

namespace {

Manifest parseOk(const std::string &text) {
  Manifest m;
  Status s = parseManifest(text, m);
  EXPECT_TRUE(s.ok()) << s.message;
  return m;
}

/// The error of the standard manifest with `from` replaced by `to`.
std::string errorAfter(const std::string &from, const std::string &to) {
  bool found = false;
  std::string text = replaceOnce(standardManifest(), from, to, &found);
  EXPECT_TRUE(found) << "test bug: '" << from << "' not in the manifest";
  Manifest m;
  Status s = parseManifest(text, m);
  EXPECT_FALSE(s.ok()) << "accepted with " << to;
  EXPECT_EQ(s.code, ErrorCode::InvalidManifest);
  return s.message;
}

#define EXPECT_CONTAINS(haystack, needle)                                      \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos)             \
      << "'" << (haystack) << "' lacks '" << (needle) << "'"

TEST(Manifest, ParsesTheStandardManifest) {
  Manifest m = parseOk(standardManifest());
  EXPECT_EQ(m.version, 2);
  EXPECT_EQ(m.target.name, "sm_90a");
  EXPECT_EQ(m.target.major, 9);
  EXPECT_EQ(m.target.minor, 0);
  EXPECT_TRUE(m.target.archSpecific);
  EXPECT_EQ(m.recipe.kind, "mxfp8");
  EXPECT_EQ(m.recipe.safeBlock, 128);
  EXPECT_FALSE(m.recipe.strict);
  EXPECT_EQ(m.headDim, 128);
  EXPECT_TRUE(m.causal);
  EXPECT_FALSE(m.hasSoftmaxScale);
  ASSERT_TRUE(m.schedule.present);
  EXPECT_EQ(m.schedule.blockM, 128);
  EXPECT_EQ(m.schedule.costModel, "sm_90a");
  EXPECT_EQ(m.schedule.weights.bf16Tile, 1.0); // the sm_90a preset
  ASSERT_EQ(m.buffers.size(), 13u);
  EXPECT_EQ(m.buffers[3].name, "cu_seqlens");
  EXPECT_EQ(m.buffers[3].role, BufferRole::Input);
  EXPECT_EQ(m.buffers[3].dtype, DType::I32);
  EXPECT_EQ(m.buffers[3].shape[0].text(), "NUM_DOCS + 1");
  EXPECT_EQ(m.findBuffer("items"), 11);
  EXPECT_EQ(m.findBuffer("nope"), -1);
  ASSERT_EQ(m.kernels.size(), 2u);
  const ManifestKernel &q = m.kernels[0];
  EXPECT_EQ(q.name, "flamia_quantize");
  EXPECT_EQ(q.cubin, "flamia_quantize.cubin");
  EXPECT_EQ(q.grid[0].text(), "NB");
  EXPECT_EQ(q.block[0], 128u);
  EXPECT_EQ(q.registers, 40);
  ASSERT_EQ(q.params.size(), 6u);
  EXPECT_EQ(q.params[5].kind, ParamKind::I32);
  EXPECT_EQ(q.params[5].value.text(), "NB");
  const ManifestKernel &f = m.kernels[1];
  EXPECT_EQ(f.smemBytes, 200000);
  EXPECT_EQ(f.threadsPerBlock(), 384);
  EXPECT_EQ(f.tmemColumns, -1); // absent
  const ManifestParam &tma = f.params[0];
  EXPECT_EQ(tma.kind, ParamKind::TensorMap);
  EXPECT_EQ(m.buffers[tma.buffer].name, "q_deq");
  EXPECT_EQ(tma.tensorMap.cols.text(), "Hq * D");
  EXPECT_EQ(tma.tensorMap.swizzle, 128);
  EXPECT_EQ(tma.tensorMap.l2Promotion, 128); // the default
  EXPECT_EQ(f.params[6].named, NamedValue::SoftmaxScaleLog2);
  EXPECT_TRUE(m.kernelUsesBuffer(1, m.findBuffer("counter")));
  EXPECT_FALSE(m.kernelUsesBuffer(0, m.findBuffer("counter")));
}

TEST(Manifest, OptionalPartsAndExtensions) {
  Manifest m = parseOk(R"({"flamia_manifest_version": 2, "target": "sm_100a",
    "head_dim": 64, "causal": false, "softmax_scale": 0.125,
    "x-compiler": {"version": "0.1"},
    "buffers": [{"name": "q", "role": "input", "dtype": "bf16",
                 "shape": ["T", "Hq", 64]}],
    "kernels": [{"name": "k0", "cubin": "sub/k0.cubin", "ptx": null,
                 "grid": [1, "T", 1],
                 "block": [32, 1, 1], "cluster": [2, 1, 1],
                 "params": [{"name": "half", "kind": "f32", "value": 0.5},
                            {"name": "two", "kind": "f32", "value": 2},
                            {"name": "s", "kind": "f32", "value": "softmax_scale"},
                            {"name": "n", "kind": "i32", "value": "T * Hq"}]}]})");
  EXPECT_FALSE(m.schedule.present);
  EXPECT_TRUE(m.recipe.kind.empty());
  EXPECT_FALSE(m.causal);
  EXPECT_TRUE(m.hasSoftmaxScale);
  EXPECT_FLOAT_EQ(m.softmaxScale, 0.125f);
  EXPECT_EQ(m.kernels[0].cluster[0], 2u);
  EXPECT_EQ(m.kernels[0].params[0].named, NamedValue::FloatLiteral);
  EXPECT_EQ(m.kernels[0].params[0].floatLiteral, 0.5);
  EXPECT_EQ(m.kernels[0].params[1].named, NamedValue::None);
  EXPECT_EQ(m.kernels[0].params[1].value.text(), "2");
  EXPECT_EQ(m.kernels[0].params[2].named, NamedValue::SoftmaxScale);
}

TEST(Manifest, CustomCostModel) {
  bool found;
  std::string text = replaceOnce(
      standardManifest(), R"("cost_model": "sm_90a")",
      R"("cost_model": {"item_overhead": 0.5, "fp8_tile": 1, "bf16_tile": 3})",
      &found);
  ASSERT_TRUE(found);
  Manifest m = parseOk(text);
  EXPECT_EQ(m.schedule.costModel, "custom");
  EXPECT_EQ(m.schedule.weights.itemOverhead, 0.5);
  EXPECT_EQ(m.schedule.weights.bf16Tile, 3.0);
}

TEST(Manifest, ScheduleOrder) {
  const std::string lpt = R"("cost_model": "sm_90a")";
  EXPECT_EQ(parseOk(standardManifest()).schedule.order,
            flamia::ScheduleOrder::LongestFirst);
  bool found;
  Manifest m = parseOk(replaceOnce(
      standardManifest(), lpt,
      R"("cost_model": "sm_90a", "order": "l2-sections", "l2_section_bytes": 1048576)",
      &found));
  ASSERT_TRUE(found);
  EXPECT_EQ(m.schedule.order, flamia::ScheduleOrder::L2Sections);
  EXPECT_EQ(m.schedule.l2SectionBytes, 1048576);
  m = parseOk(replaceOnce(standardManifest(), lpt,
                          R"("cost_model": "sm_90a", "order": "l2-sections")"));
  EXPECT_EQ(m.schedule.l2SectionBytes, int64_t{16} << 20);
  EXPECT_CONTAINS(
      errorAfter(lpt, R"("cost_model": "sm_90a", "order": "document")"),
      "schedule.order: unknown order 'document' (expected lpt or "
      "l2-sections)");
  EXPECT_CONTAINS(
      errorAfter(lpt, R"("cost_model": "sm_90a", "l2_section_bytes": 4096)"),
      "schedule.l2_section_bytes: only allowed with \"order\": "
      "\"l2-sections\"");
  EXPECT_CONTAINS(errorAfter(lpt, R"("cost_model": "sm_90a", "order": )"
                                  R"("l2-sections", "l2_section_bytes": 0)"),
                  "schedule.l2_section_bytes: ");
}

TEST(Manifest, ErrorsPointAtTheValue) {
  // Line 2, column 30 is the value 2 of the version.
  EXPECT_EQ(errorAfter("\"flamia_manifest_version\": 2",
                       "\"flamia_manifest_version\": 1"),
            "manifest.json:2:30: flamia_manifest_version: unsupported "
            "manifest version 1 (this runtime reads version 2; compile the "
            "kernels again with flamia-compile)");
  EXPECT_EQ(errorAfter("\"target\": \"sm_90a\"", "\"target\": \"hopper\""),
            "manifest.json:3:13: target: bad target 'hopper' (expected "
            "sm_<major><minor>[a|f], e.g. sm_90a, sm_100a)");
}

TEST(Manifest, TopLevelErrors) {
  EXPECT_CONTAINS(
      errorAfter("\"causal\": true", "\"causal\": true, \"casual\": 1"),
      "casual: unknown key \"casual\" (expected one of: "
      "flamia_manifest_version, target, recipe, head_dim, heads, kv_heads, causal, varlen, "
      "softmax_scale, schedule, buffers, kernels)");
  EXPECT_CONTAINS(errorAfter("\"causal\": true, ", ""),
                  "missing required key \"causal\"");
  EXPECT_CONTAINS(errorAfter("\"causal\": true", "\"causal\": 1"),
                  "causal: expected boolean, found number");
  EXPECT_CONTAINS(errorAfter("\"head_dim\": 128", "\"head_dim\": 100"),
                  "head_dim: head_dim 100 is not a multiple of 32");
  EXPECT_CONTAINS(errorAfter("\"head_dim\": 128", "\"head_dim\": 128.0"),
                  "head_dim: expected an integer, found a non-integer number");
  EXPECT_CONTAINS(
      errorAfter("\"softmax_scale\": null", "\"softmax_scale\": -1"),
      "softmax_scale: must be a positive finite float32");
  EXPECT_CONTAINS(
      errorAfter("\"softmax_scale\": null", "\"softmax_scale\": 1e300"),
      "softmax_scale: must be a positive finite float32");
  EXPECT_CONTAINS(errorAfter("\"kind\": \"mxfp8\"", "\"kind\": \"fp8\""),
                  "recipe.kind: unknown recipe 'fp8' (expected one of: mxfp8, "
                  "nvfp4-mixed)");
  EXPECT_CONTAINS(errorAfter("\"safe_block\": 128, \"strict\"",
                             "\"safe_block\": 100, \"strict\""),
                  "recipe.safe_block: 100 is not a multiple of 32");
  Manifest m;
  Status s = parseManifest("[]", m);
  EXPECT_EQ(s.message, "manifest.json:1:1: expected object, found array");
  s = parseManifest("{", m, "dir/manifest.json");
  EXPECT_EQ(s.message, "dir/manifest.json: line 1, column 2: expected a "
                       "string key, found end of input");
}

TEST(Manifest, ScheduleErrors) {
  EXPECT_CONTAINS(errorAfter("\"block_m\": 128", "\"block_m\": 100"),
                  "schedule: query tile size (block_m)");
  EXPECT_CONTAINS(
      errorAfter("\"cost_model\": \"sm_90a\"", "\"cost_model\": \"sm_80\""),
      "schedule.cost_model: ");
  EXPECT_CONTAINS(errorAfter("\"cost_model\": \"sm_90a\"",
                             "\"cost_model\": {\"fp8_tile\": 1, "
                             "\"bf16_tile\": 0, \"item_overhead\": 1}"),
                  "schedule.cost_model.bf16_tile: must be positive");
  EXPECT_CONTAINS(errorAfter("\"block_n\": 128, \"safe_block\": 128",
                             "\"block_n\": 128, \"safe_block\": 256"),
                  "schedule safe_block 256 differs from recipe safe_block 128");
  EXPECT_CONTAINS(
      errorAfter("\"schedule\": {\"block_m\": 128, \"block_n\": 128, "
                 "\"safe_block\": 128, \"cost_model\": \"sm_90a\"},",
                 ""),
      "buffers[11].shape[0]: 'NUM_ITEMS' uses NUM_ITEMS but the manifest "
      "has no \"schedule\"");
  // Without using NUM_ITEMS, an items buffer still needs the section.
  std::string text = replaceOnce(
      replaceOnce(standardManifest(),
                  "\"schedule\": {\"block_m\": 128, \"block_n\": 128, "
                  "\"safe_block\": 128, \"cost_model\": \"sm_90a\"},",
                  ""),
      "[\"NUM_ITEMS\", \"8\"]", "[\"T\", \"8\"]");
  Manifest m;
  Status s = parseManifest(text, m);
  EXPECT_CONTAINS(s.message, "buffers[11]: schedule buffer 'items' needs the "
                             "manifest's \"schedule\" section");
}

TEST(Manifest, BufferErrors) {
  EXPECT_CONTAINS(
      errorAfter("\"role\": \"workspace\"", "\"role\": \"scratch\""),
      "buffers[6].role: unknown role 'scratch' (expected one of: "
      "input, output, workspace, schedule)");
  EXPECT_CONTAINS(errorAfter("\"dtype\": \"u8\"", "\"dtype\": \"fp8\""),
                  "buffers[6].dtype: unknown dtype 'fp8' (expected one of: "
                  "bf16, f32, i32, u8)");
  EXPECT_CONTAINS(errorAfter("\"name\": \"q_pt\"", "\"name\": \"q\""),
                  "buffers[6]: duplicate buffer name 'q'");
  EXPECT_CONTAINS(errorAfter("\"name\": \"q_pt\"", "\"name\": \"q-pt\""),
                  "buffers[6].name: buffer name 'q-pt' is not an identifier");
  EXPECT_CONTAINS(errorAfter("\"shape\": [\"T\", \"Hq\", \"D / 32\"]",
                             "\"shape\": [\"T\", \"Hq\", \"D // 32\"]"),
                  "buffers[7].shape[2]: expected a number, a symbol or '(', "
                  "found '/' at column 4 of 'D // 32'");
  EXPECT_CONTAINS(errorAfter("\"shape\": [\"T\", \"Hq\", \"D / 32\"]",
                             "\"shape\": [\"T\", \"Hq\", \"Dh / 32\"]"),
                  "buffers[7].shape[2]: unknown symbol 'Dh'");
  EXPECT_CONTAINS(errorAfter("\"shape\": [\"T\", \"Hq\", \"D / 32\"]",
                             "\"shape\": [\"T\", \"Hq\", -4]"),
                  "buffers[7].shape[2]: '-4' is negative (-4)");
  EXPECT_CONTAINS(
      errorAfter("\"shape\": [\"T\", \"Hq\", \"D / 32\"]", "\"shape\": []"),
      "buffers[7].shape: expected 1 to 8 entries, found 0");
  EXPECT_CONTAINS(errorAfter("\"shape\": [\"T\", \"Hq\", \"D / 32\"]",
                             "\"shape\": [\"T\", \"Hq\", true]"),
                  "buffers[7].shape[2]: expected an expression (string) or an "
                  "integer, found boolean");
  EXPECT_CONTAINS(errorAfter("{\"name\": \"o\", \"role\": \"output\"",
                             "{\"name\": \"out\", \"role\": \"output\""),
                  "output buffer 'out' is not an argument of "
                  "flamia_attention_args (outputs: o, lse, dq, dk, dv)");
  EXPECT_CONTAINS(
      errorAfter("{\"name\": \"o\", \"role\": \"output\"",
                 "{\"name\": \"o\", \"role\": \"input\""),
      "input buffer 'o' is not an argument of flamia_attention_args "
      "(inputs: q, k, v, cu_seqlens, grad_o)");
  EXPECT_CONTAINS(errorAfter("\"name\": \"lse\", \"role\": \"output\", "
                             "\"dtype\": \"f32\"",
                             "\"name\": \"lse\", \"role\": \"output\", "
                             "\"dtype\": \"bf16\""),
                  "buffers[5].dtype: buffer 'lse' must be f32 "
                  "(flamia_attention_args), not bf16");
  EXPECT_CONTAINS(errorAfter("\"shape\": [\"Hq\", \"T\"]",
                             "\"shape\": [\"Hq\", \"NB * 32\"]"),
                  "buffers[5].shape[1]: output buffer 'lse' uses NB; inputs "
                  "and outputs may use T, Hq, Hkv, D and NUM_DOCS only");
  EXPECT_CONTAINS(errorAfter("\"name\": \"counter\"", "\"name\": \"ticket\""),
                  "unknown schedule buffer 'ticket' (the runtime fills "
                  "block_info, items, kv_items, counter)");
  EXPECT_CONTAINS(errorAfter("\"name\": \"counter\", \"role\": \"schedule\", "
                             "\"dtype\": \"i32\"",
                             "\"name\": \"counter\", \"role\": \"schedule\", "
                             "\"dtype\": \"u8\""),
                  "schedule buffer 'counter' must be i32");
  EXPECT_CONTAINS(
      errorAfter("\"shape\": [\"T\", \"Hq\", \"D / 32\"]",
                 "\"shape\": [\"T\", \"Hq\", \"D / 32\"], \"size\": 4"),
      "buffers[7].size: unknown key \"size\" (expected one of: "
      "name, role, dtype, shape, holds)");
}

TEST(Manifest, KernelErrors) {
  EXPECT_CONTAINS(
      errorAfter("\"block\": [384, 1, 1]", "\"block\": [384, 4, 1]"),
      "kernels[1].block: 1536 threads per block exceed 1024");
  EXPECT_CONTAINS(
      errorAfter("\"block\": [384, 1, 1]", "\"block\": [384, 0, 1]"),
      "kernels[1].block[1]: 0 is out of range [1, 1024]");
  EXPECT_CONTAINS(errorAfter("\"block\": [384, 1, 1]", "\"block\": [384, 1]"),
                  "kernels[1].block: expected 3 integers, found 2 entries");
  EXPECT_CONTAINS(errorAfter("\"grid\": [\"NB\", \"Hq\", \"1\"]",
                             "\"grid\": [\"NB\", \"Hq\"]"),
                  "kernels[0].grid: expected 3 entries, found 2");
  EXPECT_CONTAINS(
      errorAfter("\"cluster\": [1, 1, 1],\n      \"smem_bytes\": 0",
                 "\"cluster\": [4, 8, 1],\n      \"smem_bytes\": 0"),
      "kernels[0].cluster: cluster of 32 CTAs exceeds 16");
  EXPECT_CONTAINS(errorAfter("\"smem_bytes\": 200000", "\"smem_bytes\": -1"),
                  "kernels[1].smem_bytes: -1 is out of range");
  EXPECT_CONTAINS(
      errorAfter("\"cubin\": \"flamia_quantize.cubin\"",
                 "\"cubin\": \"../flamia_quantize.cubin\""),
      "kernels[0].cubin: cubin '../flamia_quantize.cubin' must be a "
      "relative path inside the artifact directory");
  EXPECT_CONTAINS(errorAfter("\"cubin\": \"flamia_quantize.cubin\"",
                             "\"cubin\": \"/tmp/x.cubin\""),
                  "must be a relative path");
  EXPECT_CONTAINS(errorAfter("\"name\": \"flamia_quantize\"",
                             "\"name\": \"flamia quantize\""),
                  "kernels[0].name: kernel name 'flamia quantize' is not a "
                  "symbol name");
  EXPECT_CONTAINS(errorAfter("\"registers\": 168", "\"regs\": 168"),
                  "kernels[1].regs: unknown key \"regs\"");
  EXPECT_CONTAINS(errorAfter("\"kernels\": [", "\"kernels\": [], \"k2\": ["),
                  "unknown key \"k2\"");
  EXPECT_CONTAINS(errorAfter("\"grid\": [\"NUM_SMS\", \"1\", \"1\"]",
                             "\"grid\": [\"NUM_SMS\", \"1\", \"-1\"]"),
                  "kernels[1].grid[2]: '-1' is negative (-1)");
}

TEST(Manifest, ParamErrors) {
  EXPECT_EQ(errorAfter("\"kind\": \"ptr\", \"buffer\": \"k\"",
                       "\"kind\": \"pointer\", \"buffer\": \"k\""),
            "manifest.json:29:31: kernels[0].params[1].kind: unknown parameter "
            "kind 'pointer' (expected one of: ptr, i32, f32, tensormap)");
  EXPECT_CONTAINS(errorAfter("\"kind\": \"ptr\", \"buffer\": \"k\"",
                             "\"kind\": \"ptr\", \"buffer\": \"k_tb\""),
                  "kernels[0].params[1].buffer: parameter 'k' names buffer "
                  "'k_tb', which is not in \"buffers\"");
  EXPECT_CONTAINS(
      errorAfter("\"kind\": \"ptr\", \"buffer\": \"k\"", "\"kind\": \"ptr\""),
      "kernels[0].params[1]: missing required key \"buffer\"");
  EXPECT_CONTAINS(
      errorAfter("\"kind\": \"ptr\", \"buffer\": \"k\"",
                 "\"kind\": \"ptr\", \"buffer\": \"k\", \"value\": 1"),
      "kernels[0].params[1].value: unknown key \"value\" (expected "
      "one of: name, kind, buffer)");
  EXPECT_CONTAINS(errorAfter("{\"name\": \"k\", \"kind\": \"ptr\"",
                             "{\"name\": \"q\", \"kind\": \"ptr\""),
                  "kernels[0].params[1]: duplicate parameter name 'q' in "
                  "kernel 'flamia_quantize'");
  EXPECT_CONTAINS(errorAfter("\"kind\": \"i32\", \"value\": \"NB\"",
                             "\"kind\": \"i32\", \"value\": \"softmax_scale\""),
                  "'softmax_scale' is a float; declare parameter 'num_blocks' "
                  "as f32");
  EXPECT_CONTAINS(errorAfter("\"kind\": \"i32\", \"value\": \"NB\"",
                             "\"kind\": \"i32\", \"value\": 4294967296"),
                  "4294967296 does not fit in i32");
  EXPECT_CONTAINS(errorAfter("\"kind\": \"i32\", \"value\": \"NB\"",
                             "\"kind\": \"i32\", \"value\": \"NBLOCKS\""),
                  "kernels[0].params[5].value: unknown symbol 'NBLOCKS'");
  EXPECT_CONTAINS(errorAfter("\"kind\": \"i32\", \"value\": \"NB\"",
                             "\"kind\": \"i32\", \"value\": [1]"),
                  "kernels[0].params[5].value: expected an expression");
}

TEST(Manifest, TensorMapErrors) {
  EXPECT_CONTAINS(errorAfter("\"swizzle\": 128", "\"swizzle\": 96"),
                  "kernels[1].params[0].swizzle: swizzle 96 is not one of 0, "
                  "32, 64, 128 (bytes)");
  EXPECT_CONTAINS(errorAfter("\"box\": [128, 64]", "\"box\": [128, 128]"),
                  "kernels[1].params[0].box[1]: box row of 256 bytes exceeds "
                  "the 128-byte swizzle span");
  EXPECT_CONTAINS(errorAfter("\"box\": [128, 64]", "\"box\": [512, 64]"),
                  "kernels[1].params[0].box[0]: box rows 512 outside [1, 256]");
  EXPECT_CONTAINS(errorAfter("\"box\": [128, 64]", "\"box\": [128, 4]"),
                  "kernels[1].params[0].box[1]: box row of 4 x 2 bytes = 8 "
                  "bytes is not a multiple of 16");
  EXPECT_CONTAINS(errorAfter("\"buffer\": \"q_deq\", \"dtype\": \"bf16\"",
                             "\"buffer\": \"q_pt\", \"dtype\": \"bf16\""),
                  "tensor map dtype bf16 differs from buffer 'q_pt' dtype u8");
  EXPECT_CONTAINS(errorAfter("\"dims\": [\"T\", \"Hq * D\"]",
                             "\"dims\": [\"T\", \"Hq * D\", 1]"),
                  "kernels[1].params[0].dims: expected 2 entries, found 3");
  EXPECT_CONTAINS(errorAfter("\"swizzle\": 128", "\"swizzle\": 128, "
                                                 "\"l2_promotion\": 32"),
                  "l2_promotion 32 is not one of 0, 64, 128, 256 (bytes)");
  EXPECT_CONTAINS(
      errorAfter("\"swizzle\": 128", "\"swizzle\": 128, \"oob\": 0"),
      "unknown key \"oob\" (expected one of: name, kind, buffer, "
      "dtype, dims, box, swizzle, l2_promotion)");
}

TEST(Manifest, NumItemsNeedsASchedule) {
  Manifest m;
  Status s = parseManifest(R"({"flamia_manifest_version": 2, "target": "sm_90a",
    "head_dim": 128, "causal": true,
    "buffers": [{"name": "w", "role": "workspace", "dtype": "i32",
                 "shape": ["NUM_ITEMS"], "holds": {"part": "scratch"}}],
    "kernels": [{"name": "k", "cubin": "k.cubin", "grid": [1, 1, 1],
                 "block": [1, 1, 1], "params": []}]})",
                           m);
  EXPECT_EQ(s.message, "manifest.json:4:28: buffers[0].shape[0]: 'NUM_ITEMS' "
                       "uses NUM_ITEMS but the manifest has no \"schedule\"");
}

TEST(Manifest, Targets) {
  ManifestTarget t;
  ASSERT_TRUE(parseTarget("sm_100a", t));
  EXPECT_EQ(t.major, 10);
  EXPECT_EQ(t.minor, 0);
  EXPECT_TRUE(t.archSpecific);
  ASSERT_TRUE(parseTarget("sm_120f", t));
  EXPECT_EQ(t.major, 12);
  EXPECT_TRUE(t.familySpecific);
  ASSERT_TRUE(parseTarget("sm_80", t));
  EXPECT_FALSE(t.archSpecific);
  for (const char *bad :
       {"sm90a", "sm_9", "sm_90b", "sm_90aa", "compute_90", "sm_090", "sm_"})
    EXPECT_FALSE(parseTarget(bad, t)) << bad;

  std::string why;
  ASSERT_TRUE(parseTarget("sm_90a", t));
  EXPECT_TRUE(targetRunsOn(t, 9, 0, why));
  EXPECT_FALSE(targetRunsOn(t, 10, 0, why));
  EXPECT_EQ(why, "target sm_90a (architecture-specific) runs only on compute "
                 "capability 9.0; the device is 10.0");
  ASSERT_TRUE(parseTarget("sm_80", t));
  EXPECT_TRUE(targetRunsOn(t, 9, 0, why));
  EXPECT_FALSE(targetRunsOn(t, 7, 5, why));
  ASSERT_TRUE(parseTarget("sm_100f", t));
  EXPECT_TRUE(targetRunsOn(t, 10, 3, why));
  EXPECT_FALSE(targetRunsOn(t, 12, 0, why));
}

TEST(Manifest, LoadChecksTheArtifactDirectory) {
  Manifest m;
  Status s = loadManifest("/nonexistent/flamia", m);
  EXPECT_EQ(s.code, ErrorCode::InvalidArtifact);
  EXPECT_EQ(s.message, "artifact directory '/nonexistent/flamia' does not "
                       "exist or is not a directory");

  std::string dir = makeTempDir();
  s = loadManifest(dir, m);
  EXPECT_EQ(s.code, ErrorCode::InvalidArtifact);
  EXPECT_EQ(s.message, "cannot read '" + dir + "/manifest.json'");

  writeFile(dir, "manifest.json", standardManifest());
  writeFile(dir, "flamia_quantize.cubin", quantizeCubin());
  s = loadManifest(dir, m);
  EXPECT_EQ(s.code, ErrorCode::InvalidArtifact);
  EXPECT_EQ(s.message, "missing cubin 'flamia_attention_fwd.cubin' of kernel "
                       "'flamia_attention_fwd' (looked for " +
                           dir + "/flamia_attention_fwd.cubin)");
  writeFile(dir, "flamia_attention_fwd.cubin", "");
  s = loadManifest(dir, m);
  EXPECT_EQ(s.message, "cubin '" + dir +
                           "/flamia_attention_fwd.cubin' of kernel "
                           "'flamia_attention_fwd' is empty");
  writeFile(dir, "flamia_attention_fwd.cubin", forwardCubin());
  EXPECT_TRUE(loadManifest(dir, m).ok());

  writeFile(dir, "manifest.json", "{\"flamia_manifest_version\": 1,}");
  s = loadManifest(dir, m);
  EXPECT_EQ(s.code, ErrorCode::InvalidManifest);
  EXPECT_EQ(s.message, dir + "/manifest.json: line 1, column 31: trailing "
                             "comma before '}'");
}

} // namespace
