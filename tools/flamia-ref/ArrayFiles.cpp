//===- ArrayFiles.cpp - Validated .npy inputs and all-or-nothing outputs --===//
#include "ArrayFiles.h"
#include "CommandLine.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace flamia::ref {

bool loadArray(const std::string &path, const char *what, NpyDType dtype,
               size_t rank, const char *shapeHint, NpyArray &out,
               std::string &error) {
  if (!readNpy(path, out, error)) {
    error = std::string(what) + ": " + error;
    return false;
  }
  if (out.dtype != dtype) {
    error = std::string(what) + " (" + path + "): expected a " +
            npyDTypeName(dtype) + " array, got " + npyDTypeName(out.dtype);
    return false;
  }
  if (out.shape.size() != rank) {
    error = std::string(what) + " (" + path + "): expected a rank-" +
            std::to_string(rank) + " array " + shapeHint + ", got shape " +
            out.shapeString();
    return false;
  }
  return true;
}

bool loadCuSeqlens(const std::string &path, int64_t numTokens,
                   numerics::DocumentLayout &out, std::string &error) {
  NpyArray cu;
  if (!loadArray(path, "cu_seqlens", NpyDType::Int32, 1, "[num_docs + 1]", cu,
                 error))
    return false;
  numerics::Status s = numerics::DocumentLayout::fromCuSeqlens(
      cu.data<int32_t>(), cu.numElements(), numTokens, out);
  if (!s) {
    error = "cu_seqlens (" + path + "): " + s.message;
    return false;
  }
  return true;
}

bool writeAll(const std::vector<std::pair<std::string, NpyArray>> &outputs,
              std::string &error) {
  std::vector<std::string> written;
  for (const auto &[path, array] : outputs) {
    if (!writeNpy(path, array, error)) {
      for (const std::string &w : written)
        std::remove(w.c_str());
      std::remove(path.c_str());
      return false;
    }
    written.push_back(path);
  }
  return true;
}

NpyArray floatArray(std::vector<int64_t> shape,
                    const std::vector<float> &values) {
  NpyArray a = makeNpyArray(NpyDType::Float32, std::move(shape));
  std::memcpy(a.bytes.data(), values.data(), values.size() * sizeof(float));
  return a;
}

bool parseInt(const std::string &text, int64_t &out) {
  if (text.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno || *end != '\0')
    return false;
  out = v;
  return true;
}

bool parseFloat(const std::string &text, float &out) {
  if (text.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  float v = std::strtof(text.c_str(), &end);
  if (errno || *end != '\0' || !std::isfinite(v))
    return false;
  out = v;
  return true;
}

bool parseIntList(const std::string &text, std::vector<int64_t> &out) {
  out.clear();
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    int64_t v;
    if (!parseInt(item, v))
      return false;
    out.push_back(v);
  }
  return !out.empty();
}

int badInput(const char *command, const std::string &message) {
  std::fprintf(stderr, "flamia-ref %s: error: %s\n", command, message.c_str());
  return kExitBadInput;
}

} // namespace flamia::ref
