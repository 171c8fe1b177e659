// Semantic preservation of the graph-level passes on a training step
// (forward + backward), causal, GQA 2:1, four packed documents (one empty),
// safe block 32 (most keys take the quantized path): flamia-interp runs the
// CPU reference on the same seeded inputs before the passes, after each
// prefix of the pipeline and after the whole pipeline, and every result
// (O, LSE, dQ, dK, dV) and the scores every attention op computed (the
// backward's recomputed S included: --trace-scores) must be bit-for-bit
// identical.
//
// RUN: flamia-interp %s --cu-seqlens 0,100,100,228,300 --seed 3 --trace-scores -o %t.before | FileCheck %s --check-prefix=BEFORE
// BEFORE: @train_step ran 1 flamia.attention, 1 flamia.attention_grad (seed 3, 5 arguments)
// BEFORE: result #0: 300x2x64xbf16 digest {{[0-9a-f]+}}, 38400 elements, 0 non-finite
// BEFORE: result #1: 2x300xf32 digest {{[0-9a-f]+}}, 600 elements, 0 non-finite
// BEFORE: result #2: 300x2x64xf32 {{.*}} 0 non-finite
// BEFORE: result #3: 300x1x64xf32 {{.*}} 0 non-finite
// BEFORE: result #4: 300x1x64xf32 {{.*}} 0 non-finite
// BEFORE: scores #0 (flamia.attention): digest {{[0-9a-f]+}}, 31868 scores
// BEFORE: scores #1 (flamia.attention_grad): digest {{[0-9a-f]+}}, 63736 scores
//
// RUN: flamia-opt %s --flamia-quantize-attention | flamia-interp - --cu-seqlens 0,100,100,228,300 --seed 3 --trace-scores -o %t.qa | FileCheck %s --check-prefix=QA
// RUN: cmp %t.before %t.qa
// QA: @train_step ran 10 flamia.quantize, 1 flamia.attention_fwd, 1 flamia.attention_bwd
//
// RUN: flamia-opt %s --flamia-quantize-attention --flamia-reuse-scale-layouts 2>/dev/null | flamia-interp - --cu-seqlens 0,100,100,228,300 --seed 3 --trace-scores -o %t.reuse | FileCheck %s --check-prefix=REUSE
// RUN: cmp %t.before %t.reuse
// REUSE: @train_step ran 5 flamia.quantize, 1 flamia.attention_fwd, 1 flamia.attention_bwd
//
// RUN: flamia-opt %s --flamia-quantize-attention --flamia-reuse-scale-layouts --flamia-causal-safe-scales 2>/dev/null | flamia-interp - --cu-seqlens 0,100,100,228,300 --seed 3 --trace-scores -o %t.safe
// RUN: cmp %t.before %t.safe
//
// fwd-bwd-consistency straight after quantize-attention (the backward's own
// copies have the forward's layouts, so linking them changes no bit).
// RUN: flamia-opt %s --flamia-quantize-attention --flamia-fwd-bwd-consistency | flamia-interp - --cu-seqlens 0,100,100,228,300 --seed 3 --trace-scores -o %t.fbc
// RUN: cmp %t.before %t.fbc
//
// RUN: flamia-opt %s --flamia-graph-pipeline | flamia-interp - --cu-seqlens 0,100,100,228,300 --seed 3 --trace-scores -o %t.after | FileCheck %s --check-prefix=AFTER
// RUN: cmp %t.before %t.after
// RUN: flamia-opt %s --pass-pipeline='builtin.module(flamia-graph-pipeline{recipe=mxfp8})' | flamia-interp - --cu-seqlens 0,100,100,228,300 --seed 3 --trace-scores -o %t.after2
// RUN: cmp %t.before %t.after2
// AFTER: @train_step ran 5 flamia.quantize, 1 flamia.attention_fwd, 1 flamia.attention_bwd
// AFTER: result #4:
// AFTER: scores #0 (flamia.attention_fwd)
// AFTER: scores #1 (flamia.attention_bwd)
//
// Another seed and other documents: still identical, and different from the
// first inputs' results (the digests depend on the data).
// RUN: flamia-interp %s --cu-seqlens 0,37,256,300 --seed 11 --trace-scores -o %t.before11
// RUN: flamia-opt %s --flamia-graph-pipeline | flamia-interp - --cu-seqlens 0,37,256,300 --seed 11 --trace-scores -o %t.after11
// RUN: cmp %t.before11 %t.after11
// RUN: not cmp -s %t.before %t.before11

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
