//===- Device.h - flamia-run's own device memory and events -----*- C++ -*-===//
//
// flamia-run allocates the caller's tensors (Q, K, V, cu_seqlens, O, LSE) and
// times kernels with events through the same dynamically loaded driver as
// the runtime, in the device's primary context (the runtime's context).
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_TOOLS_FLAMIARUN_DEVICE_H
#define FLAMIA_TOOLS_FLAMIARUN_DEVICE_H

#include "flamia/Runtime/CudaDriver.h"

#include <memory>
#include <string>
#include <vector>

namespace flamia::run {

class Device {
public:
  /// Loads the driver, retains device `ordinal`'s primary context and makes
  /// it current on this thread.
  runtime::Status open(int ordinal);
  ~Device();

  const runtime::CudaDriver &driver() const { return *driver_; }
  CUstream stream() const { return stream_; }

  /// Device memory of `bytes` (at least 256 bytes, 256-byte aligned).
  runtime::Status alloc(size_t bytes, CUdeviceptr &out);
  runtime::Status upload(CUdeviceptr dst, const void *src, size_t bytes);
  runtime::Status download(void *dst, CUdeviceptr src, size_t bytes);
  runtime::Status fill(CUdeviceptr dst, unsigned char value, size_t bytes);
  runtime::Status synchronize();

  runtime::Status createEvent(CUevent &out);
  runtime::Status record(CUevent event);
  /// Milliseconds between two recorded events (waits for the second).
  runtime::Status elapsed(CUevent start, CUevent end, float &ms);

private:
  std::shared_ptr<const runtime::CudaDriver> driver_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  bool pushed_ = false;
  CUstream stream_ = nullptr;
  std::vector<CUdeviceptr> allocations_;
  std::vector<CUevent> events_;
};

} // namespace flamia::run

#endif // FLAMIA_TOOLS_FLAMIARUN_DEVICE_H
