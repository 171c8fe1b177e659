//===- FakeCuda.h - Control interface of the fake CUDA driver ---*- C++ -*-===//
//
// libflamia_fake_cuda.so implements the CUDA driver entry points the runtime
// resolves, on host memory, so that the runtime's device path (pointer
// checks, cu_seqlens copy, schedule upload, parameter packing, tensor map
// encoding, launches) runs in CI without a GPU. Tests point FLAMIA_LIBCUDA at
// it and reach these control functions with dlsym on the same handle.
//
// "Device" memory is host memory from cuMemAlloc (tracked, so that
// cuPointerGetAttribute answers like the driver); launches are recorded, not
// executed (unless a host implementation is registered for the kernel name).
// A "cubin" is a text file:
//
//   FAKECUBIN
//   kernel <name> <param sizes, comma-separated, or -> [static_smem=N]
//          [max_threads=N]
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_UNITTESTS_RUNTIME_FAKECUDA_H
#define FLAMIA_UNITTESTS_RUNTIME_FAKECUDA_H

#include <cstddef>
#include <cstdint>

struct FakeLaunch {
  char kernel[64];
  unsigned grid[3], block[3], cluster[3];
  unsigned sharedMemBytes;
  int numParams;
  size_t paramSizes[32];
  unsigned char paramBytes[32][128];
  void *stream;
};

struct FakeTensorMapEncode {
  int dataType;
  unsigned rank;
  uint64_t address;
  uint64_t globalDim[2];
  uint64_t globalStride;
  unsigned boxDim[2];
  unsigned elementStrides[2];
  int interleave, swizzle, l2Promotion, oobFill;
};

/// A host implementation of a kernel: gets the launch and the parameter
/// pointers (what cuLaunchKernelEx received).
typedef void (*FakeKernelImpl)(const FakeLaunch *launch, void **params);

extern "C" {
void fake_cuda_reset(void);
/// Device properties: compute capability, SM count, opt-in shared memory.
void fake_cuda_configure(int devices, int major, int minor, int sms,
                         int smemOptin);
/// cuInit returns this (0 = success).
void fake_cuda_set_init_result(int result);
/// Hide cuFuncGetParamInfo (as an old driver would).
void fake_cuda_set_param_info_available(int available);
/// Calls of an entry point (by its ABI name, e.g. "cuMemAlloc_v2") since the
/// last reset, or of all of them (name NULL).
int fake_cuda_calls(const char *name);
/// Calls that touch the device (memory, copies, launches, syncs, events,
/// pointer queries), as opposed to pure host queries (tensor map encoding,
/// error strings).
int fake_cuda_device_calls(void);
int fake_cuda_num_launches(void);
const FakeLaunch *fake_cuda_launch(int index);
int fake_cuda_num_encodes(void);
const FakeTensorMapEncode *fake_cuda_encode(int index);
/// cuFuncSetAttribute calls: attribute, value of the last call.
int fake_cuda_last_func_attribute(int *attribute, int *value);
/// Bytes currently allocated with cuMemAlloc.
size_t fake_cuda_allocated_bytes(void);
/// Depth of the context stack (0 when balanced).
int fake_cuda_context_depth(void);
/// Memory registered as device memory without cuMemAlloc (e.g. a test's
/// buffer): the pointer queries then accept it.
void fake_cuda_register(void *ptr, size_t bytes);
void fake_cuda_set_kernel_impl(const char *name, FakeKernelImpl impl);
/// The entry points called since the last reset, in order, separated by
/// spaces (ABI names without the "cu" prefix and version suffix, e.g.
/// "MemsetD32Async LaunchKernelEx").
const char *fake_cuda_trace(void);
/// While set, every stream is capturing a CUDA graph (cuStreamIsCapturing
/// says so) and the calls a capture forbids fail with
/// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, as the real driver's do:
/// synchronizations, copies between host and device, allocations and frees,
/// waits on events recorded outside the capture.
void fake_cuda_set_capturing(int capturing);
}

#endif // FLAMIA_UNITTESTS_RUNTIME_FAKECUDA_H
