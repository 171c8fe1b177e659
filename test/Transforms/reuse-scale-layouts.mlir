// RUN: flamia-opt %s -split-input-file --flamia-reuse-scale-layouts -verify-diagnostics | FileCheck %s

// What flamia-quantize-attention emits for a forward and its backward: ten
// quantizations, five of them duplicates. One copy each remains: Q per token,
// K, V, dO and Q in 32x32 token blocks.
// CHECK-LABEL: func.func @forward_and_backward
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^,]*}}, %[[DO:[^:]*]]: {{[^,]*}}, %[[CU:[^:]*]]:
// CHECK-DAG: %[[Q8:.*]] = flamia.quantize %[[Q]] : {{.*}} 1x32>
// CHECK-DAG: %[[K8:.*]] = flamia.quantize %[[K]] cu_seqlens(%[[CU]]) : {{.*}} 32x32>
// CHECK-DAG: %[[V8:.*]] = flamia.quantize %[[V]] cu_seqlens(%[[CU]]) : {{.*}} 32x32>
// CHECK: %[[O:.*]], %[[LSE:.*]] = flamia.attention_fwd qk(%[[Q8]], %[[K8]]) pv(%[[V8]])
// CHECK-DAG: %[[DO8:.*]] = flamia.quantize %[[DO]] cu_seqlens(%[[CU]]) : {{.*}} 32x32>
// CHECK-DAG: %[[QTB:.*]] = flamia.quantize %[[Q]] cu_seqlens(%[[CU]]) : {{.*}} 32x32>
// CHECK: flamia.attention_bwd qk(%[[Q8]], %[[K8]]) dov(%[[DO8]], %[[V8]]) dsk(%[[K8]]) dsq(%[[QTB]]) pdo(%[[DO8]])
// CHECK-NOT: flamia.quantize
!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
#r = #flamia.recipe<mxfp8, safe_block = 128>
#p = #flamia.precision<f8E4M3FN, fixed_scale = 8>
#ds = #flamia.precision<f8E4M3FN, online = 32>
// expected-remark @below {{flamia-reuse-scale-layouts: 10 quantizations -> 5 (0 uses moved to a shared token-block copy; saved 5 quantizations, 322.25 bytes per token and head)}}
func.func @forward_and_backward(%q: !b, %k: !b, %v: !b, %do: !b, %cu: tensor<?xi32>) -> (!b, tensor<?x2x64xf32>) {
  %0 = flamia.quantize %q : (!b) -> !pt
  %1 = flamia.quantize %k cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %2 = flamia.quantize %v cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %o, %lse = flamia.attention_fwd qk(%0, %1) pv(%2) safe(%q, %k, %v) cu_seqlens(%cu) {causal, p = #p, recipe = #r}
      : (!pt, !tb, !tb, !b, !b, !b, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  %3 = flamia.quantize %q : (!b) -> !pt
  %4 = flamia.quantize %k cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %5 = flamia.quantize %do cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %6 = flamia.quantize %v cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %7 = flamia.quantize %k cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %8 = flamia.quantize %q cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %9 = flamia.quantize %do cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %dq, %dk, %dv = flamia.attention_bwd qk(%3, %4) dov(%5, %6) dsk(%7) dsq(%8) pdo(%9) safe(%q, %k, %v, %do) o(%o) lse(%lse)
      cu_seqlens(%cu) {causal, ds = #ds, p = #p, recipe = #r}
      : (!pt, !tb, !tb, !tb, !tb, !tb, !tb, !b, !b, !b, !b, !b, tensor<2x?xf32>, tensor<?xi32>)
      -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return %o, %dq : !b, tensor<?x2x64xf32>
}

// -----

// Two copies of K in different layouts (per token for S = Q K^T, token
// blocks for dQ = dS K): with a 128-token safe block the token-block copy
// serves both orientations, so the per-token one disappears. Q's per-token
// copy in S = Q K^T must stay.
// CHECK-LABEL: func.func @one_copy_across_orientations
// CHECK: %[[Q8:.*]] = flamia.quantize %arg0 : {{.*}} 1x32>
// CHECK: %[[QTB:.*]] = flamia.quantize %arg0 cu_seqlens(%arg2) : {{.*}} 32x32>
// CHECK: %[[K8:.*]] = flamia.quantize %arg1 cu_seqlens(%arg2) : {{.*}} 32x32>
// CHECK: flamia.attention_bwd qk(%[[Q8]], %[[K8]]) dov(%{{.*}}, %{{.*}}) dsk(%[[K8]]) dsq(%[[QTB]])
!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
// expected-remark @below {{flamia-reuse-scale-layouts: 4 quantizations -> 3 (1 uses moved to a shared token-block copy; saved 1 quantizations, 66 bytes per token and head)}}
func.func @one_copy_across_orientations(%q: !b, %k: !b, %cu: tensor<?xi32>, %o: !b, %lse: tensor<2x?xf32>) -> tensor<?x2x64xf32> {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %qtb = flamia.quantize %q cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %kpt = flamia.quantize %k : (!b) -> !pt
  %ktb = flamia.quantize %k cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %dq, %dk, %dv = flamia.attention_bwd qk(%q8, %kpt) dov(%qtb, %ktb) dsk(%ktb) dsq(%qtb) pdo(%qtb) safe(%q, %k, %k, %q) o(%o) lse(%lse)
      cu_seqlens(%cu) {causal, ds = #flamia.precision<f8E4M3FN, online = 32>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>,
                       recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (!pt, !pt, !tb, !tb, !tb, !tb, !tb, !b, !b, !b, !b, !b, tensor<2x?xf32>, tensor<?xi32>)
      -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return %dq : tensor<?x2x64xf32>
}

// -----

// Strict recipes keep per-token copies for head-dim-contracted GEMMs (L3).
// CHECK-LABEL: func.func @strict_keeps_per_token
// CHECK: %[[KPT:.*]] = flamia.quantize %arg1 : {{.*}} 1x32>
// CHECK: flamia.attention_bwd qk(%{{.*}}, %[[KPT]])
!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
// expected-remark @below {{4 quantizations -> 4 (0 uses moved}}
func.func @strict_keeps_per_token(%q: !b, %k: !b, %cu: tensor<?xi32>, %o: !b, %lse: tensor<2x?xf32>) -> tensor<?x2x64xf32> {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %qtb = flamia.quantize %q cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %kpt = flamia.quantize %k : (!b) -> !pt
  %ktb = flamia.quantize %k cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %dq, %dk, %dv = flamia.attention_bwd qk(%q8, %kpt) dov(%q8, %kpt) dsk(%ktb) dsq(%qtb) pdo(%qtb) safe(%q, %k, %k, %q) o(%o) lse(%lse)
      cu_seqlens(%cu) {causal, ds = #flamia.precision<f8E4M3FN, online = 32>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>,
                       recipe = #flamia.recipe<mxfp8, safe_block = 128, strict>}
      : (!pt, !pt, !pt, !pt, !tb, !tb, !tb, !b, !b, !b, !b, !b, tensor<2x?xf32>, tensor<?xi32>)
      -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return %dq : tensor<?x2x64xf32>
}

// -----

// A 64-token block does not fit a 32-token safe block: key 0..63 share a
// scale, so query 32 would see key 63 through key 0. The per-token copy of K
// stays for S = Q K^T.
// CHECK-LABEL: func.func @safe_block_too_small_for_sharing
// CHECK: %[[KPT:.*]] = flamia.quantize %arg1 : {{.*}} 1x32>
// CHECK: flamia.attention_fwd qk(%{{.*}}, %[[KPT]])
!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb64 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 64x32>
// expected-remark @below {{3 quantizations -> 3 (0 uses moved}}
func.func @safe_block_too_small_for_sharing(%q: !b, %k: !b, %cu: tensor<?xi32>) -> !b {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %kpt = flamia.quantize %k : (!b) -> !pt
  %ktb = flamia.quantize %k cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb64
  %o, %lse = flamia.attention_fwd qk(%q8, %kpt) pv(%ktb) safe(%q, %k, %k) cu_seqlens(%cu)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 32>}
      : (!pt, !pt, !tb64, !b, !b, !b, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  return %o : !b
}
