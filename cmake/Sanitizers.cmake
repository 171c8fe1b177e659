# FLAMIA_SANITIZE: a comma-separated -fsanitize= list (e.g. "address,undefined")
# applied to every target of this tree, compile and link alike. Any report
# aborts the process (-fno-sanitize-recover=all), so a test that triggers one
# fails instead of printing a warning nobody reads. scripts/sanitizer-leg.sh
# builds the MLIR-free half this way (build-asan/); the LLVM/MLIR dylibs are
# not instrumented, so the compiler half is not meant to be built with it.
set(FLAMIA_SANITIZE "" CACHE STRING
    "Sanitizers for every target, as for -fsanitize= (e.g. address,undefined)")

if(FLAMIA_SANITIZE)
  message(STATUS "FLAMIA sanitizers: ${FLAMIA_SANITIZE}")
  add_compile_options(-fsanitize=${FLAMIA_SANITIZE} -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${FLAMIA_SANITIZE} -fno-sanitize-recover=all)
endif()

# FLAMIA_LIBFUZZER (fuzz/README.md, clang only): the fuzz targets link
# libFuzzer, and every library gets its coverage instrumentation
# (-fsanitize=fuzzer-no-link), without which libFuzzer only sees the target's
# own file and mutates blindly.
option(FLAMIA_LIBFUZZER "Link the fuzz targets with libFuzzer (clang)" OFF)
if(FLAMIA_LIBFUZZER)
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
