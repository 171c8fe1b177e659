//===- BackwardRuntimeTest.cpp - kv_items, NUM_KV_ITEMS, the gradients ----===//
//
// The runtime side of the backward kernels (docs/runtime-abi.md, "The
// backward kernels of recipe mxfp8 (sm_90a)") on the host and on the fake
// driver: the key-tile schedule built and uploaded like the items,
// NUM_KV_ITEMS in expressions, and grad_o, dq, dk, dv validated and bound.
//
//===----------------------------------------------------------------------===//

#include "flamia/Runtime/Runtime.h"
#include "flamia/Runtime/ScheduleBuffers.h"

#include "FakeCudaControl.h"
#include "TestArtifacts.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

using namespace flamia;
using namespace flamia::runtime;
using namespace flamia::runtime::test;

namespace {

#define EXPECT_CONTAINS(haystack, needle)                                      \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos)             \
      << "'" << (haystack) << "' lacks '" << (needle) << "'"

/// The standard manifest plus a training step's buffers (grad_o in, dq in
/// f32, dk and dv in bf16 out, delta, kv_items) and one backward kernel that
/// takes kv_items, NUM_KV_ITEMS, the counter and the gradients.
std::string trainingManifest() {
  std::string m = standardManifest();
  bool found = false;
  m = replaceOnce(
      m,
      R"(    {"name": "counter", "role": "schedule", "dtype": "i32", "shape": ["1"]}
  ],)",
      R"(    {"name": "counter", "role": "schedule", "dtype": "i32", "shape": ["1"]},
    {"name": "grad_o", "role": "input", "dtype": "bf16", "shape": ["T", "Hq", "D"]},
    {"name": "dq", "role": "output", "dtype": "f32", "shape": ["T", "Hq", "D"]},
    {"name": "dk", "role": "output", "dtype": "bf16", "shape": ["T", "Hkv", "D"]},
    {"name": "dv", "role": "output", "dtype": "bf16", "shape": ["T", "Hkv", "D"]},
    {"name": "delta", "role": "workspace", "dtype": "f32", "shape": ["Hq", "T"], "holds": {"part": "delta", "tensor": "grad_o", "layout": "per_token", "format": "f32"}},
    {"name": "kv_items", "role": "schedule", "dtype": "i32", "shape": ["NUM_KV_ITEMS", "8"]}
  ],)",
      &found);
  EXPECT_TRUE(found);
  m = replaceOnce(m, R"(        {"name": "T", "kind": "i32", "value": "T"}
      ]
    }
  ])",
                  R"(        {"name": "T", "kind": "i32", "value": "T"}
      ]
    },
    {
      "name": "flamia_attention_dkdv", "cubin": "flamia_attention_dkdv.cubin",
      "phase": "backward", "launch": "persistent",
      "grid": ["NUM_SMS", "1", "1"], "block": [384, 1, 1],
      "params": [
        {"name": "kv_items", "kind": "ptr", "buffer": "kv_items"},
        {"name": "num_kv_items", "kind": "i32", "value": "NUM_KV_ITEMS"},
        {"name": "counter", "kind": "ptr", "buffer": "counter"},
        {"name": "grad_o", "kind": "ptr", "buffer": "grad_o"},
        {"name": "delta", "kind": "ptr", "buffer": "delta"},
        {"name": "dq", "kind": "ptr", "buffer": "dq"},
        {"name": "dk", "kind": "ptr", "buffer": "dk"},
        {"name": "dv", "kind": "ptr", "buffer": "dv"},
        {"name": "work", "kind": "i32", "value": "NUM_KV_ITEMS * 1000 + NUM_ITEMS"}
      ]
    }
  ])",
                  &found);
  EXPECT_TRUE(found);
  return m;
}

Manifest parsed(const std::string &text) {
  Manifest m;
  Status s = parseManifest(text, m);
  EXPECT_TRUE(s.ok()) << s.message;
  return m;
}

// ---- Host side: buildScheduleContents.

