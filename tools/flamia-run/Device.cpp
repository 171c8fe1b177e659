//===- Device.cpp - flamia-run's own device memory and events -------------===//

#include "Device.h"

namespace flamia::run {

using runtime::Status;

Status Device::open(int ordinal) {
  FLAMIA_RETURN_IF_ERROR(runtime::CudaDriver::load(driver_));
  const runtime::CudaDriver &d = *driver_;
  FLAMIA_RETURN_IF_ERROR(d.check(d.init(0), "cuInit"));
  FLAMIA_RETURN_IF_ERROR(
      d.check(d.deviceGet(&device_, ordinal), "cuDeviceGet"));
  FLAMIA_RETURN_IF_ERROR(d.check(d.primaryCtxRetain(&context_, device_),
                                 "cuDevicePrimaryCtxRetain"));
  FLAMIA_RETURN_IF_ERROR(
      d.check(d.ctxPushCurrent(context_), "cuCtxPushCurrent"));
  pushed_ = true;
  return d.check(d.streamCreate(&stream_, CU_STREAM_NON_BLOCKING),
                 "cuStreamCreate");
}

Device::~Device() {
  if (!driver_)
    return;
  const runtime::CudaDriver &d = *driver_;
  if (pushed_) {
    if (stream_)
      d.streamSynchronize(stream_);
    for (CUevent e : events_)
      d.eventDestroy(e);
    for (CUdeviceptr p : allocations_)
      d.memFree(p);
    if (stream_)
      d.streamDestroy(stream_);
    CUcontext popped;
    d.ctxPopCurrent(&popped);
  }
  if (context_)
    d.primaryCtxRelease(device_);
}

Status Device::alloc(size_t bytes, CUdeviceptr &out) {
  const size_t rounded = bytes < 256 ? 256 : (bytes + 255) / 256 * 256;
  FLAMIA_RETURN_IF_ERROR(
      driver_->check(driver_->memAlloc(&out, rounded),
                     "cuMemAlloc(" + std::to_string(bytes) + " bytes)"));
  allocations_.push_back(out);
  return Status::success();
}

Status Device::upload(CUdeviceptr dst, const void *src, size_t bytes) {
  if (bytes == 0)
    return Status::success();
  FLAMIA_RETURN_IF_ERROR(driver_->check(
      driver_->memcpyHtoDAsync(dst, src, bytes, stream_), "cuMemcpyHtoDAsync"));
  return synchronize();
}

Status Device::download(void *dst, CUdeviceptr src, size_t bytes) {
  if (bytes == 0)
    return Status::success();
  FLAMIA_RETURN_IF_ERROR(driver_->check(
      driver_->memcpyDtoHAsync(dst, src, bytes, stream_), "cuMemcpyDtoHAsync"));
  return synchronize();
}

Status Device::fill(CUdeviceptr dst, unsigned char value, size_t bytes) {
  if (bytes == 0)
    return Status::success();
  return driver_->check(driver_->memsetD8Async(dst, value, bytes, stream_),
                        "cuMemsetD8Async");
}

Status Device::synchronize() {
  return driver_->check(driver_->streamSynchronize(stream_),
                        "cuStreamSynchronize");
}

Status Device::createEvent(CUevent &out) {
  FLAMIA_RETURN_IF_ERROR(driver_->check(
      driver_->eventCreate(&out, CU_EVENT_DEFAULT), "cuEventCreate"));
  events_.push_back(out);
  return Status::success();
}

Status Device::record(CUevent event) {
  return driver_->check(driver_->eventRecord(event, stream_), "cuEventRecord");
}

Status Device::elapsed(CUevent start, CUevent end, float &ms) {
  FLAMIA_RETURN_IF_ERROR(
      driver_->check(driver_->eventSynchronize(end), "cuEventSynchronize"));
  return driver_->check(driver_->eventElapsedTime(&ms, start, end),
                        "cuEventElapsedTime");
}

} // namespace flamia::run
