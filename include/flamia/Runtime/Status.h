//===- Status.h - Errors as values for the runtime --------------*- C++ -*-===//
//
// lib/Runtime is plain C++17 built with -fno-exceptions: every operation that
// can fail returns a Status, `ok` or an error code plus a message that names
// the problem. It is the one Status of the plain libraries
// (flamia/Support/Status.h), whose codes map one to one onto the C API's
// flamia_status (include/flamia/CAPI/Runtime.h).
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_RUNTIME_STATUS_H
#define FLAMIA_RUNTIME_STATUS_H

#include "flamia/Support/Status.h"

namespace flamia::runtime {
using ::flamia::ErrorCode;
using ::flamia::errorCodeString;
using ::flamia::invalidArgument;
using ::flamia::invalidManifest;
using ::flamia::Status;
} // namespace flamia::runtime

#endif // FLAMIA_RUNTIME_STATUS_H
