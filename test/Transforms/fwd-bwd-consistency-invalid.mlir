// RUN: flamia-opt %s -split-input-file --flamia-fwd-bwd-consistency -verify-diagnostics

!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
#p = #flamia.precision<f8E4M3FN, fixed_scale = 8>
#ds = #flamia.precision<f8E4M3FN, online = 32>
func.func @recipes_disagree(%q: !b, %k: !b, %cu: tensor<?xi32>) -> tensor<?x2x64xf32> {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %k8 = flamia.quantize %k cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  // expected-note @below {{the forward is here}}
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%k8) safe(%q, %k, %k) cu_seqlens(%cu)
      {causal, p = #p, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (!pt, !tb, !tb, !b, !b, !b, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  // expected-error @below {{the backward's recipe (#flamia.recipe<mxfp8, safe_block = 64>) disagrees with its forward's (#flamia.recipe<mxfp8, safe_block = 128>)}}
  %dq, %dk, %dv = flamia.attention_bwd qk(%q8, %k8) dov(%k8, %k8) dsk(%k8) dsq(%k8) pdo(%k8) safe(%q, %k, %k, %q) o(%o) lse(%lse)
      cu_seqlens(%cu) {causal, ds = #ds, p = #p, recipe = #flamia.recipe<mxfp8, safe_block = 64>}
      : (!pt, !tb, !tb, !tb, !tb, !tb, !tb, !b, !b, !b, !b, !b, tensor<2x?xf32>, tensor<?xi32>)
      -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return %dq : tensor<?x2x64xf32>
}

// -----
!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
#r = #flamia.recipe<mxfp8, safe_block = 128>
#p = #flamia.precision<f8E4M3FN, fixed_scale = 8>
#ds = #flamia.precision<f8E4M3FN, online = 32>
func.func @different_key(%q: !b, %k: !b, %k2: !b, %cu: tensor<?xi32>) -> tensor<?x2x64xf32> {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %k8 = flamia.quantize %k cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %k28 = flamia.quantize %k2 cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  // expected-note @below {{the forward is here}}
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%k8) safe(%q, %k, %k) cu_seqlens(%cu) {causal, p = #p, recipe = #r}
      : (!pt, !tb, !tb, !b, !b, !b, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  // expected-error @below {{the backward recomputes S = Q K^T from a different k than its forward, so P would not match the forward's}}
  %dq, %dk, %dv = flamia.attention_bwd qk(%q8, %k28) dov(%k8, %k8) dsk(%k8) dsq(%k8) pdo(%k8) safe(%q, %k, %k, %q) o(%o) lse(%lse)
      cu_seqlens(%cu) {causal, ds = #ds, p = #p, recipe = #r}
      : (!pt, !tb, !tb, !tb, !tb, !tb, !tb, !b, !b, !b, !b, !b, tensor<2x?xf32>, tensor<?xi32>)
      -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return %dq : tensor<?x2x64xf32>
}

// -----
!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
#r = #flamia.recipe<mxfp8, safe_block = 128>
#p = #flamia.precision<f8E4M3FN, fixed_scale = 8>
#ds = #flamia.precision<f8E4M3FN, online = 32>
func.func @causal_disagrees(%q: !b, %k: !b, %cu: tensor<?xi32>) -> tensor<?x2x64xf32> {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %k8 = flamia.quantize %k cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  // expected-note @below {{the forward is here}}
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%k8) safe(%q, %k, %k) cu_seqlens(%cu) {causal, p = #p, recipe = #r}
      : (!pt, !tb, !tb, !b, !b, !b, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  // expected-error @below {{the backward's causal flag (false) disagrees with its forward's (true)}}
  %dq, %dk, %dv = flamia.attention_bwd qk(%q8, %k8) dov(%k8, %k8) dsk(%k8) dsq(%k8) pdo(%k8) safe(%q, %k, %k, %q) o(%o) lse(%lse)
      cu_seqlens(%cu) {ds = #ds, p = #p, recipe = #r}
      : (!pt, !tb, !tb, !tb, !tb, !tb, !tb, !b, !b, !b, !b, !b, tensor<2x?xf32>, tensor<?xi32>)
      -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return %dq : tensor<?x2x64xf32>
}

// -----
// O and LSE of two different forwards (of the same shapes): the pass used to
// take the LSE's forward and silently replace O with that forward's O.
!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
#r = #flamia.recipe<mxfp8, safe_block = 128>
#p = #flamia.precision<f8E4M3FN, fixed_scale = 8>
#ds = #flamia.precision<f8E4M3FN, online = 32>
func.func @o_and_lse_of_two_forwards(%q: !b, %k: !b, %k2: !b, %cu: tensor<?xi32>) -> tensor<?x2x64xf32> {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %k8 = flamia.quantize %k cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %k28 = flamia.quantize %k2 cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  // expected-note @below {{O comes from this forward}}
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%k8) safe(%q, %k, %k) cu_seqlens(%cu) {causal, p = #p, recipe = #r}
      : (!pt, !tb, !tb, !b, !b, !b, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  // expected-note @below {{LSE comes from this forward}}
  %o2, %lse2 = flamia.attention_fwd qk(%q8, %k28) pv(%k28) safe(%q, %k2, %k2) cu_seqlens(%cu) {causal, p = #p, recipe = #r}
      : (!pt, !tb, !tb, !b, !b, !b, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  // expected-error @below {{reads O and LSE from two different forwards; the backward must use the O and LSE of the forward it differentiates}}
  %dq, %dk, %dv = flamia.attention_bwd qk(%q8, %k8) dov(%k8, %k8) dsk(%k8) dsq(%k8) pdo(%k8) safe(%q, %k, %k, %q) o(%o) lse(%lse2)
      cu_seqlens(%cu) {causal, ds = #ds, p = #p, recipe = #r}
      : (!pt, !tb, !tb, !tb, !tb, !tb, !tb, !b, !b, !b, !b, !b, tensor<2x?xf32>, tensor<?xi32>)
      -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return %dq : tensor<?x2x64xf32>
}
