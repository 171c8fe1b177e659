//===- Launcher.h - Parameter packing and kernel launches -------*- C++ -*-===//
//
// The parameters of a kernel, in manifest order, each in its own slot of 128
// bytes aligned to 128 (cuLaunchKernelEx copies every parameter from the
// pointer it is given, so each slot only has to hold and align its value):
//   ptr        CUdeviceptr of the bound buffer (8 bytes)
//   i32        the expression's value, which must fit int32 (4 bytes)
//   f32        softmax_scale, softmax_scale_log2, a literal, or an integer
//              expression converted to float (4 bytes)
//   tensormap  a CUtensorMap encoded for the bound buffer (128 bytes, passed
//              by value; the slot is 64-byte aligned, as the ABI requires)
//
// A launch evaluates the grid, checks its limits (x < 2^31, y and z <= 65535,
// each a multiple of the cluster's dimension), zeroes the schedule counter on
// the stream when the kernel takes it, and calls cuLaunchKernelEx with the
// dynamic shared memory of the manifest and, when the cluster is not
// [1, 1, 1], the CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION attribute. A grid with
// a zero dimension launches nothing.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_RUNTIME_LAUNCHER_H
#define FLAMIA_RUNTIME_LAUNCHER_H

#include "flamia/Runtime/CudaDriver.h"
#include "flamia/Runtime/Expression.h"
#include "flamia/Runtime/Manifest.h"
#include "flamia/Runtime/Status.h"
#include "flamia/Runtime/TensorMap.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace flamia::runtime {

/// A buffer bound to a device address for one call.
struct BoundBuffer {
  CUdeviceptr address = 0;
  uint64_t bytes = 0;
};

/// The float values a call passes by name.
struct NamedScalars {
  float softmaxScale = 0.0f;
  float softmaxScaleLog2 = 0.0f;
};

/// One parameter slot.
struct alignas(128) ParamSlot {
  unsigned char bytes[128];
};
static_assert(sizeof(ParamSlot) == 128 && alignof(ParamSlot) >= 64,
              "tensor maps are passed 64-byte aligned");

struct PackedParams {
  std::vector<ParamSlot> slots;
  /// pointers[i] == slots[i].bytes: what cuLaunchKernelEx reads.
  std::vector<void *> pointers;
  /// Makes `pointers` point into `slots` (after a copy).
  void bindPointers();
};

/// Encodes one tensor map (the real one calls encodeTensorMap; tests pass a
/// recorder).
using TensorMapEncoder =
    std::function<Status(const TensorMapRequest &, CUtensorMap &)>;

/// Packs the parameters of kernel `kernelIndex`. `buffers` follows
/// Manifest::buffers.
Status packKernelParams(const Manifest &manifest, size_t kernelIndex,
                        const std::vector<BoundBuffer> &buffers,
                        const SymbolValues &symbols,
                        const NamedScalars &scalars,
                        const TensorMapEncoder &encoder, PackedParams &out);

/// The grid of a kernel for one call.
struct LaunchGrid {
  uint32_t dims[3] = {0, 0, 0};
  bool empty() const { return dims[0] == 0 || dims[1] == 0 || dims[2] == 0; }
};

/// Evaluates and checks the grid of `kernel`.
Status evaluateGrid(const ManifestKernel &kernel, const SymbolValues &symbols,
                    LaunchGrid &out);

/// Everything one launch needs.
struct KernelLaunch {
  const ManifestKernel *kernel = nullptr;
  CUfunction function = nullptr;
  LaunchGrid grid;
  PackedParams params;
  CUdeviceptr counter = 0; // zeroed before the launch when not 0
};

/// Zeroes the counter (if any) and launches on `stream`; nothing for an empty
/// grid.
Status launchKernel(const CudaDriver &driver, KernelLaunch &launch,
                    CUstream stream);

} // namespace flamia::runtime

#endif // FLAMIA_RUNTIME_LAUNCHER_H
