// RUN: flamia-opt %s --flamia-graph-pipeline | FileCheck %s
// RUN: flamia-opt %s --pass-pipeline='builtin.module(flamia-graph-pipeline{recipe=mxfp8 safe-block=128})' | FileCheck %s
// RUN: flamia-opt %examples/01-packed-documents-d128.mlir --flamia-graph-pipeline --flamia-verify-causality=report=true 2>&1 | FileCheck %s --check-prefix=EXAMPLE
// RUN: flamia-opt %examples/02-packed-documents-d64-gqa.mlir --flamia-graph-pipeline | FileCheck %s --check-prefix=GQA

// From bf16 attention and its gradient to five quantizations (Q per token;
// K, V, dO and a second Q copy in 32x32 token blocks), shared by the forward
// and the backward, with the backward recomputing S from the forward's
// operands and LSE.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^,]*}}, %[[DO:[^:]*]]: {{[^,]*}}, %[[CU:[^:]*]]:
// CHECK-DAG: %[[Q8:.*]] = flamia.quantize %[[Q]] : {{.*}} 1x32>
// CHECK-DAG: %[[K8:.*]] = flamia.quantize %[[K]] cu_seqlens(%[[CU]]) : {{.*}} 32x32>
// CHECK-DAG: %[[V8:.*]] = flamia.quantize %[[V]] cu_seqlens(%[[CU]]) : {{.*}} 32x32>
// CHECK: %[[O:.*]], %[[LSE:.*]] = flamia.attention_fwd qk(%[[Q8]], %[[K8]]) pv(%[[V8]]) safe(%[[Q]], %[[K]], %[[V]]) cu_seqlens(%[[CU]])
// CHECK-DAG: %[[DO8:.*]] = flamia.quantize %[[DO]] cu_seqlens(%[[CU]]) : {{.*}} 32x32>
// CHECK-DAG: %[[QTB:.*]] = flamia.quantize %[[Q]] cu_seqlens(%[[CU]]) : {{.*}} 32x32>
// CHECK: flamia.attention_bwd qk(%[[Q8]], %[[K8]]) dov(%[[DO8]], %[[V8]]) dsk(%[[K8]]) dsq(%[[QTB]]) pdo(%[[DO8]]) safe(%[[Q]], %[[K]], %[[V]], %[[DO]]) o(%[[O]]) lse(%[[LSE]]) cu_seqlens(%[[CU]])
// CHECK-NOT: flamia.quantize
func.func @train_step(%q: tensor<?x4x64xbf16>, %k: tensor<?x4x64xbf16>, %v: tensor<?x4x64xbf16>,
                      %do: tensor<?x4x64xbf16>, %cu: tensor<?xi32>)
    -> (tensor<?x4x64xbf16>, tensor<?x4x64xf32>, tensor<?x4x64xf32>, tensor<?x4x64xf32>) {
  %o, %lse = flamia.attention %q, %k, %v cu_seqlens(%cu) {causal, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (tensor<?x4x64xbf16>, tensor<?x4x64xbf16>, tensor<?x4x64xbf16>, tensor<?xi32>) -> (tensor<?x4x64xbf16>, tensor<4x?xf32>)
  %dq, %dk, %dv = flamia.attention_grad %q, %k, %v, %o, %lse, %do cu_seqlens(%cu) {causal, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (tensor<?x4x64xbf16>, tensor<?x4x64xbf16>, tensor<?x4x64xbf16>, tensor<?x4x64xbf16>, tensor<4x?xf32>, tensor<?x4x64xbf16>, tensor<?xi32>)
      -> (tensor<?x4x64xf32>, tensor<?x4x64xf32>, tensor<?x4x64xf32>)
  return %o, %dq, %dk, %dv : tensor<?x4x64xbf16>, tensor<?x4x64xf32>, tensor<?x4x64xf32>, tensor<?x4x64xf32>
}

// EXAMPLE: remark: flamia-reuse-scale-layouts: 10 quantizations -> 5 (0 uses moved to a shared token-block copy; saved 5 quantizations, 644.5 bytes per token and head)
// EXAMPLE: remark: causality verified: L1 (forward causality); L2 (document-local blocks); L3 not requested
// EXAMPLE: remark: causality verified: no forward outputs (L1 n/a); L2 (document-local blocks); L3 not requested

// GQA-LABEL: func.func @attention_d64_gqa
// GQA-COUNT-5: flamia.quantize
// GQA: flamia.attention_bwd qk(%{{.*}}) dov
