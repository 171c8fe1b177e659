//===- BackwardRuntimeTest.cpp - kv_items, NUM_KV_ITEMS, the gradients ----===//
//
// The runtime side of the backward kernels (docs/runtime-abi.md, "The
// backward kernels (sm_90a)") on the host and on the fake
// driver: the key-tile schedule built and uploaded like the items,
// NUM_KV_ITEMS in expressions, and grad_o, dq, dk, dv validated and bound;
// the two phases of a training step (runForward, runBackward and their C
// API, flamia_attention_forward_phase / flamia_attention_backward_phase).
//
//===----------------------------------------------------------------------===//

#include "flamia/CAPI/Runtime.h"
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

// ---- The two phases: runForward, then runBackward of the same call.

/// trainingManifest() plus a second backward kernel after flamia_attention_dkdv
/// (flamia_attention_dq: grad_o, dq), so that the backward phase has an order.
std::string twoPhaseManifest() {
  bool found = false;
  std::string m = replaceOnce(trainingManifest(), R"(        {"name": "work", "kind": "i32", "value": "NUM_KV_ITEMS * 1000 + NUM_ITEMS"}
      ]
    }
  ])",
                              R"(        {"name": "work", "kind": "i32", "value": "NUM_KV_ITEMS * 1000 + NUM_ITEMS"}
      ]
    },
    {
      "name": "flamia_attention_dq", "cubin": "flamia_attention_dq.cubin",
      "phase": "backward", "launch": "persistent",
      "grid": ["NUM_SMS", "1", "1"], "block": [384, 1, 1],
      "params": [
        {"name": "grad_o", "kind": "ptr", "buffer": "grad_o"},
        {"name": "dq", "kind": "ptr", "buffer": "dq"},
        {"name": "num_items", "kind": "i32", "value": "NUM_ITEMS"}
      ]
    }
  ])",
                              &found);
  EXPECT_TRUE(found);
  return m;
}

std::string twoPhaseArtifacts() {
  std::string dir = makeArtifactDir(twoPhaseManifest());
  writeFile(dir, "flamia_attention_dkdv.cubin",
            "FAKECUBIN\nkernel flamia_attention_dkdv 8,4,8,8,8,8,8,8,4\n");
  writeFile(dir, "flamia_attention_dq.cubin",
            "FAKECUBIN\nkernel flamia_attention_dq 8,8,4\n");
  return dir;
}

std::vector<std::string> launchedKernels() {
  std::vector<std::string> names;
  for (int i = 0; i < FakeCuda::get().numLaunches(); ++i)
    names.push_back(FakeCuda::get().launch(i)->kernel);
  return names;
}

class PhasesOnFakeDriver : public BackwardOnFakeDriver {
protected:
  std::unique_ptr<AttentionRuntime> createTwoPhase() {
    std::unique_ptr<AttentionRuntime> rt;
    Status s =
        AttentionRuntime::create(twoPhaseArtifacts(), 0, RuntimeOptions(), rt);
    EXPECT_TRUE(s.ok()) << s.message;
    return rt;
  }
};

/// The forward's arguments alone (an autograd forward: no gradients yet).
AttentionArgs forwardArgsOf(const FakeBatch &b, const FakeGradients &g) {
  AttentionArgs a = argsOf(b, g);
  a.gradO = a.dq = a.dk = a.dv = 0;
  return a;
}

