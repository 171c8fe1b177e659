// RUN: flamia-opt %s -split-input-file --flamia-varlen-schedule=target=sm_90a -verify-diagnostics

// Recipe nvfp4-mixed's contract reads K per token in NVFP4 in Q K^T: an
// MXFP8 token-block K is an error naming the recipe and the type it expects.
!b = tensor<?x2x64xbf16>
!q4 = !flamia.qtensor<?x2x64xf4E2M1FN, f8E4M3FN, 1x16>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
func.func @mxfp8_k(%q: !b, %k: !b, %v: !b, %cu: tensor<?xi32>) -> (!b, tensor<2x?xf32>) {
  %q4 = flamia.quantize %q : (!b) -> !q4
  %k8 = flamia.quantize %k cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %v8 = flamia.quantize %v cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  // expected-error @below {{the kernels implement recipe nvfp4-mixed's contract, where k is '!flamia.qtensor<?x2x64xf4E2M1FN, f8E4M3FN, 1x16>', but it is '!flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>'}}
  %o, %lse = flamia.attention_fwd qk(%q4, %k8) pv(%v8) safe(%q, %k, %v) cu_seqlens(%cu)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<nvfp4_mixed, safe_block = 128>}
      : (!q4, !tb, !tb, !b, !b, !b, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  return %o, %lse : !b, tensor<2x?xf32>
}

// -----

// NVFP4 operands under recipe mxfp8 are not its contract either.
!b = tensor<?x2x64xbf16>
!q4 = !flamia.qtensor<?x2x64xf4E2M1FN, f8E4M3FN, 1x16>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
func.func @nvfp4_q_under_mxfp8(%q: !b, %k: !b, %v: !b, %cu: tensor<?xi32>) -> (!b, tensor<2x?xf32>) {
  %q4 = flamia.quantize %q : (!b) -> !q4
  %k8 = flamia.quantize %k cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %v8 = flamia.quantize %v cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  // expected-error @below {{the kernels implement recipe mxfp8's contract, where q is '!flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>', but it is '!flamia.qtensor<?x2x64xf4E2M1FN, f8E4M3FN, 1x16>'}}
  %o, %lse = flamia.attention_fwd qk(%q4, %k8) pv(%v8) safe(%q, %k, %v) cu_seqlens(%cu)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (!q4, !tb, !tb, !b, !b, !b, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  return %o, %lse : !b, tensor<2x?xf32>
}
