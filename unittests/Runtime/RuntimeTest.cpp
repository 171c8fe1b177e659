//===- RuntimeTest.cpp - AttentionRuntime on the fake driver --------------===//
//
// The whole device path of a call (driver loading, device checks, cubins,
// pointer checks, cu_seqlens, schedule upload, parameter packing, tensor
// maps, launches, teardown) against FakeCuda: host memory and recorded
// launches instead of a GPU.
//
//===----------------------------------------------------------------------===//

#include "flamia/Runtime/Runtime.h"

#include "FakeCudaControl.h"
#include "TestArtifacts.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace flamia;
using namespace flamia::runtime;
using namespace flamia::runtime::test;

namespace {

#define EXPECT_CONTAINS(haystack, needle)                                      \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos)             \
      << "'" << (haystack) << "' lacks '" << (needle) << "'"

class RuntimeOnFakeDriver : public ::testing::Test {
protected:
  void SetUp() override {
    setenv("FLAMIA_LIBCUDA", FLAMIA_FAKE_CUDA_PATH, 1);
    fake().resetAll();
  }
  void TearDown() override { unsetenv("FLAMIA_LIBCUDA"); }
  static FakeCuda &fake() { return FakeCuda::get(); }

  std::unique_ptr<AttentionRuntime> create(const std::string &dir,
                                           RuntimeOptions options = {}) {
    std::unique_ptr<AttentionRuntime> rt;
    Status s = AttentionRuntime::create(dir, 0, options, rt);
    EXPECT_TRUE(s.ok()) << s.message;
    return rt;
  }

  static AttentionArgs argsOf(const FakeBatch &b) {
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
    a.numDocs = static_cast<int64_t>(b.cu.size()) - 1;
    return a;
  }