TEST_F(PhasesOnFakeDriver, ForwardThenBackwardLaunchEachPhaseInOrder) {
  auto rt = createTwoPhase();
  ASSERT_NE(rt, nullptr);
  FakeBatch b({0, 300, 300, 333}, 4, 2);
  FakeGradients g(b);
  CUstream forwardStream = reinterpret_cast<CUstream>(0x1000);
  CUstream backwardStream = reinterpret_cast<CUstream>(0x2000);
  EXPECT_FALSE(rt->forwardPhaseCurrent());
  fake().reset();
  Status s = rt->runForward(forwardArgsOf(b, g), forwardStream);
  ASSERT_TRUE(s.ok()) << s.message;
  EXPECT_EQ(launchedKernels(), (std::vector<std::string>{
                                   "flamia_quantize", "flamia_attention_fwd"}));
  EXPECT_EQ(fake().launch(1)->stream, forwardStream);
  EXPECT_TRUE(rt->forwardPhaseCurrent());
  // The backward's kernels are not bound yet: launching them is an error.
  s = rt->launch(2, 1, forwardStream);
  EXPECT_EQ(s.code, ErrorCode::InvalidArgument);
  EXPECT_CONTAINS(s.message, "kernel 'flamia_attention_dkdv' is not prepared");
  EXPECT_EQ(fake().numLaunches(), 2);

  fake().reset();
  s = rt->runBackward(argsOf(b, g), backwardStream);
  ASSERT_TRUE(s.ok()) << s.message;
  EXPECT_EQ(launchedKernels(),
            (std::vector<std::string>{"flamia_attention_dkdv",
                                      "flamia_attention_dq"}));
  EXPECT_EQ(fake().launch(0)->stream, backwardStream);
  // Ordered after the forward's kernels; cu_seqlens read once more; the
  // schedule is not uploaded again (kv_items was, by the forward's prepare).
  EXPECT_EQ(fake().calls("cuStreamWaitEvent"), 1);
  EXPECT_EQ(fake().calls("cuMemcpyDtoHAsync_v2"), 1);
  EXPECT_EQ(fake().calls("cuMemcpyHtoDAsync_v2"), 0);
  EXPECT_EQ(fake().calls("cuMemsetD32Async"), 1); // the counter, for dkdv
  BufferView kvItems, delta;
  ASSERT_TRUE(rt->buffer("kv_items", kvItems).ok());
  ASSERT_TRUE(rt->buffer("delta", delta).ok());
  const FakeLaunch &dkdv = *fake().launch(0);
  EXPECT_EQ(paramAs<CUdeviceptr>(dkdv, 0), kvItems.address);
  EXPECT_EQ(paramAs<int32_t>(dkdv, 1), 8);
  EXPECT_EQ(paramAs<CUdeviceptr>(dkdv, 3), g.gradO);
  EXPECT_EQ(paramAs<CUdeviceptr>(dkdv, 4), delta.address);
  EXPECT_EQ(paramAs<CUdeviceptr>(dkdv, 5), g.dq);
  EXPECT_EQ(paramAs<CUdeviceptr>(dkdv, 6), g.dk);
  EXPECT_EQ(paramAs<CUdeviceptr>(dkdv, 7), g.dv);
  const FakeLaunch &dq = *fake().launch(1);
  EXPECT_EQ(paramAs<CUdeviceptr>(dq, 0), g.gradO);
  EXPECT_EQ(paramAs<CUdeviceptr>(dq, 1), g.dq);
  EXPECT_EQ(paramAs<int32_t>(dq, 2), 16);
  BufferView gradO;
  ASSERT_TRUE(rt->buffer("grad_o", gradO).ok());
  EXPECT_EQ(gradO.address, g.gradO);

  // The backward again, with other gradient tensors (retain_graph): bound
  // anew, the forward's workspace reused.
  FakeGradients g2(b);
  fake().reset();
  AttentionArgs a2 = argsOf(b, g2);
  s = rt->runBackward(a2, backwardStream);
  ASSERT_TRUE(s.ok()) << s.message;
  ASSERT_EQ(fake().numLaunches(), 2);
  EXPECT_EQ(paramAs<CUdeviceptr>(*fake().launch(0), 3), g2.gradO);
  EXPECT_EQ(paramAs<CUdeviceptr>(*fake().launch(1), 1), g2.dq);
  EXPECT_TRUE(rt->forwardPhaseCurrent());
}

