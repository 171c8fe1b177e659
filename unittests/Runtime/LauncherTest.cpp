//===- LauncherTest.cpp - Parameter packing and grids ---------------------===//

#include "flamia/Runtime/Launcher.h"

#include "TestArtifacts.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace flamia::runtime;
using namespace flamia::runtime::test;

namespace {

SymbolValues smallBatch() {
  SymbolValues s;
  s.set(Symbol::T, 70);
  s.set(Symbol::Hq, 4);
  s.set(Symbol::Hkv, 2);
  s.set(Symbol::D, 128);
  s.set(Symbol::NumDocs, 3);
  s.set(Symbol::NB, 4);
  s.set(Symbol::NumItems, 8);
  s.set(Symbol::NumSms, 132);
  return s;
}

std::vector<BoundBuffer> boundBuffers(const Manifest &m) {
  std::vector<BoundBuffer> b(m.buffers.size());
  for (size_t i = 0; i < b.size(); ++i) {
    b[i].address = 0x100000 * (i + 1);
    b[i].bytes = 1 << 20;
  }
  return b;
}

template <typename T> T slotAs(const PackedParams &p, size_t i) {
  T v;
  memcpy(&v, p.slots[i].bytes, sizeof v);
  return v;
}

TEST(Launcher, PacksEveryKindInOrder) {
  Manifest m;
  ASSERT_TRUE(parseManifest(standardManifest(), m).ok());
  std::vector<BoundBuffer> buffers = boundBuffers(m);
  NamedScalars scalars;
  scalars.softmaxScale = 0.125f;
  scalars.softmaxScaleLog2 = 0.18033688f;
  std::vector<TensorMapRequest> requests;
  TensorMapEncoder recorder = [&](const TensorMapRequest &r, CUtensorMap &map) {
    requests.push_back(r);
    memset(&map, 0xAB, sizeof map);
    return Status::success();
  };
  PackedParams p;
  Status s =
      packKernelParams(m, 1, buffers, smallBatch(), scalars, recorder, p);
  ASSERT_TRUE(s.ok()) << s.message;
  ASSERT_EQ(p.slots.size(), 8u);
  ASSERT_EQ(p.pointers.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(p.pointers[i], p.slots[i].bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p.pointers[i]) % 64, 0u);
  }
  // tma_q: the encoded map, by value.
  ASSERT_EQ(requests.size(), 1u);
  const TensorMapRequest &r = requests[0];
  EXPECT_EQ(r.bufferName, "q_deq");
  EXPECT_EQ(r.address, buffers[m.findBuffer("q_deq")].address);
  EXPECT_EQ(r.bufferBytes, 1u << 20);
  EXPECT_EQ(r.rows, 70);
  EXPECT_EQ(r.cols, 512);
  EXPECT_EQ(r.boxRows, 128);
  EXPECT_EQ(r.boxCols, 64);
  EXPECT_EQ(r.swizzle, 128);
  EXPECT_EQ(r.what, "kernel 'flamia_attention_fwd' parameter 'tma_q'");
  for (int i = 0; i < 128; ++i)
    EXPECT_EQ(p.slots[0].bytes[i], 0xAB);
  EXPECT_EQ(slotAs<CUdeviceptr>(p, 1), buffers[m.findBuffer("o")].address);
  EXPECT_EQ(slotAs<CUdeviceptr>(p, 2), buffers[m.findBuffer("lse")].address);
  EXPECT_EQ(slotAs<CUdeviceptr>(p, 3), buffers[m.findBuffer("items")].address);
  EXPECT_EQ(slotAs<int32_t>(p, 4), 8);
  EXPECT_EQ(slotAs<CUdeviceptr>(p, 5),
            buffers[m.findBuffer("counter")].address);
  EXPECT_EQ(slotAs<float>(p, 6), 0.18033688f);
  EXPECT_EQ(slotAs<int32_t>(p, 7), 70);

