// RUN: flamia-opt %s --flamia-causal-safe-scales=safe-block=48 -verify-diagnostics
// The option is checked when it is needed.
!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
func.func @bad_option(%q: !b, %cu: tensor<?xi32>) -> !b {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %k8 = flamia.quantize %q cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  // expected-error @below {{flamia-causal-safe-scales: safe-block must be a positive multiple of 32, got 48}}
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%k8) cu_seqlens(%cu)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8>}
      : (!pt, !tb, !tb, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  return %o : !b
}
