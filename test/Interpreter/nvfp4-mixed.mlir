// Recipe nvfp4-mixed in the dialect: flamia-interp's results on the graph
// IR are the bits of `flamia-ref attention --recipe nvfp4-mixed`, and stay
// so after flamia-graph-pipeline, which makes exactly the eight copies of
// the contract (docs/design.md, "Recipe nvfp4-mixed"): NVFP4 per token of
// Q, K, V, dO and E4M3 32x32 token blocks of the same four tensors.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: flamia-interp %s --function train_step --cu-seqlens 0,100,100,228,300 --seed 3 --dump-inputs %t/in --dump-outputs %t/ir | FileCheck %s
// CHECK: @train_step ran 1 flamia.attention, 1 flamia.attention_grad
// RUN: flamia-ref attention --recipe nvfp4-mixed --causal --cu-seqlens %t/in/arg4.npy --safe-block 32 %t/in/arg0.npy %t/in/arg1.npy %t/in/arg2.npy --backward %t/in/arg3.npy -o %t/ref
// RUN: cmp %t/ref.o.npy %t/ir/result0.npy
// RUN: cmp %t/ref.lse.npy %t/ir/result1.npy
// RUN: cmp %t/ref.dq.npy %t/ir/result2.npy
// RUN: cmp %t/ref.dk.npy %t/ir/result3.npy
// RUN: cmp %t/ref.dv.npy %t/ir/result4.npy
// The mxfp8 reference differs (the recipe is not ignored).
// RUN: flamia-ref attention --recipe mxfp8 --causal --cu-seqlens %t/in/arg4.npy --safe-block 32 %t/in/arg0.npy %t/in/arg1.npy %t/in/arg2.npy -o %t/mx
// RUN: not cmp -s %t/mx.o.npy %t/ir/result0.npy
//
// RUN: flamia-opt %s --flamia-graph-pipeline 2> %t/remarks > %t/lowered.mlir
// RUN: FileCheck %s --check-prefix=COPIES < %t/lowered.mlir
// RUN: FileCheck %s --check-prefix=REMARK < %t/remarks
// RUN: grep -c flamia.quantize %t/lowered.mlir | FileCheck %s --check-prefix=COUNT
// RUN: flamia-interp %t/lowered.mlir --function train_step --cu-seqlens 0,100,100,228,300 --seed 3 --dump-outputs %t/lowered
// RUN: cmp %t/ref.o.npy %t/lowered/result0.npy
// RUN: cmp %t/ref.lse.npy %t/lowered/result1.npy
// RUN: cmp %t/ref.dq.npy %t/lowered/result2.npy
// RUN: cmp %t/ref.dk.npy %t/lowered/result3.npy
// RUN: cmp %t/ref.dv.npy %t/lowered/result4.npy
//
// COPIES-LABEL: func.func @train_step
// COPIES-DAG: flamia.quantize %arg0 : {{.*}}xf4E2M1FN, f8E4M3FN, 1x16>
// COPIES-DAG: flamia.quantize %arg1 : {{.*}}xf4E2M1FN, f8E4M3FN, 1x16>
// COPIES-DAG: flamia.quantize %arg2 : {{.*}}xf4E2M1FN, f8E4M3FN, 1x16>
// COPIES-DAG: flamia.quantize %arg3 : {{.*}}xf4E2M1FN, f8E4M3FN, 1x16>
// COPIES-DAG: flamia.quantize %arg0 cu_seqlens(%arg4) : {{.*}}xf8E4M3FN, f8E8M0FNU, 32x32>
// COPIES-DAG: flamia.quantize %arg1 cu_seqlens(%arg4) : {{.*}}xf8E4M3FN, f8E8M0FNU, 32x32>
// COPIES-DAG: flamia.quantize %arg2 cu_seqlens(%arg4) : {{.*}}xf8E4M3FN, f8E8M0FNU, 32x32>
// COPIES-DAG: flamia.quantize %arg3 cu_seqlens(%arg4) : {{.*}}xf8E4M3FN, f8E8M0FNU, 32x32>
// COPIES: flamia.attention_bwd
// COPIES-SAME: recipe = #flamia.recipe<nvfp4_mixed, safe_block = 32>
// COPIES-LABEL: func.func @strict
// REMARK: remark: flamia-reuse-scale-layouts: 10 quantizations -> 8 (0 uses moved to a shared token-block copy; saved 2 quantizations, 72 bytes per token and head)
// Eight copies in each of the two functions.
// COUNT: {{^}}16{{$}}
//
// Strict: the same numerics.
// RUN: flamia-interp %s --function strict --tokens 160 --seed 4 --dump-inputs %t/in2 --dump-outputs %t/ir2
// RUN: flamia-ref attention --recipe nvfp4-mixed --causal --safe-block 128 %t/in2/arg0.npy %t/in2/arg1.npy %t/in2/arg2.npy --backward %t/in2/arg3.npy -o %t/ref2
// RUN: cmp %t/ref2.o.npy %t/ir2/result0.npy
// RUN: cmp %t/ref2.dq.npy %t/ir2/result1.npy
// RUN: cmp %t/ref2.dk.npy %t/ir2/result2.npy
// RUN: cmp %t/ref2.dv.npy %t/ir2/result3.npy

