//===- FuzzTarget.h - What every FLAMIA fuzz target includes ----*- C++ -*-===//
//
// A fuzz target defines LLVMFuzzerTestOneInput and nothing else; it is linked
// either with libFuzzer (-DFLAMIA_LIBFUZZER=ON, clang) for open-ended runs by
// hand, or with StandaloneMain.cpp, a bounded deterministic driver that CI
// runs under ASan + UBSan (fuzz/README.md).
//
// A target checks the parser's contract, not just that it returns: either it
// accepts the input and the result is self-consistent, or it rejects it with
// a non-empty message. A broken contract aborts through FUZZ_CHECK, which the
// drivers report as a crash and save the input for.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_FUZZ_FUZZTARGET_H
#define FLAMIA_FUZZ_FUZZTARGET_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__,         \
                   __LINE__, #cond);                                           \
      std::abort();                                                            \
    }                                                                          \
  } while (0)

#endif // FLAMIA_FUZZ_FUZZTARGET_H
