// RUN: flamia-opt %s -split-input-file --flamia-verify-causality=report=true -verify-diagnostics | FileCheck %s
// Programs the analysis proves safe, with what it proved.

!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
#p = #flamia.precision<f8E4M3FN, fixed_scale = 8>
#ds = #flamia.precision<f8E4M3FN, online = 32>

// The mxfp8 recipe: Q per token, K, V, dO, Q^tb in document-local 32x32 blocks,
// a 128-token safe block.
// CHECK-LABEL: func.func @mxfp8
func.func @mxfp8(%q: !b, %k: !b, %v: !b, %do: !b, %cu: tensor<?xi32>) -> tensor<?x2x64xf32> {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %k8 = flamia.quantize %k cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %v8 = flamia.quantize %v cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %do8 = flamia.quantize %do cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %qtb = flamia.quantize %q cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  // expected-remark @below {{causality verified: L1 (forward causality); L2 (document-local blocks); L3 not requested}}
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%v8) safe(%q, %k, %v) cu_seqlens(%cu)
      {causal, p = #p, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (!pt, !tb, !tb, !b, !b, !b, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  // expected-remark @below {{causality verified: no forward outputs (L1 n/a); L2 (document-local blocks); L3 not requested}}
  %dq, %dk, %dv = flamia.attention_bwd qk(%q8, %k8) dov(%do8, %v8) dsk(%k8) dsq(%qtb) pdo(%do8) safe(%q, %k, %v, %do) o(%o) lse(%lse) cu_seqlens(%cu)
      {causal, ds = #ds, p = #p, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (!pt, !tb, !tb, !tb, !tb, !tb, !tb, !b, !b, !b, !b, !b, tensor<2x?xf32>, tensor<?xi32>)
      -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return %dq : tensor<?x2x64xf32>
}

// -----
!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
// The smallest safe block that works: 32, one token block.
// CHECK-LABEL: func.func @safe_block_32
func.func @safe_block_32(%q: !b, %k: !b, %cu: tensor<?xi32>) -> !b {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %k8 = flamia.quantize %k cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  // expected-remark @below {{causality verified: L1 (forward causality); L2 (document-local blocks)}}
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%k8) safe(%q, %k, %k) cu_seqlens(%cu)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 32>}
      : (!pt, !tb, !tb, !b, !b, !b, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  return %o : !b
}

