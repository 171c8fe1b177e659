//===- Status.h - Errors as values for the numerics library ----*- C++ -*-===//
//
// lib/Numerics is plain C++17 built with -fno-exceptions: every operation
// that can fail on user input returns a Status (ok, or a message that names
// the problem).
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_NUMERICS_STATUS_H
#define FLAMIA_NUMERICS_STATUS_H

#include <string>
#include <utility>

namespace flamia::numerics {

struct [[nodiscard]] Status {
  bool ok = true;
  std::string message;

  static Status success() { return {}; }
  static Status error(std::string message) {
    Status s;
    s.ok = false;
    s.message = std::move(message);
    return s;
  }
  explicit operator bool() const { return ok; }
};

} // namespace flamia::numerics

#endif // FLAMIA_NUMERICS_STATUS_H
