// The preservation checks can fail: programs that differ only in the safe
// block, or in Q's scale layout, give different bits on the same inputs,
// while the bf16 program and its hand-written lowering give the same bits.
//
// RUN: flamia-interp %s --function bf16 --tokens 300 --seed 9 --trace-scores -o %t.bf16
// RUN: flamia-interp %s --function lowered --tokens 300 --seed 9 --trace-scores -o %t.lowered
// RUN: flamia-interp %s --function safe_block_64 --tokens 300 --seed 9 --trace-scores -o %t.sb64
// RUN: flamia-interp %s --function token_block_q --tokens 300 --seed 9 --trace-scores -o %t.tbq
// RUN: flamia-interp %s --function per_token_k --tokens 300 --seed 9 --trace-scores -o %t.ptk
// RUN: cmp %t.bf16 %t.lowered
// RUN: not cmp -s %t.lowered %t.sb64
// RUN: not cmp -s %t.lowered %t.tbq
// RUN: not cmp -s %t.lowered %t.ptk
//
// The same per result: both O and LSE change (digests of their bits).
// RUN: flamia-interp %s --function lowered --tokens 300 --seed 9 > %t.txt
// RUN: flamia-interp %s --function token_block_q --tokens 300 --seed 9 >> %t.txt
// RUN: FileCheck %s --check-prefix=DIFF < %t.txt
// DIFF: @lowered ran
// DIFF: result #0: 300x2x64xbf16 digest [[O:[0-9a-f]+]],
// DIFF: result #1: 2x300xf32 digest [[LSE:[0-9a-f]+]],
// DIFF: @token_block_q ran
// DIFF-NOT: digest [[O]]
// DIFF-NOT: digest [[LSE]]

!b = tensor<?x2x64xbf16>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
#p = #flamia.precision<f8E4M3FN, fixed_scale = 8>

func.func @bf16(%q: !b, %k: !b, %v: !b) -> (!b, tensor<2x?xf32>) {
  %o, %lse = flamia.attention %q, %k, %v {causal, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (!b, !b, !b) -> (!b, tensor<2x?xf32>)
  return %o, %lse : !b, tensor<2x?xf32>
}

// What flamia-quantize-attention makes of @bf16.
func.func @lowered(%q: !b, %k: !b, %v: !b) -> (!b, tensor<2x?xf32>) {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %k8 = flamia.quantize %k : (!b) -> !tb
  %v8 = flamia.quantize %v : (!b) -> !tb
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%v8) safe(%q, %k, %v)
      {causal, p = #p, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (!pt, !tb, !tb, !b, !b, !b) -> (!b, tensor<2x?xf32>)
  return %o, %lse : !b, tensor<2x?xf32>
}

// A smaller safe block: keys 64..127 tokens back take the quantized path.
func.func @safe_block_64(%q: !b, %k: !b, %v: !b) -> (!b, tensor<2x?xf32>) {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %k8 = flamia.quantize %k : (!b) -> !tb
  %v8 = flamia.quantize %v : (!b) -> !tb
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%v8) safe(%q, %k, %v)
      {causal, p = #p, recipe = #flamia.recipe<mxfp8, safe_block = 64>}
      : (!pt, !tb, !tb, !b, !b, !b) -> (!b, tensor<2x?xf32>)
  return %o, %lse : !b, tensor<2x?xf32>
}

// Q in 32x32 token blocks instead of per token.
func.func @token_block_q(%q: !b, %k: !b, %v: !b) -> (!b, tensor<2x?xf32>) {
  %q8 = flamia.quantize %q : (!b) -> !tb
  %k8 = flamia.quantize %k : (!b) -> !tb
  %v8 = flamia.quantize %v : (!b) -> !tb
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%v8) safe(%q, %k, %v)
      {causal, p = #p, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (!tb, !tb, !tb, !b, !b, !b) -> (!b, tensor<2x?xf32>)
  return %o, %lse : !b, tensor<2x?xf32>
}

// K per token instead of in token blocks.
func.func @per_token_k(%q: !b, %k: !b, %v: !b) -> (!b, tensor<2x?xf32>) {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %k8 = flamia.quantize %k : (!b) -> !pt
  %v8 = flamia.quantize %v : (!b) -> !tb
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%v8) safe(%q, %k, %v)
      {causal, p = #p, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (!pt, !pt, !tb, !b, !b, !b) -> (!b, tensor<2x?xf32>)
  return %o, %lse : !b, tensor<2x?xf32>
}
