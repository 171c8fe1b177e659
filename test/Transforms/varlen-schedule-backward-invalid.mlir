// RUN: flamia-opt %s -split-input-file --flamia-varlen-schedule=target=sm_90a -verify-diagnostics
// RUN: not flamia-opt %s -split-input-file --flamia-varlen-schedule=target=sm_100a 2>&1 | FileCheck %s --check-prefix=SM100
// What the backward's kernels do not implement gets a message naming it.
// sm_100a has backward kernels for mxfp8 too: the same errors, but for the
// strict recipe, which it has no kernels for at all.
// SM100: error: 'func.func' op flamia-varlen-schedule: the function must return exactly the attention's O and LSE and its backward's dQ, dK and dV, in this order
// SM100: error: 'flamia.attention_bwd' op flamia-varlen-schedule: a backward is compiled with its forward
// SM100: error: 'flamia.attention_bwd' op flamia-varlen-schedule: the kernels implement recipe mxfp8's contract, where V in dP = dO V^T is
// SM100: error: 'flamia.attention_fwd' op flamia-varlen-schedule: no sm_100a kernels implement strict mxfp8 (L3 causality: K quantized per token) yet; they quantize K in 32x32 token blocks

// expected-error @below {{flamia-varlen-schedule: the function must return exactly the attention's O and LSE and its backward's dQ, dK and dV, in this order}}
func.func @train(%arg0: tensor<?x4x64xbf16>, %arg1: tensor<?x2x64xbf16>, %arg2: tensor<?x2x64xbf16>, %arg3: tensor<?x4x64xbf16>, %arg4: tensor<?xi32>) -> (tensor<?x4x64xbf16>, tensor<4x?xf32>, tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>) {
  %0 = flamia.quantize %arg0 : (tensor<?x4x64xbf16>) -> !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 1x32>
  %1 = flamia.quantize %arg1 cu_seqlens(%arg4) : (tensor<?x2x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %2 = flamia.quantize %arg2 cu_seqlens(%arg4) : (tensor<?x2x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %o, %lse = flamia.attention_fwd qk(%0, %1) pv(%2) safe(%arg0, %arg1, %arg2) cu_seqlens(%arg4) {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>} : (!flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 1x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>, tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?xi32>) -> (tensor<?x4x64xbf16>, tensor<4x?xf32>)
  %3 = flamia.quantize %arg3 cu_seqlens(%arg4) : (tensor<?x4x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %4 = flamia.quantize %arg0 cu_seqlens(%arg4) : (tensor<?x4x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %grad_q, %grad_k, %grad_v = flamia.attention_bwd qk(%0, %1) dov(%3, %2) dsk(%1) dsq(%4) pdo(%3) safe(%arg0, %arg1, %arg2, %arg3) o(%o) lse(%lse) cu_seqlens(%arg4) {causal, ds = #flamia.precision<f8E4M3FN, online = 32>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>} : (!flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 1x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>, tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?x4x64xbf16>, tensor<?x4x64xbf16>, tensor<4x?xf32>, tensor<?xi32>) -> (tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>)
  return %o, %lse, %grad_q, %grad_v, %grad_k : tensor<?x4x64xbf16>, tensor<4x?xf32>, tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>
}

// -----

func.func @backward_only(%arg0: tensor<?x4x64xbf16>, %arg1: tensor<?x2x64xbf16>, %arg2: tensor<?x2x64xbf16>, %arg3: tensor<?x4x64xbf16>, %arg4: tensor<4x?xf32>, %arg5: tensor<?x4x64xbf16>, %arg6: tensor<?xi32>) -> (tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>) {
  %0 = flamia.quantize %arg0 : (tensor<?x4x64xbf16>) -> !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 1x32>
  %1 = flamia.quantize %arg1 cu_seqlens(%arg6) : (tensor<?x2x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %2 = flamia.quantize %arg5 cu_seqlens(%arg6) : (tensor<?x4x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %3 = flamia.quantize %arg2 cu_seqlens(%arg6) : (tensor<?x2x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %4 = flamia.quantize %arg0 cu_seqlens(%arg6) : (tensor<?x4x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>
  // expected-error @below {{flamia-varlen-schedule: a backward is compiled with its forward (a training step returning O, LSE, dQ, dK, dV): the forward's kernels write the quantized copies and LSE it reads}}
  %grad_q, %grad_k, %grad_v = flamia.attention_bwd qk(%0, %1) dov(%2, %3) dsk(%1) dsq(%4) pdo(%2) safe(%arg0, %arg1, %arg2, %arg5) o(%arg3) lse(%arg4) cu_seqlens(%arg6) {causal, ds = #flamia.precision<f8E4M3FN, online = 32>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>} : (!flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 1x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>, tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?x4x64xbf16>, tensor<?x4x64xbf16>, tensor<4x?xf32>, tensor<?xi32>) -> (tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>)
  return %grad_q, %grad_k, %grad_v : tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>
}

// -----
// The backward's operands are the copies the recipe's contract prescribes
// for each GEMM.
// mxfp8: dP = dO V^T reads V in 32x32 token blocks, not per token.
func.func @per_token_v_in_dp(%arg0: tensor<?x4x64xbf16>, %arg1: tensor<?x2x64xbf16>, %arg2: tensor<?x2x64xbf16>, %arg3: tensor<?x4x64xbf16>, %arg4: tensor<?xi32>) -> (tensor<?x4x64xbf16>, tensor<4x?xf32>, tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>) {
  %0 = flamia.quantize %arg0 : (tensor<?x4x64xbf16>) -> !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 1x32>
  %1 = flamia.quantize %arg1 cu_seqlens(%arg4) : (tensor<?x2x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %2 = flamia.quantize %arg2 cu_seqlens(%arg4) : (tensor<?x2x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %o, %lse = flamia.attention_fwd qk(%0, %1) pv(%2) safe(%arg0, %arg1, %arg2) cu_seqlens(%arg4) {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>} : (!flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 1x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>, tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?xi32>) -> (tensor<?x4x64xbf16>, tensor<4x?xf32>)
  %3 = flamia.quantize %arg3 cu_seqlens(%arg4) : (tensor<?x4x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %5 = flamia.quantize %arg2 : (tensor<?x2x64xbf16>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
  %4 = flamia.quantize %arg0 cu_seqlens(%arg4) : (tensor<?x4x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>
  // expected-error @below {{flamia-varlen-schedule: the kernels implement recipe mxfp8's contract, where V in dP = dO V^T is '!flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>', but it is '!flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>'}}
  %grad_q, %grad_k, %grad_v = flamia.attention_bwd qk(%0, %1) dov(%3, %5) dsk(%1) dsq(%4) pdo(%3) safe(%arg0, %arg1, %arg2, %arg3) o(%o) lse(%lse) cu_seqlens(%arg4) {causal, ds = #flamia.precision<f8E4M3FN, online = 32>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>} : (!flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 1x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>, tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?x4x64xbf16>, tensor<?x4x64xbf16>, tensor<4x?xf32>, tensor<?xi32>) -> (tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>)
  return %o, %lse, %grad_q, %grad_k, %grad_v : tensor<?x4x64xbf16>, tensor<4x?xf32>, tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>
}

// -----
// mxfp8-strict: dP = dO V^T reads dO per token (strict: dQ_i must not see
// later tokens through dO's 32x32 blocks), not its token-block copy.
func.func @strict_dp_reads_token_block_do(%arg0: tensor<?x4x64xbf16>, %arg1: tensor<?x2x64xbf16>, %arg2: tensor<?x2x64xbf16>, %arg3: tensor<?x4x64xbf16>, %arg4: tensor<?xi32>) -> (tensor<?x4x64xbf16>, tensor<4x?xf32>, tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>) {
  %0 = flamia.quantize %arg0 : (tensor<?x4x64xbf16>) -> !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 1x32>
  %1 = flamia.quantize %arg1 : (tensor<?x2x64xbf16>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
  %2 = flamia.quantize %arg2 cu_seqlens(%arg4) : (tensor<?x2x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %o, %lse = flamia.attention_fwd qk(%0, %1) pv(%2) safe(%arg0, %arg1, %arg2) cu_seqlens(%arg4) {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128, strict>} : (!flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 1x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>, tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?xi32>) -> (tensor<?x4x64xbf16>, tensor<4x?xf32>)
  %3 = flamia.quantize %arg3 : (tensor<?x4x64xbf16>) -> !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 1x32>
  %4 = flamia.quantize %arg2 : (tensor<?x2x64xbf16>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
  %5 = flamia.quantize %arg1 cu_seqlens(%arg4) : (tensor<?x2x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %6 = flamia.quantize %arg0 cu_seqlens(%arg4) : (tensor<?x4x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %7 = flamia.quantize %arg3 cu_seqlens(%arg4) : (tensor<?x4x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>
  // expected-error @below {{flamia-varlen-schedule: the kernels implement recipe mxfp8-strict's contract, where dO in dP = dO V^T is '!flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 1x32>', but it is '!flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>'}}
  %grad_q, %grad_k, %grad_v = flamia.attention_bwd qk(%0, %1) dov(%7, %4) dsk(%5) dsq(%6) pdo(%7) safe(%arg0, %arg1, %arg2, %arg3) o(%o) lse(%lse) cu_seqlens(%arg4) {causal, ds = #flamia.precision<f8E4M3FN, online = 32>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128, strict>} : (!flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 1x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>, !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>, tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?x4x64xbf16>, tensor<?x4x64xbf16>, tensor<4x?xf32>, tensor<?xi32>) -> (tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>)
  return %o, %lse, %grad_q, %grad_k, %grad_v : tensor<?x4x64xbf16>, tensor<4x?xf32>, tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>
}
