//===- Workspace.h - Buffer sizes and the runtime's device memory -*- C++
//-*-===//
//
// Every buffer's shape is evaluated from the symbols of a call; each dimension
// must be >= 0 and the byte size must fit in int64. Workspace and schedule
// buffers live in one device allocation (the arena) owned by the runtime,
// each at an offset aligned to 256 bytes, in manifest order; input and output
// buffers are the caller's and take no arena space.
//
// The arena grows when a call needs more (it never shrinks); see Runtime.h
// for how growth is ordered against work still running on a stream.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_RUNTIME_WORKSPACE_H
#define FLAMIA_RUNTIME_WORKSPACE_H

#include "flamia/Runtime/CudaDriver.h"
#include "flamia/Runtime/Expression.h"
#include "flamia/Runtime/Manifest.h"
#include "flamia/Runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace flamia::runtime {

constexpr uint64_t kWorkspaceAlignment = 256;
constexpr uint64_t kNotInArena = ~uint64_t{0};

/// Shapes, sizes and arena offsets of every buffer of a manifest for one set
/// of symbol values (indices follow Manifest::buffers).
struct BufferPlan {
  std::vector<std::vector<int64_t>> shapes;
  std::vector<uint64_t> bytes;
  /// Offset in the arena for workspace and schedule buffers, kNotInArena for
  /// inputs and outputs.
  std::vector<uint64_t> offsets;
  /// Bytes the arena needs (the end of the last buffer, 256-byte rounded).
  uint64_t arenaBytes = 0;
};

/// Evaluates every shape and lays out the arena. Errors (InvalidArgument)
/// name the buffer, the dimension and its expression: "buffer 'q_pt_scales'
/// shape[2] 'D / 32 - 5' is -1 (negative size)".
Status planBuffers(const Manifest &manifest, const SymbolValues &symbols,
                   BufferPlan &out);

/// "[4096, 16, 128]".
std::string shapeString(const std::vector<int64_t> &shape);

/// One device allocation that grows on demand.
class DeviceArena {
public:
  DeviceArena() = default;
  DeviceArena(const DeviceArena &) = delete;
  DeviceArena &operator=(const DeviceArena &) = delete;

  /// Makes the arena at least `bytes` large. Frees the old allocation first
  /// when it grows (the caller has made sure nothing still uses it): the
  /// contents are not preserved. OutOfMemory names the size.
  Status reserve(const CudaDriver &driver, uint64_t bytes);
  /// Frees the allocation (in the current context).
  void release(const CudaDriver &driver);

  CUdeviceptr base() const { return base_; }
  uint64_t capacity() const { return capacity_; }

private:
  CUdeviceptr base_ = 0;
  uint64_t capacity_ = 0;
};

} // namespace flamia::runtime

#endif // FLAMIA_RUNTIME_WORKSPACE_H
