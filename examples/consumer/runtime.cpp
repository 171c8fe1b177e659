//===- runtime.cpp - The installed C++ runtime, from outside --------------===//
//
//   flamia-consumer-runtime ARTIFACT_DIR
//
// The C++ runtime's headers include cuda.h (declarations only), which the
// package finds for Flamia::Runtime: reads ARTIFACT_DIR/manifest.json and
// opens the CUDA driver (FLAMIA_LIBCUDA or libcuda.so.1).
//
//===----------------------------------------------------------------------===//
#include "flamia/Runtime/CudaDriver.h"
#include "flamia/Runtime/Manifest.h"

#include <cstdio>
#include <memory>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s ARTIFACT_DIR\n", argv[0]);
    return 2;
  }
  flamia::runtime::Manifest m;
  if (flamia::Status s = flamia::runtime::loadManifest(argv[1], m); !s) {
    std::fprintf(stderr, "manifest: %s\n", s.message.c_str());
    return 1;
  }
  std::printf("runtime c++: manifest for %s, %zu kernels\n",
              m.target.name.c_str(), m.kernels.size());
  std::shared_ptr<const flamia::runtime::CudaDriver> driver;
  flamia::Status s = flamia::runtime::CudaDriver::load(driver);
  std::printf("runtime c++: driver: %s\n", s ? "loaded" : s.message.c_str());
  return 0;
}