TEST(KvItemsBuffer, BuiltOnlyWhenTheManifestListsIt) {
  ScheduleContents c;
  ASSERT_TRUE(buildScheduleContents(parsed(standardManifest()), {0, 300}, 2,
                                    1, true, c)
                  .ok());
  EXPECT_TRUE(c.hasItems);
  EXPECT_FALSE(c.hasKvItems);
  EXPECT_TRUE(c.kvItems.empty());
}

TEST(KvItemsBuffer, KeyTilesOfASmallBatchByHand) {
  // Documents of 300, 0 and 33 tokens; Hq 4 over Hkv 2. Key tiles of 128:
  // document 0 has 3 (128, 128, 44 keys), document 2 one of 33. Costs
  // (2 x 64-query tiles at or after the tile's first key): 10, 6, 2 | 2.
  ScheduleContents c;
  Status s = buildScheduleContents(parsed(trainingManifest()), {0, 300, 300, 333},
                                   4, 2, true, c);
  ASSERT_TRUE(s.ok()) << s.message;
  ASSERT_TRUE(c.hasKvItems);
  ASSERT_EQ(c.kvItems.size(), 8u);
  EXPECT_EQ(c.kvCosts, (std::vector<double>{10, 10, 6, 6, 2, 2, 2, 2}));
  const int32_t expected[8][8] = {
      // key start, keys, doc start, doc end, q_head, kv_head, base, tile
      {0, 128, 0, 300, 0, 0, 0, 0},     {0, 128, 0, 300, 2, 1, 0, 0},
      {128, 128, 0, 300, 0, 0, 0, 1},   {128, 128, 0, 300, 2, 1, 0, 1},
      {256, 44, 0, 300, 0, 0, 0, 2},    {256, 44, 0, 300, 2, 1, 0, 2},
      {300, 33, 300, 333, 0, 0, 10, 0}, {300, 33, 300, 333, 2, 1, 10, 0},
  };
  for (int k = 0; k < 8; ++k)
    EXPECT_EQ(memcmp(&c.kvItems[k], expected[k], sizeof(VarlenWorkItem)), 0)
        << "kv item " << k;
  // The query items are unchanged by the key-tile list.
  ScheduleContents forward;
  ASSERT_TRUE(buildScheduleContents(parsed(standardManifest()),
                                    {0, 300, 300, 333}, 4, 2, true, forward)
                  .ok());
  ASSERT_EQ(forward.items.size(), c.items.size());
  EXPECT_EQ(memcmp(forward.items.data(), c.items.data(),
                   c.items.size() * sizeof(VarlenWorkItem)),
            0);
}

TEST(KvItemsBuffer, BadInputIsValidatedTheSameWay) {
  ScheduleContents c;
  Status s = buildScheduleContents(parsed(trainingManifest()), {0, 70, 64}, 1,
                                   1, false, c);
  EXPECT_EQ(s.code, ErrorCode::InvalidArgument);
  EXPECT_EQ(s.message, "cu_seqlens[2] = 64 is less than cu_seqlens[1] = 70 "
                       "(it must be non-decreasing)");
  EXPECT_FALSE(c.hasKvItems);
}

TEST(KvItemsBuffer, NumKvItemsEvaluates) {
  Expression e;
  ASSERT_TRUE(Expression::parse("cdiv(NUM_KV_ITEMS, 4) + NUM_ITEMS", e).ok());
  EXPECT_TRUE(e.uses(Symbol::NumKvItems));
  SymbolValues values;
  values.set(Symbol::NumItems, 3);
  int64_t out = 0;
  Status s = e.evaluate(values, out);
  EXPECT_FALSE(s.ok());
  EXPECT_CONTAINS(s.message, "NUM_KV_ITEMS");
  values.set(Symbol::NumKvItems, 9);
  ASSERT_TRUE(e.evaluate(values, out).ok());
  EXPECT_EQ(out, 6);
  Symbol sym;
  ASSERT_TRUE(symbolFromName("NUM_KV_ITEMS", sym));
  EXPECT_EQ(sym, Symbol::NumKvItems);
  EXPECT_STREQ(symbolName(Symbol::NumKvItems), "NUM_KV_ITEMS");
}