  // A copy rebinds its pointers into its own slots.
  PackedParams copy = p;
  copy.bindPointers();
  EXPECT_EQ(copy.pointers[3], copy.slots[3].bytes);
  EXPECT_NE(copy.pointers[3], p.pointers[3]);
}

TEST(Launcher, ParameterErrorsNameTheParameter) {
  Manifest m;
  bool found;
  std::string text =
      replaceOnce(standardManifest(), "\"kind\": \"i32\", \"value\": \"T\"",
                  "\"kind\": \"i32\", \"value\": \"T * 100000000\"", &found);
  ASSERT_TRUE(found);
  ASSERT_TRUE(parseManifest(text, m).ok());
  TensorMapEncoder ok = [](const TensorMapRequest &, CUtensorMap &) {
    return Status::success();
  };
  PackedParams p;
  Status s = packKernelParams(m, 1, boundBuffers(m), smallBatch(),
                              NamedScalars(), ok, p);
  EXPECT_EQ(s.code, ErrorCode::InvalidArgument);
  EXPECT_EQ(s.message, "kernel 'flamia_attention_fwd' parameter 'T': "
                       "'T * 100000000' = 7000000000 does not fit in i32");

  // The encoder's error comes through unchanged.
  ASSERT_TRUE(parseManifest(standardManifest(), m).ok());
  TensorMapEncoder failing = [](const TensorMapRequest &r, CUtensorMap &) {
    return invalidArgument(r.what + ": nope");
  };
  s = packKernelParams(m, 1, boundBuffers(m), smallBatch(), NamedScalars(),
                       failing, p);
  EXPECT_EQ(s.message, "kernel 'flamia_attention_fwd' parameter 'tma_q': nope");

  SymbolValues noItems = smallBatch();
  SymbolValues partial;
  for (Symbol sym : {Symbol::T, Symbol::Hq, Symbol::Hkv, Symbol::D,
                     Symbol::NumDocs, Symbol::NB, Symbol::NumSms})
    partial.set(sym, noItems.get(sym));
  s = packKernelParams(m, 1, boundBuffers(m), partial, NamedScalars(), ok, p);
  EXPECT_EQ(s.message, "kernel 'flamia_attention_fwd' parameter 'num_items': "
                       "symbol NUM_ITEMS has no value (in 'NUM_ITEMS')");
}

TEST(Launcher, GridsAreEvaluatedAndChecked) {
  Manifest m;
  ASSERT_TRUE(parseManifest(standardManifest(), m).ok());
  LaunchGrid g;
  ASSERT_TRUE(evaluateGrid(m.kernels[0], smallBatch(), g).ok());
  EXPECT_EQ(g.dims[0], 4u);
  EXPECT_EQ(g.dims[1], 4u);
  EXPECT_EQ(g.dims[2], 1u);
  EXPECT_FALSE(g.empty());
  ASSERT_TRUE(evaluateGrid(m.kernels[1], smallBatch(), g).ok());
  EXPECT_EQ(g.dims[0], 132u);

  SymbolValues noBlocks = smallBatch();
  noBlocks.set(Symbol::NB, 0);
  ASSERT_TRUE(evaluateGrid(m.kernels[0], noBlocks, g).ok());
  EXPECT_TRUE(g.empty());

  SymbolValues manyHeads = smallBatch();
  manyHeads.set(Symbol::Hq, 70000);
  Status s = evaluateGrid(m.kernels[0], manyHeads, g);
  EXPECT_EQ(s.message, "kernel 'flamia_quantize' grid y 'Hq' = 70000 is "
                       "outside [0, 65535]");

  ManifestKernel clustered = m.kernels[0];
  clustered.cluster[0] = 8;
  s = evaluateGrid(clustered, smallBatch(), g);
  EXPECT_EQ(s.message, "kernel 'flamia_quantize' grid x = 4 is not a multiple "
                       "of the cluster dimension 8");
  clustered.cluster[0] = 2;
  EXPECT_TRUE(evaluateGrid(clustered, smallBatch(), g).ok());
}

} // namespace
