// RUN: flamia-opt %s -split-input-file --flamia-causal-safe-scales | FileCheck %s
// RUN: flamia-opt %s -split-input-file --flamia-causal-safe-scales --flamia-verify-causality | FileCheck %s --check-prefix=VERIFIED
// RUN: flamia-opt %s -split-input-file --flamia-causal-safe-scales=safe-block=256 | FileCheck %s --check-prefix=SB256
// Every leaky configuration of verify-causality-invalid.mlir, repaired; the
// repaired programs pass flamia-verify-causality.
// VERIFIED-COUNT-5: flamia.attention_fwd
// VERIFIED: flamia.attention_bwd

!b = tensor<?x2x64xbf16>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
// Token-block Q in S = Q K^T gets a per-token copy; V keeps its block.
// CHECK-LABEL: func.func @token_block_q
// CHECK: %[[TB:.*]] = flamia.quantize %arg0 cu_seqlens(%arg1) : {{.*}} 32x32>
// CHECK: %[[PT:.*]] = flamia.quantize %arg0 : {{.*}} 1x32>
// CHECK: flamia.attention_fwd qk(%[[PT]], %[[TB]]) pv(%[[TB]])
func.func @token_block_q(%q: !b, %cu: tensor<?xi32>) -> !b {
  %q8 = flamia.quantize %q cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %o, %lse = flamia.attention_fwd qk(%q8, %q8) pv(%q8) safe(%q, %q, %q) cu_seqlens(%cu)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (!tb, !tb, !tb, !b, !b, !b, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  return %o : !b
}

// -----
!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tbp = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32, packed>
// Packed token blocks become document-local (same block size).
// CHECK-LABEL: func.func @packed_blocks
// CHECK: %[[DOC:.*]] = flamia.quantize %arg1 cu_seqlens(%arg2) : {{.*}} -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
// CHECK: flamia.attention_fwd qk(%{{.*}}, %[[DOC]]) pv(%{{.*}})
// CHECK-NOT: packed
func.func @packed_blocks(%q: !b, %k: !b, %cu: tensor<?xi32>) -> !b {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %k8 = flamia.quantize %k cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tbp
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%k8) safe(%q, %k, %k) cu_seqlens(%cu)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (!pt, !tbp, !tbp, !b, !b, !b, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  return %o : !b
}

// -----
!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
// A missing safe block is added, with the bf16 originals (the inputs of the
// quantizations) as safe operands.
// CHECK-LABEL: func.func @missing_safe_block
// CHECK: flamia.attention_fwd qk(%{{.*}}, %{{.*}}) pv(%{{.*}}) safe(%arg0, %arg1, %arg1) cu_seqlens(%arg2)
// CHECK-SAME: recipe = #flamia.recipe<mxfp8, safe_block = 128>
// SB256-LABEL: func.func @missing_safe_block
// SB256: recipe = #flamia.recipe<mxfp8, safe_block = 256>
func.func @missing_safe_block(%q: !b, %k: !b, %cu: tensor<?xi32>) -> !b {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %k8 = flamia.quantize %k cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%k8) cu_seqlens(%cu)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8>}
      : (!pt, !tb, !tb, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  return %o : !b
}

// -----
!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb96 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 96x32>
// A safe block that does not cover whole token blocks grows to a multiple of
// lcm(token block, 32): 96 here, rounded up from 128 to 192.
// CHECK-LABEL: func.func @safe_block_too_small
// CHECK: recipe = #flamia.recipe<mxfp8, safe_block = 192>
func.func @safe_block_too_small(%q: !b, %v: !b, %cu: tensor<?xi32>) -> !b {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %v8 = flamia.quantize %v cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb96
  %o, %lse = flamia.attention_fwd qk(%q8, %q8) pv(%v8) safe(%q, %q, %v) cu_seqlens(%cu)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 64>}
      : (!pt, !pt, !tb96, !b, !b, !b, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  return %o : !b
}

// -----
!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!t = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, tensor>
// A per-tensor scale becomes the recipe's layout for that GEMM (V in P V:
// 32x32 token blocks).
// CHECK-LABEL: func.func @per_tensor_scale
// CHECK: %[[V8:.*]] = flamia.quantize %arg1 cu_seqlens(%arg2) : {{.*}} 32x32>
// CHECK: flamia.attention_fwd qk(%{{.*}}, %{{.*}}) pv(%[[V8]])
func.func @per_tensor_scale(%q: !b, %v: !b, %cu: tensor<?xi32>) -> !b {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %v8 = flamia.quantize %v : (!b) -> !t
  %o, %lse = flamia.attention_fwd qk(%q8, %q8) pv(%v8) safe(%q, %q, %v) cu_seqlens(%cu)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (!pt, !pt, !t, !b, !b, !b, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  return %o : !b
}

// -----
!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
// Strict: token-block operands of head-dim-contracted GEMMs get per-token
// copies (here dO and V in dP = dO V^T).
// CHECK-LABEL: func.func @strict_backward
// CHECK-DAG: %[[DOPT:.*]] = flamia.quantize %arg1 : {{.*}} 1x32>
// CHECK-DAG: %[[VPT:.*]] = flamia.quantize %arg5 : {{.*}} 1x32>
// CHECK: flamia.attention_bwd qk(%{{.*}}, %{{.*}}) dov(%[[DOPT]], %[[VPT]])
func.func @strict_backward(%q: !b, %do: !b, %o: !b, %lse: tensor<2x?xf32>, %cu: tensor<?xi32>, %v: !b) -> tensor<?x2x64xf32> {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %qtb = flamia.quantize %q cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %vtb = flamia.quantize %v cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %do8 = flamia.quantize %do cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %dq, %dk, %dv = flamia.attention_bwd qk(%q8, %q8) dov(%do8, %vtb) dsk(%qtb) dsq(%qtb) pdo(%do8) safe(%q, %q, %v, %do) o(%o) lse(%lse) cu_seqlens(%cu)
      {causal, ds = #flamia.precision<f8E4M3FN, online = 32>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>,
       recipe = #flamia.recipe<mxfp8, safe_block = 128, strict>}
      : (!pt, !pt, !tb, !tb, !tb, !tb, !tb, !b, !b, !b, !b, !b, tensor<2x?xf32>, tensor<?xi32>)
      -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return %dq : tensor<?x2x64xf32>
}
