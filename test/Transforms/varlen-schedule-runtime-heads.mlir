// RUN: flamia-opt %s --flamia-varlen-schedule=target=sm_90a | FileCheck %s
// RUN: flamia-opt %s --flamia-varlen-schedule=target=sm_90a --flamia-tile=target=sm_90a | FileCheck %s --check-prefix=TILE
// RUN: flamia-opt %s --flamia-varlen-schedule="target=sm_90a debug-scores=1" | FileCheck %s --check-prefix=DEBUG
// RUN: not flamia-opt %S/varlen-schedule.mlir -split-input-file --flamia-varlen-schedule="target=sm_90a debug-scores=1" 2>&1 | FileCheck %s --check-prefix=DEBUGFWD
// Runtime head counts: the training step of varlen-schedule-backward.mlir
// with '?' query and key/value heads. Every kernel that indexes a packed
// tensor takes Hq and Hkv as parameters, the launch plan passes the runtime
// values of the same names, and the buffers' dims name them: one kernel set
// for every head count.

func.func @train(%arg0: tensor<?x?x64xbf16>, %arg1: tensor<?x?x64xbf16>, %arg2: tensor<?x?x64xbf16>, %arg3: tensor<?x?x64xbf16>, %arg4: tensor<?xi32>) -> (tensor<?x?x64xbf16>, tensor<?x?xf32>, tensor<?x?x64xbf16>, tensor<?x?x64xbf16>, tensor<?x?x64xbf16>) {
  %0 = flamia.quantize %arg0 : (tensor<?x?x64xbf16>) -> !flamia.qtensor<?x?x64xf8E4M3FN, f8E8M0FNU, 1x32>
  %1 = flamia.quantize %arg1 cu_seqlens(%arg4) : (tensor<?x?x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x?x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %2 = flamia.quantize %arg2 cu_seqlens(%arg4) : (tensor<?x?x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x?x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %o, %lse = flamia.attention_fwd qk(%0, %1) pv(%2) safe(%arg0, %arg1, %arg2) cu_seqlens(%arg4) {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>} : (!flamia.qtensor<?x?x64xf8E4M3FN, f8E8M0FNU, 1x32>, !flamia.qtensor<?x?x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x?x64xf8E4M3FN, f8E8M0FNU, 32x32>, tensor<?x?x64xbf16>, tensor<?x?x64xbf16>, tensor<?x?x64xbf16>, tensor<?xi32>) -> (tensor<?x?x64xbf16>, tensor<?x?xf32>)
  %3 = flamia.quantize %arg3 cu_seqlens(%arg4) : (tensor<?x?x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x?x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %4 = flamia.quantize %arg0 cu_seqlens(%arg4) : (tensor<?x?x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x?x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %grad_q, %grad_k, %grad_v = flamia.attention_bwd qk(%0, %1) dov(%3, %2) dsk(%1) dsq(%4) pdo(%3) safe(%arg0, %arg1, %arg2, %arg3) o(%o) lse(%lse) cu_seqlens(%arg4) {causal, ds = #flamia.precision<f8E4M3FN, online = 32>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>} : (!flamia.qtensor<?x?x64xf8E4M3FN, f8E8M0FNU, 1x32>, !flamia.qtensor<?x?x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x?x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x?x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x?x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x?x64xf8E4M3FN, f8E8M0FNU, 32x32>, !flamia.qtensor<?x?x64xf8E4M3FN, f8E8M0FNU, 32x32>, tensor<?x?x64xbf16>, tensor<?x?x64xbf16>, tensor<?x?x64xbf16>, tensor<?x?x64xbf16>, tensor<?x?x64xbf16>, tensor<?x?xf32>, tensor<?xi32>) -> (tensor<?x?x64xbf16>, tensor<?x?x64xbf16>, tensor<?x?x64xbf16>)
  return %o, %lse, %grad_q, %grad_k, %grad_v : tensor<?x?x64xbf16>, tensor<?x?xf32>, tensor<?x?x64xbf16>, tensor<?x?x64xbf16>, tensor<?x?x64xbf16>
}

// The quantizer: Q's copies indexed with Hq, K's and V's with Hkv, which
// also bounds the CTAs (query heads) that quantize K and V.
// CHECK-LABEL: flamia.kernel @train_quantize(
// CHECK-SAME: %arg12: i32 {flamia.param = "Hq"}, %arg13: i32 {flamia.param = "Hkv"})
// CHECK: %[[KV:.*]] = arith.cmpi slt, %[[H:.*]], %arg13 : i32
// CHECK: scf.if %[[KV]]
// CHECK-NEXT: flamia.prefetch_rows %arg1 rows({{.*}}) head %[[H]] heads %arg13
// CHECK-NEXT: flamia.prefetch_rows %arg2 rows({{.*}}) head %[[H]] heads %arg13
// CHECK: flamia.quantize_block %arg0 rows({{.*}}) block %{{.*}} head %[[H]] heads %arg12 per_token_scales(
// CHECK: scf.if %[[KV]]
// CHECK: flamia.quantize_block %arg1 {{.*}} heads %arg13 token_block_scales(
// CHECK: flamia.quantize_block %arg2 {{.*}} heads %arg13 token_block_scales(

// CHECK-LABEL: flamia.kernel @train_attention_fwd(
// CHECK-SAME: %arg12: i32 {flamia.param = "T"}, %arg13: i32 {flamia.param = "Hq"}, %arg14: i32 {flamia.param = "Hkv"})
// CHECK: flamia.attention_tile {{.*}} tokens %arg12 heads(%arg13, %arg14)

// CHECK-LABEL: flamia.kernel @train_quantize_grad(
// CHECK-SAME: %arg6: i32 {flamia.param = "T"}, %arg7: i32 {flamia.param = "Hq"}, %arg8: i32 {flamia.param = "Hkv"})
// CHECK: flamia.quantize_block %arg0 {{.*}} heads %arg7 token_block_scales(
// CHECK: flamia.row_dot %arg0, %arg1 {{.*}} tokens %arg6 heads %arg7 :

// CHECK-LABEL: flamia.kernel @train_attention_dq(
// CHECK: flamia.attention_dq_tile {{.*}} tokens %arg16 heads(%arg17, %arg18)
// CHECK-LABEL: flamia.kernel @train_attention_dkdv(
// CHECK: flamia.attention_dkdv_tile {{.*}} tokens %arg18 heads(%arg19, %arg20)

// The launch plan: the buffers' head axes are Hq or Hkv, and the runtime
// supplies both values.
// CHECK-LABEL: func.func @train(
// CHECK-SAME: flamia.buffer = "q", flamia.dims = ["T", "Hq", "64"]
// CHECK-SAME: flamia.buffer = "k", flamia.dims = ["T", "Hkv", "64"]
// CHECK-SAME: flamia.buffer = "lse", flamia.dims = ["Hq", "T"]
// CHECK-SAME: flamia.buffer = "dk", flamia.dims = ["T", "Hkv", "64"]
// CHECK: flamia.workspace workspace "q_tb_scales" dims ["NB", "Hq", "2"]
// CHECK: flamia.workspace workspace "k_deq" dims ["T", "Hkv", "64"]
// CHECK: flamia.workspace workspace "delta" dims ["Hq", "T"]
// CHECK: %[[HQ:.*]] = flamia.runtime_value "Hq" : i32
// CHECK: %[[HKV:.*]] = flamia.runtime_value "Hkv" : i32
// CHECK: flamia.launch @train_quantize({{.*}}, %[[HQ]], %[[HKV]]) grid ["NB", "Hq", "1"]
// CHECK: flamia.launch @train_attention_fwd({{.*}}, %[[HQ]], %[[HKV]]) grid

// After flamia-tile: O and the gradients are stored with the runtime head
// count, and the dK/dV kernel visits Hq / Hkv query heads per key tile.
// TILE-LABEL: flamia.kernel @train_attention_fwd(
// TILE: flamia.attn.store {{.*}} tokens %arg12 heads %arg13 {fixed_scale = 8 : i64, sum_prescaled}
// TILE-LABEL: flamia.kernel @train_attention_dq(
// TILE: flamia.grad.store {{.*}} head %q_head heads %arg17 :
// TILE-LABEL: flamia.kernel @train_attention_dkdv(
// TILE: %[[GROUP:.*]] = arith.divsi %arg19, %arg20 : i32
// TILE: arith.muli %{{.*}}, %[[GROUP]] : i32
// TILE: flamia.grad.store {{.*}} head %kv_head heads %arg20 :
// TILE: flamia.grad.store {{.*}} head %kv_head heads %arg20 :

// A debug build: the forward and the dQ tile ops also write S of the first
// key tile, into the scratch workspaces s_fwd and s_dq ([T, Hq, 128] f32).
// DEBUG-LABEL: flamia.kernel @train_attention_fwd(
// DEBUG-SAME: %arg15: !flamia.global<?x?x128xf32> {flamia.param = "s_fwd"})
// DEBUG: flamia.attention_tile {{.*}} heads(%arg13, %arg14) debug_scores(%arg15)
// DEBUG-LABEL: flamia.kernel @train_attention_dq(
// DEBUG: flamia.attention_dq_tile {{.*}} heads(%arg17, %arg18) debug_scores(%arg19)
// DEBUG-LABEL: func.func @train(
// DEBUG: flamia.workspace workspace "s_fwd" dims ["T", "Hq", "128"] : !flamia.global<?x?x128xf32>
// DEBUG: flamia.workspace workspace "s_dq" dims ["T", "Hq", "128"] : !flamia.global<?x?x128xf32>
// DEBUGFWD: error: 'flamia.attention_fwd' op flamia-varlen-schedule: debug-scores compares the forward's S with the dQ kernel's: it needs a training step on sm_90a