// -----
!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
// Strict: per-token copies for the head-dim-contracted GEMMs, token blocks
// for the token-contracted ones inside the safe block.
// CHECK-LABEL: func.func @strict
func.func @strict(%q: !b, %k: !b, %v: !b, %do: !b, %o: !b, %lse: tensor<2x?xf32>, %cu: tensor<?xi32>) -> tensor<?x2x64xf32> {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %k8 = flamia.quantize %k : (!b) -> !pt
  %v8 = flamia.quantize %v : (!b) -> !pt
  %do8 = flamia.quantize %do : (!b) -> !pt
  %ktb = flamia.quantize %k cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %qtb = flamia.quantize %q cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %dotb = flamia.quantize %do cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  // expected-remark @below {{causality verified: no forward outputs (L1 n/a); L2 (document-local blocks); L3 (strict backward causality)}}
  %dq, %dk, %dv = flamia.attention_bwd qk(%q8, %k8) dov(%do8, %v8) dsk(%ktb) dsq(%qtb) pdo(%dotb) safe(%q, %k, %v, %do) o(%o) lse(%lse) cu_seqlens(%cu)
      {causal, ds = #flamia.precision<f8E4M3FN, online = 32>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>,
       recipe = #flamia.recipe<mxfp8, safe_block = 128, strict>}
      : (!pt, !pt, !pt, !pt, !tb, !tb, !tb, !b, !b, !b, !b, !b, tensor<2x?xf32>, tensor<?xi32>)
      -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return %dq : tensor<?x2x64xf32>
}

// -----
!b = tensor<?x2x64xbf16>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
// Non-causal attention: every output sees its whole document anyway, so only
// document isolation (L2) is at stake; token-block Q is fine.
// CHECK-LABEL: func.func @non_causal
func.func @non_causal(%q: !b, %cu: tensor<?xi32>) -> !b {
  %q8 = flamia.quantize %q cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  // expected-remark @below {{causality verified: non-causal (L1 n/a); L2 (document-local blocks); L3 not requested}}
  %o, %lse = flamia.attention_fwd qk(%q8, %q8) pv(%q8) cu_seqlens(%cu)
      {p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8>}
      : (!tb, !tb, !tb, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  return %o : !b
}

// -----
!b = tensor<256x2x64xbf16>
!tbp = !flamia.qtensor<256x2x64xf8E4M3FN, f8E8M0FNU, 32x32, packed>
!pt = !flamia.qtensor<256x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
// One document (no cu_seqlens): packed and document-local blocks coincide.
// CHECK-LABEL: func.func @one_document_packed
func.func @one_document_packed(%q: !b) -> !b {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %k8 = flamia.quantize %q : (!b) -> !tbp
  // expected-remark @below {{causality verified: L1 (forward causality); L2 n/a (one document); L3 not requested}}
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%k8) safe(%q, %q, %q)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (!pt, !tbp, !tbp, !b, !b, !b) -> (!b, tensor<2x256xf32>)
  return %o : !b
}

// -----
!b = tensor<?x2x64xbf16>
!nv = !flamia.qtensor<?x2x64xf4E2M1FN, f8E4M3FN, 1x16>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
#p = #flamia.precision<f8E4M3FN, fixed_scale = 8>
#ds = #flamia.precision<f8E4M3FN, online = 32>
// The nvfp4-mixed recipe, strict: NVFP4 per token for Q, K in S = Q K^T and
// dO, V in dP = dO V^T, E4M3 32x32 document-local blocks for the
// token-contracted uses. Every head-dim-contracted operand is per token, so
// L3 is proven with no per-token E4M3 copy.
// CHECK-LABEL: func.func @nvfp4_mixed_strict
func.func @nvfp4_mixed_strict(%q: !b, %k: !b, %v: !b, %do: !b, %cu: tensor<?xi32>) -> tensor<?x2x64xf32> {
  %q4 = flamia.quantize %q : (!b) -> !nv
  %k4 = flamia.quantize %k : (!b) -> !nv
  %v4 = flamia.quantize %v : (!b) -> !nv
  %do4 = flamia.quantize %do : (!b) -> !nv
  %qtb = flamia.quantize %q cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %ktb = flamia.quantize %k cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %vtb = flamia.quantize %v cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %dotb = flamia.quantize %do cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  // expected-remark @below {{causality verified: L1 (forward causality); L2 (document-local blocks); L3 not requested}}
  %o, %lse = flamia.attention_fwd qk(%q4, %k4) pv(%vtb) safe(%q, %k, %v) cu_seqlens(%cu)
      {causal, p = #p, recipe = #flamia.recipe<nvfp4_mixed, safe_block = 128, strict>}
      : (!nv, !nv, !tb, !b, !b, !b, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  // expected-remark @below {{causality verified: no forward outputs (L1 n/a); L2 (document-local blocks); L3 (strict backward causality)}}
  %dq, %dk, %dv = flamia.attention_bwd qk(%q4, %k4) dov(%do4, %v4) dsk(%ktb) dsq(%qtb) pdo(%dotb) safe(%q, %k, %v, %do) o(%o) lse(%lse) cu_seqlens(%cu)
      {causal, ds = #ds, p = #p, recipe = #flamia.recipe<nvfp4_mixed, safe_block = 128, strict>}
      : (!nv, !nv, !nv, !nv, !tb, !tb, !tb, !b, !b, !b, !b, !b, tensor<2x?xf32>, tensor<?xi32>)
      -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return %dq : tensor<?x2x64xf32>
}
