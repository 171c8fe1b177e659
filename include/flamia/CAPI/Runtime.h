/*===- flamia/CAPI/Runtime.h - C API of the FLAMIA runtime ---------*- C -*-===
 *
 * A stable C ABI over lib/Runtime: load an artifact directory (manifest.json
 * and cubins written by flamia-compile), then run causal attention over
 * packed variable-length documents with the manifest's kernels.
 *
 *   flamia_runtime *rt;
 *   char err[1024];
 *   if (flamia_runtime_create("artifacts/", 0, &rt, err, sizeof err))
 *     fprintf(stderr, "%s\n", err);     // "CUDA driver not available: ..."
 *   flamia_attention_args a;
 *   flamia_attention_args_init(&a);
 *   a.q = q; a.k = k; a.v = v; a.cu_seqlens = cu; a.o = o; a.lse = lse;
 *   a.num_tokens = T; a.num_q_heads = 16; a.num_kv_heads = 16;
 *   a.head_dim = 128; a.num_docs = n;
 *   if (flamia_attention_forward(rt, &a, stream) != FLAMIA_STATUS_OK)
 *     fprintf(stderr, "%s\n", flamia_last_error());
 *   flamia_runtime_destroy(rt);
 *
 * A training step (a manifest with backward kernels) in two phases, e.g. an
 * autograd op's forward and, later, its backward:
 *   flamia_attention_forward_phase(rt, &a, stream);  // o, lse; grads unset
 *   ...
 *   a.grad_o = dO; a.dq = dq; a.dk = dk; a.dv = dv;  // same q..lse, sizes
 *   flamia_attention_backward_phase(rt, &a, stream); // dq, dk, dv
 *
 * Conventions:
 *  - Handles are opaque. Every function returning flamia_status checks its
 *    pointers and reports errors as a status plus a message (never aborts);
 *    the message of the last failing call on the calling thread is
 *    flamia_last_error(). flamia_runtime_create also copies it to `err`.
 *  - Structs passed in start with `struct_size` (set by the _init functions);
 *    later versions only append fields. A struct smaller than this version's
 *    is rejected, except the sizes of earlier versions of
 *    flamia_attention_args (FLAMIA_ATTENTION_ARGS_SIZE_V1 and _V2: the
 *    fields added since read as zero); a larger one is accepted when its extra bytes are
 *    zero.
 *  - Pointers in flamia_attention_args are CUDA device addresses in the
 *    device's primary context (what cudaMalloc and PyTorch return).
 *  - Streams are CUstream / cudaStream_t values; NULL is the legacy default
 *    stream.
 *  - Calls on one runtime are serialized (internally locked).
 *
 * docs/runtime.md documents every rule; docs/runtime-abi.md the manifest.
 *===----------------------------------------------------------------------===*/
#ifndef FLAMIA_CAPI_RUNTIME_H
#define FLAMIA_CAPI_RUNTIME_H

#include "flamia/CAPI/Common.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Bumped on incompatible changes (none so far). */
#define FLAMIA_RUNTIME_ABI_VERSION 1

typedef enum flamia_dtype {
  FLAMIA_DTYPE_BF16 = 0,
  FLAMIA_DTYPE_F32 = 1,
  FLAMIA_DTYPE_I32 = 2,
  FLAMIA_DTYPE_U8 = 3
} flamia_dtype;

typedef enum flamia_buffer_role {
  FLAMIA_BUFFER_INPUT = 0,
  FLAMIA_BUFFER_OUTPUT = 1,
  FLAMIA_BUFFER_WORKSPACE = 2,
  FLAMIA_BUFFER_SCHEDULE = 3
} flamia_buffer_role;

typedef struct flamia_runtime flamia_runtime;
/** A CUstream (cudaStream_t); NULL is the legacy default stream. */
typedef void *flamia_stream;

typedef struct flamia_runtime_options {
  size_t struct_size;
  /** Zero the workspace before every call (sanitizer initcheck). Default 0. */
  int zero_workspace;
  /** Synchronize after every kernel and name the failing one. Default 0. */
  int sync_after_each_kernel;
  /** Check every schedule with FlamiaSchedule's invariants. Default 0. */
  int check_schedule;
  /** Check pointers with cuPointerGetAttribute (device memory of this device,
   *  allocation large enough). Default 1. */
  int check_device_pointers;
  /* Since version 2 (struct_size > FLAMIA_RUNTIME_OPTIONS_SIZE_V1). */
  /** The order of the work lists, overriding the manifest's schedule.order
   *  (A/B runs; every order computes the same result): 0 the manifest's,
   *  FLAMIA_SCHEDULE_ORDER_LPT or FLAMIA_SCHEDULE_ORDER_L2_SECTIONS. */
  int schedule_order;
} flamia_runtime_options;

/** The struct_size of flamia_runtime_options before schedule_order;
 *  accepted, which then reads as 0. */
