//===- CudaDriver.h - The CUDA driver, loaded at run time -------*- C++ -*-===//
//
// Every binary of the runtime links and starts without a GPU or a driver: the
// driver library is opened with dlopen and its entry points resolved with
// dlsym, by their versioned ABI names (cuMemAlloc_v2, ...; what cuda.h's
// macros would have called). cuda.h is included for the declarations only;
// each pointer has exactly the type of the function it points to.
//
// The library is "libcuda.so.1" unless the environment variable
// FLAMIA_LIBCUDA names another file (a driver outside the loader's path, or
// the fake driver the unit tests use).
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_RUNTIME_CUDADRIVER_H
#define FLAMIA_RUNTIME_CUDADRIVER_H

#include "flamia/Runtime/Status.h"

#include <cuda.h>

#include <memory>
#include <string>

namespace flamia::runtime {

class CudaDriver {
public:
  /// Opens the driver library (FLAMIA_LIBCUDA or libcuda.so.1, or `path` if
  /// not empty) and resolves every entry point. Does not call cuInit. Errors:
  /// DriverUnavailable, "CUDA driver not available: cannot load libcuda.so.1
  /// (<dlerror>)" or "... lacks the entry point cuLaunchKernelEx (driver too
  /// old?)".
  static Status load(std::shared_ptr<const CudaDriver> &out,
                     const std::string &path = "");

  ~CudaDriver();
  CudaDriver(const CudaDriver &) = delete;
  CudaDriver &operator=(const CudaDriver &) = delete;

  /// The file that was opened.
  const std::string &libraryPath() const { return path_; }

  /// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
  std::string errorString(CUresult result) const;
  /// Success, or CudaError (OutOfMemory for CUDA_ERROR_OUT_OF_MEMORY) with
  /// "<what> failed: <errorString>".
  Status check(CUresult result, const std::string &what) const;

  // Required entry points.
  decltype(&::cuInit) init = nullptr;
  decltype(&::cuDriverGetVersion) driverGetVersion = nullptr;
  decltype(&::cuGetErrorName) getErrorName = nullptr;
  decltype(&::cuGetErrorString) getErrorString = nullptr;
  decltype(&::cuDeviceGetCount) deviceGetCount = nullptr;
  decltype(&::cuDeviceGet) deviceGet = nullptr;
  decltype(&::cuDeviceGetName) deviceGetName = nullptr;
  decltype(&::cuDeviceGetAttribute) deviceGetAttribute = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) primaryCtxRetain = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease_v2) primaryCtxRelease = nullptr;
  decltype(&::cuCtxPushCurrent_v2) ctxPushCurrent = nullptr;
  decltype(&::cuCtxPopCurrent_v2) ctxPopCurrent = nullptr;
  decltype(&::cuCtxSynchronize) ctxSynchronize = nullptr;
  decltype(&::cuMemAlloc_v2) memAlloc = nullptr;
  decltype(&::cuMemFree_v2) memFree = nullptr;
  decltype(&::cuMemcpyHtoD_v2) memcpyHtoD = nullptr;
  decltype(&::cuMemcpyDtoH_v2) memcpyDtoH = nullptr;
  decltype(&::cuMemcpyHtoDAsync_v2) memcpyHtoDAsync = nullptr;
  decltype(&::cuMemcpyDtoHAsync_v2) memcpyDtoHAsync = nullptr;
  decltype(&::cuMemsetD8Async) memsetD8Async = nullptr;
  decltype(&::cuMemsetD32Async) memsetD32Async = nullptr;
  decltype(&::cuPointerGetAttribute) pointerGetAttribute = nullptr;
  decltype(&::cuStreamCreate) streamCreate = nullptr;
  decltype(&::cuStreamDestroy_v2) streamDestroy = nullptr;
  decltype(&::cuStreamSynchronize) streamSynchronize = nullptr;
  decltype(&::cuStreamWaitEvent) streamWaitEvent = nullptr;
  decltype(&::cuEventCreate) eventCreate = nullptr;
  decltype(&::cuEventDestroy_v2) eventDestroy = nullptr;
  decltype(&::cuEventRecord) eventRecord = nullptr;
  decltype(&::cuEventSynchronize) eventSynchronize = nullptr;
  decltype(&::cuEventElapsedTime_v2) eventElapsedTime = nullptr; // or v1
  decltype(&::cuModuleLoadData) moduleLoadData = nullptr;
  decltype(&::cuModuleUnload) moduleUnload = nullptr;
  decltype(&::cuModuleGetFunction) moduleGetFunction = nullptr;
  decltype(&::cuFuncGetAttribute) funcGetAttribute = nullptr;
  decltype(&::cuFuncSetAttribute) funcSetAttribute = nullptr;
  decltype(&::cuLaunchKernelEx) launchKernelEx = nullptr;
  decltype(&::cuTensorMapEncodeTiled) tensorMapEncodeTiled = nullptr;
  // Optional (null when the driver lacks it): parameter layout of a kernel
  // (CUDA 12.4+), used to check the manifest's parameters against the cubin.
  decltype(&::cuFuncGetParamInfo) funcGetParamInfo = nullptr;
  // Optional: whether a stream is capturing a CUDA graph (null: never).
  decltype(&::cuStreamIsCapturing) streamIsCapturing = nullptr;

  /// Whether `stream` is capturing a CUDA graph (false when the driver
  /// cannot say or the query fails).
  bool capturing(CUstream stream) const;

private:
  CudaDriver() = default;
  void *handle_ = nullptr;
  std::string path_;
};

/// Pushes `context` on construction and pops it on destruction (if the push
/// succeeded), so that every runtime call runs in the runtime's context and
/// leaves the caller's current context as it was.
class ScopedContext {
public:
  ScopedContext(const CudaDriver &driver, CUcontext context);
  ~ScopedContext();
  ScopedContext(const ScopedContext &) = delete;
  ScopedContext &operator=(const ScopedContext &) = delete;
  const Status &status() const { return status_; }

private:
  const CudaDriver &driver_;
  Status status_;
};

} // namespace flamia::runtime

#endif // FLAMIA_RUNTIME_CUDADRIVER_H
