/*===- flamia/CAPI/Common.h - What every FLAMIA C API shares --------*- C -*-===
 *
 * The export macro and the status codes of the C APIs: the runtime
 * (flamia/CAPI/Runtime.h, libflamia_runtime.so), the CPU reference
 * (flamia/CAPI/Reference.h, libflamia_reference.so) and the compiler
 * (flamia/CAPI/Compiler.h, libflamia_compiler.so). Each library keeps the
 * message of its last failing call per thread.
 *===----------------------------------------------------------------------===*/
#ifndef FLAMIA_CAPI_COMMON_H
#define FLAMIA_CAPI_COMMON_H

/* Symbols exported by the shared libraries; everything else is hidden. */
#if defined(__GNUC__) || defined(__clang__)
#define FLAMIA_CAPI_EXPORT __attribute__((visibility("default")))
#else
#define FLAMIA_CAPI_EXPORT
#endif

typedef enum flamia_status {
  FLAMIA_STATUS_OK = 0,
  FLAMIA_STATUS_INVALID_ARGUMENT = 1,   /* caller's argument is wrong */
  FLAMIA_STATUS_DRIVER_UNAVAILABLE = 2, /* "CUDA driver not available" */
  FLAMIA_STATUS_DEVICE_UNAVAILABLE = 3, /* no device / wrong architecture */
  FLAMIA_STATUS_INVALID_MANIFEST = 4,   /* manifest.json violates the ABI */
  FLAMIA_STATUS_INVALID_ARTIFACT = 5,   /* missing cubin, kernel symbol, ... */
  FLAMIA_STATUS_CUDA_ERROR = 6,         /* a driver call failed */
  FLAMIA_STATUS_OUT_OF_MEMORY = 7,      /* device allocation failed */
  FLAMIA_STATUS_NOT_FOUND = 8,          /* no such buffer / kernel */
  FLAMIA_STATUS_INTERNAL = 9            /* a bug in the library */
} flamia_status;

#endif /* FLAMIA_CAPI_COMMON_H */
