//===- TensorMap.cpp - TMA descriptors ------------------------------------===//

#include "flamia/Runtime/TensorMap.h"

#include <cstdio>

namespace flamia::runtime {

static std::string hexAddress(uint64_t address) {
  char buf[32];
  snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(address));
  return buf;
}

Status validateTensorMapRequest(const TensorMapRequest &r) {
  const std::string prefix =
      r.what + " (tensor map of buffer '" + r.bufferName + "'): ";
  auto fail = [&](const std::string &message) {
    return invalidArgument(prefix + message);
  };
  const int64_t elem = dtypeBytes(r.dtype);
  if (r.address == 0)
    return fail("null global address");
  if (r.address % 16 != 0)
    return fail("global address " + hexAddress(r.address) +
                " is not 16-byte aligned");
  if (r.rows < 1 || r.rows > (int64_t{1} << 32))
    return fail("rows = " + std::to_string(r.rows) + " outside [1, 2^32]");
  if (r.cols < 1 || r.cols > (int64_t{1} << 32))
    return fail("cols = " + std::to_string(r.cols) + " outside [1, 2^32]");
  const int64_t rowBytes = r.cols * elem; // < 2^35: no overflow
  if (rowBytes % 16 != 0)
    return fail("row stride " + std::to_string(r.cols) + " x " +
                std::to_string(elem) + " bytes = " + std::to_string(rowBytes) +
                " bytes is not a multiple of 16");
  if (rowBytes >= (int64_t{1} << 40))
    return fail("row stride " + std::to_string(rowBytes) +
                " bytes is not below 2^40");
  __int128 viewBytes = static_cast<__int128>(r.rows) * rowBytes;
  if (viewBytes > static_cast<__int128>(r.bufferBytes))
    return fail("the view [" + std::to_string(r.rows) + ", " +
                std::to_string(r.cols) + "] of " + dtypeName(r.dtype) +
                " needs " +
                std::to_string(static_cast<unsigned long long>(viewBytes)) +
                " bytes but the buffer has " + std::to_string(r.bufferBytes));
  if (r.boxRows < 1 || r.boxRows > 256)
    return fail("box rows = " + std::to_string(r.boxRows) +
                " outside [1, 256]");
  if (r.boxCols < 1 || r.boxCols > 256)
    return fail("box cols = " + std::to_string(r.boxCols) +
                " outside [1, 256]");
  const int64_t boxRowBytes = r.boxCols * elem;
  if (boxRowBytes % 16 != 0)
    return fail("box row " + std::to_string(r.boxCols) + " x " +
                std::to_string(elem) + " bytes = " +
                std::to_string(boxRowBytes) + " bytes is not a multiple of 16");
  if (r.swizzle != 0 && r.swizzle != 32 && r.swizzle != 64 && r.swizzle != 128)
    return fail("swizzle " + std::to_string(r.swizzle) +
                " is not one of 0, 32, 64, 128");
  if (r.swizzle != 0 && boxRowBytes > r.swizzle)
    return fail("box row of " + std::to_string(boxRowBytes) +
                " bytes exceeds the " + std::to_string(r.swizzle) +
                "-byte swizzle span");
  if (r.l2Promotion != 0 && r.l2Promotion != 64 && r.l2Promotion != 128 &&
      r.l2Promotion != 256)
    return fail("l2_promotion " + std::to_string(r.l2Promotion) +
                " is not one of 0, 64, 128, 256");
  return Status::success();
}

TensorMapEncoding tensorMapEncoding(const TensorMapRequest &r) {
  TensorMapEncoding e;
  switch (r.dtype) {
  case DType::BF16:
    e.dataType = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    break;
  case DType::F32:
    e.dataType = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    break;
  case DType::I32:
    e.dataType = CU_TENSOR_MAP_DATA_TYPE_INT32;
    break;
  case DType::U8:
    e.dataType = CU_TENSOR_MAP_DATA_TYPE_UINT8;
    break;
  }
  e.rank = 2;
  e.globalDim[0] = static_cast<cuuint64_t>(r.cols);
  e.globalDim[1] = static_cast<cuuint64_t>(r.rows);
  e.globalStrides[0] = static_cast<cuuint64_t>(r.cols * dtypeBytes(r.dtype));
  e.boxDim[0] = static_cast<cuuint32_t>(r.boxCols);
  e.boxDim[1] = static_cast<cuuint32_t>(r.boxRows);
  e.elementStrides[0] = 1;
  e.elementStrides[1] = 1;
  e.interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  switch (r.swizzle) {
  case 32:
    e.swizzle = CU_TENSOR_MAP_SWIZZLE_32B;
    break;
  case 64:
    e.swizzle = CU_TENSOR_MAP_SWIZZLE_64B;
    break;
  case 128:
    e.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
    break;
  default:
    e.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
    break;
  }
  switch (r.l2Promotion) {
  case 64:
    e.l2Promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_64B;
    break;
  case 128:
    e.l2Promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
    break;
  case 256:
    e.l2Promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
    break;
  default:
    e.l2Promotion = CU_TENSOR_MAP_L2_PROMOTION_NONE;
    break;
  }
  e.oobFill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
  return e;
}

Status encodeTensorMap(const CudaDriver &driver, const TensorMapRequest &r,
                       CUtensorMap &out) {
  FLAMIA_RETURN_IF_ERROR(validateTensorMapRequest(r));
  TensorMapEncoding e = tensorMapEncoding(r);
  CUresult result = driver.tensorMapEncodeTiled(
      &out, e.dataType, e.rank, reinterpret_cast<void *>(r.address),
      e.globalDim, e.globalStrides, e.boxDim, e.elementStrides, e.interleave,
      e.swizzle, e.l2Promotion, e.oobFill);
  if (result != CUDA_SUCCESS)
    return Status::error(
        ErrorCode::CudaError,
        r.what + ": cuTensorMapEncodeTiled of buffer '" + r.bufferName +
            "' ([" + std::to_string(r.rows) + ", " + std::to_string(r.cols) +
            "] " + dtypeName(r.dtype) + ", box [" + std::to_string(r.boxRows) +
            ", " + std::to_string(r.boxCols) + "], swizzle " +
            std::to_string(r.swizzle) +
            ") failed: " + driver.errorString(result));
  return Status::success();
}

} // namespace flamia::runtime
