// RUN: flamia-opt %s -split-input-file --flamia-varlen-schedule -verify-diagnostics

!b = tensor<?x2x64xbf16>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
func.func @not_quantized_here(%q8: !pt, %k: !b, %cu: tensor<?xi32>) -> (!b, tensor<2x?xf32>) {
  %k8 = flamia.quantize %k cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  // expected-error @below {{flamia-varlen-schedule: q must come from flamia.quantize (run flamia-graph-pipeline first)}}
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%k8) safe(%k, %k, %k) cu_seqlens(%cu)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (!pt, !tb, !tb, !b, !b, !b, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  return %o, %lse : !b, tensor<2x?xf32>
}

// -----
!b = tensor<?x2x64xbf16>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
func.func @token_block_q(%q: !b, %cu: tensor<?xi32>) -> (!b, tensor<2x?xf32>) {
  %q8 = flamia.quantize %q cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  // expected-error @below {{the kernels implement recipe mxfp8's contract, where q is '!flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>', but it is '!flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>'}}
  %o, %lse = flamia.attention_fwd qk(%q8, %q8) pv(%q8) safe(%q, %q, %q) cu_seqlens(%cu)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (!tb, !tb, !tb, !b, !b, !b, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  return %o, %lse : !b, tensor<2x?xf32>
}

// -----
// Which recipes, strict modes and head dims have kernels is the recipe
// registry's answer (flamia/Numerics/RecipeRegistry.h).
!b = tensor<?x2x96xbf16>
!tb = !flamia.qtensor<?x2x96xf8E4M3FN, f8E8M0FNU, 32x32>
!pt = !flamia.qtensor<?x2x96xf8E4M3FN, f8E8M0FNU, 1x32>
func.func @head_dim_96(%q: !b, %k: !b, %v: !b, %cu: tensor<?xi32>) -> (!b, tensor<2x?xf32>) {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %k8 = flamia.quantize %k cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %v8 = flamia.quantize %v cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  // expected-error @below {{flamia-varlen-schedule: head dim 96 is not implemented by the kernels (64, 128)}}
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%v8) safe(%q, %k, %v) cu_seqlens(%cu)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (!pt, !tb, !tb, !b, !b, !b, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  return %o, %lse : !b, tensor<2x?xf32>
}

// -----
!b = tensor<?x2x64xbf16>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
func.func @strict(%q: !b, %k: !b, %v: !b, %cu: tensor<?xi32>) -> (!b, tensor<2x?xf32>) {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %k8 = flamia.quantize %k : (!b) -> !pt
  %v8 = flamia.quantize %v cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  // expected-error @below {{flamia-varlen-schedule: no sm_100a kernels implement strict mxfp8 (L3 causality: K quantized per token) yet; they quantize K in 32x32 token blocks}}
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%v8) safe(%q, %k, %v) cu_seqlens(%cu)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128, strict>}
      : (!pt, !pt, !tb, !b, !b, !b, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  return %o, %lse : !b, tensor<2x?xf32>
}

// -----
!b = tensor<?x2x64xbf16>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
func.func @nvfp4(%q: !b, %k: !b, %v: !b, %cu: tensor<?xi32>) -> (!b, tensor<2x?xf32>) {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %k8 = flamia.quantize %k cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %v8 = flamia.quantize %v cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  // (sm_100a has nvfp4-mixed forward kernels: their contract is checked.)
  // expected-error @below {{flamia-varlen-schedule: the kernels implement recipe nvfp4-mixed's contract, where q is '!flamia.qtensor<?x2x64xf4E2M1FN, f8E4M3FN, 1x16>', but it is '!flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>'}}
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%v8) safe(%q, %k, %v) cu_seqlens(%cu)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<nvfp4_mixed, safe_block = 128>}
      : (!pt, !tb, !tb, !b, !b, !b, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  return %o, %lse : !b, tensor<2x?xf32>
}
