//===- ArrayFiles.cpp - Validated .npy inputs and all-or-nothing outputs --===//
#include "ArrayFiles.h"
#include "CommandLine.h"

#include "flamia/Support/FileOutput.h"
#include "flamia/Support/Validation.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cctype>
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
  return loadArrayChecks(path, what, dtype, rank, shapeHint, out, error);
}

bool loadArrayChecks(const std::string &path, const char *what,
                     NpyDType dtype, size_t rank, const char *shapeHint,
                     NpyArray &out, std::string &error) {
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
  // Sizes derived from the shape are used for allocations and indexing:
  // every dimension >= 0 and the element count (and byte count) must fit
  // in int64, and the payload must hold exactly that many bytes.
  int64_t elements = 1;
  for (int64_t d : out.shape)
    if (d < 0 || __builtin_mul_overflow(elements, d, &elements)) {
      error = std::string(what) + " (" + path + "): shape " +
              out.shapeString() + " has too many elements";
      return false;
    }
  int64_t bytes = 0;
  if (!validation::checkedProduct(
          {elements, static_cast<int64_t>(npyElementSize(dtype))}, bytes) ||
      static_cast<uint64_t>(bytes) != out.bytes.size()) {
    error = std::string(what) + " (" + path + "): shape " +
            out.shapeString() + " needs " + std::to_string(elements) +
            " elements but the file holds " +
            std::to_string(out.bytes.size()) + " bytes of data";
    return false;
  }
  return true;
}

bool checkTokenTensor(const NpyArray &a, const char *what,
                      std::string &error) {
  if (a.shape.size() == 3 && a.shape[0] > validation::kMaxTokens) {
    error = std::string(what) + ": T = " + std::to_string(a.shape[0]) +
            " tokens exceeds the limit of " +
            std::to_string(validation::kMaxTokens) + " (cu_seqlens is int32)";
    return false;
  }
  return true;
}

bool loadCuSeqlens(const std::string &path, int64_t numTokens,
                   DocumentLayout &out, std::string &error) {
  NpyArray cu;
  if (!readNpy(path, cu, error)) {
    error = "cu_seqlens: " + error;
    return false;
  }
  if (!validation::validateCuSeqlensDType(npyDTypeName(cu.dtype), error)) {
    error = "cu_seqlens (" + path + "): " + error;
    return false;
  }
  if (!loadArrayChecks(path, "cu_seqlens", NpyDType::Int32, 1,
                       "[num_docs + 1]", cu, error))
    return false;
  if (!validation::validateCuSeqlens(cu.data<int32_t>(),
                                     static_cast<size_t>(cu.numElements()),
                                     numTokens, error)) {
    error = "cu_seqlens (" + path + "): " + error;
    return false;
  }
  Status s = DocumentLayout::fromCuSeqlens(
      cu.data<int32_t>(), cu.numElements(), numTokens, out);
  if (!s) {
    error = "cu_seqlens (" + path + "): " + s.message;
    return false;
  }
  return true;
}

bool writeAll(const std::vector<std::pair<std::string, NpyArray>> &outputs,
              std::string &error) {
  return writeNpyFilesAtomically(outputs, error);
}

NpyArray floatArray(std::vector<int64_t> shape,
                    const std::vector<float> &values) {
  NpyArray a = makeNpyArray(NpyDType::Float32, std::move(shape));
  std::memcpy(a.bytes.data(), values.data(), values.size() * sizeof(float));
  return a;
}

bool parseInt(const std::string &text, int64_t &out) {
  // Digits only, with an optional leading '-' (strtoll would also take
  // leading spaces and '+').
  if (text.empty() || !(text[0] == '-' || (text[0] >= '0' && text[0] <= '9')))
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
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0])))
    return false;
  char *end = nullptr;
  errno = 0;
  float v = std::strtof(text.c_str(), &end);
  if (errno || *end != '\0' || !std::isfinite(v))
    return false;
  out = v;
  return true;
}

bool parseSoftmaxScale(const std::string &text, float &out,
                       std::string &error) {
  char *end = nullptr;
  double v = 0;
  if (!text.empty() && !std::isspace(static_cast<unsigned char>(text[0]))) {
    errno = 0;
    v = std::strtod(text.c_str(), &end);
  }
  if (end == nullptr || end == text.c_str() || *end != '\0') {
    error = "--softmax-scale expects a number, got '" + text + "'";
    return false;
  }
  if (!validation::validateFloat32SoftmaxScale(v, text, error)) {
    error = "--softmax-scale " + text + ": " + error;
    return false;
  }
  out = static_cast<float>(v);
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
