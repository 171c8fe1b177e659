//===- Status.cpp - Errors as values ----------------------------------------===//

#include "flamia/Support/Status.h"

namespace flamia {

const char *errorCodeString(ErrorCode code) {
  switch (code) {
  case ErrorCode::Ok:
    return "success";
  case ErrorCode::InvalidArgument:
    return "invalid argument";
  case ErrorCode::DriverUnavailable:
    return "CUDA driver not available";
  case ErrorCode::DeviceUnavailable:
    return "CUDA device not available";
  case ErrorCode::InvalidManifest:
    return "invalid manifest";
  case ErrorCode::InvalidArtifact:
    return "invalid artifact";
  case ErrorCode::CudaError:
    return "CUDA error";
  case ErrorCode::OutOfMemory:
    return "out of device memory";
  case ErrorCode::NotFound:
    return "not found";
  case ErrorCode::Internal:
    return "internal error";
  }
  return "unknown error";
}

} // namespace flamia
