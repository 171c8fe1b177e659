//===- Status.h - Errors as values for the numerics library ----*- C++ -*-===//
//
// lib/Numerics is plain C++17 built with -fno-exceptions: every operation
// that can fail on user input returns a Status (ok, or a message that names
// the problem). It is the one Status of the plain libraries
// (flamia/Support/Status.h); Status::error(message) is an invalid argument.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_NUMERICS_STATUS_H
#define FLAMIA_NUMERICS_STATUS_H

#include "flamia/Support/Status.h"

namespace flamia::numerics {
using ::flamia::Status;
} // namespace flamia::numerics

#endif // FLAMIA_NUMERICS_STATUS_H
