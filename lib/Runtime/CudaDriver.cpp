//===- CudaDriver.cpp - The CUDA driver, loaded at run time ---------------===//

#include "flamia/Runtime/CudaDriver.h"

#include <cstdlib>
#include <dlfcn.h>

namespace flamia::runtime {

Status CudaDriver::load(std::shared_ptr<const CudaDriver> &out,
                        const std::string &path) {
  std::string library = path;
  if (library.empty()) {
    const char *env = getenv("FLAMIA_LIBCUDA");
    library = (env && *env) ? env : "libcuda.so.1";
  }
  void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    return Status::error(ErrorCode::DriverUnavailable,
                         "CUDA driver not available: cannot load " + library +
                             " (" + (why ? why : "unknown reason") + ")");
  }
  std::shared_ptr<CudaDriver> d(new CudaDriver());
  d->handle_ = handle;
  d->path_ = library;

  std::string missing;
  auto resolve = [&](auto &fn, const char *name, bool required) {
    void *sym = dlsym(handle, name);
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(sym);
    if (!sym && required && missing.empty())
      missing = name;
  };
  resolve(d->init, "cuInit", true);
  resolve(d->driverGetVersion, "cuDriverGetVersion", true);
  resolve(d->getErrorName, "cuGetErrorName", true);
  resolve(d->getErrorString, "cuGetErrorString", true);
  resolve(d->deviceGetCount, "cuDeviceGetCount", true);
  resolve(d->deviceGet, "cuDeviceGet", true);
  resolve(d->deviceGetName, "cuDeviceGetName", true);
  resolve(d->deviceGetAttribute, "cuDeviceGetAttribute", true);
  resolve(d->primaryCtxRetain, "cuDevicePrimaryCtxRetain", true);
  resolve(d->primaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", true);
  resolve(d->ctxPushCurrent, "cuCtxPushCurrent_v2", true);
  resolve(d->ctxPopCurrent, "cuCtxPopCurrent_v2", true);
  resolve(d->ctxSynchronize, "cuCtxSynchronize", true);
  resolve(d->memAlloc, "cuMemAlloc_v2", true);
  resolve(d->memFree, "cuMemFree_v2", true);
  resolve(d->memcpyHtoD, "cuMemcpyHtoD_v2", true);
  resolve(d->memcpyDtoH, "cuMemcpyDtoH_v2", true);
  resolve(d->memcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", true);
  resolve(d->memcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", true);
  resolve(d->memsetD8Async, "cuMemsetD8Async", true);
  resolve(d->memsetD32Async, "cuMemsetD32Async", true);
  resolve(d->pointerGetAttribute, "cuPointerGetAttribute", true);
  resolve(d->streamCreate, "cuStreamCreate", true);
  resolve(d->streamDestroy, "cuStreamDestroy_v2", true);
  resolve(d->streamSynchronize, "cuStreamSynchronize", true);
  resolve(d->streamWaitEvent, "cuStreamWaitEvent", true);
  resolve(d->eventCreate, "cuEventCreate", true);
  resolve(d->eventDestroy, "cuEventDestroy_v2", true);
  resolve(d->eventRecord, "cuEventRecord", true);
  resolve(d->eventSynchronize, "cuEventSynchronize", true);
  // cuEventElapsedTime_v2 (CUDA 12.8+) and cuEventElapsedTime have the same
  // signature.
  resolve(d->eventElapsedTime, "cuEventElapsedTime_v2", false);
  if (!d->eventElapsedTime)
    resolve(d->eventElapsedTime, "cuEventElapsedTime", true);
  resolve(d->moduleLoadData, "cuModuleLoadData", true);
  resolve(d->moduleUnload, "cuModuleUnload", true);
  resolve(d->moduleGetFunction, "cuModuleGetFunction", true);
  resolve(d->funcGetAttribute, "cuFuncGetAttribute", true);
  resolve(d->funcSetAttribute, "cuFuncSetAttribute", true);
  resolve(d->launchKernelEx, "cuLaunchKernelEx", true);
  resolve(d->tensorMapEncodeTiled, "cuTensorMapEncodeTiled", true);
  resolve(d->funcGetParamInfo, "cuFuncGetParamInfo", false);
  resolve(d->streamIsCapturing, "cuStreamIsCapturing", false);
  if (!missing.empty())
    return Status::error(ErrorCode::DriverUnavailable,
                         "CUDA driver not available: " + library +
                             " lacks the entry point " + missing +
                             " (driver too old?)");
  out = std::move(d);
  return Status::success();
}

bool CudaDriver::capturing(CUstream stream) const {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  return streamIsCapturing && streamIsCapturing(stream, &status) == CUDA_SUCCESS &&
         status != CU_STREAM_CAPTURE_STATUS_NONE;
}

CudaDriver::~CudaDriver() {
  // The library stays loaded: other runtimes (and the CUDA runtime, which
  // shares the driver) may still use it, and unloading a driver at exit is a
  // known source of crashes. dlopen's reference count keeps it cheap.
  (void)handle_;
}

std::string CudaDriver::errorString(CUresult result) const {
  const char *name = nullptr, *text = nullptr;
  if (getErrorName)
    getErrorName(result, &name);
  if (getErrorString)
    getErrorString(result, &text);
  std::string out = name ? name : "CUresult " + std::to_string(result);
  if (text)
    out += std::string(" (") + text + ")";
  return out;
}

Status CudaDriver::check(CUresult result, const std::string &what) const {
  if (result == CUDA_SUCCESS)
    return Status::success();
  return Status::error(result == CUDA_ERROR_OUT_OF_MEMORY
                           ? ErrorCode::OutOfMemory
                           : ErrorCode::CudaError,
                       what + " failed: " + errorString(result));
}

ScopedContext::ScopedContext(const CudaDriver &driver, CUcontext context)
    : driver_(driver) {
  status_ = driver_.check(driver_.ctxPushCurrent(context), "cuCtxPushCurrent");
}

ScopedContext::~ScopedContext() {
  if (status_.ok()) {
    CUcontext popped = nullptr;
    driver_.ctxPopCurrent(&popped);
  }
}

} // namespace flamia::runtime