func.func @train_step(%q: tensor<?x2x64xbf16>, %k: tensor<?x1x64xbf16>, %v: tensor<?x1x64xbf16>,
                      %do: tensor<?x2x64xbf16>, %cu: tensor<?xi32>)
    -> (tensor<?x2x64xbf16>, tensor<2x?xf32>, tensor<?x2x64xf32>, tensor<?x1x64xf32>, tensor<?x1x64xf32>) {
  %o, %lse = flamia.attention %q, %k, %v cu_seqlens(%cu) {causal, recipe = #flamia.recipe<nvfp4_mixed, safe_block = 32>}
      : (tensor<?x2x64xbf16>, tensor<?x1x64xbf16>, tensor<?x1x64xbf16>, tensor<?xi32>) -> (tensor<?x2x64xbf16>, tensor<2x?xf32>)
  %dq, %dk, %dv = flamia.attention_grad %q, %k, %v, %o, %lse, %do cu_seqlens(%cu) {causal, recipe = #flamia.recipe<nvfp4_mixed, safe_block = 32>}
      : (tensor<?x2x64xbf16>, tensor<?x1x64xbf16>, tensor<?x1x64xbf16>, tensor<?x2x64xbf16>, tensor<2x?xf32>, tensor<?x2x64xbf16>, tensor<?xi32>)
      -> (tensor<?x2x64xf32>, tensor<?x1x64xf32>, tensor<?x1x64xf32>)
  return %o, %lse, %dq, %dk, %dv
      : tensor<?x2x64xbf16>, tensor<2x?xf32>, tensor<?x2x64xf32>, tensor<?x1x64xf32>, tensor<?x1x64xf32>
}

func.func @strict(%q: tensor<?x2x64xbf16>, %k: tensor<?x2x64xbf16>, %v: tensor<?x2x64xbf16>, %do: tensor<?x2x64xbf16>)
    -> (tensor<?x2x64xbf16>, tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>) {
  %o, %lse = flamia.attention %q, %k, %v {causal, recipe = #flamia.recipe<nvfp4_mixed, safe_block = 128, strict>}
      : (tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>) -> (tensor<?x2x64xbf16>, tensor<2x?xf32>)
  %dq, %dk, %dv = flamia.attention_grad %q, %k, %v, %o, %lse, %do {causal, recipe = #flamia.recipe<nvfp4_mixed, safe_block = 128, strict>}
      : (tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<2x?xf32>, tensor<?x2x64xbf16>)
      -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return %o, %dq, %dk, %dv : tensor<?x2x64xbf16>, tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>
}
