//===- CAPITest.cpp - The C API -------------------------------------------===//

#include "flamia/CAPI/Runtime.h"

#include "FakeCudaControl.h"
#include "TestArtifacts.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <thread>

using namespace flamia::runtime::test;

namespace {

#define EXPECT_CONTAINS(haystack, needle)                                      \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos)             \
      << "'" << (haystack) << "' lacks '" << (needle) << "'"

TEST(CAPI, StatusStringsAndVersion) {
  EXPECT_EQ(flamia_runtime_abi_version(), FLAMIA_RUNTIME_ABI_VERSION);
  EXPECT_STREQ(flamia_status_string(FLAMIA_STATUS_OK), "success");
  EXPECT_STREQ(flamia_status_string(FLAMIA_STATUS_DRIVER_UNAVAILABLE),
               "CUDA driver not available");
  EXPECT_STREQ(flamia_status_string(FLAMIA_STATUS_INVALID_MANIFEST),
               "invalid manifest");
  EXPECT_STREQ(flamia_status_string(static_cast<flamia_status>(42)),
               "unknown status");
  EXPECT_STREQ(flamia_status_string(static_cast<flamia_status>(-1)),
               "unknown status");
}

TEST(CAPI, CreateWithoutADriverSaysSo) {
  setenv("FLAMIA_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  flamia_runtime *rt = reinterpret_cast<flamia_runtime *>(0x1);
  char err[512];
  flamia_status s =
      flamia_runtime_create(makeArtifactDir().c_str(), 0, &rt, err, sizeof err);
  EXPECT_EQ(s, FLAMIA_STATUS_DRIVER_UNAVAILABLE);
  EXPECT_EQ(rt, nullptr);
  EXPECT_EQ(std::string(err).rfind("CUDA driver not available: cannot load "
                                   "/nonexistent/libcuda.so.1",
                                   0),
            0u)
      << err;
  EXPECT_STREQ(flamia_last_error(), err);
  // A short buffer gets a truncated, terminated message.
  char tiny[8];
  s = flamia_runtime_create(makeArtifactDir().c_str(), 0, &rt, tiny,
                            sizeof tiny);
  EXPECT_STREQ(tiny, "CUDA dr");
  unsetenv("FLAMIA_LIBCUDA");
}

TEST(CAPI, CreateWithTheDefaultLibraryNameWhenNoneIsInstalled) {
  // On a machine without the driver (CI) the default libcuda.so.1 is absent;
  // on a GPU machine creation may succeed. Either way: no crash, a clear
  // status.
  unsetenv("FLAMIA_LIBCUDA");
  flamia_runtime *rt = nullptr;
  char err[512] = "";
  flamia_status s =
      flamia_runtime_create(makeArtifactDir().c_str(), 0, &rt, err, sizeof err);
  if (s == FLAMIA_STATUS_DRIVER_UNAVAILABLE)
    EXPECT_EQ(std::string(err).rfind("CUDA driver not available", 0), 0u)
        << err;
  else
    EXPECT_NE(s, FLAMIA_STATUS_INTERNAL) << err;
  flamia_runtime_destroy(rt);
}

TEST(CAPI, NullArgumentsAreErrors) {
  char err[256];
  EXPECT_EQ(flamia_runtime_create("x", 0, nullptr, err, sizeof err),
            FLAMIA_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(err, "out is NULL");
  flamia_runtime *rt;
  EXPECT_EQ(flamia_runtime_create(nullptr, 0, &rt, nullptr, 0),
            FLAMIA_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(flamia_last_error(), "artifact_dir is NULL");
  flamia_attention_args args;
  flamia_attention_args_init(&args);
  EXPECT_EQ(flamia_attention_forward(nullptr, &args, nullptr),
            FLAMIA_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(flamia_last_error(), "runtime is NULL");
  EXPECT_EQ(flamia_runtime_launch(nullptr, 0, 1, nullptr),
            FLAMIA_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(flamia_runtime_num_kernels(nullptr), 0u);
  EXPECT_EQ(flamia_runtime_kernel_name(nullptr, 0), nullptr);
  EXPECT_STREQ(flamia_runtime_target(nullptr), "");
  flamia_runtime_destroy(nullptr); // no-op
  flamia_runtime_options_init(nullptr);
  flamia_attention_args_init(nullptr);
}

TEST(CAPI, ManifestErrorsNeedNoDriver) {
  setenv("FLAMIA_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  std::string dir = makeArtifactDir(
      replaceOnce(standardManifest(), "\"kind\": \"ptr\", \"buffer\": \"k\"",
                  "\"kind\": \"pointer\", \"buffer\": \"k\""));
  flamia_runtime *rt;
  char err[512];
  EXPECT_EQ(flamia_runtime_create(dir.c_str(), 0, &rt, err, sizeof err),
            FLAMIA_STATUS_INVALID_MANIFEST);
  EXPECT_EQ(std::string(err), dir + "/manifest.json:29:31: "
                                    "kernels[0].params[1].kind: unknown "
                                    "parameter kind 'pointer' (expected one "
                                    "of: ptr, i32, f32, tensormap)");
  EXPECT_EQ(flamia_runtime_create("/nonexistent", 0, &rt, err, sizeof err),
            FLAMIA_STATUS_INVALID_ARTIFACT);
  unsetenv("FLAMIA_LIBCUDA");
}

TEST(CAPI, LastErrorIsPerThread) {
  flamia_runtime *rt;
  flamia_runtime_create(nullptr, 0, &rt, nullptr, 0);
  std::string other;
  std::thread t([&] { other = flamia_last_error(); });
  t.join();
  EXPECT_EQ(other, "");
  EXPECT_STREQ(flamia_last_error(), "artifact_dir is NULL");
}

class CAPIOnFakeDriver : public ::testing::Test {
protected:
  void SetUp() override {
    setenv("FLAMIA_LIBCUDA", FLAMIA_FAKE_CUDA_PATH, 1);
    FakeCuda::get().resetAll();
  }
  void TearDown() override { unsetenv("FLAMIA_LIBCUDA"); }
};

flamia_attention_args argsOf(const FakeBatch &b) {
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
  return a;
}

TEST_F(CAPIOnFakeDriver, ForwardAndBuffers) {
  FakeCuda &fake = FakeCuda::get();
  flamia_runtime *rt = nullptr;
  char err[512];
  ASSERT_EQ(
      flamia_runtime_create(makeArtifactDir().c_str(), 0, &rt, err, sizeof err),
      FLAMIA_STATUS_OK)
      << err;
  EXPECT_STREQ(err, "");
  EXPECT_STREQ(flamia_runtime_target(rt), "sm_90a");
  EXPECT_STREQ(flamia_runtime_recipe(rt), "mxfp8");
  ASSERT_EQ(flamia_runtime_num_kernels(rt), 2u);
  EXPECT_STREQ(flamia_runtime_kernel_name(rt, 1), "flamia_attention_fwd");
  EXPECT_EQ(flamia_runtime_kernel_name(rt, 2), nullptr);
  ASSERT_EQ(flamia_runtime_num_buffers(rt), 13u);
  EXPECT_STREQ(flamia_runtime_buffer_name(rt, 6), "q_pt");

  flamia_device_info dev;
  memset(&dev, 0, sizeof dev);
  dev.struct_size = sizeof dev;
  ASSERT_EQ(flamia_runtime_get_device_info(rt, &dev), FLAMIA_STATUS_OK);
  EXPECT_EQ(dev.num_sms, 132);
  EXPECT_EQ(dev.compute_major, 9);
  EXPECT_STREQ(dev.name, "FLAMIA fake device");

  flamia_buffer_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  EXPECT_EQ(flamia_runtime_get_buffer(rt, "q_pt", &info),
            FLAMIA_STATUS_NOT_FOUND); // nothing prepared yet

  FakeBatch b({0, 33, 100}, 4, 4);
  flamia_attention_args a = argsOf(b);
  ASSERT_EQ(flamia_attention_forward(rt, &a, nullptr), FLAMIA_STATUS_OK)
      << flamia_last_error();
  EXPECT_EQ(fake.numLaunches(), 2);
  EXPECT_FLOAT_EQ(flamia_runtime_softmax_scale(rt), 0.08838835f);

  ASSERT_EQ(flamia_runtime_get_buffer(rt, "q_pt_scales", &info),
            FLAMIA_STATUS_OK);
  EXPECT_STREQ(info.name, "q_pt_scales");
  EXPECT_EQ(info.role, FLAMIA_BUFFER_WORKSPACE);
  EXPECT_EQ(info.dtype, FLAMIA_DTYPE_U8);
  EXPECT_EQ(info.rank, 3);
  EXPECT_EQ(info.shape[0], 100);
  EXPECT_EQ(info.shape[1], 4);
  EXPECT_EQ(info.shape[2], 4);
  EXPECT_EQ(info.shape[3], 0);
  EXPECT_EQ(info.bytes, 1600u);
  EXPECT_NE(info.device_ptr, nullptr);
  ASSERT_EQ(flamia_runtime_get_buffer(rt, "k_tb_scales", &info),
            FLAMIA_STATUS_OK);
  EXPECT_EQ(info.shape[0], 2 + 3); // NB = ceil(33/32) + ceil(67/32)
  EXPECT_EQ(flamia_runtime_get_buffer(rt, "nope", &info),
            FLAMIA_STATUS_NOT_FOUND);
  EXPECT_CONTAINS(flamia_last_error(), "no buffer 'nope' in the manifest");

  // Prepare + launch of one kernel at a time.
  fake.reset();
  ASSERT_EQ(flamia_attention_prepare(rt, &a, nullptr), FLAMIA_STATUS_OK);
  ASSERT_EQ(flamia_runtime_launch(rt, 1, 1, nullptr), FLAMIA_STATUS_OK);
  ASSERT_EQ(fake.numLaunches(), 1);
  EXPECT_STREQ(fake.launch(0)->kernel, "flamia_attention_fwd");
  EXPECT_EQ(flamia_runtime_launch(rt, 2, 1, nullptr),
            FLAMIA_STATUS_INVALID_ARGUMENT);

  flamia_runtime_destroy(rt);
  EXPECT_EQ(fake.contextDepth(), 0);
}

TEST_F(CAPIOnFakeDriver, InvalidInputsAreReportedBeforeAnyDeviceCall) {
  FakeCuda &fake = FakeCuda::get();
  flamia_runtime *rt = nullptr;
  ASSERT_EQ(
      flamia_runtime_create(makeArtifactDir().c_str(), 0, &rt, nullptr, 0),
      FLAMIA_STATUS_OK);
  FakeBatch b({0, 33, 100}, 4, 2);
  flamia_attention_args a = argsOf(b);
  fake.reset();
  a.num_kv_heads = 3;
  EXPECT_EQ(flamia_attention_forward(rt, &a, nullptr),
            FLAMIA_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(flamia_last_error(), "Hq (4) is not a multiple of Hkv (3)");
  a = argsOf(b);
  a.head_dim = 64;
  EXPECT_EQ(flamia_attention_forward(rt, &a, nullptr),
            FLAMIA_STATUS_INVALID_ARGUMENT);
  a = argsOf(b);
  a.struct_size = sizeof a - 4; // no version's size
  EXPECT_EQ(flamia_attention_forward(rt, &a, nullptr),
            FLAMIA_STATUS_INVALID_ARGUMENT);
  EXPECT_CONTAINS(flamia_last_error(), "flamia_attention_args.struct_size is ");
  EXPECT_EQ(flamia_attention_forward(rt, nullptr, nullptr),
            FLAMIA_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(flamia_last_error(), "args is NULL");
  EXPECT_EQ(fake.deviceCalls(), 0) << fake.trace();

  // A larger struct from a newer caller: accepted when the unknown tail is
  // zero, rejected otherwise.
  struct Newer {
    flamia_attention_args base;
    int64_t future;
  } newer;
  memset(&newer, 0, sizeof newer);
  newer.base = argsOf(b);
  newer.base.struct_size = sizeof newer;
  EXPECT_EQ(flamia_attention_forward(rt, &newer.base, nullptr),
            FLAMIA_STATUS_OK)
      << flamia_last_error();
  newer.future = 1;
  EXPECT_EQ(flamia_attention_forward(rt, &newer.base, nullptr),
            FLAMIA_STATUS_INVALID_ARGUMENT);
  EXPECT_CONTAINS(flamia_last_error(),
                  "has fields this library (ABI version 1) "
                  "does not know");

  // Bad cu_seqlens on the device: read, rejected, nothing launched.
  int32_t *cu = fake.host<int32_t>(b.cuSeqlens);
  cu[1] = 200;
  fake.reset();
  a = argsOf(b);
  EXPECT_EQ(flamia_attention_forward(rt, &a, nullptr),
            FLAMIA_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(flamia_last_error(), "cu_seqlens[2] = 100 is less than "
                                    "cu_seqlens[1] = 200 (it must be "
                                    "non-decreasing)");
  EXPECT_EQ(fake.calls("cuLaunchKernelEx"), 0);
  flamia_runtime_destroy(rt);
}

TEST_F(CAPIOnFakeDriver, Options) {
  flamia_runtime_options options;
  flamia_runtime_options_init(&options);
  EXPECT_EQ(options.check_device_pointers, 1);
  EXPECT_EQ(options.zero_workspace, 0);
  options.zero_workspace = 1;
  flamia_runtime *rt = nullptr;
  ASSERT_EQ(flamia_runtime_create_with_options(makeArtifactDir().c_str(), 0,
                                               &options, &rt, nullptr, 0),
            FLAMIA_STATUS_OK);
  FakeBatch b({0, 64}, 2, 2);
  flamia_attention_args a = argsOf(b);
  ASSERT_EQ(flamia_attention_forward(rt, &a, nullptr), FLAMIA_STATUS_OK);
  EXPECT_EQ(FakeCuda::get().calls("cuMemsetD8Async"), 1);
  flamia_runtime_destroy(rt);

  options.struct_size = 4;
  char err[256];
  EXPECT_EQ(flamia_runtime_create_with_options(makeArtifactDir().c_str(), 0,
                                               &options, &rt, err, sizeof err),
            FLAMIA_STATUS_INVALID_ARGUMENT);
  EXPECT_CONTAINS(err, "flamia_runtime_options.struct_size is 4");

  // Version 1 (before schedule_order) is accepted; the order then reads 0.
  flamia_runtime_options_init(&options);
  EXPECT_EQ(options.schedule_order, 0);
  options.schedule_order = 7;
  options.struct_size = FLAMIA_RUNTIME_OPTIONS_SIZE_V1;
  ASSERT_EQ(flamia_runtime_create_with_options(makeArtifactDir().c_str(), 0,
                                               &options, &rt, err, sizeof err),
            FLAMIA_STATUS_OK)
      << err;
  flamia_runtime_destroy(rt);
  options.struct_size = sizeof options;
  EXPECT_EQ(flamia_runtime_create_with_options(makeArtifactDir().c_str(), 0,
                                               &options, &rt, err, sizeof err),
            FLAMIA_STATUS_INVALID_ARGUMENT);
  EXPECT_CONTAINS(err, "flamia_runtime_options.schedule_order is 7");
  options.schedule_order = FLAMIA_SCHEDULE_ORDER_L2_SECTIONS;
  ASSERT_EQ(flamia_runtime_create_with_options(makeArtifactDir().c_str(), 0,
                                               &options, &rt, err, sizeof err),
            FLAMIA_STATUS_OK)
      << err;
  ASSERT_EQ(flamia_attention_forward(rt, &a, nullptr), FLAMIA_STATUS_OK);
  flamia_runtime_destroy(rt);
}

TEST(CAPI, SharedLibraryExportsTheCApiOnly) {
  void *so = dlopen(FLAMIA_RUNTIME_SO_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(so, nullptr) << dlerror();
  auto version =
      reinterpret_cast<int (*)()>(dlsym(so, "flamia_runtime_abi_version"));
  auto create = reinterpret_cast<decltype(&flamia_runtime_create)>(
      dlsym(so, "flamia_runtime_create"));
  ASSERT_NE(version, nullptr);
  ASSERT_NE(create, nullptr);
  EXPECT_EQ(version(), FLAMIA_RUNTIME_ABI_VERSION);
  // (That nothing else is exported: test/Runtime/capi-shared-library.test.)
  setenv("FLAMIA_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  flamia_runtime *rt = nullptr;
  char err[512];
  EXPECT_EQ(create(makeArtifactDir().c_str(), 0, &rt, err, sizeof err),
            FLAMIA_STATUS_DRIVER_UNAVAILABLE);
  EXPECT_EQ(std::string(err).rfind("CUDA driver not available", 0), 0u) << err;
  unsetenv("FLAMIA_LIBCUDA");
  dlclose(so);
}

} // namespace
