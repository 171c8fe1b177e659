// RUN: flamia-opt %s -split-input-file --flamia-fwd-bwd-consistency | FileCheck %s

!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
#r = #flamia.recipe<mxfp8, safe_block = 128>
#p = #flamia.precision<f8E4M3FN, fixed_scale = 8>
#ds = #flamia.precision<f8E4M3FN, online = 32>

// The backward quantized Q, K (and V) on its own, even in another layout
// (K per token): it now recomputes S from the forward's exact copies and
// reads the forward's V copy in dP = dO V^T.
// CHECK-LABEL: func.func @backward_quantizes_on_its_own
// CHECK: %[[Q8:.*]] = flamia.quantize %arg0 : {{.*}} 1x32>
// CHECK: %[[K8:.*]] = flamia.quantize %arg1 cu_seqlens(%arg4) : {{.*}} 32x32>
// CHECK: %[[V8:.*]] = flamia.quantize %arg2 cu_seqlens(%arg4)
// CHECK: %[[O:.*]], %[[LSE:.*]] = flamia.attention_fwd qk(%[[Q8]], %[[K8]]) pv(%[[V8]])
// CHECK: flamia.attention_bwd qk(%[[Q8]], %[[K8]]) dov(%{{.*}}, %[[V8]]) {{.*}} o(%[[O]]) lse(%[[LSE]])
func.func @backward_quantizes_on_its_own(%q: !b, %k: !b, %v: !b, %do: !b, %cu: tensor<?xi32>) -> tensor<?x2x64xf32> {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %k8 = flamia.quantize %k cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %v8 = flamia.quantize %v cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%v8) safe(%q, %k, %v) cu_seqlens(%cu) {causal, p = #p, recipe = #r}
      : (!pt, !tb, !tb, !b, !b, !b, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  %bq = flamia.quantize %q : (!b) -> !pt
  %bk = flamia.quantize %k : (!b) -> !pt
  %bv = flamia.quantize %v cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %bdo = flamia.quantize %do cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %bqtb = flamia.quantize %q cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %dq, %dk, %dv = flamia.attention_bwd qk(%bq, %bk) dov(%bdo, %bv) dsk(%k8) dsq(%bqtb) pdo(%bdo) safe(%q, %k, %v, %do) o(%o) lse(%lse)
      cu_seqlens(%cu) {causal, ds = #ds, p = #p, recipe = #r}
      : (!pt, !pt, !tb, !tb, !tb, !tb, !tb, !b, !b, !b, !b, !b, tensor<2x?xf32>, tensor<?xi32>)
      -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return %dq : tensor<?x2x64xf32>
}

// -----
!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
#r = #flamia.recipe<mxfp8, safe_block = 128>
#p = #flamia.precision<f8E4M3FN, fixed_scale = 8>
#ds = #flamia.precision<f8E4M3FN, online = 32>
// Linked through the quantized tensors only (the backward was handed another
// O and LSE): it now reads the forward's.
// CHECK-LABEL: func.func @linked_by_operands
// CHECK: %[[O:.*]], %[[LSE:.*]] = flamia.attention_fwd
// CHECK: flamia.attention_bwd {{.*}} o(%[[O]]) lse(%[[LSE]])
func.func @linked_by_operands(%q: !b, %k: !b, %do: !b, %cu: tensor<?xi32>, %o2: !b, %lse2: tensor<2x?xf32>) -> (!b, tensor<?x2x64xf32>) {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %k8 = flamia.quantize %k cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !tb
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%k8) safe(%q, %k, %k) cu_seqlens(%cu) {causal, p = #p, recipe = #r}
      : (!pt, !tb, !tb, !b, !b, !b, tensor<?xi32>) -> (!b, tensor<2x?xf32>)
  %dq, %dk, %dv = flamia.attention_bwd qk(%q8, %k8) dov(%k8, %k8) dsk(%k8) dsq(%k8) pdo(%k8) safe(%q, %k, %k, %do) o(%o2) lse(%lse2)
      cu_seqlens(%cu) {causal, ds = #ds, p = #p, recipe = #r}
      : (!pt, !tb, !tb, !tb, !tb, !tb, !tb, !b, !b, !b, !b, !b, tensor<2x?xf32>, tensor<?xi32>)
      -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return %o, %dq : !b, tensor<?x2x64xf32>
}
