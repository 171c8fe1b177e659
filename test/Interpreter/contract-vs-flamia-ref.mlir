// flamia.attention and flamia.attention_grad mean the numerics contract's
// recipe: flamia-interp's results on bf16 IR are the bits of
// `flamia-ref attention` on the same inputs (and so are the results of the
// IR after flamia-graph-pipeline).
//
// RUN: rm -rf %t && mkdir -p %t
//
// Causal, GQA 2:1, packed documents (one empty), safe block 32, forward and
// backward.
// RUN: flamia-interp %s --function train_step --cu-seqlens 0,100,100,228,300 --seed 3 --dump-inputs %t/in --dump-outputs %t/ir | FileCheck %s
// CHECK: @train_step ran 1 flamia.attention, 1 flamia.attention_grad
// RUN: flamia-ref attention --recipe mxfp8 --causal --cu-seqlens %t/in/arg4.npy --safe-block 32 %t/in/arg0.npy %t/in/arg1.npy %t/in/arg2.npy --backward %t/in/arg3.npy -o %t/ref
// RUN: cmp %t/ref.o.npy %t/ir/result0.npy
// RUN: cmp %t/ref.lse.npy %t/ir/result1.npy
// RUN: cmp %t/ref.dq.npy %t/ir/result2.npy
// RUN: cmp %t/ref.dk.npy %t/ir/result3.npy
// RUN: cmp %t/ref.dv.npy %t/ir/result4.npy
// RUN: flamia-opt %s --flamia-graph-pipeline | flamia-interp - --function train_step --cu-seqlens 0,100,100,228,300 --seed 3 --dump-outputs %t/lowered
// RUN: cmp %t/ref.o.npy %t/lowered/result0.npy
// RUN: cmp %t/ref.lse.npy %t/lowered/result1.npy
// RUN: cmp %t/ref.dq.npy %t/lowered/result2.npy
// RUN: cmp %t/ref.dk.npy %t/lowered/result3.npy
// RUN: cmp %t/ref.dv.npy %t/lowered/result4.npy
//
// Non-causal, strict, a softmax scale, one document.
// RUN: flamia-interp %s --function strict_noncausal --tokens 160 --seed 4 --dump-inputs %t/in2 --dump-outputs %t/ir2
// RUN: flamia-ref attention --recipe mxfp8 --strict --softmax-scale 0.125 --safe-block 64 %t/in2/arg0.npy %t/in2/arg1.npy %t/in2/arg2.npy --backward %t/in2/arg3.npy -o %t/ref2
// RUN: cmp %t/ref2.o.npy %t/ir2/result0.npy
// RUN: cmp %t/ref2.dq.npy %t/ir2/result1.npy
// RUN: cmp %t/ref2.dk.npy %t/ir2/result2.npy
// RUN: cmp %t/ref2.dv.npy %t/ir2/result3.npy
//
// A recipe without safe_block means no safe block (flamia-ref --safe-block 0),
// not the default 128: the comparison tells them apart.
// RUN: flamia-interp %s --function no_safe_block --cu-seqlens 0,200,300 --seed 5 --dump-inputs %t/in3 --dump-outputs %t/ir3
// RUN: flamia-ref attention --recipe mxfp8 --causal --safe-block 0 --cu-seqlens %t/in3/arg3.npy %t/in3/arg0.npy %t/in3/arg1.npy %t/in3/arg2.npy -o %t/ref3
// RUN: cmp %t/ref3.o.npy %t/ir3/result0.npy
// RUN: cmp %t/ref3.lse.npy %t/ir3/result1.npy
// RUN: flamia-ref attention --recipe mxfp8 --causal --cu-seqlens %t/in3/arg3.npy %t/in3/arg0.npy %t/in3/arg1.npy %t/in3/arg2.npy -o %t/ref3-128
// RUN: not cmp -s %t/ref3-128.o.npy %t/ir3/result0.npy

func.func @train_step(%q: tensor<?x2x64xbf16>, %k: tensor<?x1x64xbf16>, %v: tensor<?x1x64xbf16>,
                      %do: tensor<?x2x64xbf16>, %cu: tensor<?xi32>)
    -> (tensor<?x2x64xbf16>, tensor<2x?xf32>, tensor<?x2x64xf32>, tensor<?x1x64xf32>, tensor<?x1x64xf32>) {
  %o, %lse = flamia.attention %q, %k, %v cu_seqlens(%cu) {causal, recipe = #flamia.recipe<mxfp8, safe_block = 32>}
      : (tensor<?x2x64xbf16>, tensor<?x1x64xbf16>, tensor<?x1x64xbf16>, tensor<?xi32>) -> (tensor<?x2x64xbf16>, tensor<2x?xf32>)
  %dq, %dk, %dv = flamia.attention_grad %q, %k, %v, %o, %lse, %do cu_seqlens(%cu) {causal, recipe = #flamia.recipe<mxfp8, safe_block = 32>}
      : (tensor<?x2x64xbf16>, tensor<?x1x64xbf16>, tensor<?x1x64xbf16>, tensor<?x2x64xbf16>, tensor<2x?xf32>, tensor<?x2x64xbf16>, tensor<?xi32>)
      -> (tensor<?x2x64xf32>, tensor<?x1x64xf32>, tensor<?x1x64xf32>)
  return %o, %lse, %dq, %dk, %dv
      : tensor<?x2x64xbf16>, tensor<2x?xf32>, tensor<?x2x64xf32>, tensor<?x1x64xf32>, tensor<?x1x64xf32>
}

func.func @strict_noncausal(%q: tensor<?x2x64xbf16>, %k: tensor<?x2x64xbf16>, %v: tensor<?x2x64xbf16>,
                            %do: tensor<?x2x64xbf16>)
    -> (tensor<?x2x64xbf16>, tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>) {
  %o, %lse = flamia.attention %q, %k, %v {softmax_scale = 0.125 : f32, recipe = #flamia.recipe<mxfp8, safe_block = 64, strict>}
      : (tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>) -> (tensor<?x2x64xbf16>, tensor<2x?xf32>)
  %dq, %dk, %dv = flamia.attention_grad %q, %k, %v, %o, %lse, %do {softmax_scale = 0.125 : f32, recipe = #flamia.recipe<mxfp8, safe_block = 64, strict>}
      : (tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<2x?xf32>, tensor<?x2x64xbf16>)
      -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return %o, %dq, %dk, %dv : tensor<?x2x64xbf16>, tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>
}

func.func @no_safe_block(%q: tensor<?x2x64xbf16>, %k: tensor<?x2x64xbf16>, %v: tensor<?x2x64xbf16>,
                         %cu: tensor<?xi32>) -> (tensor<?x2x64xbf16>, tensor<2x?xf32>) {
  %o, %lse = flamia.attention %q, %k, %v cu_seqlens(%cu) {causal, recipe = #flamia.recipe<mxfp8>}
      : (tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?xi32>) -> (tensor<?x2x64xbf16>, tensor<2x?xf32>)
  return %o, %lse : tensor<?x2x64xbf16>, tensor<2x?xf32>
}