#define FLAMIA_RUNTIME_OPTIONS_SIZE_V1                                         \
  (offsetof(flamia_runtime_options, schedule_order))
#define FLAMIA_SCHEDULE_ORDER_LPT 1
#define FLAMIA_SCHEDULE_ORDER_L2_SECTIONS 2

typedef struct flamia_attention_args {
  size_t struct_size;
  const void *q;             /* bf16 [T, Hq, D], 16-byte aligned */
  const void *k;             /* bf16 [T, Hkv, D], 16-byte aligned */
  const void *v;             /* bf16 [T, Hkv, D], 16-byte aligned */
  const int32_t *cu_seqlens; /* int32 [num_docs + 1], device memory */
  void *o;                   /* bf16 [T, Hq, D], 16-byte aligned */
  float *lse;                /* f32 [Hq, T] (natural log), 16-byte aligned */
  int64_t num_tokens;        /* T >= 0 */
  int32_t num_q_heads;       /* Hq >= 1 */
  int32_t num_kv_heads;      /* Hkv >= 1, divides Hq */
  int32_t head_dim;          /* D, must equal the manifest's head_dim */
  int32_t num_docs;          /* >= 1; zero-length documents allowed */
  float softmax_scale;       /* 0: manifest's, else 1/sqrt(D) */
  /* Since the backward (struct_size > FLAMIA_ATTENTION_ARGS_SIZE_V1). Bound
   * when the manifest lists them (a training step), ignored otherwise. */
  const void *grad_o; /* bf16 [T, Hq, D]: dL/dO, 16-byte aligned */
  void *dq;           /* [T, Hq, D], bf16 or f32 (the manifest's dtype) */
  void *dk;           /* [T, Hkv, D], bf16 or f32 */
  void *dv;           /* [T, Hkv, D], bf16 or f32 */
  /* Since version 3 (struct_size > FLAMIA_ATTENTION_ARGS_SIZE_V2). Optional:
   * cu_seqlens' num_docs + 1 values in host memory, equal to the device
   * array's. With it the runtime never reads cu_seqlens from the device (no
   * synchronization), and a call can be captured in a CUDA graph
   * (docs/runtime.md, "CUDA graphs"). The kernels address memory only
   * through the schedule built from these values: a device array that
   * differs gives wrong documents, never an access out of bounds. */
  const int32_t *cu_seqlens_host;
} flamia_attention_args;

/** The struct_size of flamia_attention_args before grad_o, dq, dk, dv (the
 *  first version: offsetof(flamia_attention_args, grad_o)); accepted, the
 *  gradients then read as NULL. */
#define FLAMIA_ATTENTION_ARGS_SIZE_V1 \
  (offsetof(flamia_attention_args, grad_o))
/** The struct_size of version 2 (before cu_seqlens_host); accepted, which
 *  then reads as NULL. */
#define FLAMIA_ATTENTION_ARGS_SIZE_V2 \
  (offsetof(flamia_attention_args, cu_seqlens_host))

#define FLAMIA_MAX_BUFFER_RANK 8

typedef struct flamia_buffer_info {
  size_t struct_size;
  const char *name; /* valid while the runtime lives */
  flamia_buffer_role role;
  flamia_dtype dtype;
  int32_t rank;
  int64_t shape[FLAMIA_MAX_BUFFER_RANK];
  void *device_ptr; /* device address of the last prepared call */
  uint64_t bytes;
} flamia_buffer_info;

typedef struct flamia_device_info {
  size_t struct_size;
  int32_t ordinal;
  int32_t compute_major, compute_minor;
  int32_t num_sms;
  int32_t driver_version; /* cuDriverGetVersion, e.g. 13000 */
  char name[256];
} flamia_device_info;

/** FLAMIA_RUNTIME_ABI_VERSION of the library. */
FLAMIA_CAPI_EXPORT int flamia_runtime_abi_version(void);
/** A fixed description of a status ("CUDA driver not available", ...). */
FLAMIA_CAPI_EXPORT const char *flamia_status_string(flamia_status status);
/** The message of the last call that failed on this thread ("" if none). */
FLAMIA_CAPI_EXPORT const char *flamia_last_error(void);

FLAMIA_CAPI_EXPORT void
flamia_runtime_options_init(flamia_runtime_options *options);
FLAMIA_CAPI_EXPORT void flamia_attention_args_init(flamia_attention_args *args);

/** Loads ARTIFACT_DIR/manifest.json (manifest errors need no driver), the
 *  CUDA driver (dlopen libcuda.so.1, or $FLAMIA_LIBCUDA), device
 *  `device_ordinal` and every cubin. On failure *out is NULL and, if err is
 *  not NULL, the message is copied there (truncated to errlen - 1). */
