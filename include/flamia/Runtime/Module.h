//===- Module.h - Loading the manifest's cubins -----------------*- C++ -*-===//
//
// Loads every cubin the manifest names (each file once, however many kernels
// it holds), looks up each kernel symbol and checks the kernel against the
// manifest and the device before anything is launched:
//   - the symbol exists in its cubin;
//   - the block fits the kernel's maximum threads per block (which depends on
//     its register count);
//   - static + dynamic shared memory fit the device's opt-in maximum; above
//     48 KiB of dynamic shared memory, cuFuncSetAttribute raises the kernel's
//     limit (MAX_DYNAMIC_SHARED_SIZE_BYTES); clusters above 8 CTAs set
//     NON_PORTABLE_CLUSTER_SIZE_ALLOWED;
//   - when the driver has cuFuncGetParamInfo (CUDA 12.4+), the number of
//     parameters and each one's size agree with the manifest (ptr 8 bytes,
//     i32 and f32 4, tensormap 128).
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_RUNTIME_MODULE_H
#define FLAMIA_RUNTIME_MODULE_H

#include "flamia/Runtime/CudaDriver.h"
#include "flamia/Runtime/Manifest.h"
#include "flamia/Runtime/Status.h"

#include <string>
#include <vector>

namespace flamia::runtime {

/// What the device allows (queried once at runtime creation).
struct DeviceLimits {
  int maxSharedMemoryOptin = 0; // per block, bytes
  int maxThreadsPerBlock = 1024;
};

/// A loaded kernel and the attributes read from it.
struct LoadedKernel {
  CUfunction function = nullptr;
  int staticSharedBytes = 0;
  int maxThreadsPerBlock = 0;
  int registers = 0;
  int localBytes = 0;
  bool paramLayoutChecked = false; // cuFuncGetParamInfo was available
};

/// The size in bytes of a parameter of `kind` in the kernel signature.
size_t paramSizeBytes(ParamKind kind);

class ModuleSet {
public:
  ModuleSet() = default;
  ModuleSet(const ModuleSet &) = delete;
  ModuleSet &operator=(const ModuleSet &) = delete;

  /// Loads and checks everything, in the current context. On failure the
  /// modules loaded so far stay owned (unload releases them).
  Status load(const CudaDriver &driver, const std::string &artifactDir,
              const Manifest &manifest, const DeviceLimits &limits);
  /// Unloads every module (in the current context).
  void unload(const CudaDriver &driver);

  /// One entry per manifest kernel, in launch order.
  const std::vector<LoadedKernel> &kernels() const { return kernels_; }

private:
  std::vector<std::pair<std::string, CUmodule>> modules_;
  std::vector<LoadedKernel> kernels_;
};

} // namespace flamia::runtime

#endif // FLAMIA_RUNTIME_MODULE_H
