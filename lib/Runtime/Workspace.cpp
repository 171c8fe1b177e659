//===- Workspace.cpp - Buffer sizes and the runtime's device memory -------===//

#include "flamia/Runtime/Workspace.h"

namespace flamia::runtime {

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

Status planBuffers(const Manifest &manifest, const SymbolValues &symbols,
                   BufferPlan &out) {
  out = BufferPlan();
  uint64_t cursor = 0;
  for (const ManifestBuffer &b : manifest.buffers) {
    std::vector<int64_t> shape;
    int64_t elements = 1;
    for (size_t i = 0; i < b.shape.size(); ++i) {
      int64_t dim;
      Status s = b.shape[i].evaluate(symbols, dim);
      if (!s.ok())
        return invalidArgument("buffer '" + b.name + "' shape[" +
                               std::to_string(i) + "]: " + s.message);
      if (dim < 0)
        return invalidArgument("buffer '" + b.name + "' shape[" +
                               std::to_string(i) + "] '" + b.shape[i].text() +
                               "' is " + std::to_string(dim) +
                               " (negative size)");
      if (__builtin_mul_overflow(elements, dim, &elements))
        return invalidArgument("buffer '" + b.name +
                               "' has more elements than int64 holds");
      shape.push_back(dim);
    }
    int64_t bytes;
    if (__builtin_mul_overflow(elements, dtypeBytes(b.dtype), &bytes))
      return invalidArgument("buffer '" + b.name +
                             "' has more bytes than int64 holds");
    uint64_t offset = kNotInArena;
    if (b.role == BufferRole::Workspace || b.role == BufferRole::Schedule) {
      offset = cursor;
      uint64_t end = cursor + static_cast<uint64_t>(bytes);
      if (end < cursor || end > (uint64_t{1} << 62))
        return invalidArgument("the workspace would exceed 2^62 bytes at "
                               "buffer '" +
                               b.name + "'");
      cursor = (end + kWorkspaceAlignment - 1) / kWorkspaceAlignment *
               kWorkspaceAlignment;
    }
    out.shapes.push_back(std::move(shape));
    out.bytes.push_back(static_cast<uint64_t>(bytes));
    out.offsets.push_back(offset);
  }
  out.arenaBytes = cursor;
  return Status::success();
}

Status DeviceArena::reserve(const CudaDriver &driver, uint64_t bytes) {
  if (bytes <= capacity_)
    return Status::success();
  release(driver);
  CUdeviceptr ptr = 0;
  CUresult r = driver.memAlloc(&ptr, static_cast<size_t>(bytes));
  if (r != CUDA_SUCCESS)
    return Status::error(
        r == CUDA_ERROR_OUT_OF_MEMORY ? ErrorCode::OutOfMemory
                                      : ErrorCode::CudaError,
        "cuMemAlloc of the " + std::to_string(bytes) +
            "-byte workspace failed: " + driver.errorString(r));
  base_ = ptr;
  capacity_ = bytes;
  return Status::success();
}

void DeviceArena::release(const CudaDriver &driver) {
  if (base_)
    driver.memFree(base_);
  base_ = 0;
  capacity_ = 0;
}

} // namespace flamia::runtime