TEST_F(PhasesOnFakeDriver, BackwardWithoutItsForwardFails) {
  auto rt = createTwoPhase();
  ASSERT_NE(rt, nullptr);
  FakeBatch b({0, 64, 128}, 2, 1);
  FakeGradients g(b);
  fake().reset();
  Status s = rt->runBackward(argsOf(b, g), nullptr);
  EXPECT_EQ(s.code, ErrorCode::InvalidArgument);
  EXPECT_EQ(s.message,
            "backward without its forward: no forward phase has run on this "
            "runtime; run the forward phase of the same call on this runtime "
            "first (the backward reads its workspace, o and lse)");
  EXPECT_EQ(fake().numLaunches(), 0);
  EXPECT_EQ(fake().deviceCalls(), 0) << fake().trace();

  // forward() (every kernel) and prepare() end a forward phase.
  ASSERT_TRUE(rt->runForward(forwardArgsOf(b, g), nullptr).ok());
  ASSERT_TRUE(rt->forward(argsOf(b, g), nullptr).ok());
  fake().reset();
  s = rt->runBackward(argsOf(b, g), nullptr);
  EXPECT_CONTAINS(s.message, "backward without its forward: the last call on "
                             "this runtime was forward (every kernel), not a "
                             "forward phase");
  ASSERT_TRUE(rt->runForward(forwardArgsOf(b, g), nullptr).ok());
  ASSERT_TRUE(rt->prepare(argsOf(b, g), nullptr).ok());
  s = rt->runBackward(argsOf(b, g), nullptr);
  EXPECT_CONTAINS(s.message, "the last call on this runtime was prepare");
  // A failed forward phase leaves none.
  ASSERT_TRUE(rt->runForward(forwardArgsOf(b, g), nullptr).ok());
  AttentionArgs bad = forwardArgsOf(b, g);
  bad.numKVHeads = 3;
  EXPECT_FALSE(rt->runForward(bad, nullptr).ok());
  fake().reset();
  s = rt->runBackward(argsOf(b, g), nullptr);
  EXPECT_CONTAINS(s.message, "the last forward phase on this runtime failed");
  EXPECT_EQ(fake().numLaunches(), 0);
}

TEST_F(PhasesOnFakeDriver, BackwardOfAnotherCallFailsNamingTheDifference) {
  auto rt = createTwoPhase();
  ASSERT_NE(rt, nullptr);
  FakeBatch b({0, 64, 128}, 2, 1);
  FakeGradients g(b);
  ASSERT_TRUE(rt->runForward(forwardArgsOf(b, g), nullptr).ok());

  // cu_seqlens changed on the device between the phases.
  int32_t *cu = fake().host<int32_t>(b.cuSeqlens);
  cu[1] = 100;
  fake().reset();
  Status s = rt->runBackward(argsOf(b, g), nullptr);
  EXPECT_EQ(s.code, ErrorCode::InvalidArgument);
  EXPECT_EQ(s.message,
            "backward: cu_seqlens differs from the forward phase's: "
            "cu_seqlens[1] = 100 but the forward read 64; the backward phase "
            "reads the forward phase's workspace and schedule and must be "
            "given the forward's call");
  EXPECT_EQ(fake().numLaunches(), 0);
  cu[1] = 64;

  // Another batch: T first.
  FakeBatch other({0, 32, 96}, 2, 1);
  FakeGradients og(other);
  s = rt->runBackward(argsOf(other, og), nullptr);
  EXPECT_EQ(s.message, "backward: T (num_tokens) = 96 but the forward phase "
                       "ran with 128; the backward phase reads the forward "
                       "phase's workspace and must be given the forward's "
                       "call");
  // Same sizes, another q.
  FakeBatch same({0, 64, 128}, 2, 1);
  AttentionArgs a = argsOf(b, g);
  a.q = same.q;
  s = rt->runBackward(a, nullptr);
  EXPECT_CONTAINS(s.message, "backward: q (0x");
  EXPECT_CONTAINS(s.message, ") is not the forward phase's q (0x");
  // Another cu_seqlens tensor holding the same values: a different pointer.
  a = argsOf(b, g);
  a.cuSeqlens = same.cuSeqlens;
  s = rt->runBackward(a, nullptr);
  EXPECT_CONTAINS(s.message, "backward: cu_seqlens (0x");
  a = argsOf(b, g);
  a.numDocs = 1;
  s = rt->runBackward(a, nullptr);
  EXPECT_FALSE(s.ok());
  a = argsOf(b, g);
  a.softmaxScale = 0.5f;
  s = rt->runBackward(a, nullptr);
  EXPECT_EQ(s.message.rfind("backward: softmax scale 0.5 but the forward "
                            "phase ran with 0.0883883",
                            0),
            0u)
      << s.message;
  EXPECT_EQ(fake().numLaunches(), 0);

  // The forward phase is still current: the right call succeeds.
  s = rt->runBackward(argsOf(b, g), nullptr);
  ASSERT_TRUE(s.ok()) << s.message;
  EXPECT_EQ(launchedKernels(),
            (std::vector<std::string>{"flamia_attention_dkdv",
                                      "flamia_attention_dq"}));
}