  Status createError(const std::string &dir) {
    std::unique_ptr<AttentionRuntime> rt;
    Status s = AttentionRuntime::create(dir, 0, RuntimeOptions(), rt);
    EXPECT_FALSE(s.ok());
    EXPECT_TRUE(rt == nullptr);
    EXPECT_EQ(fake().contextDepth(), 0);
    return s;
  }
};

template <typename T> T paramAs(const FakeLaunch &l, int i) {
  T v;
  memcpy(&v, l.paramBytes[i], sizeof v);
  return v;
}

TEST_F(RuntimeOnFakeDriver, CreateLoadsTheCubinsAndRaisesTheSmemLimit) {
  auto rt = create(makeArtifactDir());
  ASSERT_NE(rt, nullptr);
  EXPECT_EQ(rt->device().name, "FLAMIA fake device");
  EXPECT_EQ(rt->device().computeMajor, 9);
  EXPECT_EQ(rt->device().numSms, 132);
  EXPECT_EQ(rt->device().driverVersion, 13000);
  EXPECT_EQ(fake().calls("cuModuleLoadData"), 2);
  EXPECT_EQ(fake().calls("cuModuleGetFunction"), 2);
  int attribute, value;
  ASSERT_TRUE(fake().lastFuncAttribute(&attribute, &value));
  EXPECT_EQ(attribute, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
  EXPECT_EQ(value, 200000);
  EXPECT_EQ(rt->loadedKernel(1).staticSharedBytes, 1024);
  EXPECT_TRUE(rt->loadedKernel(1).paramLayoutChecked);
  EXPECT_EQ(fake().contextDepth(), 0);
  EXPECT_FALSE(rt->prepared());
}

TEST_F(RuntimeOnFakeDriver, ForwardRunsEveryKernelWithItsParameters) {
  auto rt = create(makeArtifactDir());
  ASSERT_NE(rt, nullptr);
  // Documents of 5, 0 and 65 tokens; Hq 4 over Hkv 2.
  FakeBatch b({0, 5, 5, 70}, 4, 2);
  fake().reset();
  Status s = rt->forward(argsOf(b), nullptr);
  ASSERT_TRUE(s.ok()) << s.message;
  EXPECT_EQ(fake().contextDepth(), 0);
  ASSERT_EQ(fake().numLaunches(), 2);

  BufferView blockInfo, items, counter, qDeq, qPt;
  ASSERT_TRUE(rt->buffer("block_info", blockInfo).ok());
  ASSERT_TRUE(rt->buffer("items", items).ok());
  ASSERT_TRUE(rt->buffer("counter", counter).ok());
  ASSERT_TRUE(rt->buffer("q_deq", qDeq).ok());
  ASSERT_TRUE(rt->buffer("q_pt", qPt).ok());
  EXPECT_EQ(qPt.shape, (std::vector<int64_t>{70, 4, 128}));
  EXPECT_EQ(qPt.role, BufferRole::Workspace);
  EXPECT_EQ(qPt.address % 256, 0u);

  // Uploaded schedule buffers hold what FlamiaSchedule computed.
  const int32_t *bi = fake().host<int32_t>(blockInfo.address);
  EXPECT_EQ(std::vector<int32_t>(bi, bi + 8),
            (std::vector<int32_t>{0, 5, 5, 32, 37, 32, 69, 1}));
  ASSERT_EQ(items.bytes, 8u * sizeof(VarlenWorkItem));
  EXPECT_EQ(memcmp(fake().host<void>(items.address),
                   rt->schedule().items.data(), items.bytes),
            0);
  EXPECT_EQ(*fake().host<int32_t>(counter.address), 0); // zeroed

  const FakeLaunch &quant = *fake().launch(0);
  EXPECT_STREQ(quant.kernel, "flamia_quantize");
  EXPECT_EQ(quant.grid[0], 4u); // NB
  EXPECT_EQ(quant.grid[1], 4u); // Hq
  EXPECT_EQ(quant.grid[2], 1u);
  EXPECT_EQ(quant.block[0], 128u);
  EXPECT_EQ(quant.sharedMemBytes, 0u);
  EXPECT_EQ(paramAs<CUdeviceptr>(quant, 0), b.q);
  EXPECT_EQ(paramAs<CUdeviceptr>(quant, 1), b.k);
  EXPECT_EQ(paramAs<CUdeviceptr>(quant, 2), blockInfo.address);
  EXPECT_EQ(paramAs<CUdeviceptr>(quant, 3), qPt.address);
  EXPECT_EQ(paramAs<int32_t>(quant, 5), 4);

  const FakeLaunch &fwd = *fake().launch(1);
  EXPECT_STREQ(fwd.kernel, "flamia_attention_fwd");
  EXPECT_EQ(fwd.grid[0], 132u); // NUM_SMS
  EXPECT_EQ(fwd.block[0], 384u);
  EXPECT_EQ(fwd.sharedMemBytes, 200000u);
  EXPECT_EQ(fwd.cluster[0], 1u);
  // The tensor map passed by value is the one encoded for q_deq.
  FakeTensorMapEncode e;
  memcpy(&e, fwd.paramBytes[0], sizeof e);
  EXPECT_EQ(e.address, qDeq.address);
  EXPECT_EQ(e.dataType, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  EXPECT_EQ(e.globalDim[0], 512u);
  EXPECT_EQ(e.globalDim[1], 70u);
  EXPECT_EQ(e.globalStride, 1024u);
  EXPECT_EQ(e.boxDim[0], 64u);
  EXPECT_EQ(e.boxDim[1], 128u);
  EXPECT_EQ(e.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(e.oobFill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  EXPECT_EQ(paramAs<CUdeviceptr>(fwd, 1), b.o);
  EXPECT_EQ(paramAs<CUdeviceptr>(fwd, 2), b.lse);
  EXPECT_EQ(paramAs<CUdeviceptr>(fwd, 3), items.address);
  EXPECT_EQ(paramAs<int32_t>(fwd, 4), 8);
  EXPECT_EQ(paramAs<CUdeviceptr>(fwd, 5), counter.address);
  const float scale = static_cast<float>(1.0 / std::sqrt(128.0));
  EXPECT_EQ(rt->softmaxScale(), scale);
  EXPECT_EQ(
      paramAs<float>(fwd, 6),
      static_cast<float>(static_cast<double>(scale) * 1.4426950408889634));
  EXPECT_EQ(paramAs<int32_t>(fwd, 7), 70);

  // Order: cu_seqlens read first, the counter zeroed right before the kernel
  // that takes it, an event recorded after the last launch.
  const std::string trace = fake().trace();
  EXPECT_LT(trace.find("MemcpyDtoHAsync"), trace.find("MemcpyHtoDAsync"));
  EXPECT_CONTAINS(trace, "LaunchKernelEx MemsetD32Async LaunchKernelEx "
                         "EventRecord CtxPopCurrent");
  EXPECT_EQ(fake().calls("cuMemsetD32Async"), 1);
}

// The manifest's head counts are symbols (Hq, Hkv), as flamia-compile
// --runtime-heads writes them: one runtime (one kernel set) takes every head
// count, and each call's grid, i32 parameters, tensor maps and workspace
// shapes follow the call's heads.
TEST_F(RuntimeOnFakeDriver, OneKernelSetServesEveryHeadCount) {
  auto rt = create(makeArtifactDir());
  ASSERT_NE(rt, nullptr);
  for (auto [hq, hkv] : {std::pair<int64_t, int64_t>{4, 2}, {8, 1}, {3, 3},
                         {16, 4}}) {
    SCOPED_TRACE("Hq " + std::to_string(hq) + ", Hkv " + std::to_string(hkv));
    FakeBatch b({0, 5, 5, 70}, hq, hkv);
    fake().reset();
    Status s = rt->forward(argsOf(b), nullptr);
    ASSERT_TRUE(s.ok()) << s.message;
    ASSERT_EQ(fake().numLaunches(), 2);
    BufferView qPt;
    ASSERT_TRUE(rt->buffer("q_pt", qPt).ok());
    EXPECT_EQ(qPt.shape, (std::vector<int64_t>{70, hq, 128}));
    const FakeLaunch &quant = *fake().launch(0);
    EXPECT_EQ(quant.grid[1], static_cast<unsigned>(hq));
    FakeTensorMapEncode e;
    memcpy(&e, fake().launch(1)->paramBytes[0], sizeof e);
    EXPECT_EQ(e.globalDim[0], static_cast<uint64_t>(hq * 128));
    EXPECT_EQ(e.globalStride, static_cast<uint64_t>(hq * 128 * 2));
    // Work items: query tiles of 128 (one in each non-empty document) per
    // query head, each naming its key/value head.
    ASSERT_EQ(rt->schedule().items.size(), static_cast<size_t>(2 * hq));
    for (const VarlenWorkItem &item : rt->schedule().items)
      EXPECT_EQ(item.kv_head, item.q_head / (hq / hkv));
  }
  // A GQA ratio the heads do not divide is the call's error.
  FakeBatch bad({0, 5}, 6, 4);
  Status s = rt->forward(argsOf(bad), nullptr);
  EXPECT_EQ(s.code, ErrorCode::InvalidArgument);
  EXPECT_CONTAINS(s.message, "Hq (6) is not a multiple of Hkv (4)");
}

TEST_F(RuntimeOnFakeDriver, SecondCallWaitsForTheFirstAndReusesTheArena) {
  auto rt = create(makeArtifactDir());
  FakeBatch b({0, 100, 200}, 2, 2);
  ASSERT_TRUE(rt->forward(argsOf(b), nullptr).ok());
  const size_t allocated = fake().allocatedBytes();
  fake().reset();
  ASSERT_TRUE(rt->forward(argsOf(b), nullptr).ok());
  EXPECT_EQ(fake().calls("cuStreamWaitEvent"), 1);
  EXPECT_EQ(fake().calls("cuMemAlloc_v2"), 0);
  EXPECT_EQ(fake().allocatedBytes(), allocated);
  // A larger batch grows the arena after waiting for the previous call.
  FakeBatch big({0, 1000, 3000}, 2, 2);
  fake().reset();
  ASSERT_TRUE(rt->forward(argsOf(big), nullptr).ok());
  EXPECT_EQ(fake().calls("cuEventSynchronize"), 1);
  EXPECT_EQ(fake().calls("cuMemFree_v2"), 1);
  EXPECT_EQ(fake().calls("cuMemAlloc_v2"), 1);
}

TEST_F(RuntimeOnFakeDriver, PrepareThenLaunchSubsets) {
  auto rt = create(makeArtifactDir());
  FakeBatch b({0, 64}, 2, 1);
  Status s = rt->launch(0, 1, nullptr);
  EXPECT_EQ(s.message, "launch without a successful prepare");
  ASSERT_TRUE(rt->prepare(argsOf(b), nullptr).ok());
  EXPECT_EQ(fake().numLaunches(), 0);
  ASSERT_TRUE(rt->launch(0, 1, nullptr).ok());
  ASSERT_TRUE(rt->launch(1, 1, nullptr).ok());
  ASSERT_TRUE(rt->launch(1, 1, nullptr).ok()); // again, for a benchmark
  ASSERT_EQ(fake().numLaunches(), 3);
  EXPECT_STREQ(fake().launch(2)->kernel, "flamia_attention_fwd");
  s = rt->launch(1, 2, nullptr);
  EXPECT_EQ(s.message, "kernels [1, 3) out of range: the manifest has 2");
  s = rt->launch(3, 0, nullptr);
  EXPECT_EQ(s.code, ErrorCode::InvalidArgument);
}

TEST_F(RuntimeOnFakeDriver, EmptyBatchLaunchesNothing) {
  auto rt = create(makeArtifactDir());
  FakeBatch b({0, 0, 0}, 2, 2);
  AttentionArgs a = argsOf(b);
  a.q = a.k = a.v = a.o = a.lse = 0; // allowed: nothing to read or write
  fake().reset();
  Status s = rt->forward(a, nullptr);
  ASSERT_TRUE(s.ok()) << s.message;
  EXPECT_EQ(fake().numLaunches(), 0);
  EXPECT_EQ(rt->schedule().numBlocks, 0);
}

TEST_F(RuntimeOnFakeDriver, BadArgumentsFailBeforeAnyDeviceCall) {
  auto rt = create(makeArtifactDir());
  FakeBatch b({0, 5, 5, 70}, 4, 2);
  struct Case {
    const char *what;
    void (*mutate)(AttentionArgs &);
    const char *message;
  } cases[] = {
      {"Hq % Hkv", [](AttentionArgs &a) { a.numKVHeads = 3; },
       "Hq (4) is not a multiple of Hkv (3)"},
      {"Hkv > Hq", [](AttentionArgs &a) { a.numKVHeads = 8; },
       "Hkv (num_kv_heads) = 8 must be in [1, Hq = 4]"},
      {"head dim", [](AttentionArgs &a) { a.headDim = 64; },
       "head dim D = 64 but the kernels were compiled for head_dim 128"},
      {"T < 0", [](AttentionArgs &a) { a.numTokens = -1; },
       "T (num_tokens) is -1; it must be >= 0"},
      {"num_docs", [](AttentionArgs &a) { a.numDocs = 0; },
       "num_docs = 0; it must be >= 1 (cu_seqlens has num_docs + 1 entries)"},
      {"null q", [](AttentionArgs &a) { a.q = 0; },
       "q is a null pointer (71680 bytes expected)"},
      {"null cu", [](AttentionArgs &a) { a.cuSeqlens = 0; },
       "cu_seqlens is a null pointer (16 bytes expected)"},
      {"unaligned k", [](AttentionArgs &a) { a.k += 8; }, "-byte aligned"},
      {"unaligned cu", [](AttentionArgs &a) { a.cuSeqlens += 2; },
       "is not 4-byte aligned"},
      {"o aliases q", [](AttentionArgs &a) { a.o = a.q; }, "overlaps q"},
      {"lse inside o", [](AttentionArgs &a) { a.lse = a.o + 1024; },
       "output o ["},
      {"scale", [](AttentionArgs &a) { a.softmaxScale = -1.0f; },
       "softmax_scale -1 must be finite and > 0 (or 0 for the default)"},
      {"nan scale", [](AttentionArgs &a) { a.softmaxScale = NAN; },
       "must be finite and > 0 (or 0 for the default)"},
      {"too large for the kernels",
       [](AttentionArgs &a) {
         a.numTokens = 58720257; // x 1 x 128 > 7 x 2^30 elements
         a.numQHeads = a.numKVHeads = 1;
       },
       "T x Hq x D = 58720257 x 1 x 128 = 7516192896 elements exceeds the "
       "limit of 7516192768 elements per tensor"},
  };
  for (const Case &c : cases) {
    AttentionArgs a = argsOf(b);
    c.mutate(a);
    fake().reset();
    Status s = rt->forward(a, nullptr);
    EXPECT_EQ(s.code, ErrorCode::InvalidArgument) << c.what;
    EXPECT_CONTAINS(s.message, c.message);
    EXPECT_EQ(fake().deviceCalls(), 0) << c.what << ": " << fake().trace();
    EXPECT_FALSE(rt->prepared());
  }
}

TEST_F(RuntimeOnFakeDriver, BadCuSeqlensFailBeforeAnyUploadOrLaunch) {
  auto rt = create(makeArtifactDir());
  struct Case {
    std::vector<int32_t> cu; // written to the device
    int64_t T;
    const char *message;
  } cases[] = {
      {{0, 10, 7, 70},
       70,
       "cu_seqlens[2] = 7 is less than cu_seqlens[1] = 10 (it must be "
       "non-decreasing)"},
      {{3, 10, 40, 70}, 70, "cu_seqlens[0] = 3; it must be 0"},
      {{0, 10, 40, 69},
       70,
       "cu_seqlens[3] = 69 but the batch has T = 70 tokens (the last entry "
       "must be T)"},
      {{0, 10, 40, 70},
       71,
       "cu_seqlens[3] = 70 but the batch has T = 71 tokens (the last entry "
       "must be T)"},
  };
  for (const Case &c : cases) {
    FakeBatch b({0, 5, 5, 71}, 2, 2);
    memcpy(fake().host<int32_t>(b.cuSeqlens), c.cu.data(), 16);
    AttentionArgs a = argsOf(b);
    a.numTokens = c.T;
    fake().reset();
    Status s = rt->forward(a, nullptr);
    EXPECT_EQ(s.code, ErrorCode::InvalidArgument);
    EXPECT_EQ(s.message, c.message);
    EXPECT_EQ(fake().calls("cuMemcpyDtoHAsync_v2"), 1);
    EXPECT_EQ(fake().calls("cuMemAlloc_v2"), 0);
    EXPECT_EQ(fake().calls("cuMemcpyHtoDAsync_v2"), 0);
    EXPECT_EQ(fake().calls("cuLaunchKernelEx"), 0);
    EXPECT_EQ(fake().contextDepth(), 0);
  }
}

TEST_F(RuntimeOnFakeDriver, PointersMustBeLargeEnoughDeviceMemory) {
  auto rt = create(makeArtifactDir());
  FakeBatch b({0, 64}, 2, 2);
  alignas(16) static unsigned char hostMemory[64 * 2 * 128 * 2];
  AttentionArgs a = argsOf(b);
  a.v = reinterpret_cast<uintptr_t>(hostMemory);
  Status s = rt->forward(a, nullptr);
  EXPECT_EQ(s.code, ErrorCode::InvalidArgument);
  EXPECT_CONTAINS(s.message,
                  ") is not memory known to CUDA (CUDA_ERROR_INVALID_VALUE");
  EXPECT_EQ(s.message.compare(0, 5, "v (0x"), 0);

  // 1000 bytes of "device memory" far from the other tensors (no overlap).
  alignas(256) static unsigned char smallRegion[1024];
  fake().registerMemory(smallRegion, 1000);
  a = argsOf(b);
  a.o = reinterpret_cast<uintptr_t>(smallRegion);
  s = rt->forward(a, nullptr);
  EXPECT_CONTAINS(s.message, "o needs 32768 bytes from");
  EXPECT_CONTAINS(s.message, "+1000) holds only 1000 from there");
  a.o = b.o + 16; // inside its allocation, but running past its end
  s = rt->forward(a, nullptr);
  EXPECT_CONTAINS(s.message, "holds only 32752 from there");

  RuntimeOptions unchecked;
  unchecked.checkDevicePointers = false;
  auto lax = create(makeArtifactDir(), unchecked);
  a = argsOf(b);
  fake().reset();
  ASSERT_TRUE(lax->forward(a, nullptr).ok());
  EXPECT_EQ(fake().calls("cuPointerGetAttribute"), 0);
}

TEST_F(RuntimeOnFakeDriver, SoftmaxScaleOfTheManifestWins) {
  bool found;
  std::string text = replaceOnce(standardManifest(), "\"softmax_scale\": null",
                                 "\"softmax_scale\": 0.25", &found);
  ASSERT_TRUE(found);
  auto rt = create(makeArtifactDir(text));
  FakeBatch b({0, 32}, 1, 1);
  AttentionArgs a = argsOf(b);
  ASSERT_TRUE(rt->forward(a, nullptr).ok());
  EXPECT_EQ(rt->softmaxScale(), 0.25f);
  a.softmaxScale = 0.25f;
  EXPECT_TRUE(rt->forward(a, nullptr).ok());
  a.softmaxScale = 0.5f;
  Status s = rt->forward(a, nullptr);
  EXPECT_EQ(s.message, "softmax_scale 0.5 differs from the 0.25 the kernels "
                       "were compiled with (manifest softmax_scale); pass 0 "
                       "or 0.25");
  // Without a manifest value the argument is used as given.
  auto free = create(makeArtifactDir());
  ASSERT_TRUE(free->forward(a, nullptr).ok());
  EXPECT_EQ(free->softmaxScale(), 0.5f);
}

TEST_F(RuntimeOnFakeDriver, OptionsZeroTheWorkspaceAndSynchronize) {
  RuntimeOptions options;
  options.zeroWorkspace = true;
  options.syncAfterEachKernel = true;
  options.checkSchedule = true;
  auto rt = create(makeArtifactDir(), options);
  FakeBatch b({0, 40, 100}, 2, 1);
  fake().reset();
  ASSERT_TRUE(rt->forward(argsOf(b), nullptr).ok());
  EXPECT_EQ(fake().calls("cuMemsetD8Async"), 1);
  // One sync for cu_seqlens, one after each kernel.
  EXPECT_EQ(fake().calls("cuStreamSynchronize"), 3);
  BufferView qPt;
  ASSERT_TRUE(rt->buffer("q_pt", qPt).ok());
  EXPECT_EQ(fake().host<unsigned char>(qPt.address)[0], 0); // not 0xCD
}

TEST_F(RuntimeOnFakeDriver, BufferLookup) {
  auto rt = create(makeArtifactDir());
  BufferView v;
  Status s = rt->buffer("q_pt", v);
  EXPECT_EQ(s.code, ErrorCode::NotFound);
  EXPECT_EQ(s.message,
            "no prepared call: buffers are bound by prepare or forward");
  FakeBatch b({0, 64}, 1, 1);
  ASSERT_TRUE(rt->forward(argsOf(b), nullptr).ok());
  s = rt->buffer("k_tb", v);
  EXPECT_EQ(s.code, ErrorCode::NotFound);
  EXPECT_CONTAINS(s.message, "no buffer 'k_tb' in the manifest (q, k, v, ");
  ASSERT_TRUE(rt->buffer("lse", v).ok());
  EXPECT_EQ(v.address, b.lse);
  EXPECT_EQ(v.role, BufferRole::Output);
  EXPECT_EQ(v.shape, (std::vector<int64_t>{1, 64}));
}

TEST_F(RuntimeOnFakeDriver, WrongScheduleBufferShapeIsReported) {
  bool found;
  std::string text = replaceOnce(standardManifest(), "[\"NUM_ITEMS\", \"8\"]",
                                 "[\"NUM_ITEMS\", \"4\"]", &found);
  ASSERT_TRUE(found);
  auto rt = create(makeArtifactDir(text));
  FakeBatch b({0, 64}, 2, 2);
  Status s = rt->forward(argsOf(b), nullptr);
  EXPECT_EQ(s.code, ErrorCode::InvalidManifest);
  EXPECT_EQ(s.message,
            "schedule buffer 'items' has shape [2, 4] (32 bytes) but "
            "it holds NUM_ITEMS x 8 int32 = 64 bytes");
}

TEST_F(RuntimeOnFakeDriver, ManifestShapeOfACallersTensorMustMatch) {
  bool found;
  std::string text =
      replaceOnce(standardManifest(), "\"shape\": [\"Hq\", \"T\"]",
                  "\"shape\": [\"T\", \"Hq\"]", &found);
  ASSERT_TRUE(found);
  auto rt = create(makeArtifactDir(text));
  FakeBatch b({0, 64}, 2, 2);
  fake().reset();
  Status s = rt->forward(argsOf(b), nullptr);
  EXPECT_EQ(s.message, "buffer 'lse': the manifest's shape [T, Hq] is [64, 2] "
                       "but flamia_attention_args describes [2, 64] (lse is "
                       "[Hq, T])");
  EXPECT_EQ(fake().deviceCalls(), 0);
}

TEST_F(RuntimeOnFakeDriver, ClusterLaunchAttribute) {
  bool found;
  std::string text = replaceOnce(
      standardManifest(),
      "\"grid\": [\"NUM_SMS\", \"1\", \"1\"], \"block\": [384, 1, 1], "
      "\"cluster\": [1, 1, 1]",
      "\"grid\": [\"NUM_SMS\", \"1\", \"1\"], \"block\": [384, 1, 1], "
      "\"cluster\": [2, 1, 1]",
      &found);
  ASSERT_TRUE(found);
  auto rt = create(makeArtifactDir(text));
  FakeBatch b({0, 64}, 2, 2);
  ASSERT_TRUE(rt->forward(argsOf(b), nullptr).ok());
  EXPECT_EQ(fake().launch(1)->cluster[0], 2u);
  EXPECT_EQ(fake().launch(0)->cluster[0], 1u);
  fake().configure(1, 9, 0, 131, 232448); // odd SM count: grid not a multiple
  auto odd = create(makeArtifactDir(text));
  Status s = odd->forward(argsOf(b), nullptr);
  EXPECT_EQ(s.message, "kernel 'flamia_attention_fwd' grid x = 131 is not a "
                       "multiple of the cluster dimension 2");
}

TEST_F(RuntimeOnFakeDriver, TensorMapProblemsAreReportedBeforeLaunching) {
  // A view larger than its buffer: [T, Hq * D * 2] of q_deq.
  bool found;
  std::string text =
      replaceOnce(standardManifest(), "\"dims\": [\"T\", \"Hq * D\"]",
                  "\"dims\": [\"T\", \"Hq * D * 2\"]", &found);
  ASSERT_TRUE(found);
  auto rt = create(makeArtifactDir(text));
  FakeBatch b({0, 64}, 2, 2);
  fake().reset();
  Status s = rt->forward(argsOf(b), nullptr);
  EXPECT_EQ(s.message,
            "kernel 'flamia_attention_fwd' parameter 'tma_q' (tensor "
            "map of buffer 'q_deq'): the view [64, 512] of bf16 needs "
            "65536 bytes but the buffer has 32768");
  EXPECT_EQ(fake().calls("cuLaunchKernelEx"), 0);
}

TEST_F(RuntimeOnFakeDriver, DestroyReleasesEverything) {
  {
    auto rt = create(makeArtifactDir());
    FakeBatch b({0, 64}, 2, 2);
    ASSERT_TRUE(rt->forward(argsOf(b), nullptr).ok());
    fake().reset();
  }
  EXPECT_EQ(fake().allocatedBytes(), 0u);
  EXPECT_EQ(fake().calls("cuModuleUnload"), 2);
  EXPECT_EQ(fake().calls("cuEventDestroy_v2"), 1);
  EXPECT_EQ(fake().calls("cuDevicePrimaryCtxRelease_v2"), 1);
  EXPECT_EQ(fake().contextDepth(), 0);
}

//===--- creation errors --------------------------------------------------===//

TEST_F(RuntimeOnFakeDriver, NoDriver) {
  setenv("FLAMIA_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  Status s = createError(makeArtifactDir());
  EXPECT_EQ(s.code, ErrorCode::DriverUnavailable);
  EXPECT_CONTAINS(s.message, "CUDA driver not available: cannot load "
                             "/nonexistent/libcuda.so.1 (");
}

TEST_F(RuntimeOnFakeDriver, ManifestErrorsComeBeforeTheDriver) {
  setenv("FLAMIA_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  std::string dir = makeArtifactDir("{\"flamia_manifest_version\": 3}");
  Status s = createError(dir);
  EXPECT_EQ(s.code, ErrorCode::InvalidManifest);
  EXPECT_EQ(s.message, dir + "/manifest.json:1:29: flamia_manifest_version: "
                             "unsupported manifest version 3 (this runtime "
                             "reads version 2; compile the kernels again "
                             "with flamia-compile)");
}

TEST_F(RuntimeOnFakeDriver, NoDevice) {
  fake().setInitResult(CUDA_ERROR_NO_DEVICE);
  Status s = createError(makeArtifactDir());
  EXPECT_EQ(s.code, ErrorCode::DeviceUnavailable);
  EXPECT_EQ(s.message, "no usable CUDA device: cuInit failed: "
                       "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is "
                       "detected)");
  fake().setInitResult(CUDA_ERROR_STUB_LIBRARY);
  s = createError(makeArtifactDir());
  EXPECT_EQ(s.code, ErrorCode::DriverUnavailable);
  EXPECT_CONTAINS(s.message, "is the CUDA toolkit's stub library");
}

TEST_F(RuntimeOnFakeDriver, DeviceOrdinalAndArchitecture) {
  std::unique_ptr<AttentionRuntime> rt;
  Status s =
      AttentionRuntime::create(makeArtifactDir(), 1, RuntimeOptions(), rt);
  EXPECT_EQ(s.code, ErrorCode::DeviceUnavailable);
  EXPECT_EQ(s.message, "device ordinal 1 is out of range (1 CUDA device)");
  fake().configure(1, 10, 0, 148, 232448);
  s = createError(makeArtifactDir());
  EXPECT_EQ(s.code, ErrorCode::DeviceUnavailable);
  EXPECT_EQ(s.message, "device 0 (FLAMIA fake device): target sm_90a "
                       "(architecture-specific) runs only on compute "
                       "capability 9.0; the device is 10.0");
}

TEST_F(RuntimeOnFakeDriver, CubinProblems) {
  std::string dir = makeArtifactDir();
  writeFile(dir, "flamia_attention_fwd.cubin", "not a cubin");
  Status s = createError(dir);
  EXPECT_EQ(s.code, ErrorCode::InvalidArtifact);
  EXPECT_EQ(s.message, "loading cubin '" + dir +
                           "/flamia_attention_fwd.cubin' of kernel "
                           "'flamia_attention_fwd' failed: "
                           "CUDA_ERROR_INVALID_IMAGE (fake driver error) "
                           "(built for target sm_90a; does it match the "
                           "device and the driver?)");

  writeFile(dir, "flamia_attention_fwd.cubin",
            "FAKECUBIN\nkernel flamia_attention_bwd 8\n");
  s = createError(dir);
  EXPECT_EQ(s.message, "kernel symbol 'flamia_attention_fwd' not found in "
                       "cubin 'flamia_attention_fwd.cubin'");

  writeFile(dir, "flamia_attention_fwd.cubin",
            "FAKECUBIN\nkernel flamia_attention_fwd 128,8,8,8,4,8,4\n");
  s = createError(dir);
  EXPECT_EQ(s.message, "kernel 'flamia_attention_fwd' takes 7 parameters in "
                       "the cubin but the manifest lists 8");

  writeFile(dir, "flamia_attention_fwd.cubin",
            "FAKECUBIN\nkernel flamia_attention_fwd 128,8,8,8,8,8,4,4\n");
  s = createError(dir);
  EXPECT_EQ(s.message, "kernel 'flamia_attention_fwd' parameter 4 'num_items' "
                       "is i32 (4 bytes) in the manifest but 8 bytes in the "
                       "cubin");

  // Without cuFuncGetParamInfo the layout is not checked.
  fake().setParamInfoAvailable(0);
  std::unique_ptr<AttentionRuntime> rt;
  s = AttentionRuntime::create(dir, 0, RuntimeOptions(), rt);
  EXPECT_TRUE(s.ok()) << s.message;
  EXPECT_FALSE(rt->loadedKernel(1).paramLayoutChecked);
  rt.reset();
  fake().setParamInfoAvailable(1);

  writeFile(dir, "flamia_attention_fwd.cubin",
            "FAKECUBIN\nkernel flamia_attention_fwd 128,8,8,8,4,8,4,4 "
            "max_threads=256\n");
  s = createError(dir);
  EXPECT_EQ(s.message, "kernel 'flamia_attention_fwd' runs at most 256 threads "
                       "per block (32 registers per thread) but the manifest "
                       "launches 384");

  writeFile(dir, "flamia_attention_fwd.cubin",
            "FAKECUBIN\nkernel flamia_attention_fwd 128,8,8,8,4,8,4,4 "
            "static_smem=40000\n");
  s = createError(dir);
  EXPECT_EQ(s.message, "kernel 'flamia_attention_fwd' needs 200000 bytes of "
                       "dynamic + 40000 bytes of static shared memory, more "
                       "than the device's 232448 per block");
}

} // namespace
