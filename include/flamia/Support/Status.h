//===- Status.h - Errors as values for every plain library -------*- C++ -*-===//
//
// The plain C++17 libraries (numerics, schedule, manifest, runtime,
// validation) are built with -fno-exceptions: every operation that can fail
// returns a Status, `ok` or an error code plus a message that names the
// problem (the buffer, the kernel, the parameter, the value). One type for
// all of them, so that an error passes from the numerics library through the
// runtime to the C API unchanged. The codes map one to one onto the C API's
// flamia_status (include/flamia/CAPI/Runtime.h).
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_SUPPORT_STATUS_H
#define FLAMIA_SUPPORT_STATUS_H

#include <string>
#include <utility>

namespace flamia {

/// What kind of failure. Keep in sync with flamia_status in CAPI/Runtime.h
/// (same numeric values).
enum class ErrorCode {
  Ok = 0,
  /// A caller-provided argument is wrong (pointer, shape, cu_seqlens, ...).
  InvalidArgument = 1,
  /// libcuda.so.1 could not be loaded or lacks an entry point we need.
  DriverUnavailable = 2,
  /// No usable CUDA device (cuInit failed, bad ordinal, wrong architecture).
  DeviceUnavailable = 3,
  /// manifest.json is malformed or violates the ABI.
  InvalidManifest = 4,
  /// An artifact named by the manifest is missing or unusable (cubin file,
  /// kernel symbol, parameter layout).
  InvalidArtifact = 5,
  /// A CUDA driver call failed.
  CudaError = 6,
  /// Device memory allocation failed.
  OutOfMemory = 7,
  /// A named thing (workspace buffer, kernel) does not exist.
  NotFound = 8,
  /// An internal invariant broke (a bug).
  Internal = 9,
};

/// "invalid argument", "CUDA driver not available", ...
const char *errorCodeString(ErrorCode code);

struct [[nodiscard]] Status {
  ErrorCode code = ErrorCode::Ok;
  std::string message;

  static Status success() { return {}; }
  /// An error in what the caller gave (ErrorCode::InvalidArgument): the
  /// numerics library's checks of user input.
  static Status error(std::string message) {
    return error(ErrorCode::InvalidArgument, std::move(message));
  }
  static Status error(ErrorCode code, std::string message) {
    Status s;
    s.code = code;
    s.message = std::move(message);
    return s;
  }
  bool ok() const { return code == ErrorCode::Ok; }
  explicit operator bool() const { return ok(); }
  /// The same error with "context: " in front of the message.
  Status withContext(const std::string &context) const {
    if (ok())
      return *this;
    return error(code, context + ": " + message);
  }
};

inline Status invalidArgument(std::string message) {
  return Status::error(ErrorCode::InvalidArgument, std::move(message));
}
inline Status invalidManifest(std::string message) {
  return Status::error(ErrorCode::InvalidManifest, std::move(message));
}

} // namespace flamia

/// Returns from the enclosing function if `expr` (a Status) is an error.
#define FLAMIA_RETURN_IF_ERROR(expr)                                           \
  do {                                                                         \
    ::flamia::Status flamiaStatus_ = (expr);                                   \
    if (!flamiaStatus_.ok())                                                   \
      return flamiaStatus_;                                                    \
  } while (0)

#endif // FLAMIA_SUPPORT_STATUS_H
