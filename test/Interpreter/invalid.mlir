// RUN: flamia-interp %s -split-input-file -verify-diagnostics --tokens 300
// What flamia-interp cannot execute exactly is an error on the op, never an
// approximation or a crash.

func.func @unknown_op(%x: tensor<?x2x64xf32>) -> tensor<?x2x64xf32> {
  // expected-error @+1 {{'arith.addf' op cannot be interpreted: flamia-interp executes graph-level flamia ops}}
  %y = arith.addf %x, %x : tensor<?x2x64xf32>
  return %y : tensor<?x2x64xf32>
}

// -----
func.func @prequantized(%data: tensor<?x2x64xf8E4M3FN>, %scales: tensor<?x2x2xf8E8M0FNU>) {
  return
}
// expected-error @-3 {{argument #0 has type 'tensor<?x2x64xf8E4M3FN>'; flamia-interp makes random bf16/f32 tensors}}

// -----
func.func @qtensor_create(%q: tensor<?x2x64xbf16>) -> tensor<?x2x64xf32> {
  %data = arith.constant dense<0.0> : tensor<300x2x64xf8E4M3FN>
  // expected-error @-1 {{'arith.constant' op cannot be interpreted: flamia-interp holds only bf16, f32 and i32 tensors}}
  %scales = arith.constant dense<1.0> : tensor<300x2x2xf8E8M0FNU>
  %q8 = flamia.qtensor.create %data, %scales : (tensor<300x2x64xf8E4M3FN>, tensor<300x2x2xf8E8M0FNU>)
      -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
  %x = flamia.dequantize %q8 : (!flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>) -> tensor<?x2x64xf32>
  return %x : tensor<?x2x64xf32>
}

// -----
func.func @global_amax(%x: tensor<?x2x64xbf16>) -> tensor<?x2x64xf32> {
  // expected-error @+1 {{'flamia.quantize' op cannot be interpreted: global_scale = amax (a data-dependent per-tensor scale) is not in the numerics contract}}
  %x4 = flamia.quantize %x {global_scale = #flamia.global_scale<amax>}
      : (tensor<?x2x64xbf16>) -> !flamia.qtensor<?x2x64xf4E2M1FN, f8E4M3FN, 1x16>
  %y = flamia.dequantize %x4 : (!flamia.qtensor<?x2x64xf4E2M1FN, f8E4M3FN, 1x16>) -> tensor<?x2x64xf32>
  return %y : tensor<?x2x64xf32>
}

// -----
!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
// The safe-block Q is another tensor than the quantized Q.
func.func @two_queries(%q: !b, %k: !b, %v: !b, %q2: !b) -> !b {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %k8 = flamia.quantize %k : (!b) -> !tb
  %v8 = flamia.quantize %v : (!b) -> !tb
  // expected-error @+1 {{cannot be interpreted: the reference reads one Q for every use, but the input of the flamia.quantize of 'q in S = Q K^T' and 'safe q' hold different values (first at [0, 0, 0]:}}
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%v8) safe(%q2, %k, %v)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (!pt, !tb, !tb, !b, !b, !b) -> (!b, tensor<2x?xf32>)
  return %o : !b
}

// -----
!f = tensor<?x2x64xf32>
!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
// f32 values that bf16 cannot hold: the reference would round them first.
func.func @not_bf16(%q: !f, %k: !f, %v: !f) -> !b {
  %q8 = flamia.quantize %q : (!f) -> !pt
  %k8 = flamia.quantize %k : (!f) -> !tb
  %v8 = flamia.quantize %v : (!f) -> !tb
  // expected-error @+1 {{cannot be interpreted: the input of the flamia.quantize of 'q in S = Q K^T' holds values that are not bf16 (first at [0, 0, 0]:}}
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%v8)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8>}
      : (!pt, !tb, !tb) -> (!b, tensor<2x?xf32>)
  return %o : !b
}

// -----
!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
// K's token blocks follow other documents than the attention's.
func.func @other_documents(%q: !b, %k: !b, %v: !b) -> !b {
  %cu1 = arith.constant dense<[0, 100, 300]> : tensor<3xi32>
  %cu2 = arith.constant dense<[0, 150, 300]> : tensor<3xi32>
  %q8 = flamia.quantize %q : (!b) -> !pt
  // expected-note @+1 {{quantized here}}
  %k8 = flamia.quantize %k cu_seqlens(%cu1) : (!b, tensor<3xi32>) -> !tb
  %v8 = flamia.quantize %v cu_seqlens(%cu2) : (!b, tensor<3xi32>) -> !tb
  // expected-error @+1 {{cannot be interpreted: 'k in S = Q K^T' was quantized in token blocks of other documents than this op's}}
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%v8) safe(%q, %k, %v) cu_seqlens(%cu2)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (!pt, !tb, !tb, !b, !b, !b, tensor<3xi32>) -> (!b, tensor<2x?xf32>)
  return %o : !b
}

// -----
!b = tensor<?x2x64xbf16>
func.func @bad_cu_seqlens(%q: !b, %k: !b, %v: !b) -> !b {
  %cu = arith.constant dense<[0, 100, 200]> : tensor<3xi32>
  // expected-error @+1 {{'flamia.attention' op cannot be interpreted: cu_seqlens is not valid for 300 tokens: cu_seqlens[2] = 200 but the batch has T = 300 tokens (the last entry must be T)}}
  %o, %lse = flamia.attention %q, %k, %v cu_seqlens(%cu) {causal, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (!b, !b, !b, tensor<3xi32>) -> (!b, tensor<2x?xf32>)
  return %o : !b
}

// -----
!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
func.func @p_scale(%q: !b, %k: !b, %v: !b) -> !b {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %k8 = flamia.quantize %k : (!b) -> !tb
  %v8 = flamia.quantize %v : (!b) -> !tb
  // expected-error @+1 {{cannot be interpreted: p = #flamia.precision<f8E4M3FN, fixed_scale = 6>; the reference rounds P to bf16 or to E4M3 with the fixed scale 2^8}}
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%v8) safe(%q, %k, %v)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 6>, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (!pt, !tb, !tb, !b, !b, !b) -> (!b, tensor<2x?xf32>)
  return %o : !b
}

// -----
!b = tensor<?x2x64xbf16>
// The static result size disagrees with the 300 tokens of the run.
func.func @static_result(%q: !b, %k: !b, %v: !b) -> tensor<256x2x64xbf16> {
  // expected-error @+1 {{'flamia.attention' op result #0 has type 'tensor<256x2x64xbf16>' but the computed result has size 300 in dimension 0}}
  %o, %lse = flamia.attention %q, %k, %v {causal, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (!b, !b, !b) -> (tensor<256x2x64xbf16>, tensor<2x?xf32>)
  return %o : tensor<256x2x64xbf16>
}

// -----
func.func @returns_qtensor(%x: tensor<?x2x64xbf16>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32> {
  %x8 = flamia.quantize %x : (tensor<?x2x64xbf16>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
  // expected-error @+1 {{'func.return' op cannot be interpreted: operand #0 is not a bf16, f32 or i32 tensor}}
  return %x8 : !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
}
