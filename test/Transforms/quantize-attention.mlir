// RUN: flamia-opt %s -split-input-file --flamia-quantize-attention | FileCheck %s
// RUN: not flamia-opt %s -split-input-file --flamia-quantize-attention=recipe=nvfp4_mixed -o /dev/null 2>&1 | FileCheck %s --check-prefix=FILTER

// The forward: Q per token for S = Q K^T, K and V in document-local 32x32
// token blocks, the bf16 originals for the safe block, P as E4M3 * 2^8.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[Q:.*]]: tensor<?x2x64xbf16>, %[[K:.*]]: tensor<?x2x64xbf16>, %[[V:.*]]: tensor<?x2x64xbf16>, %[[CU:.*]]: tensor<?xi32>)
// CHECK: %[[Q8:.*]] = flamia.quantize %[[Q]] : {{.*}} -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
// CHECK: %[[K8:.*]] = flamia.quantize %[[K]] cu_seqlens(%[[CU]]) : {{.*}} -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
// CHECK: %[[V8:.*]] = flamia.quantize %[[V]] cu_seqlens(%[[CU]]) : {{.*}} -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
// CHECK: %[[O:.*]], %[[LSE:.*]] = flamia.attention_fwd qk(%[[Q8]], %[[K8]]) pv(%[[V8]]) safe(%[[Q]], %[[K]], %[[V]]) cu_seqlens(%[[CU]])
// CHECK-SAME: causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>, softmax_scale = 1.250000e-01 : f32
// CHECK: return %[[O]], %[[LSE]]
// CHECK-NOT: flamia.attention %
func.func @forward(%q: tensor<?x2x64xbf16>, %k: tensor<?x2x64xbf16>, %v: tensor<?x2x64xbf16>, %cu: tensor<?xi32>)
    -> (tensor<?x2x64xbf16>, tensor<2x?xf32>) {
  %o, %lse = flamia.attention %q, %k, %v cu_seqlens(%cu)
      {causal, softmax_scale = 0.125 : f32, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?xi32>) -> (tensor<?x2x64xbf16>, tensor<2x?xf32>)
  return %o, %lse : tensor<?x2x64xbf16>, tensor<2x?xf32>
}

// -----

// No safe block in the recipe: no safe operands (flamia-causal-safe-scales
// adds them; flamia-verify-causality rejects the program without them).
// CHECK-LABEL: func.func @forward_without_safe_block
// CHECK: flamia.attention_fwd qk(%{{.*}}, %{{.*}}) pv(%{{.*}}) {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8>}
func.func @forward_without_safe_block(%q: tensor<128x1x64xbf16>) -> tensor<128x1x64xbf16> {
  %o, %lse = flamia.attention %q, %q, %q {causal, recipe = #flamia.recipe<mxfp8>}
      : (tensor<128x1x64xbf16>, tensor<128x1x64xbf16>, tensor<128x1x64xbf16>) -> (tensor<128x1x64xbf16>, tensor<1x128xf32>)
  return %o : tensor<128x1x64xbf16>
}

// -----

// The backward quantizes every GEMM use on its own: 7 quantizations.
// CHECK-LABEL: func.func @backward
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^,]*}}, %[[O:[^:]*]]: {{[^,]*}}, %[[LSE:[^:]*]]: {{[^,]*}}, %[[DO:[^:]*]]: {{[^,]*}}, %[[CU:[^:]*]]:
// CHECK: %[[QK_Q:.*]] = flamia.quantize %[[Q]] : {{.*}} 1x32>
// CHECK: %[[QK_K:.*]] = flamia.quantize %[[K]] cu_seqlens(%[[CU]]) : {{.*}} 32x32>
// CHECK: %[[DOV_DO:.*]] = flamia.quantize %[[DO]] cu_seqlens(%[[CU]]) : {{.*}} 32x32>
// CHECK: %[[DOV_V:.*]] = flamia.quantize %[[V]] cu_seqlens(%[[CU]]) : {{.*}} 32x32>
// CHECK: %[[DSK_K:.*]] = flamia.quantize %[[K]] cu_seqlens(%[[CU]]) : {{.*}} 32x32>
// CHECK: %[[DSQ_Q:.*]] = flamia.quantize %[[Q]] cu_seqlens(%[[CU]]) : {{.*}} 32x32>
// CHECK: %[[PDO_DO:.*]] = flamia.quantize %[[DO]] cu_seqlens(%[[CU]]) : {{.*}} 32x32>
// CHECK: flamia.attention_bwd qk(%[[QK_Q]], %[[QK_K]]) dov(%[[DOV_DO]], %[[DOV_V]]) dsk(%[[DSK_K]]) dsq(%[[DSQ_Q]]) pdo(%[[PDO_DO]]) safe(%[[Q]], %[[K]], %[[V]], %[[DO]]) o(%[[O]]) lse(%[[LSE]]) cu_seqlens(%[[CU]])
// CHECK-SAME: ds = #flamia.precision<f8E4M3FN, online = 32>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>
func.func @backward(%q: tensor<?x2x64xbf16>, %k: tensor<?x2x64xbf16>, %v: tensor<?x2x64xbf16>,
                    %o: tensor<?x2x64xbf16>, %lse: tensor<2x?xf32>, %do: tensor<?x2x64xbf16>, %cu: tensor<?xi32>)
    -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>) {
  %dq, %dk, %dv = flamia.attention_grad %q, %k, %v, %o, %lse, %do cu_seqlens(%cu)
      {causal, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<2x?xf32>, tensor<?x2x64xbf16>, tensor<?xi32>)
      -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return %dq, %dk, %dv : tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>
}

