// RUN: flamia-opt %s -split-input-file --flamia-verify-causality -verify-diagnostics
// Each leaky configuration is rejected with the operand, the GEMM, the block
// shape and one concrete pair of positions.

!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
#p = #flamia.precision<f8E4M3FN, fixed_scale = 8>

// Token-block Q in the forward: query 128 (the first with a key outside its
// safe block) shares Q's scale with its later block-mate 129.
func.func @token_block_q(%q: !b, %cu: tensor<?xi32>) -> !b {
  %q8 = flamia.quantize %q cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  // expected-error @below {{causality violation (L1): q in S = Q K^T has 32x32 token blocks and safe_block = 128: query i = 128 reads q at position 128 on the quantized path (pair with key j = 0), and that scale block [128, 160) also covers position 129 > 128, so O and LSE at 128 depends on q at position 129}}
  %o, %lse = flamia.attention_fwd qk(%q8, %q8) pv(%q8) safe(%q, %q, %q) cu_seqlens(%cu)
      {causal, p = #p, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (!tb, !tb, !tb, !b, !b, !b, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  return %o : !b
}

// -----
!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tbp = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32, packed>
// Token blocks aligned to the packed tensor straddle document boundaries.
func.func @packed_blocks(%q: !b, %k: !b, %cu: tensor<?xi32>) -> !b {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %k8 = flamia.quantize %k cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tbp
  // expected-error @below {{causality violation (L2): k in S = Q K^T has 32x32 token blocks aligned to the packed tensor, not to documents: with a document boundary at position 33 (cu_seqlens = [0, 33, ...]), positions i = 32 (document 0) and j = 33 (document 1) share the scale block [32, 64), so O of document 0 depends on k of document 1}}
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%k8) safe(%q, %k, %k) cu_seqlens(%cu)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (!pt, !tbp, !tbp, !b, !b, !b, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  return %o : !b
}

// -----
!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
// No safe block: query 0 reads key 0 on the quantized path, and key 0's
// block also holds key 1.
func.func @missing_safe_block(%q: !b, %k: !b, %cu: tensor<?xi32>) -> !b {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %k8 = flamia.quantize %k cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  // expected-error @below {{causality violation (L1): k in S = Q K^T has 32x32 token blocks and no safe block: query i = 0 reads k at position 0 on the quantized path (pair with key j = 0), and that scale block [0, 32) also covers position 1 > 0, so O and LSE at 0 depends on k at position 1}}
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%k8) cu_seqlens(%cu)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8>}
      : (!pt, !tb, !tb, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  return %o : !b
}

// -----
!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb64 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 64x32>
// A safe block smaller than V's token block: keys 0..63 share a scale, but
// query 32's safe block is [32, 64): it reads key 0 quantized and sees key 33.
func.func @safe_block_too_small(%q: !b, %v: !b, %cu: tensor<?xi32>) -> !b {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %v8 = flamia.quantize %v cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb64
  // expected-error @below {{causality violation (L1): v in O = P V has 64x32 token blocks and safe_block = 32: query i = 32 reads v at position 0 on the quantized path (pair with key j = 0), and that scale block [0, 64) also covers position 33 > 32, so O and LSE at 32 depends on v at position 33}}
  %o, %lse = flamia.attention_fwd qk(%q8, %q8) pv(%v8) safe(%q, %q, %v) cu_seqlens(%cu)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 32>}
      : (!pt, !pt, !tb64, !b, !b, !b, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  return %o : !b
}

// -----
!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tbt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, tensor>
// Per-tensor FP8: one amax over every token of a head.
func.func @per_tensor_scale(%q: !b, %v: !b) -> !b {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %v8 = flamia.quantize %v : (!b) -> !tbt
  // expected-error @below {{causality violation (L1): v in O = P V is quantized with a per-tensor scale (one amax over all T tokens of a head): O at position i = 0 depends on v at the last position j = T-1}}
  %o, %lse = flamia.attention_fwd qk(%q8, %q8) pv(%v8) safe(%q, %q, %v)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (!pt, !pt, !tbt, !b, !b, !b) -> (!b, tensor<2x?xf32>)
  return %o : !b
}

