// RUN: flamia-opt %s --flamia-varlen-schedule=target=sm_90a | FileCheck %s
// RUN: flamia-opt %s --flamia-varlen-schedule="target=sm_90a payloads=true" | FileCheck %s --check-prefix=PAYLOADS
// RUN: flamia-opt %s --flamia-varlen-schedule=target=sm_100a | FileCheck %s --check-prefix=SM100
// A training step (the output of flamia-graph-pipeline on a function with
// flamia.attention and its flamia.attention_grad; GQA 4 query / 2 kv heads,
// D = 64) becomes five kernels: the forward's two, then the gradient
// quantizer, the dQ kernel on the forward's items and the dK/dV kernel on
// key-tile items, with the buffers they share.

func.func @train(%arg0: tensor<?x4x64xbf16>, %arg1: tensor<?x2x64xbf16>, %arg2: tensor<?x2x64xbf16>, %arg3: tensor<?x4x64xbf16>, %arg4: tensor<?xi32>) -> (tensor<?x4x64xbf16>, tensor<4x?xf32>, tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>) {
  %0 = flamia.quantize %arg0 : (tensor<?x4x64xbf16>) -> !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 1x32>
  %1 = flamia.quantize %arg1 cu_seqlens(%arg4) : (tensor<?x2x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %2 = flamia.quantize %arg2 cu_seqlens(%arg4) : (tensor<?x2x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %o, %lse = flamia.attention_fwd qk(%0, %1) pv(%2) safe(%arg0, %arg1, %arg2) cu_seqlens(%arg4) {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>} : (!flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 1x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>, tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?xi32>) -> (tensor<?x4x64xbf16>, tensor<4x?xf32>)
  %3 = flamia.quantize %arg3 cu_seqlens(%arg4) : (tensor<?x4x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %4 = flamia.quantize %arg0 cu_seqlens(%arg4) : (tensor<?x4x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %grad_q, %grad_k, %grad_v = flamia.attention_bwd qk(%0, %1) dov(%3, %2) dsk(%1) dsq(%4) pdo(%3) safe(%arg0, %arg1, %arg2, %arg3) o(%o) lse(%lse) cu_seqlens(%arg4) {causal, ds = #flamia.precision<f8E4M3FN, online = 32>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>} : (!flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 1x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>, tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?x4x64xbf16>, tensor<?x4x64xbf16>, tensor<4x?xf32>, tensor<?xi32>) -> (tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>)
  return %o, %lse, %grad_q, %grad_k, %grad_v : tensor<?x4x64xbf16>, tensor<4x?xf32>, tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>
}

// The forward's quantizer also writes Q's 32x32 dequantized copy (dK):
// scales and dequantized values, no payloads (no sm_90a kernel reads them).
// CHECK-LABEL: flamia.kernel @train_quantize(
// CHECK-SAME: %arg11: !flamia.global<?x4x64xbf16> {flamia.param = "q_tb_deq"})
// CHECK-SAME: flamia.phase = "forward"
// CHECK: flamia.quantize_block %arg0 {{.*}} per_token_scales(%arg4) per_token_dequant(%arg8) token_block_scales(%arg5) token_block_dequant(%arg11) :
// PAYLOADS-LABEL: flamia.kernel @train_quantize(
// PAYLOADS: flamia.quantize_block %arg0 {{.*}} per_token(%arg4, %arg5) per_token_dequant(%arg12) token_block(%arg6, %arg7) token_block_dequant(%arg15) :
// CHECK-LABEL: flamia.kernel @train_attention_fwd(
// CHECK-SAME: flamia.phase = "forward"

// dO in 32x32 token blocks and D = rowsum(dO O).
// CHECK-LABEL: flamia.kernel @train_quantize_grad(
// CHECK-SAME: %arg0: !flamia.global<?x4x64xbf16> {flamia.param = "grad_o"}, %arg1: !flamia.global<?x4x64xbf16> {flamia.param = "o"}, %arg2: !flamia.global<?x2xi32> {flamia.param = "block_info"}, %arg3: !flamia.global<?x4x2xf8E8M0FNU> {flamia.param = "do_tb_scales"}, %arg4: !flamia.global<?x4x64xbf16> {flamia.param = "do_deq"}, %arg5: !flamia.global<4x?xf32> {flamia.param = "delta"}, %arg6: i32 {flamia.param = "T"})
// CHECK-SAME: attributes {flamia.phase = "backward", launch = #flamia.launch<grid>
// CHECK: flamia.quantize_block %arg0 rows(%[[START:.*]], %[[LEN:.*]]) block %{{.*}} head %[[H:.*]] token_block_scales(%arg3) token_block_dequant(%arg4) :
// CHECK-NEXT: flamia.row_dot %arg0, %arg1 rows(%[[START]], %[[LEN]]) head %[[H]] to %arg5 tokens %arg6
// PAYLOADS-LABEL: flamia.kernel @train_quantize_grad(
// PAYLOADS-SAME: %arg3: !flamia.global<?x4x64xf8E4M3FN> {flamia.param = "do_tb"}, %arg4: !flamia.global<?x4x2xf8E8M0FNU> {flamia.param = "do_tb_scales"}
// PAYLOADS: flamia.quantize_block %arg0 {{.*}} token_block(%arg3, %arg4) token_block_dequant(%arg5) :

// dQ: the forward's items, the dequantized copies and the bf16 originals.
// CHECK-LABEL: flamia.kernel @train_attention_dq(
// CHECK-SAME: {flamia.param = "q_deq"}, {{.*}} {flamia.param = "k_deq"}, {{.*}} {flamia.param = "v_deq"}, {{.*}} {flamia.param = "do_deq"}, {{.*}} {flamia.param = "q"}, {{.*}} {flamia.param = "k"}, {{.*}} {flamia.param = "v"}, {{.*}} {flamia.param = "grad_o"}, {{.*}} {flamia.param = "lse"}, {{.*}} {flamia.param = "delta"}, {{.*}} {flamia.param = "dq"}, {{.*}} {flamia.param = "items"}, {{.*}} {flamia.param = "num_items"}, {{.*}} {flamia.param = "counter"}, {{.*}} {flamia.param = "softmax_scale_log2"}, {{.*}} {flamia.param = "softmax_scale"}, {{.*}} {flamia.param = "T"})
// CHECK-SAME: flamia.phase = "backward", launch = #flamia.launch<persistent>
// CHECK: flamia.attention_dq_tile %arg11[%{{.*}}] q(%arg0) k(%arg1) v(%arg2) grad_o(%arg3) safe(%arg4, %arg5, %arg6, %arg7) lse %arg8 delta %arg9 to %arg10 scale %arg14, %arg15 tokens %arg16 {block_m = 128 : i64, block_n = 128 : i64, causal, recipe = #flamia.recipe<mxfp8, safe_block = 128>}

// dK/dV: key-tile items, 64-query tiles, Q's token-block copy for dK.
// CHECK-LABEL: flamia.kernel @train_attention_dkdv(
// CHECK-SAME: {flamia.param = "q_tb_deq"}
// CHECK-SAME: {flamia.param = "dk"}, {{.*}} {flamia.param = "dv"}, {{.*}} {flamia.param = "kv_items"}, {{.*}} {flamia.param = "num_kv_items"}
// CHECK: flamia.attention_dkdv_tile %arg13[%{{.*}}] q(%arg0) k(%arg1) v(%arg2) grad_o(%arg3) q_tb(%arg4) safe(%arg5, %arg6, %arg7, %arg8) lse %arg9 delta %arg10 to %arg11, %arg12 {{.*}} {block_m = 64 : i64, block_n = 128 : i64, causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>}

// The launch plan: inputs q, k, v, grad_o, cu_seqlens; outputs o, lse, dq, dk, dv.
// CHECK-LABEL: func.func @train(
// CHECK-SAME: {flamia.buffer = "grad_o", flamia.dims = ["T", "4", "64"]}
// CHECK-SAME: {flamia.buffer = "cu_seqlens"
// CHECK-SAME: {flamia.buffer = "o", flamia.dims = ["T", "4", "64"], flamia.output}
// CHECK-SAME: {flamia.buffer = "lse", flamia.dims = ["4", "T"], flamia.output}
// CHECK-SAME: {flamia.buffer = "dq", flamia.dims = ["T", "4", "64"], flamia.output}
// CHECK-SAME: {flamia.buffer = "dk", flamia.dims = ["T", "2", "64"], flamia.output}
// CHECK-SAME: {flamia.buffer = "dv", flamia.dims = ["T", "2", "64"], flamia.output}
// CHECK-NOT: workspace "q_pt"
// CHECK-NOT: workspace "do_tb"
// CHECK: flamia.workspace workspace "q_tb_deq" dims ["T", "4", "64"]
// CHECK-NOT: workspace "do_tb"
// CHECK: flamia.workspace workspace "do_tb_scales" dims ["NB", "4", "2"]
// CHECK: flamia.workspace workspace "do_deq" dims ["T", "4", "64"]
// CHECK: flamia.workspace workspace "delta" dims ["4", "T"]
// CHECK: flamia.workspace schedule "kv_items" dims ["NUM_KV_ITEMS", "8"]
// CHECK: flamia.runtime_value "NUM_KV_ITEMS" : i32
// CHECK: flamia.runtime_value "softmax_scale" : f32
// CHECK: flamia.launch @train_quantize(
// CHECK-NEXT: flamia.launch @train_attention_fwd(
// CHECK-NEXT: flamia.launch @train_quantize_grad({{.*}} grid ["NB", "Hq", "1"]
// CHECK-NEXT: flamia.launch @train_attention_dq({{.*}} grid ["NUM_SMS", "1", "1"]
// CHECK-NEXT: flamia.launch @train_attention_dkdv({{.*}} grid ["NUM_SMS", "1", "1"]

// sm_100a reads E4M3 payloads and 128x4 scale-factor tiles, no dequantized
// copies. Each block-scaled GEMM wants the scales of its contraction axis
// along the tile's rows: the token-contracted GEMMs (dQ = dS K, dV = P^T dO,
// dK = dS^T Q) read K, dO and Q's token-block scales with channels as rows,
// dP = dO V^T reads V's with tokens as rows; the quantizers write both
// orientations of a token-block copy in one pass (transposed_tiles).
// SM100-LABEL: flamia.kernel @train_quantize(
// SM100-SAME: {flamia.param = "q_tb_sf_channels"}, %arg16: {{.*}} {flamia.param = "k_sf_channels"}, %arg17: {{.*}} {flamia.param = "v_sf_tokens"})
// SM100: flamia.quantize_block %arg0 {{.*}} per_token(%arg4, %arg5) token_block(%arg6, %arg7) per_token_tiles(%arg12) token_block_tiles(%arg15) {token_block_tile_rows = "channels"}
// SM100: flamia.quantize_block %arg1 {{.*}} token_block(%arg8, %arg9) token_block_tiles(%arg13) transposed_tiles(%arg16) {token_block_tile_rows = "tokens"}
// SM100: flamia.quantize_block %arg2 {{.*}} token_block(%arg10, %arg11) token_block_tiles(%arg14) transposed_tiles(%arg17) {token_block_tile_rows = "channels"}
// SM100-LABEL: flamia.kernel @train_quantize_grad(
// SM100-SAME: %arg3: !flamia.global<?x4x64xf8E4M3FN> {flamia.param = "do_tb"}, %arg4: !flamia.global<?x4x2xf8E8M0FNU> {flamia.param = "do_tb_scales"}, %arg5: !flamia.global<?x4x512xi8> {flamia.param = "do_sf"}, %arg6: !flamia.global<?x4x512xi8> {flamia.param = "do_sf_channels"}, %arg7: !flamia.global<4x?xf32> {flamia.param = "delta"}
// SM100-SAME: target = #flamia.target<sm_100a>
// SM100: flamia.quantize_block %arg0 {{.*}} token_block(%arg3, %arg4) token_block_tiles(%arg5) transposed_tiles(%arg6) {token_block_tile_rows = "tokens"}
// SM100-NEXT: flamia.row_dot %arg0, %arg1
// SM100-LABEL: flamia.kernel @train_attention_dq(
// SM100-SAME: {flamia.param = "q_pt"}, {{.*}} {flamia.param = "q_sf"}, {{.*}} {flamia.param = "k_tb"}, {{.*}} {flamia.param = "k_sf"}, {{.*}} {flamia.param = "k_sf_channels"}, {{.*}} {flamia.param = "v_tb"}, {{.*}} {flamia.param = "v_sf_tokens"}, {{.*}} {flamia.param = "do_tb"}, {{.*}} {flamia.param = "do_sf"}, {{.*}} {flamia.param = "q"}
// SM100: flamia.attention_dq_tile %arg16[%{{.*}}] q(%arg0, %arg1) k(%arg2, %arg3, %arg4) v(%arg5, %arg6) grad_o(%arg7, %arg8) safe(%arg9, %arg10, %arg11, %arg12) lse %arg13 delta %arg14 to %arg15
// SM100-LABEL: flamia.kernel @train_attention_dkdv(
// SM100-SAME: {flamia.param = "do_sf_channels"}, {{.*}} {flamia.param = "q_tb"}, {{.*}} {flamia.param = "q_tb_sf_channels"}, {{.*}} {flamia.param = "q"}
// SM100: flamia.attention_dkdv_tile %arg19[%{{.*}}] q(%arg0, %arg1) k(%arg2, %arg3) v(%arg4, %arg5) grad_o(%arg6, %arg7, %arg8) q_tb(%arg9, %arg10) safe(%arg11, %arg12, %arg13, %arg14) lse %arg15 delta %arg16 to %arg17, %arg18 {{.*}} {block_m = 64 : i64, block_n = 128 : i64, causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>
// SM100-LABEL: func.func @train(
// SM100-NOT: _deq"
// SM100: flamia.workspace workspace "do_sf_channels" dims ["NB", "4", "512"]
// SM100-NOT: _deq"
// SM100: flamia.launch @train_quantize_grad(