TEST_F(PhasesOnFakeDriver, BackwardNeedsEveryGradient) {
  auto rt = createTwoPhase();
  ASSERT_NE(rt, nullptr);
  FakeBatch b({0, 64}, 2, 1);
  FakeGradients g(b);
  ASSERT_TRUE(rt->runForward(forwardArgsOf(b, g), nullptr).ok());
  fake().reset();
  AttentionArgs a = argsOf(b, g);
  a.gradO = 0;
  Status s = rt->runBackward(a, nullptr);
  EXPECT_EQ(s.code, ErrorCode::InvalidArgument);
  EXPECT_EQ(s.message, "grad_o is a null pointer (32768 bytes expected)");
  a = argsOf(b, g);
  a.dv = 0;
  s = rt->runBackward(a, nullptr);
  EXPECT_EQ(s.message, "dv is a null pointer (16384 bytes expected)");
  // A gradient too small for its tensor: the device pointer check. (In
  // memory of its own, so that the 16384 bytes it is taken for overlap no
  // other tensor, whatever the heap's layout.)
  alignas(256) static char region[16384];
  fake().registerMemory(region, 8192);
  a = argsOf(b, g);
  a.dv = reinterpret_cast<CUdeviceptr>(region);
  s = rt->runBackward(a, nullptr);
  EXPECT_CONTAINS(s.message, "dv needs 16384 bytes from");
  EXPECT_EQ(fake().numLaunches(), 0);
  // The forward phase checks gradients that are given.
  a = argsOf(b, g);
  a.dq += 8;
  s = rt->runForward(a, nullptr);
  EXPECT_CONTAINS(s.message, ") is not 16-byte aligned");
  EXPECT_CONTAINS(s.message, "dq (0x");
}

TEST_F(PhasesOnFakeDriver, ForwardOnlyManifests) {
  std::unique_ptr<AttentionRuntime> rt;
  ASSERT_TRUE(
      AttentionRuntime::create(makeArtifactDir(), 0, RuntimeOptions(), rt).ok());
  FakeBatch b({0, 64}, 2, 1);
  FakeGradients g(b);
  fake().reset();
  // The forward phase is the whole call.
  Status s = rt->runForward(forwardArgsOf(b, g), nullptr);
  ASSERT_TRUE(s.ok()) << s.message;
  EXPECT_EQ(launchedKernels(), (std::vector<std::string>{
                                   "flamia_quantize", "flamia_attention_fwd"}));
  s = rt->runBackward(argsOf(b, g), nullptr);
  EXPECT_EQ(s.code, ErrorCode::InvalidArgument);
  EXPECT_EQ(s.message, "backward: the manifest has no backward kernels (no "
                       "\"phase\": \"backward\")");
  EXPECT_EQ(fake().numLaunches(), 2);
}

TEST_F(PhasesOnFakeDriver, EmptyBatchLaunchesNothingInEitherPhase) {
  auto rt = createTwoPhase();
  ASSERT_NE(rt, nullptr);
  // T = 0 (one empty document): no kernel runs, no tensor has bytes (the
  // gradients may be null even for the backward).
  FakeBatch b({0, 0}, 2, 1);
  AttentionArgs a;
  a.q = b.q;
  a.k = b.k;
  a.v = b.v;
  a.cuSeqlens = b.cuSeqlens;
  a.o = b.o;
  a.lse = b.lse;
  a.numQHeads = 2;
  a.numKVHeads = 1;
  a.headDim = 128;
  a.numDocs = 1;
  fake().reset();
  ASSERT_TRUE(rt->runForward(a, nullptr).ok());
  ASSERT_TRUE(rt->runBackward(a, nullptr).ok());
  EXPECT_EQ(fake().numLaunches(), 0);
  EXPECT_EQ(fake().calls("cuEventRecord"), 2);
}

// ---- The same through the C API.

