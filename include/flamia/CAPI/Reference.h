/*===- flamia/CAPI/Reference.h - C API of the CPU reference ---------*- C -*-===
 *
 * The executable numerics contract (docs/numerics.md) on host arrays:
 * attention over packed documents, forward (O, LSE) and backward (dQ, dK,
 * dV), for any recipe preset. This is the CPU path of the Python op
 * (python/flamia) and what the GPU kernels are checked against. Slow but
 * exact: every sum is the exact sum of exact products rounded once to
 * float32; results do not depend on the thread count.
 *
 *   flamia_reference_args a;
 *   flamia_reference_args_init(&a);          // recipe "mxfp8", causal
 *   a.num_tokens = T; a.num_q_heads = Hq; a.num_kv_heads = Hkv;
 *   a.head_dim = D; a.num_docs = n; a.cu_seqlens = cu;
 *   a.q = q; a.k = k; a.v = v; a.o = o; a.lse = lse;
 *   if (flamia_reference_forward(&a) != FLAMIA_STATUS_OK)
 *     fprintf(stderr, "%s\n", flamia_reference_last_error());
 *   a.grad_o = dO; a.dq = dq; a.dk = dk; a.dv = dv;   // o, lse now inputs
 *   flamia_reference_backward(&a);
 *
 * All arrays are host float32 in C order: q, o, grad_o, dq [T, Hq, D];
 * k, v, dk, dv [T, Hkv, D] (GQA: query head h reads kv head h / (Hq / Hkv));
 * lse [Hq, T] in natural-log units. q, k, v, grad_o and o are rounded to bf16
 * first (they are meant to hold bf16 values already); o is written with bf16
 * values. The struct follows flamia/CAPI/Runtime.h's conventions
 * (struct_size, never aborts, the last error per thread).
 *===----------------------------------------------------------------------===*/
#ifndef FLAMIA_CAPI_REFERENCE_H
#define FLAMIA_CAPI_REFERENCE_H

#include "flamia/CAPI/Common.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct flamia_reference_args {
  size_t struct_size;
  /* A recipe preset: "mxfp8" (the default), "mxfp8-strict", "none" (exact
   * float64 attention), or a baseline (flamia-ref recipes lists them). */
  const char *recipe;
  /* -1: the recipe's safe block (128 for mxfp8); 0: none; else a positive
   * multiple of 32 up to 2^20. Must be -1 or 0 for recipe "none". */
  int64_t safe_block;
  int32_t causal;      /* 1 (default) or 0 */
  float softmax_scale; /* 0: 1/sqrt(D); else finite and > 0 */
  int64_t num_tokens;  /* T >= 0 */
  int32_t num_q_heads; /* Hq >= 1 */
  int32_t num_kv_heads; /* Hkv >= 1, divides Hq */
  int32_t head_dim;    /* D >= 1 (a multiple of 32 for quantized recipes) */
  int32_t num_docs;    /* >= 1; zero-length documents allowed */
  const int32_t *cu_seqlens; /* [num_docs + 1]: 0, ..., T non-decreasing */
  const float *q, *k, *v;
  float *o;   /* forward: written; backward: read (the forward's O) */
  float *lse; /* forward: written; backward: read (the forward's LSE) */
  const float *grad_o;         /* backward: dL/dO */
  float *dq, *dk, *dv;         /* backward: written */
} flamia_reference_args;

FLAMIA_CAPI_EXPORT void flamia_reference_args_init(flamia_reference_args *a);

/** O and LSE from q, k, v. */
FLAMIA_CAPI_EXPORT flamia_status
flamia_reference_forward(const flamia_reference_args *args);
/** dQ, dK, dV from q, k, v, grad_o and the forward's o and lse (recipe
 *  "none" recomputes its exact forward instead of reading them). */
FLAMIA_CAPI_EXPORT flamia_status
flamia_reference_backward(const flamia_reference_args *args);

/** The message of the last call that failed on this thread ("" if none). */
FLAMIA_CAPI_EXPORT const char *flamia_reference_last_error(void);
/** The project version, "0.1.0". */
FLAMIA_CAPI_EXPORT const char *flamia_reference_version(void);

#ifdef __cplusplus
}
#endif

#endif /* FLAMIA_CAPI_REFERENCE_H */
