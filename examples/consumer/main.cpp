//===- main.cpp - An out-of-tree program using the installed FLAMIA -------===//
//
//   flamia-consumer OUT_DIR [TARGET]
//
// Compiles an attention spec twice, through the C++ API
// (flamia::compileAttention, into OUT_DIR/cxx) and through the C API
// (flamia_compile_attention, into OUT_DIR/c), to cubins when CUDA's ptxas is
// installed and to PTX alone otherwise, then loads OUT_DIR/cxx with the
// runtime's C API. Without a GPU that last step fails with "CUDA driver not
// available", which is the expected outcome there. Exit status 0 when both
// compiles succeeded and the runtime either loaded the kernels or reported
// that no driver or device can run them.
//
//===----------------------------------------------------------------------===//
#include "flamia/CAPI/Compiler.h"
#include "flamia/CAPI/Reference.h"
#include "flamia/CAPI/Runtime.h"
#include "flamia/Compiler/Compile.h"

#include <cstdio>
#include <string>

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR [TARGET]\n", argv[0]);
    return 2;
  }
  const std::string out = argv[1];
  const std::string target = argc > 2 ? argv[2] : "sm_90a";

  // C++: the spec, the compile, the artifacts.
  flamia::AttentionSpec spec;
  spec.target = target;
  spec.heads = 8;
  spec.kvHeads = 2;
  flamia::CompileOptions options;
  options.requireCubin = false; // no ptxas: PTX alone
  flamia::CompileResult result;
  std::string error;
  if (!flamia::compileAttention(spec, options, result, error) ||
      !flamia::writeArtifacts(result, out + "/cxx", error)) {
    std::fprintf(stderr, "c++ compile: error: %s\n", error.c_str());
    return 1;
  }
  const bool cubins =
      !result.kernels.empty() && !result.kernels[0].cubin.empty();
  std::printf("c++ compile: %zu kernels for %s (%s) in %s/cxx\n",
              result.kernels.size(), target.c_str(),
              cubins ? "cubin" : "PTX only", out.c_str());

  // C: the same spec through libflamia_compiler.so.
  flamia_compile_spec s;
  flamia_compile_spec_init(&s);
  s.target = target.c_str();
  s.heads = 8;
  s.kv_heads = 2;
  s.require_cubin = 0;
  char err[4096];
  if (flamia_compile_attention(&s, (out + "/c").c_str(), err, sizeof err) !=
      FLAMIA_STATUS_OK) {
    std::fprintf(stderr, "c compile: error: %s\n", err);
    return 1;
  }
  std::printf("c compile: flamia %s wrote %s/c (reference %s)\n",
              flamia_compiler_version(), out.c_str(),
              flamia_reference_version());
  // And a bad spec: a status and a message, not an abort.
  s.head_dim = 96;
  flamia_status bad =
      flamia_compile_attention(&s, (out + "/bad").c_str(), err, sizeof err);
  std::printf("c compile, head dim 96: status %d: %s\n", bad, err);

  // The runtime: load what the C++ API wrote (it runs cubins only).
  if (!cubins) {
    std::printf("runtime: skipped: no ptxas, so no cubins to load\n");
    return 0;
  }
  flamia_runtime *rt = nullptr;
  flamia_status st =
      flamia_runtime_create((out + "/cxx").c_str(), 0, &rt, err, sizeof err);
  if (st == FLAMIA_STATUS_OK) {
    flamia_device_info info;
    info.struct_size = sizeof info;
    if (flamia_runtime_get_device_info(rt, &info) == FLAMIA_STATUS_OK)
      std::printf("runtime: %zu kernels loaded on %s\n",
                  flamia_runtime_num_kernels(rt), info.name);
    else
      std::printf("runtime: %zu kernels loaded\n",
                  flamia_runtime_num_kernels(rt));
    flamia_runtime_destroy(rt);
    return 0;
  }
  std::printf("runtime: status %d: %s\n", st, err); // err names the status
  return st == FLAMIA_STATUS_DRIVER_UNAVAILABLE ||
                 st == FLAMIA_STATUS_DEVICE_UNAVAILABLE
             ? 0
             : 1;
}
