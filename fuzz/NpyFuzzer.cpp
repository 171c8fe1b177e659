//===- NpyFuzzer.cpp - Fuzz the .npy reader -------------------------------===//
//
// Any byte string through readNpy: it either fails with a message naming the
// file, or returns an array holding exactly the bytes its shape and dtype
// say, never more than the input had (no allocation beyond the body).
//
//===----------------------------------------------------------------------===//
#include "FuzzTarget.h"

#include "flamia/Support/Npy.h"

#include <sstream>
#include <string>

using namespace flamia;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char *>(data), size));
  NpyArray array;
  std::string error;
  if (!readNpy(in, "fuzz.npy", array, error)) {
    FUZZ_CHECK(error.rfind("fuzz.npy: ", 0) == 0);
    return 0;
  }
  FUZZ_CHECK(error.empty());
  FUZZ_CHECK(array.bytes.size() <= size);
  FUZZ_CHECK(array.bytes.size() == static_cast<uint64_t>(array.numElements()) *
                                       npyElementSize(array.dtype));
  for (int64_t d : array.shape)
    FUZZ_CHECK(d >= 0);
  return 0;
}