// -----
!b = tensor<?x2x64xbf16>
!nv = !flamia.qtensor<?x2x64xf4E2M1FN, f8E4M3FN, 1x16>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
// NVFP4 with a data-dependent global scale (the tensor's amax).
func.func @global_amax(%q: !b, %v: !b, %cu: tensor<?xi32>) -> !b {
  %q4 = flamia.quantize %q {global_scale = #flamia.global_scale<amax>} : (!b) -> !nv
  %v8 = flamia.quantize %v cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  // expected-error @below {{causality violation (L2): q in S = Q K^T is quantized with a data-dependent global scale (global_scale = amax over the tensor): O at position i = 0 depends on q at the last position j = T-1, even across documents}}
  %o, %lse = flamia.attention_fwd qk(%q4, %q4) pv(%v8) safe(%q, %q, %v) cu_seqlens(%cu)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (!nv, !nv, !tb, !b, !b, !b, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  return %o : !b
}

// -----
!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
// Strict backward: dO in dP = dO V^T in token blocks lets dQ_i see dO of its
// later block-mates.
func.func @strict_token_block_grad_o(%q: !b, %do: !b, %o: !b, %lse: tensor<2x?xf32>, %cu: tensor<?xi32>) -> tensor<?x2x64xf32> {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %qtb = flamia.quantize %q cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %do8 = flamia.quantize %do cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  // expected-error @below {{causality violation (L3): grad_o in dP = dO V^T has 32x32 token blocks and safe_block = 128: query i = 128 reads grad_o at position 128 on the quantized path (pair with key j = 0), and that scale block [128, 160) also covers position 129 > 128, so dQ at 128 depends on grad_o at position 129}}
  %dq, %dk, %dv = flamia.attention_bwd qk(%q8, %q8) dov(%do8, %q8) dsk(%qtb) dsq(%qtb) pdo(%do8) safe(%q, %q, %q, %do) o(%o) lse(%lse) cu_seqlens(%cu)
      {causal, ds = #flamia.precision<f8E4M3FN, online = 32>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>,
       recipe = #flamia.recipe<mxfp8, safe_block = 128, strict>}
      : (!pt, !pt, !tb, !pt, !tb, !tb, !tb, !b, !b, !b, !b, !b, tensor<2x?xf32>, tensor<?xi32>)
      -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return %dq : tensor<?x2x64xf32>
}

// -----
!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
// Strict backward without a safe block: on the diagonal, dQ_0 reads the
// token-block K copy of key 0, whose block also holds key 1 > 0.
func.func @strict_diagonal_token_block(%q: !b, %do: !b, %o: !b, %lse: tensor<2x?xf32>, %cu: tensor<?xi32>) -> tensor<?x2x64xf32> {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %qtb = flamia.quantize %q cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %do8 = flamia.quantize %do : (!b) -> !pt
  %dotb = flamia.quantize %do cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  // expected-error @below {{causality violation (L3): k in dQ = dS K has 32x32 token blocks and no safe block: query i = 0 reads k at position 0 on the quantized path (pair with key j = 0), and that scale block [0, 32) also covers position 1 > 0, so dQ at 0 depends on k at position 1}}
  %dq, %dk, %dv = flamia.attention_bwd qk(%q8, %q8) dov(%do8, %q8) dsk(%qtb) dsq(%qtb) pdo(%dotb) o(%o) lse(%lse) cu_seqlens(%cu)
      {causal, ds = #flamia.precision<f8E4M3FN, online = 32>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>,
       recipe = #flamia.recipe<mxfp8, strict>}
      : (!pt, !pt, !pt, !pt, !tb, !tb, !tb, !b, tensor<2x?xf32>, tensor<?xi32>)
      -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return %dq : tensor<?x2x64xf32>
}

// -----
!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
!tb64 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 64x32>
// Strict backward, Q's second copy in 64-token blocks with a 32-token safe
// block: dK_1 reads query 32 (outside key 1's safe block) quantized, and
// query 32's block [0, 64) also holds position 0 < 1.
func.func @strict_past_leak(%q: !b, %do: !b, %o: !b, %lse: tensor<2x?xf32>, %cu: tensor<?xi32>) -> tensor<?x2x64xf32> {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %ktb = flamia.quantize %q cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %qtb = flamia.quantize %q cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb64
  %do8 = flamia.quantize %do : (!b) -> !pt
  %dotb = flamia.quantize %do cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  // expected-error @below {{causality violation (L3): q in dK = dS^T Q has 64x32 token blocks and safe_block = 32: key j = 1 reads q at position 32 on the quantized path (pair with query i = 32), and that scale block [0, 64) also covers position 0 < 1, so dK and dV at 1 depends on q at position 0}}
  %dq, %dk, %dv = flamia.attention_bwd qk(%q8, %q8) dov(%do8, %q8) dsk(%ktb) dsq(%qtb) pdo(%dotb) safe(%q, %q, %q, %do) o(%o) lse(%lse) cu_seqlens(%cu)
      {causal, ds = #flamia.precision<f8E4M3FN, online = 32>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>,
       recipe = #flamia.recipe<mxfp8, safe_block = 32, strict>}
      : (!pt, !pt, !pt, !pt, !tb, !tb64, !tb, !b, !b, !b, !b, !b, tensor<2x?xf32>, tensor<?xi32>)
      -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return %dq : tensor<?x2x64xf32>
}
