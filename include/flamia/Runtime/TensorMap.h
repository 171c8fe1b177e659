//===- TensorMap.h - TMA descriptors (cuTensorMapEncodeTiled) ---*- C++ -*-===//
//
// A tensormap parameter views a buffer as a 2-D row-major matrix
// [rows, cols] of `dtype` and loads boxes of [boxRows, boxCols] elements
// (docs/runtime-abi.md). Before encoding, validateTensorMapRequest checks what
// the driver would reject (or, worse, accept and then read out of bounds):
//   - the global address is 16-byte aligned;
//   - rows and cols are in [1, 2^32], the row stride cols * elem_bytes is a
//     multiple of 16 bytes and below 2^40;
//   - the view (rows * cols * elem_bytes) fits in the buffer;
//   - box dims are in [1, 256], the box row (boxCols * elem_bytes) is a
//     multiple of 16 bytes and, when swizzled, at most the swizzle span;
//   - swizzle is 0, 32, 64 or 128 bytes; L2 promotion 0, 64, 128 or 256.
// Out-of-bounds elements of a box are filled with zeros
// (CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE), element strides are 1, no interleave.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_RUNTIME_TENSORMAP_H
#define FLAMIA_RUNTIME_TENSORMAP_H

#include "flamia/Runtime/CudaDriver.h"
#include "flamia/Runtime/Manifest.h"
#include "flamia/Runtime/Status.h"

#include <cstdint>
#include <string>

namespace flamia::runtime {

struct TensorMapRequest {
  std::string what; // for messages: "kernel 'fwd' parameter 'tma_q'"
  std::string bufferName;
  DType dtype = DType::BF16;
  uint64_t address = 0;     // device address of the buffer
  uint64_t bufferBytes = 0; // its size
  int64_t rows = 0, cols = 0;
  int64_t boxRows = 0, boxCols = 0;
  int swizzle = 0;       // bytes
  int l2Promotion = 128; // bytes
};

/// Checks every constraint listed above; InvalidArgument naming the request.
Status validateTensorMapRequest(const TensorMapRequest &request);

/// The arguments of cuTensorMapEncodeTiled for a validated request (exposed
/// for tests: innermost dimension first, as the driver wants them).
struct TensorMapEncoding {
  CUtensorMapDataType dataType;
  cuuint32_t rank = 2;
  cuuint64_t globalDim[2];
  cuuint64_t globalStrides[1]; // bytes, for dimension 1 (rows)
  cuuint32_t boxDim[2];
  cuuint32_t elementStrides[2];
  CUtensorMapInterleave interleave;
  CUtensorMapSwizzle swizzle;
  CUtensorMapL2promotion l2Promotion;
  CUtensorMapFloatOOBfill oobFill;
};
TensorMapEncoding tensorMapEncoding(const TensorMapRequest &request);

/// Validates and encodes into `out` (128 bytes, 64-byte aligned).
Status encodeTensorMap(const CudaDriver &driver,
                       const TensorMapRequest &request, CUtensorMap &out);

} // namespace flamia::runtime

#endif // FLAMIA_RUNTIME_TENSORMAP_H
