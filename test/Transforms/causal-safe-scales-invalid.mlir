// RUN: flamia-opt %s -split-input-file --flamia-causal-safe-scales -verify-diagnostics

!b = tensor<?x2x64xbf16>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
// A leaky operand that does not come from flamia.quantize cannot be
// requantized.
func.func @not_repairable(%q8: !tb, %q: !b, %cu: tensor<?xi32>) -> !b {
  // expected-error @below {{cannot make q in S = Q K^T causally safe: its quantization is not a flamia.quantize op (it is a block argument)}}
  %o, %lse = flamia.attention_fwd qk(%q8, %q8) pv(%q8) safe(%q, %q, %q) cu_seqlens(%cu)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (!tb, !tb, !tb, !b, !b, !b, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  return %o : !b
}

// -----
!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
// The safe block needs the bf16 originals; here nobody knows them.
func.func @no_originals(%q8: !pt, %k8: !tb, %cu: tensor<?xi32>) -> !b {
  // expected-error @below {{cannot add a safe block: the bf16 original of q is unknown (none of its quantized copies is produced by flamia.quantize)}}
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%k8) cu_seqlens(%cu)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8>}
      : (!pt, !tb, !tb, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  return %o : !b
}