// -----

// Strict: the head-dim-contracted GEMMs (S = Q K^T, dP = dO V^T) read
// per-token copies, the token-contracted ones token blocks.
// CHECK-LABEL: func.func @strict_backward
// CHECK-COUNT-4: flamia.quantize {{.*}} 1x32>
// CHECK-COUNT-3: flamia.quantize {{.*}} 32x32>
// CHECK: flamia.attention_bwd
func.func @strict_backward(%q: tensor<?x2x64xbf16>, %o: tensor<?x2x64xbf16>, %lse: tensor<2x?xf32>)
    -> tensor<?x2x64xf32> {
  %dq, %dk, %dv = flamia.attention_grad %q, %q, %q, %o, %lse, %o
      {causal, recipe = #flamia.recipe<mxfp8, safe_block = 128, strict>}
      : (tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<2x?xf32>, tensor<?x2x64xbf16>)
      -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return %dq : tensor<?x2x64xf32>
}

// -----

// The pass option filters recipes: an op of another recipe is an error.
// FILTER: error: 'flamia.attention' op uses recipe mxfp8 but flamia-quantize-attention was asked for recipe nvfp4_mixed
func.func @filtered(%q: tensor<64x1x64xbf16>) -> tensor<64x1x64xbf16> {
  %o, %lse = flamia.attention %q, %q, %q {recipe = #flamia.recipe<mxfp8>}
      : (tensor<64x1x64xbf16>, tensor<64x1x64xbf16>, tensor<64x1x64xbf16>) -> (tensor<64x1x64xbf16>, tensor<1x64xf32>)
  return %o : tensor<64x1x64xbf16>
}

// -----

// nvfp4-mixed, forward: Q and K in S = Q K^T in NVFP4 per token (E2M1, an
// unsigned E4M3 scale per 16 channels; no cu_seqlens: per-token scales do
// not depend on documents), V in E4M3 32x32 document-local token blocks.
// CHECK-LABEL: func.func @nvfp4_forward
// CHECK-SAME: (%[[Q:.*]]: tensor<?x2x64xbf16>, %[[K:.*]]: tensor<?x2x64xbf16>, %[[V:.*]]: tensor<?x2x64xbf16>, %[[CU:.*]]: tensor<?xi32>)
// CHECK: %[[Q4:.*]] = flamia.quantize %[[Q]] : {{.*}} -> !flamia.qtensor<?x2x64xf4E2M1FN, f8E4M3FN, 1x16>
// CHECK: %[[K4:.*]] = flamia.quantize %[[K]] : {{.*}} -> !flamia.qtensor<?x2x64xf4E2M1FN, f8E4M3FN, 1x16>
// CHECK: %[[V8:.*]] = flamia.quantize %[[V]] cu_seqlens(%[[CU]]) : {{.*}} -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
// CHECK: flamia.attention_fwd qk(%[[Q4]], %[[K4]]) pv(%[[V8]]) safe(%[[Q]], %[[K]], %[[V]]) cu_seqlens(%[[CU]])
// CHECK-SAME: recipe = #flamia.recipe<nvfp4_mixed, safe_block = 128>
func.func @nvfp4_forward(%q: tensor<?x2x64xbf16>, %k: tensor<?x2x64xbf16>, %v: tensor<?x2x64xbf16>, %cu: tensor<?xi32>)
    -> (tensor<?x2x64xbf16>, tensor<2x?xf32>) {
  %o, %lse = flamia.attention %q, %k, %v cu_seqlens(%cu)
      {causal, recipe = #flamia.recipe<nvfp4_mixed, safe_block = 128>}
      : (tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?xi32>) -> (tensor<?x2x64xbf16>, tensor<2x?xf32>)
  return %o, %lse : tensor<?x2x64xbf16>, tensor<2x?xf32>
}

// -----

// nvfp4-mixed, backward: NVFP4 per token for the head-dim-contracted uses
// (Q, K in Q K^T; dO, V in dO V^T), E4M3 token blocks for the
// token-contracted ones (dS K, dS^T Q, P^T dO).
// CHECK-LABEL: func.func @nvfp4_backward
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^,]*}}, %[[O:[^:]*]]: {{[^,]*}}, %[[LSE:[^:]*]]: {{[^,]*}}, %[[DO:[^:]*]]: {{[^,]*}}, %[[CU:[^:]*]]:
// CHECK: %[[QK_Q:.*]] = flamia.quantize %[[Q]] : {{.*}}xf4E2M1FN, f8E4M3FN, 1x16>
// CHECK: %[[QK_K:.*]] = flamia.quantize %[[K]] : {{.*}}xf4E2M1FN, f8E4M3FN, 1x16>
// CHECK: %[[DOV_DO:.*]] = flamia.quantize %[[DO]] : {{.*}}xf4E2M1FN, f8E4M3FN, 1x16>
// CHECK: %[[DOV_V:.*]] = flamia.quantize %[[V]] : {{.*}}xf4E2M1FN, f8E4M3FN, 1x16>
// CHECK: %[[DSK_K:.*]] = flamia.quantize %[[K]] cu_seqlens(%[[CU]]) : {{.*}}xf8E4M3FN, f8E8M0FNU, 32x32>
// CHECK: %[[DSQ_Q:.*]] = flamia.quantize %[[Q]] cu_seqlens(%[[CU]]) : {{.*}}xf8E4M3FN, f8E8M0FNU, 32x32>
// CHECK: %[[PDO_DO:.*]] = flamia.quantize %[[DO]] cu_seqlens(%[[CU]]) : {{.*}}xf8E4M3FN, f8E8M0FNU, 32x32>
// CHECK: flamia.attention_bwd qk(%[[QK_Q]], %[[QK_K]]) dov(%[[DOV_DO]], %[[DOV_V]]) dsk(%[[DSK_K]]) dsq(%[[DSQ_Q]]) pdo(%[[PDO_DO]])
// CHECK-SAME: recipe = #flamia.recipe<nvfp4_mixed, safe_block = 128>
func.func @nvfp4_backward(%q: tensor<?x2x64xbf16>, %k: tensor<?x2x64xbf16>, %v: tensor<?x2x64xbf16>,
                          %o: tensor<?x2x64xbf16>, %lse: tensor<2x?xf32>, %do: tensor<?x2x64xbf16>, %cu: tensor<?xi32>)
    -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>) {
  %dq, %dk, %dv = flamia.attention_grad %q, %k, %v, %o, %lse, %do cu_seqlens(%cu)
      {causal, recipe = #flamia.recipe<nvfp4_mixed, safe_block = 128>}
      : (tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<2x?xf32>, tensor<?x2x64xbf16>, tensor<?xi32>)
      -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return %dq, %dk, %dv : tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>
}