flamia_attention_args capiArgsOf(const FakeBatch &b, const FakeGradients *g) {
  flamia_attention_args a;
  flamia_attention_args_init(&a);
  auto ptr = [](CUdeviceptr p) {
    return reinterpret_cast<void *>(static_cast<uintptr_t>(p));
  };
  a.q = ptr(b.q);
  a.k = ptr(b.k);
  a.v = ptr(b.v);
  a.cu_seqlens = static_cast<const int32_t *>(ptr(b.cuSeqlens));
  a.o = ptr(b.o);
  a.lse = static_cast<float *>(ptr(b.lse));
  a.num_tokens = b.T;
  a.num_q_heads = static_cast<int32_t>(b.Hq);
  a.num_kv_heads = static_cast<int32_t>(b.Hkv);
  a.head_dim = static_cast<int32_t>(b.D);
  a.num_docs = static_cast<int32_t>(b.cu.size()) - 1;
  if (g) {
    a.grad_o = ptr(g->gradO);
    a.dq = ptr(g->dq);
    a.dk = ptr(g->dk);
    a.dv = ptr(g->dv);
  }
  return a;
}

/// flamia_attention_args as the header of ABI version 1 declared it (before
/// grad_o, dq, dk, dv): what a caller built against that header passes.
struct ArgsVersion1 {
  size_t struct_size;
  const void *q, *k, *v;
  const int32_t *cu_seqlens;
  void *o;
  float *lse;
  int64_t num_tokens;
  int32_t num_q_heads, num_kv_heads, head_dim, num_docs;
  float softmax_scale;
};
static_assert(sizeof(ArgsVersion1) == FLAMIA_ATTENTION_ARGS_SIZE_V1,
              "version 1 is the prefix of flamia_attention_args");

ArgsVersion1 version1Of(const flamia_attention_args &a) {
  ArgsVersion1 old;
  memset(&old, 0, sizeof old);
  memcpy(&old, &a, sizeof old);
  old.struct_size = sizeof old;
  return old;
}

const flamia_attention_args *asArgs(const ArgsVersion1 &old) {
  return reinterpret_cast<const flamia_attention_args *>(&old);
}

TEST_F(PhasesOnFakeDriver, CapiForwardPhaseThenBackwardPhase) {
  flamia_runtime *rt = nullptr;
  char err[512];
  ASSERT_EQ(flamia_runtime_create(twoPhaseArtifacts().c_str(), 0, &rt, err,
                                  sizeof err),
            FLAMIA_STATUS_OK)
      << err;
  FakeBatch b({0, 300, 300, 333}, 4, 2);
  FakeGradients g(b);
  flamia_attention_args a = capiArgsOf(b, nullptr);
  fake().reset();
  ASSERT_EQ(flamia_attention_forward_phase(rt, &a, nullptr), FLAMIA_STATUS_OK)
      << flamia_last_error();
  EXPECT_EQ(launchedKernels(), (std::vector<std::string>{
                                   "flamia_quantize", "flamia_attention_fwd"}));
  a = capiArgsOf(b, &g);
  fake().reset();
  ASSERT_EQ(flamia_attention_backward_phase(rt, &a, nullptr), FLAMIA_STATUS_OK)
      << flamia_last_error();
  EXPECT_EQ(launchedKernels(),
            (std::vector<std::string>{"flamia_attention_dkdv",
                                      "flamia_attention_dq"}));
  EXPECT_EQ(paramAs<CUdeviceptr>(*fake().launch(0), 3), g.gradO);
  EXPECT_EQ(paramAs<CUdeviceptr>(*fake().launch(0), 7), g.dv);
  EXPECT_EQ(paramAs<CUdeviceptr>(*fake().launch(1), 1), g.dq);

  // Different cu_seqlens between the phases: named, nothing launched.
  ASSERT_EQ(flamia_attention_forward_phase(rt, &a, nullptr), FLAMIA_STATUS_OK);
  fake().host<int32_t>(b.cuSeqlens)[2] = 301;
  fake().reset();
  EXPECT_EQ(flamia_attention_backward_phase(rt, &a, nullptr),
            FLAMIA_STATUS_INVALID_ARGUMENT);
  EXPECT_CONTAINS(flamia_last_error(),
                  "backward: cu_seqlens differs from the forward phase's: "
                  "cu_seqlens[2] = 301 but the forward read 300");
  EXPECT_EQ(fake().numLaunches(), 0);
  flamia_runtime_destroy(rt);
}