FLAMIA_CAPI_EXPORT flamia_status flamia_runtime_create(const char *artifact_dir,
                                                       int device_ordinal,
                                                       flamia_runtime **out,
                                                       char *err,
                                                       size_t errlen);
FLAMIA_CAPI_EXPORT flamia_status flamia_runtime_create_with_options(
    const char *artifact_dir, int device_ordinal,
    const flamia_runtime_options *options, flamia_runtime **out, char *err,
    size_t errlen);
/** Waits for the runtime's last kernels, frees everything. NULL is a no-op. */
FLAMIA_CAPI_EXPORT void flamia_runtime_destroy(flamia_runtime *rt);

/** Validates, builds the schedule, binds the buffers by name and launches
 *  every kernel of the manifest in order on `stream` (asynchronous, except
 *  that reading cu_seqlens synchronizes `stream` once). For a training-step
 *  manifest grad_o, dq, dk, dv are required. */
FLAMIA_CAPI_EXPORT flamia_status
flamia_attention_forward(flamia_runtime *rt, const flamia_attention_args *args,
                         flamia_stream stream);
/** The forward phase of a training step: validates (grad_o, dq, dk, dv may be
 *  NULL; checked when given), builds the schedule, binds the buffers and
 *  launches the kernels of phase "forward" in manifest order. For a manifest
 *  without backward kernels it is flamia_attention_forward. */
FLAMIA_CAPI_EXPORT flamia_status flamia_attention_forward_phase(
    flamia_runtime *rt, const flamia_attention_args *args,
    flamia_stream stream);
/** The backward phase: launches the kernels of phase "backward" in manifest
 *  order on the workspace of the last flamia_attention_forward_phase on this
 *  runtime (a runtime holds one forward's workspace: one runtime per pending
 *  backward), which must have been the last call on it (or been followed only
 *  by backward phases) and have had the same call: the same num_tokens,
 *  num_q_heads, num_kv_heads, head_dim, num_docs and softmax scale, the same
 *  q, k, v, cu_seqlens, o, lse pointers, and cu_seqlens holding the same
 *  values (read again: `stream` is synchronized once). grad_o, dq, dk, dv are
 *  required. Otherwise FLAMIA_STATUS_INVALID_ARGUMENT naming what differs,
 *  and nothing is launched. */
FLAMIA_CAPI_EXPORT flamia_status flamia_attention_backward_phase(
    flamia_runtime *rt, const flamia_attention_args *args,
    flamia_stream stream);
/** The first half of forward: everything but the launches. */
FLAMIA_CAPI_EXPORT flamia_status
flamia_attention_prepare(flamia_runtime *rt, const flamia_attention_args *args,
                         flamia_stream stream);
/** Launches kernels [first_kernel, first_kernel + num_kernels) of the last
 *  prepared call (again, if already launched: for benchmarks). */
FLAMIA_CAPI_EXPORT flamia_status flamia_runtime_launch(flamia_runtime *rt,
                                                       size_t first_kernel,
                                                       size_t num_kernels,
                                                       flamia_stream stream);

FLAMIA_CAPI_EXPORT size_t flamia_runtime_num_kernels(const flamia_runtime *rt);
/** NULL when out of range. */
FLAMIA_CAPI_EXPORT const char *
flamia_runtime_kernel_name(const flamia_runtime *rt, size_t index);
FLAMIA_CAPI_EXPORT size_t flamia_runtime_num_buffers(const flamia_runtime *rt);
/** NULL when out of range. */
FLAMIA_CAPI_EXPORT const char *
flamia_runtime_buffer_name(const flamia_runtime *rt, size_t index);
/** A buffer of the last prepared call by name (workspace copies for tests:
 *  "q_pt", "q_pt_scales", "q_deq", ...). NOT_FOUND for an unknown name, a
 *  buffer the kernel set does not have (sm_90a sets have no payloads such as
 *  "q_pt" unless compiled with --payloads) or when no call was prepared. Set out->struct_size first (or zero the struct and set it). */
FLAMIA_CAPI_EXPORT flamia_status flamia_runtime_get_buffer(
    const flamia_runtime *rt, const char *name, flamia_buffer_info *out);
FLAMIA_CAPI_EXPORT flamia_status flamia_runtime_get_device_info(
    const flamia_runtime *rt, flamia_device_info *out);
/** The manifest's target ("sm_90a") and recipe kind ("mxfp8", or "" when the
 *  manifest has none); valid while the runtime lives. */
FLAMIA_CAPI_EXPORT const char *flamia_runtime_target(const flamia_runtime *rt);
FLAMIA_CAPI_EXPORT const char *flamia_runtime_recipe(const flamia_runtime *rt);
/** The softmax scale the last prepared call used (0 if none). */
FLAMIA_CAPI_EXPORT float flamia_runtime_softmax_scale(const flamia_runtime *rt);

#ifdef __cplusplus
}
#endif

#endif /* FLAMIA_CAPI_RUNTIME_H */
