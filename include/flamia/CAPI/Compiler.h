/*===- flamia/CAPI/Compiler.h - C API of the FLAMIA compiler --------*- C -*-===
 *
 * Compiles an attention specification to the kernels and the runtime
 * manifest and writes them to a directory, for frameworks that JIT kernel
 * sets without C++ (ctypes, other languages). The C face of
 * flamia::compileAttention and flamia::writeArtifacts
 * (flamia/Compiler/Compile.h); what it writes is what flamia-compile writes,
 * and flamia_runtime_create (flamia/CAPI/Runtime.h) loads it.
 *
 *   flamia_compile_spec s;
 *   flamia_compile_spec_init(&s);      // sm_100a, mxfp8, D 128, 16/16 heads
 *   s.target = "sm_90a"; s.head_dim = 128;
 *   char err[1024];
 *   if (flamia_compile_attention(&s, "artifacts/", err, sizeof err))
 *     fprintf(stderr, "%s\n", err);    // "head dim 96 ...", "ptxas ..."
 *
 * Conventions (those of flamia/CAPI/Runtime.h):
 *  - Every function returning flamia_status checks its pointers and reports
 *    errors as a status plus a message (never aborts); the message of the
 *    last failing call on the calling thread is flamia_compiler_last_error(),
 *    and flamia_compile_attention also copies it to `err`.
 *  - flamia_compile_spec starts with `struct_size` (set by
 *    flamia_compile_spec_init); later versions only append fields. A struct
 *    smaller than this version's is rejected; a larger one is accepted when
 *    its extra bytes are zero.
 *  - Strings are borrowed for the call only; NULL means the default.
 *  - Calls may run concurrently on different threads (each compiles in its
 *    own MLIR context).
 *
 * libflamia_compiler.so links LLVM's and MLIR's shared libraries and exports
 * only the flamia_compile* / flamia_compiler_* symbols below.
 *===----------------------------------------------------------------------===*/
#ifndef FLAMIA_CAPI_COMPILER_H
#define FLAMIA_CAPI_COMPILER_H

#include "flamia/CAPI/Common.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Bumped on incompatible changes (none so far). */
#define FLAMIA_COMPILER_ABI_VERSION 1

typedef struct flamia_compile_spec {
  size_t struct_size;
  /* "sm_90a" or "sm_100a". NULL: "sm_100a". */
  const char *target;
  /* A recipe with kernels ("mxfp8", "nvfp4-mixed") or its strict preset
   * ("mxfp8-strict": strict mode, L3; sm_90a only). NULL: "mxfp8". */
  const char *recipe;
  int64_t head_dim;   /* D; default 128 */
  /* Query heads; default 16. heads = kv_heads = 0: runtime head counts
   * (one kernel set serves every Hq and Hkv; the runtime checks the GQA
   * ratio). */
  int64_t heads;
  int64_t kv_heads;   /* key/value heads, divides heads; default 16 */
  int32_t causal;     /* 0 or 1; default 1 */
  int32_t varlen;     /* packed documents with cu_seqlens: 0 or 1; default 1 */
  int64_t safe_block; /* a multiple of 128; default 128 */
  double softmax_scale; /* 0: 1/sqrt(D); else finite, > 0 as a float32 */
  int32_t backward;     /* 1: a training step (forward + backward); default 0 */
  /* The gradients' element type: "bf16" or "f32". NULL: "bf16". */
  const char *grad_dtype;
  /* sm_90a: overlap the softmax with the MMAs (0 or 1); default 1. */
  int32_t overlap_softmax;
  /* sm_90a: also write sm_100a's scale-factor tiles (0 or 1); default 0. */
  int32_t scale_tiles;
  /* ptxas to assemble cubins with. NULL: $FLAMIA_PTXAS, then
   * /usr/local/cuda/bin/ptxas, then PATH. */
  const char *ptxas;
  /* 1 (default): assemble cubins with ptxas; 0: write PTX only. */
  int32_t assemble;
  /* With assemble: 1 (default): no ptxas is an error; 0: PTX only then. */
  int32_t require_cubin;
  /* 1: also write graph.mlir and block.mlir (the IR after scheduling and
   * after tiling); default 0. */
  int32_t write_ir;
} flamia_compile_spec;

/** FLAMIA_COMPILER_ABI_VERSION of the library. */
FLAMIA_CAPI_EXPORT int flamia_compiler_abi_version(void);
/** The project version, "0.1.0". */
FLAMIA_CAPI_EXPORT const char *flamia_compiler_version(void);
/** The message of the last call that failed on this thread ("" if none),
 *  valid until the next failing call on this thread. */
FLAMIA_CAPI_EXPORT const char *flamia_compiler_last_error(void);

/** The defaults above (flamia::AttentionSpec's and CompileOptions'). */
FLAMIA_CAPI_EXPORT void flamia_compile_spec_init(flamia_compile_spec *spec);

/** Compiles `spec` and writes OUT_DIR/<kernel>.ptx, <kernel>.cubin (when
 *  assembled) and manifest.json (OUT_DIR is created; all or nothing: on a
 *  failed write no file of the set is left). Returns
 *   FLAMIA_STATUS_INVALID_ARGUMENT  a NULL pointer, a bad struct_size or a
 *                                   spec the kernels do not implement (the
 *                                   message names the value);
 *   FLAMIA_STATUS_INVALID_ARTIFACT  the kernels could not be assembled (no
 *                                   ptxas, ptxas failed) or written;
 *   FLAMIA_STATUS_INTERNAL          a compiler bug.
 *  If err is not NULL the message is copied there (truncated to
 *  errlen - 1; "" on success). */
FLAMIA_CAPI_EXPORT flamia_status
flamia_compile_attention(const flamia_compile_spec *spec, const char *out_dir,
                         char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* FLAMIA_CAPI_COMPILER_H */
