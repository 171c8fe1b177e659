//===- Text.h - FlamiaValidation's private helpers --------------*- C++ -*-===//
#ifndef FLAMIA_LIB_VALIDATION_TEXT_H
#define FLAMIA_LIB_VALIDATION_TEXT_H

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace flamia::validation::device::detail {

/// snprintf of one double.
inline std::string fmt(const char *format, double a) {
  char buf[64];
  snprintf(buf, sizeof buf, format, a);
  return buf;
}

/// "[t=.., h=.., d=..]" of a flat index into [T, H, D].
inline std::string position(int64_t index, int64_t H, int64_t D) {
  return "[t=" + std::to_string(index / (H * D)) +
         ", h=" + std::to_string(index / D % H) +
         ", d=" + std::to_string(index % D) + "]";
}

/// bf16 bits -> float32, multithreaded.
std::vector<float> toFloat(const uint16_t *x, size_t n);

} // namespace flamia::validation::device::detail

#endif // FLAMIA_LIB_VALIDATION_TEXT_H