// ---- The device path on the fake driver.

class BackwardOnFakeDriver : public ::testing::Test {
protected:
  void SetUp() override {
    setenv("FLAMIA_LIBCUDA", FLAMIA_FAKE_CUDA_PATH, 1);
    fake().resetAll();
  }
  void TearDown() override { unsetenv("FLAMIA_LIBCUDA"); }
  static FakeCuda &fake() { return FakeCuda::get(); }

  static std::string artifacts() {
    std::string dir = makeArtifactDir(trainingManifest());
    writeFile(dir, "flamia_attention_dkdv.cubin",
              "FAKECUBIN\nkernel flamia_attention_dkdv 8,4,8,8,8,8,8,8,4\n");
    return dir;
  }
  std::unique_ptr<AttentionRuntime> create() {
    std::unique_ptr<AttentionRuntime> rt;
    Status s = AttentionRuntime::create(artifacts(), 0, RuntimeOptions(), rt);
    EXPECT_TRUE(s.ok()) << s.message;
    return rt;
  }
};

/// FakeBatch plus the backward's tensors (dq f32, dk/dv bf16).
struct FakeGradients {
  CUdeviceptr gradO = 0, dq = 0, dk = 0, dv = 0;
  explicit FakeGradients(const FakeBatch &b) {
    FakeCuda &f = FakeCuda::get();
    gradO = f.alloc(static_cast<size_t>(b.T * b.Hq * b.D * 2));
    dq = f.alloc(static_cast<size_t>(b.T * b.Hq * b.D * 4));
    dk = f.alloc(static_cast<size_t>(b.T * b.Hkv * b.D * 2));
    dv = f.alloc(static_cast<size_t>(b.T * b.Hkv * b.D * 2));
  }
  ~FakeGradients() {
    for (CUdeviceptr p : {gradO, dq, dk, dv})
      FakeCuda::get().memFree(p);
  }
};

AttentionArgs argsOf(const FakeBatch &b, const FakeGradients &g) {
  AttentionArgs a;
  a.q = b.q;
  a.k = b.k;
  a.v = b.v;
  a.cuSeqlens = b.cuSeqlens;
  a.o = b.o;
  a.lse = b.lse;
  a.gradO = g.gradO;
  a.dq = g.dq;
  a.dk = g.dk;
  a.dv = g.dv;
  a.numTokens = b.T;
  a.numQHeads = b.Hq;
  a.numKVHeads = b.Hkv;
  a.headDim = b.D;
  a.numDocs = static_cast<int64_t>(b.cu.size()) - 1;
  return a;
}

template <typename T> T paramAs(const FakeLaunch &l, int i) {
  T v;
  memcpy(&v, l.paramBytes[i], sizeof v);
  return v;
}