TEST_F(PhasesOnFakeDriver, CapiErrors) {
  flamia_runtime *rt = nullptr;
  ASSERT_EQ(flamia_runtime_create(twoPhaseArtifacts().c_str(), 0, &rt,
                                  nullptr, 0),
            FLAMIA_STATUS_OK);
  FakeBatch b({0, 64}, 2, 1);
  FakeGradients g(b);
  flamia_attention_args a = capiArgsOf(b, &g);
  EXPECT_EQ(flamia_attention_backward_phase(nullptr, &a, nullptr),
            FLAMIA_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(flamia_last_error(), "runtime is NULL");
  EXPECT_EQ(flamia_attention_backward_phase(rt, nullptr, nullptr),
            FLAMIA_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(flamia_last_error(), "args is NULL");
  fake().reset();
  EXPECT_EQ(flamia_attention_backward_phase(rt, &a, nullptr),
            FLAMIA_STATUS_INVALID_ARGUMENT);
  EXPECT_CONTAINS(flamia_last_error(), "backward without its forward: no "
                                       "forward phase has run on this runtime");
  // The training step through the all-kernels call without grad_o (a
  // version-1 caller): the existing message.
  ArgsVersion1 old = version1Of(capiArgsOf(b, nullptr));
  EXPECT_EQ(flamia_attention_forward(rt, asArgs(old), nullptr),
            FLAMIA_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(flamia_last_error(),
               "grad_o is a null pointer (32768 bytes expected)");
  // A version-1 caller's forward phase works; its backward has no grad_o.
  ASSERT_EQ(flamia_attention_forward_phase(rt, asArgs(old), nullptr),
            FLAMIA_STATUS_OK)
      << flamia_last_error();
  EXPECT_EQ(fake().numLaunches(), 2);
  EXPECT_EQ(flamia_attention_backward_phase(rt, asArgs(old), nullptr),
            FLAMIA_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(flamia_last_error(),
               "grad_o is a null pointer (32768 bytes expected)");
  // Missing dk with the current struct.
  a = capiArgsOf(b, &g);
  a.dk = nullptr;
  EXPECT_EQ(flamia_attention_backward_phase(rt, &a, nullptr),
            FLAMIA_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(flamia_last_error(),
               "dk is a null pointer (16384 bytes expected)");
  // A size between the versions is no version's.
  a = capiArgsOf(b, &g);
  a.struct_size = FLAMIA_ATTENTION_ARGS_SIZE_V1 + 8;
  EXPECT_EQ(flamia_attention_backward_phase(rt, &a, nullptr),
            FLAMIA_STATUS_INVALID_ARGUMENT);
  EXPECT_CONTAINS(flamia_last_error(), "flamia_attention_args.struct_size is " +
                                           std::to_string(
                                               FLAMIA_ATTENTION_ARGS_SIZE_V1 +
                                               8) +
                                           ", less than " +
                                           std::to_string(sizeof a));
  EXPECT_EQ(fake().numLaunches(), 2);
  // The right call still succeeds.
  a = capiArgsOf(b, &g);
  EXPECT_EQ(flamia_attention_backward_phase(rt, &a, nullptr), FLAMIA_STATUS_OK)
      << flamia_last_error();
  EXPECT_EQ(fake().numLaunches(), 4);
  flamia_runtime_destroy(rt);
}

TEST_F(PhasesOnFakeDriver, CapiVersion1StructRunsTheForward) {
  // A caller built against the first header, on a forward-only manifest.
  flamia_runtime *rt = nullptr;
  ASSERT_EQ(
      flamia_runtime_create(makeArtifactDir().c_str(), 0, &rt, nullptr, 0),
      FLAMIA_STATUS_OK);
  FakeBatch b({0, 33, 100}, 4, 4);
  ArgsVersion1 old = version1Of(capiArgsOf(b, nullptr));
  EXPECT_EQ(old.struct_size, 88u);
  fake().reset();
  ASSERT_EQ(flamia_attention_forward(rt, asArgs(old), nullptr),
            FLAMIA_STATUS_OK)
      << flamia_last_error();
  EXPECT_EQ(launchedKernels(), (std::vector<std::string>{
                                   "flamia_quantize", "flamia_attention_fwd"}));
  // The bytes after a version-1 struct are not read: garbage there is fine.
  struct {
    ArgsVersion1 args;
    unsigned char after[32];
  } padded;
  padded.args = old;
  memset(padded.after, 0xAB, sizeof padded.after);
  fake().reset();
  EXPECT_EQ(flamia_attention_forward_phase(
                rt, reinterpret_cast<const flamia_attention_args *>(&padded),
                nullptr),
            FLAMIA_STATUS_OK)
      << flamia_last_error();
  EXPECT_EQ(fake().numLaunches(), 2);
  flamia_runtime_destroy(rt);
}

} // namespace

// ---- cu_seqlens on the host, and calls captured in a CUDA graph. The fake
// driver's capture mode fails what a real capture forbids (synchronizing,
// copies between host and device, allocations, waits on outside events).

class CaptureOnFakeDriver : public PhasesOnFakeDriver {
protected:
  void TearDown() override {
    fake().setCapturing(0);
    PhasesOnFakeDriver::TearDown();
  }
};

TEST_F(CaptureOnFakeDriver, HostCuSeqlensAreNotReadFromTheDevice) {
  auto rt = createTwoPhase();
  ASSERT_NE(rt, nullptr);
  FakeBatch b({0, 300, 300, 333}, 4, 2);
  FakeGradients g(b);
  AttentionArgs a = forwardArgsOf(b, g);
  a.cuSeqlensHost = b.cu.data();
  fake().reset();
  Status s = rt->runForward(a, nullptr);
  ASSERT_TRUE(s.ok()) << s.message;
  EXPECT_EQ(fake().calls("cuMemcpyDtoHAsync_v2"), 0);
  EXPECT_EQ(fake().calls("cuStreamSynchronize"), 0);
  EXPECT_EQ(rt->schedule().kvItems.size(), 8u);
  AttentionArgs full = argsOf(b, g);
  full.cuSeqlensHost = b.cu.data();
  s = rt->runBackward(full, nullptr);
  ASSERT_TRUE(s.ok()) << s.message;
  EXPECT_EQ(fake().calls("cuMemcpyDtoHAsync_v2"), 0);
  EXPECT_EQ(fake().calls("cuStreamSynchronize"), 0);
}

TEST_F(CaptureOnFakeDriver, HostCuSeqlensAreValidated) {
  auto rt = createTwoPhase();
  ASSERT_NE(rt, nullptr);
  FakeBatch b({0, 64, 128}, 2, 1);
  FakeGradients g(b);
  AttentionArgs a = forwardArgsOf(b, g);
  const std::vector<int32_t> bad = {0, 100, 64};
  a.cuSeqlensHost = bad.data();
  Status s = rt->runForward(a, nullptr);
  EXPECT_EQ(s.code, ErrorCode::InvalidArgument);
  EXPECT_CONTAINS(s.message, "cu_seqlens");
  EXPECT_CONTAINS(s.message, "non-decreasing");
}

TEST_F(CaptureOnFakeDriver, ATrainingStepIsCapturedAfterAWarmUpCall) {
  auto rt = createTwoPhase();
  ASSERT_NE(rt, nullptr);
  FakeBatch b({0, 300, 300, 333}, 4, 2);
  FakeGradients g(b);
  AttentionArgs fwd = forwardArgsOf(b, g), full = argsOf(b, g);
  fwd.cuSeqlensHost = full.cuSeqlensHost = b.cu.data();
  // Warm-up: allocates the workspace and uploads the schedule.
  ASSERT_TRUE(rt->runForward(fwd, nullptr).ok());
  ASSERT_TRUE(rt->runBackward(full, nullptr).ok());
  fake().reset();
  fake().setCapturing(1);
  Status s = rt->runForward(fwd, nullptr);
  ASSERT_TRUE(s.ok()) << s.message;
  s = rt->runBackward(full, nullptr);
  ASSERT_TRUE(s.ok()) << s.message;
  EXPECT_EQ(launchedKernels(),
            (std::vector<std::string>{"flamia_quantize", "flamia_attention_fwd",
                                      "flamia_attention_dkdv",
                                      "flamia_attention_dq"}));
  // Nothing a capture forbids, no upload, no event to order replays by.
  for (const char *call :
       {"cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2", "cuStreamSynchronize",
        "cuStreamWaitEvent", "cuMemAlloc_v2", "cuEventRecord"})
    EXPECT_EQ(fake().calls(call), 0) << call << ": " << fake().trace();
  // After the capture, calls work as before (and upload again).
  fake().setCapturing(0);
  fake().reset();
  ASSERT_TRUE(rt->runForward(fwd, nullptr).ok());
  EXPECT_EQ(fake().calls("cuStreamWaitEvent"), 0);
  EXPECT_EQ(fake().calls("cuMemcpyHtoDAsync_v2"), 3);
}

TEST_F(CaptureOnFakeDriver, CapturingWithoutHostCuSeqlensIsAClearError) {
  auto rt = createTwoPhase();
  ASSERT_NE(rt, nullptr);
  FakeBatch b({0, 64, 128}, 2, 1);
  FakeGradients g(b);
  ASSERT_TRUE(rt->runForward(forwardArgsOf(b, g), nullptr).ok());
  fake().setCapturing(1);
  Status s = rt->runForward(forwardArgsOf(b, g), nullptr);
  EXPECT_EQ(s.code, ErrorCode::InvalidArgument);
  EXPECT_EQ(s.message,
            "cu_seqlens would be read from the device, which a CUDA graph "
            "capture does not allow: pass its values on the host too "
            "(cu_seqlens_host)");
  fake().setCapturing(0); // before the tensors are freed
}

TEST_F(CaptureOnFakeDriver, CapturingAnotherScheduleIsAClearError) {
  auto rt = createTwoPhase();
  ASSERT_NE(rt, nullptr);
  FakeBatch b({0, 64, 128}, 2, 1);
  FakeGradients g(b);
  AttentionArgs a = forwardArgsOf(b, g);
  a.cuSeqlensHost = b.cu.data();
  ASSERT_TRUE(rt->runForward(a, nullptr).ok());
  // Same sizes, other documents: the schedule differs.
  const std::vector<int32_t> other = {0, 100, 128};
  a.cuSeqlensHost = other.data();
  fake().setCapturing(1);
  Status s = rt->runForward(a, nullptr);
  EXPECT_EQ(s.code, ErrorCode::InvalidArgument);
  EXPECT_CONTAINS(s.message, "differs from what the device holds");
  EXPECT_CONTAINS(s.message, "run the same call once before capturing it");
  fake().setCapturing(0);
}

TEST_F(CaptureOnFakeDriver, CapturingAFirstCallIsAClearError) {
  auto rt = createTwoPhase();
  ASSERT_NE(rt, nullptr);
  FakeBatch b({0, 64, 128}, 2, 1);
  FakeGradients g(b);
  AttentionArgs a = forwardArgsOf(b, g);
  a.cuSeqlensHost = b.cu.data();
  fake().reset();
  fake().setCapturing(1);
  Status s = rt->runForward(a, nullptr);
  EXPECT_EQ(s.code, ErrorCode::InvalidArgument);
  EXPECT_CONTAINS(s.message, "the workspace must grow to ");
  EXPECT_CONTAINS(s.message, "which a CUDA graph capture does not allow");
  EXPECT_EQ(fake().calls("cuMemAlloc_v2"), 0);
  fake().setCapturing(0);
}

TEST_F(CaptureOnFakeDriver, CapiTakesHostCuSeqlensAndVersion2Structs) {
  flamia_runtime *rt = nullptr;
  char err[512];
  ASSERT_EQ(flamia_runtime_create(twoPhaseArtifacts().c_str(), 0, &rt, err,
                                  sizeof err),
            FLAMIA_STATUS_OK)
      << err;
  FakeBatch b({0, 300, 333}, 4, 2);
  flamia_attention_args a = capiArgsOf(b, nullptr);
  a.cu_seqlens_host = b.cu.data();
  fake().reset();
  ASSERT_EQ(flamia_attention_forward_phase(rt, &a, nullptr), FLAMIA_STATUS_OK)
      << flamia_last_error();
  EXPECT_EQ(fake().calls("cuMemcpyDtoHAsync_v2"), 0);
  // A version-2 struct (no cu_seqlens_host): read from the device.
  a.struct_size = FLAMIA_ATTENTION_ARGS_SIZE_V2;
  fake().reset();
  ASSERT_EQ(flamia_attention_forward_phase(rt, &a, nullptr), FLAMIA_STATUS_OK)
      << flamia_last_error();
  EXPECT_EQ(fake().calls("cuMemcpyDtoHAsync_v2"), 1);
  flamia_runtime_destroy(rt);
}
