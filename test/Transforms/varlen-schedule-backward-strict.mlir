// RUN: flamia-opt %s '--flamia-varlen-schedule=target=sm_90a payloads=true' | FileCheck %s
// RUN: flamia-opt %s --flamia-varlen-schedule=target=sm_90a | FileCheck %s --check-prefix=LEAN
// RUN: flamia-opt %s --flamia-varlen-schedule=target=sm_90a --flamia-tile=target=sm_90a | FileCheck %s --check-prefix=TILE
// A strict training step (recipe mxfp8-strict; nvfp4-mixed has the same
// structure with NVFP4 per-token copies): S = Q K^T and dP = dO V^T read
// K, V and dO per token, dQ = dS K, dV = P^T dO and dK = dS^T Q read them
// in 32x32 token blocks. The schedule makes the second copies (K's token
// blocks, V's and dO's per-token copies) and hands the backward kernels
// both copies of K (dQ) and of dO (dK/dV).

func.func @train(%arg0: tensor<?x4x64xbf16>, %arg1: tensor<?x2x64xbf16>, %arg2: tensor<?x2x64xbf16>, %arg3: tensor<?x4x64xbf16>, %arg4: tensor<?xi32>) -> (tensor<?x4x64xbf16>, tensor<4x?xf32>, tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>) {
  %0 = flamia.quantize %arg0 : (tensor<?x4x64xbf16>) -> !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 1x32>
  %1 = flamia.quantize %arg1 : (tensor<?x2x64xbf16>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
  %2 = flamia.quantize %arg2 cu_seqlens(%arg4) : (tensor<?x2x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %o, %lse = flamia.attention_fwd qk(%0, %1) pv(%2) safe(%arg0, %arg1, %arg2) cu_seqlens(%arg4) {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128, strict>} : (!flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 1x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>, tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?xi32>) -> (tensor<?x4x64xbf16>, tensor<4x?xf32>)
  %3 = flamia.quantize %arg3 : (tensor<?x4x64xbf16>) -> !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 1x32>
  %4 = flamia.quantize %arg2 : (tensor<?x2x64xbf16>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
  %5 = flamia.quantize %arg1 cu_seqlens(%arg4) : (tensor<?x2x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %6 = flamia.quantize %arg0 cu_seqlens(%arg4) : (tensor<?x4x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %7 = flamia.quantize %arg3 cu_seqlens(%arg4) : (tensor<?x4x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %grad_q, %grad_k, %grad_v = flamia.attention_bwd qk(%0, %1) dov(%3, %4) dsk(%5) dsq(%6) pdo(%7) safe(%arg0, %arg1, %arg2, %arg3) o(%o) lse(%lse) cu_seqlens(%arg4) {causal, ds = #flamia.precision<f8E4M3FN, online = 32>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128, strict>} : (!flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 1x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>, !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 1x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>, tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?x4x64xbf16>, tensor<?x4x64xbf16>, tensor<4x?xf32>, tensor<?xi32>) -> (tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>)
  return %o, %lse, %grad_q, %grad_k, %grad_v : tensor<?x4x64xbf16>, tensor<4x?xf32>, tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>
}

// K and V each in both layouts, from one read of each 32-token block.
// CHECK-LABEL: flamia.kernel @train_quantize(
// CHECK-SAME: {flamia.param = "k_pt"}
// CHECK-SAME: {flamia.param = "k_tb"}
// CHECK-SAME: {flamia.param = "v_tb"}
// CHECK-SAME: {flamia.param = "v_pt"}
// CHECK-SAME: %[[KDEQ:arg[0-9]+]]: !flamia.global<?x2x64xbf16> {flamia.param = "k_deq"}, %[[VDEQ:arg[0-9]+]]: !flamia.global<?x2x64xbf16> {flamia.param = "v_deq"}, %{{.*}} {flamia.param = "q_tb_deq"}, %[[KTBDEQ:arg[0-9]+]]: !flamia.global<?x2x64xbf16> {flamia.param = "k_tb_deq"}, %[[VPTDEQ:arg[0-9]+]]: !flamia.global<?x2x64xbf16> {flamia.param = "v_pt_deq"})
// CHECK: flamia.quantize_block %arg1 {{.*}} per_token_dequant(%[[KDEQ]]) token_block({{.*}}) token_block_dequant(%[[KTBDEQ]])
// CHECK-NEXT: flamia.quantize_block %arg2 {{.*}} per_token_dequant(%[[VPTDEQ]]) token_block({{.*}}) token_block_dequant(%[[VDEQ]])

// The forward reads K's per-token copy and V's token blocks.
// CHECK-LABEL: flamia.kernel @train_attention_fwd(
// CHECK-SAME: {flamia.param = "q_deq"}, {{.*}} {flamia.param = "k_deq"}, {{.*}} {flamia.param = "v_deq"}

// dO per token (dP) and in 32x32 blocks (dV), then D.
// CHECK-LABEL: flamia.kernel @train_quantize_grad(
// CHECK-SAME: {flamia.param = "do_pt"}, {{.*}} {flamia.param = "do_pt_scales"}, {{.*}} {flamia.param = "do_tb"}, {{.*}} {flamia.param = "do_tb_scales"}, %[[DODEQ:arg[0-9]+]]: {{.*}} {flamia.param = "do_deq"}, %[[DOTBDEQ:arg[0-9]+]]: {{.*}} {flamia.param = "do_tb_deq"}, {{.*}} {flamia.param = "delta"}
// CHECK: flamia.quantize_block %arg0 {{.*}} per_token(%arg3, %arg4) per_token_dequant(%[[DODEQ]]) token_block(%arg5, %arg6) token_block_dequant(%[[DOTBDEQ]])
// CHECK-NEXT: flamia.row_dot
// sm_90a's default: both copies of dO as scales and dequantized values.
// LEAN-LABEL: flamia.kernel @train_quantize_grad(
// LEAN-NOT: "do_pt"
// LEAN-NOT: "do_tb"
// LEAN: flamia.quantize_block %arg0 {{.*}} per_token_scales(%arg3) per_token_dequant(%arg5) token_block_scales(%arg4) token_block_dequant(%arg6) :

// dQ: V's per-token copy in dP, K's token blocks in dS K.
// CHECK-LABEL: flamia.kernel @train_attention_dq(
// CHECK-SAME: {flamia.param = "q_deq"}, {{.*}} {flamia.param = "k_deq"}, {{.*}} {flamia.param = "v_pt_deq"}, {{.*}} {flamia.param = "do_deq"}, {{.*}} {flamia.param = "k_tb_deq"}, {{.*}} {flamia.param = "q"}
// CHECK: flamia.attention_dq_tile %{{.*}} q(%arg0) k(%arg1) v(%arg2) grad_o(%arg3) k_tb(%arg4) safe(%arg5, %arg6, %arg7, %arg8)

// dK/dV: dO per token in dP^T, in token blocks in dV.
// CHECK-LABEL: flamia.kernel @train_attention_dkdv(
// CHECK-SAME: {flamia.param = "v_pt_deq"}, {{.*}} {flamia.param = "do_deq"}, {{.*}} {flamia.param = "q_tb_deq"}, {{.*}} {flamia.param = "do_tb_deq"}, {{.*}} {flamia.param = "q"}
// CHECK: flamia.attention_dkdv_tile %{{.*}} q(%arg0) k(%arg1) v(%arg2) grad_o(%arg3) q_tb(%arg4) grad_o_tb(%arg5) safe(%arg6, %arg7, %arg8, %arg9)

// The tiled dQ program at D = 64: three key-side tiles a stage (K, V, K's
// second copy), dS K on the second; the dK/dV program: two query rings
// (ring A: Q and dO per token, released after the softmax gradient; ring
// B: the token blocks of dV and dK), dV on dO's second copy.
// TILE-LABEL: flamia.kernel @train_attention_dq(
// TILE: flamia.pipeline.expect %{{.*}} bytes 49152
// TILE: flamia.tma.load %arg4[{{.*}}] -> %[[KS2:[0-9]+]]
// TILE: flamia.smem.zero_rows %[[KS2]]
// TILE: flamia.wg.mma %{{.*}}, %[[KS2]][{{.*}}] acc({{.*}}) {async, b_transposed}
// TILE-LABEL: flamia.kernel @train_attention_dkdv(
// TILE-SAME: stages = 3
// TILE: %[[RA:[0-9]+]] = flamia.pipeline.create consumers 256 : !flamia.pipeline<3>
// TILE-NEXT: %[[RB:[0-9]+]] = flamia.pipeline.create consumers 256 : !flamia.pipeline<3>
// TILE: flamia.pipeline.expect %[[RA]][{{.*}}] bytes 16384
// TILE: flamia.pipeline.expect %[[RB]][{{.*}}] bytes 16384
// TILE: flamia.tma.load %arg5[{{.*}}] -> %[[GO2:[0-9]+]][{{.*}}] on %[[RB]]
// TILE: flamia.pipeline.release %[[RA]]
// TILE: flamia.smem.zero_rows %[[GO2]]
// TILE: flamia.wg.mma %{{.*}}, %[[GO2]][{{.*}}] acc({{.*}}) {async, b_transposed}

// Two flamia.quantize ops of one argument into one layout are one copy:
// an mxfp8 step whose dP, dS K and dV operands are such duplicates gets
// mxfp8's kernels, with no second copies.
func.func @duplicates(%arg0: tensor<?x4x64xbf16>, %arg1: tensor<?x2x64xbf16>, %arg2: tensor<?x2x64xbf16>, %arg3: tensor<?x4x64xbf16>, %arg4: tensor<?xi32>) -> (tensor<?x4x64xbf16>, tensor<4x?xf32>, tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>) {
  %0 = flamia.quantize %arg0 : (tensor<?x4x64xbf16>) -> !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 1x32>
  %1 = flamia.quantize %arg1 cu_seqlens(%arg4) : (tensor<?x2x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %2 = flamia.quantize %arg2 cu_seqlens(%arg4) : (tensor<?x2x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %o, %lse = flamia.attention_fwd qk(%0, %1) pv(%2) safe(%arg0, %arg1, %arg2) cu_seqlens(%arg4) {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>} : (!flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 1x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>, tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?xi32>) -> (tensor<?x4x64xbf16>, tensor<4x?xf32>)
  %3 = flamia.quantize %arg3 cu_seqlens(%arg4) : (tensor<?x4x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %5 = flamia.quantize %arg1 cu_seqlens(%arg4) : (tensor<?x2x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %6 = flamia.quantize %arg2 cu_seqlens(%arg4) : (tensor<?x2x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %7 = flamia.quantize %arg3 cu_seqlens(%arg4) : (tensor<?x4x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %4 = flamia.quantize %arg0 cu_seqlens(%arg4) : (tensor<?x4x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %grad_q, %grad_k, %grad_v = flamia.attention_bwd qk(%0, %1) dov(%3, %6) dsk(%5) dsq(%4) pdo(%7) safe(%arg0, %arg1, %arg2, %arg3) o(%o) lse(%lse) cu_seqlens(%arg4) {causal, ds = #flamia.precision<f8E4M3FN, online = 32>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>} : (!flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 1x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>, tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?x4x64xbf16>, tensor<?x4x64xbf16>, tensor<4x?xf32>, tensor<?xi32>) -> (tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>)
  return %o, %lse, %grad_q, %grad_k, %grad_v : tensor<?x4x64xbf16>, tensor<4x?xf32>, tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>
}
// CHECK-LABEL: flamia.kernel @duplicates_quantize(
// CHECK-NOT: v_pt
// CHECK-LABEL: flamia.kernel @duplicates_quantize_grad(
// CHECK-NOT: do_pt
// CHECK-LABEL: flamia.kernel @duplicates_attention_dq(
// CHECK-NOT: k_tb_deq
// CHECK: flamia.attention_dq_tile %{{.*}} grad_o(%arg3) safe(
// CHECK-LABEL: flamia.kernel @duplicates_attention_dkdv(
// CHECK-NOT: do_tb_deq
// CHECK: flamia.attention_dkdv_tile %{{.*}} q_tb(%arg4) safe(