TEST_F(BackwardOnFakeDriver, KvItemsAreUploadedAndTheGradientsBound) {
  auto rt = create();
  ASSERT_NE(rt, nullptr);
  FakeBatch b({0, 300, 300, 333}, 4, 2);
  FakeGradients g(b);
  fake().reset();
  Status s = rt->forward(argsOf(b, g), nullptr);
  ASSERT_TRUE(s.ok()) << s.message;
  ASSERT_EQ(fake().numLaunches(), 3);

  BufferView kvItems, counter, delta;
  ASSERT_TRUE(rt->buffer("kv_items", kvItems).ok());
  ASSERT_TRUE(rt->buffer("counter", counter).ok());
  ASSERT_TRUE(rt->buffer("delta", delta).ok());
  EXPECT_EQ(kvItems.shape, (std::vector<int64_t>{8, 8}));
  ASSERT_EQ(kvItems.bytes, 8u * sizeof(VarlenWorkItem));
  EXPECT_EQ(memcmp(fake().host<void>(kvItems.address),
                   rt->schedule().kvItems.data(), kvItems.bytes),
            0);
  EXPECT_EQ(rt->symbols().get(Symbol::NumKvItems), 8);
  EXPECT_EQ(delta.shape, (std::vector<int64_t>{4, 333}));

  const FakeLaunch &dkdv = *fake().launch(2);
  EXPECT_STREQ(dkdv.kernel, "flamia_attention_dkdv");
  EXPECT_EQ(paramAs<CUdeviceptr>(dkdv, 0), kvItems.address);
  EXPECT_EQ(paramAs<int32_t>(dkdv, 1), 8);
  EXPECT_EQ(paramAs<CUdeviceptr>(dkdv, 2), counter.address);
  EXPECT_EQ(paramAs<CUdeviceptr>(dkdv, 3), g.gradO);
  EXPECT_EQ(paramAs<CUdeviceptr>(dkdv, 4), delta.address);
  EXPECT_EQ(paramAs<CUdeviceptr>(dkdv, 5), g.dq);
  EXPECT_EQ(paramAs<CUdeviceptr>(dkdv, 6), g.dk);
  EXPECT_EQ(paramAs<CUdeviceptr>(dkdv, 7), g.dv);
  // 8 key-tile items; 16 query items (query tiles of 128: 3 in document 0,
  // 1 in document 2, x 4 query heads).
  EXPECT_EQ(paramAs<int32_t>(dkdv, 8), 8 * 1000 + 16);
  // The counter is zeroed before both kernels that take it.
  EXPECT_EQ(fake().calls("cuMemsetD32Async"), 2);
}

TEST_F(BackwardOnFakeDriver, GradientArgumentsAreValidated) {
  auto rt = create();
  ASSERT_NE(rt, nullptr);
  FakeBatch b({0, 64}, 2, 1);
  FakeGradients g(b);
  AttentionArgs a = argsOf(b, g);
  a.gradO = 0;
  Status s = rt->forward(a, nullptr);
  EXPECT_EQ(s.code, ErrorCode::InvalidArgument);
  EXPECT_EQ(s.message, "grad_o is a null pointer (32768 bytes expected)");
  a = argsOf(b, g);
  a.dq += 8;
  s = rt->forward(a, nullptr);
  EXPECT_CONTAINS(s.message, "dq (0x");
  EXPECT_CONTAINS(s.message, ") is not 16-byte aligned");
  // dq is f32 (the manifest's dtype): 64 x 2 x 128 x 4 bytes.
  a = argsOf(b, g);
  a.dk = g.dq;
  s = rt->forward(a, nullptr);
  EXPECT_CONTAINS(s.message, "output dq [");
  EXPECT_CONTAINS(s.message, ", +65536) overlaps dk [");
  // The pointer check knows each gradient's size.
  FakeBatch small({0, 32}, 2, 1);
  FakeGradients tooSmall(small);
  a = argsOf(b, g);
  a.dv = tooSmall.dv;
  s = rt->forward(a, nullptr);
  EXPECT_CONTAINS(s.message, "dv needs 16384 bytes from");
  EXPECT_CONTAINS(s.message, "holds only 8192 from there");
}

TEST_F(BackwardOnFakeDriver, ForwardOnlyManifestsIgnoreTheGradientFields) {
  std::unique_ptr<AttentionRuntime> rt;
  ASSERT_TRUE(
      AttentionRuntime::create(makeArtifactDir(), 0, RuntimeOptions(), rt).ok());
  FakeBatch b({0, 64}, 2, 1);
  AttentionArgs a;
  a.q = b.q;
  a.k = b.k;
  a.v = b.v;
  a.cuSeqlens = b.cuSeqlens;
  a.o = b.o;
  a.lse = b.lse;
  a.numTokens = b.T;
  a.numQHeads = b.Hq;
  a.numKVHeads = b.Hkv;
  a.headDim = b.D;
  a.numDocs = 1;
  a.dq = 8; // not a pointer, but the manifest has no dq
  Status s = rt->forward(a, nullptr);
  EXPECT_TRUE(s.ok()) << s.message;
  EXPECT_FALSE(rt->schedule().hasKvItems);
  EXPECT_FALSE(rt->symbols().has(Symbol::NumKvItems));
}

} // namespace
