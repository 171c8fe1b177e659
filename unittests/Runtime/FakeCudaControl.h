//===- FakeCudaControl.h - Using the fake driver from tests -----*- C++ -*-===//

#ifndef FLAMIA_UNITTESTS_RUNTIME_FAKECUDACONTROL_H
#define FLAMIA_UNITTESTS_RUNTIME_FAKECUDACONTROL_H

#include "FakeCuda.h"

#include <cuda.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <vector>

namespace flamia::runtime::test {

/// The fake driver's control functions, resolved from the same handle the
/// runtime gets (dlopen of the same path returns the same library).
struct FakeCuda {
  void *handle = nullptr;
  decltype(&fake_cuda_reset) reset = nullptr;
  decltype(&fake_cuda_configure) configure = nullptr;
  decltype(&fake_cuda_set_init_result) setInitResult = nullptr;
  decltype(&fake_cuda_set_param_info_available) setParamInfoAvailable = nullptr;
  decltype(&fake_cuda_calls) calls = nullptr;
  decltype(&fake_cuda_device_calls) deviceCalls = nullptr;
  decltype(&fake_cuda_num_launches) numLaunches = nullptr;
  decltype(&fake_cuda_launch) launch = nullptr;
  decltype(&fake_cuda_num_encodes) numEncodes = nullptr;
  decltype(&fake_cuda_encode) encode = nullptr;
  decltype(&fake_cuda_last_func_attribute) lastFuncAttribute = nullptr;
  decltype(&fake_cuda_allocated_bytes) allocatedBytes = nullptr;
  decltype(&fake_cuda_context_depth) contextDepth = nullptr;
  decltype(&fake_cuda_trace) trace = nullptr;
  decltype(&fake_cuda_set_kernel_impl) setKernelImpl = nullptr;
  decltype(&fake_cuda_register) registerMemory = nullptr;
  decltype(&fake_cuda_set_capturing) setCapturing = nullptr;
  decltype(&::cuMemAlloc_v2) memAlloc = nullptr;
  decltype(&::cuMemFree_v2) memFree = nullptr;

  static FakeCuda &get() {
    static FakeCuda f = load();
    return f;
  }

  /// "Device" memory: host memory the fake knows; returns its address.
  CUdeviceptr alloc(size_t bytes) {
    CUdeviceptr p = 0;
    memAlloc(&p, bytes);
    return p;
  }
  template <typename T> T *host(CUdeviceptr p) {
    return reinterpret_cast<T *>(static_cast<uintptr_t>(p));
  }

  /// Resets counters and the device configuration (H200-like: 9.0, 132 SMs).
  void resetAll() {
    reset();
    configure(1, 9, 0, 132, 232448);
    setInitResult(0);
    setParamInfoAvailable(1);
  }

private:
  static FakeCuda load() {
    FakeCuda f;
    f.handle = dlopen(FLAMIA_FAKE_CUDA_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!f.handle)
      abort();
    auto get = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(f.handle, name));
      if (!fn)
        abort();
    };
    get(f.reset, "fake_cuda_reset");
    get(f.configure, "fake_cuda_configure");
    get(f.setInitResult, "fake_cuda_set_init_result");
    get(f.setParamInfoAvailable, "fake_cuda_set_param_info_available");
    get(f.calls, "fake_cuda_calls");
    get(f.deviceCalls, "fake_cuda_device_calls");
    get(f.numLaunches, "fake_cuda_num_launches");
    get(f.launch, "fake_cuda_launch");
    get(f.numEncodes, "fake_cuda_num_encodes");
    get(f.encode, "fake_cuda_encode");
    get(f.lastFuncAttribute, "fake_cuda_last_func_attribute");
    get(f.allocatedBytes, "fake_cuda_allocated_bytes");
    get(f.contextDepth, "fake_cuda_context_depth");
    get(f.trace, "fake_cuda_trace");
    get(f.setKernelImpl, "fake_cuda_set_kernel_impl");
    get(f.registerMemory, "fake_cuda_register");
    get(f.setCapturing, "fake_cuda_set_capturing");
    get(f.memAlloc, "cuMemAlloc_v2");
    get(f.memFree, "cuMemFree_v2");
    return f;
  }
};

/// Device tensors of one batch on the fake driver.
struct FakeBatch {
  int64_t T = 0, Hq = 0, Hkv = 0, D = 128;
  std::vector<int32_t> cu;
  CUdeviceptr q = 0, k = 0, v = 0, cuSeqlens = 0, o = 0, lse = 0;

  FakeBatch(std::vector<int32_t> cuSeqlens_, int64_t hq, int64_t hkv,
            int64_t d = 128)
      : T(cuSeqlens_.back()), Hq(hq), Hkv(hkv), D(d),
        cu(std::move(cuSeqlens_)) {
    FakeCuda &f = FakeCuda::get();
    auto bytes = [](int64_t n) { return static_cast<size_t>(n > 0 ? n : 1); };
    q = f.alloc(bytes(T * Hq * D * 2));
    k = f.alloc(bytes(T * Hkv * D * 2));
    v = f.alloc(bytes(T * Hkv * D * 2));
    o = f.alloc(bytes(T * Hq * D * 2));
    lse = f.alloc(bytes(T * Hq * 4));
    cuSeqlens = f.alloc(cu.size() * 4);
    memcpy(f.host<int32_t>(cuSeqlens), cu.data(), cu.size() * 4);
  }
  ~FakeBatch() {
    FakeCuda &f = FakeCuda::get();
    for (CUdeviceptr p : {q, k, v, o, lse, cuSeqlens})
      f.memFree(p);
  }
  FakeBatch(const FakeBatch &) = delete;
  FakeBatch &operator=(const FakeBatch &) = delete;
};

} // namespace flamia::runtime::test

#endif // FLAMIA_UNITTESTS_RUNTIME_FAKECUDACONTROL_H
