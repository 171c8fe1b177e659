// Semantic preservation of flamia-graph-pipeline (and of
// flamia-quantize-attention alone) on forward-only and forward + backward
// programs, causal and not, with and without cu_seqlens, strict: the CPU
// reference gives bit-identical results before and after.
//
// Forward only, non-causal, one document (no cu_seqlens), a softmax scale.
// RUN: flamia-interp %s --function fwd_noncausal --tokens 200 --seed 5 --trace-scores -o %t.a0 | FileCheck %s --check-prefix=A
// RUN: flamia-opt %s --flamia-quantize-attention | flamia-interp - --function fwd_noncausal --tokens 200 --seed 5 --trace-scores -o %t.a1
// RUN: flamia-opt %s --flamia-graph-pipeline | flamia-interp - --function fwd_noncausal --tokens 200 --seed 5 --trace-scores -o %t.a2 | FileCheck %s --check-prefix=A2
// RUN: cmp %t.a0 %t.a1
// RUN: cmp %t.a0 %t.a2
// A: @fwd_noncausal ran 1 flamia.attention (seed 5, 3 arguments)
// A: result #0: 200x4x32xbf16 {{.*}}, 0 non-finite
// A2: @fwd_noncausal ran 3 flamia.quantize, 1 flamia.attention_fwd
//
// Forward only, causal, packed documents.
// RUN: flamia-interp %s --function fwd_causal_varlen --cu-seqlens 0,130,131,260 --seed 6 --trace-scores -o %t.b0 | FileCheck %s --check-prefix=B
// RUN: flamia-opt %s --flamia-quantize-attention | flamia-interp - --function fwd_causal_varlen --cu-seqlens 0,130,131,260 --seed 6 --trace-scores -o %t.b1
// RUN: flamia-opt %s --flamia-graph-pipeline | flamia-interp - --function fwd_causal_varlen --cu-seqlens 0,130,131,260 --seed 6 --trace-scores -o %t.b2
// RUN: cmp %t.b0 %t.b1
// RUN: cmp %t.b0 %t.b2
// B: @fwd_causal_varlen ran 1 flamia.attention
//
// Forward + backward, non-causal, packed documents, bf16 gradients.
// RUN: flamia-interp %s --function train_noncausal_varlen --cu-seqlens 0,64,200 --seed 7 --trace-scores -o %t.c0 | FileCheck %s --check-prefix=C
// RUN: flamia-opt %s --flamia-quantize-attention | flamia-interp - --function train_noncausal_varlen --cu-seqlens 0,64,200 --seed 7 --trace-scores -o %t.c1
// RUN: flamia-opt %s --flamia-graph-pipeline | flamia-interp - --function train_noncausal_varlen --cu-seqlens 0,64,200 --seed 7 --trace-scores -o %t.c2
// RUN: cmp %t.c0 %t.c1
// RUN: cmp %t.c0 %t.c2
// C: @train_noncausal_varlen ran 1 flamia.attention, 1 flamia.attention_grad
// C: result #1: 200x2x32xbf16 {{.*}}, 0 non-finite
//
// Forward + backward, causal, one document, strict (L3: per-token copies
// for the head-dim-contracted GEMMs).
// RUN: flamia-interp %s --function train_strict --tokens 256 --seed 8 --trace-scores -o %t.d0 | FileCheck %s --check-prefix=D
// RUN: flamia-opt %s --flamia-quantize-attention | flamia-interp - --function train_strict --tokens 256 --seed 8 --trace-scores -o %t.d1
// RUN: flamia-opt %s --flamia-graph-pipeline | flamia-interp - --function train_strict --tokens 256 --seed 8 --trace-scores -o %t.d2
// RUN: cmp %t.d0 %t.d1
// RUN: cmp %t.d0 %t.d2
// D: @train_strict ran 1 flamia.attention, 1 flamia.attention_grad

func.func @fwd_noncausal(%q: tensor<?x4x32xbf16>, %k: tensor<?x4x32xbf16>, %v: tensor<?x4x32xbf16>)
    -> (tensor<?x4x32xbf16>, tensor<4x?xf32>) {
  %o, %lse = flamia.attention %q, %k, %v {softmax_scale = 0.125 : f32, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (tensor<?x4x32xbf16>, tensor<?x4x32xbf16>, tensor<?x4x32xbf16>) -> (tensor<?x4x32xbf16>, tensor<4x?xf32>)
  return %o, %lse : tensor<?x4x32xbf16>, tensor<4x?xf32>
}

func.func @fwd_causal_varlen(%q: tensor<?x4x64xbf16>, %k: tensor<?x2x64xbf16>, %v: tensor<?x2x64xbf16>,
                             %cu: tensor<?xi32>) -> (tensor<?x4x64xbf16>, tensor<4x?xf32>) {
  %o, %lse = flamia.attention %q, %k, %v cu_seqlens(%cu) {causal, recipe = #flamia.recipe<mxfp8, safe_block = 64>}
      : (tensor<?x4x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?xi32>) -> (tensor<?x4x64xbf16>, tensor<4x?xf32>)
  return %o, %lse : tensor<?x4x64xbf16>, tensor<4x?xf32>
}

func.func @train_noncausal_varlen(%q: tensor<?x2x32xbf16>, %k: tensor<?x2x32xbf16>, %v: tensor<?x2x32xbf16>,
                                  %do: tensor<?x2x32xbf16>, %cu: tensor<?xi32>)
    -> (tensor<?x2x32xbf16>, tensor<?x2x32xbf16>, tensor<?x2x32xbf16>, tensor<?x2x32xbf16>) {
  %o, %lse = flamia.attention %q, %k, %v cu_seqlens(%cu) {recipe = #flamia.recipe<mxfp8, safe_block = 64>}
      : (tensor<?x2x32xbf16>, tensor<?x2x32xbf16>, tensor<?x2x32xbf16>, tensor<?xi32>) -> (tensor<?x2x32xbf16>, tensor<2x?xf32>)
  %dq, %dk, %dv = flamia.attention_grad %q, %k, %v, %o, %lse, %do cu_seqlens(%cu) {recipe = #flamia.recipe<mxfp8, safe_block = 64>}
      : (tensor<?x2x32xbf16>, tensor<?x2x32xbf16>, tensor<?x2x32xbf16>, tensor<?x2x32xbf16>, tensor<2x?xf32>, tensor<?x2x32xbf16>, tensor<?xi32>)
      -> (tensor<?x2x32xbf16>, tensor<?x2x32xbf16>, tensor<?x2x32xbf16>)
  return %o, %dq, %dk, %dv : tensor<?x2x32xbf16>, tensor<?x2x32xbf16>, tensor<?x2x32xbf16>, tensor<?x2x32xbf16>
}

func.func @train_strict(%q: tensor<?x2x64xbf16>, %k: tensor<?x2x64xbf16>, %v: tensor<?x2x64xbf16>,
                        %do: tensor<?x2x64xbf16>)
    -> (tensor<?x2x64xbf16>, tensor<2x?xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>) {
  %o, %lse = flamia.attention %q, %k, %v {causal, recipe = #flamia.recipe<mxfp8, safe_block = 128, strict>}
      : (tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>) -> (tensor<?x2x64xbf16>, tensor<2x?xf32>)
  %dq, %dk, %dv = flamia.attention_grad %q, %k, %v, %o, %lse, %do {causal, recipe = #flamia.recipe<mxfp8, safe_block = 128, strict>}
      : (tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<2x?xf32>, tensor<?x2x64xbf16>)
      -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return %o, %lse, %dq, %dk, %dv : tensor<?x2x64xbf16>, tensor<2x?xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>
}
