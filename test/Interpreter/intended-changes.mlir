// Where a graph pass changes the numbers on purpose, flamia-interp shows it:
// each rewritten program differs from its input and equals the contract's
// function (the bf16 program with recipe mxfp8, safe_block = 128).
//
// RUN: flamia-interp %s --function contract --tokens 256 --seed 4 --trace-scores -o %t.contract
// RUN: flamia-interp %s --function contract_fwd --tokens 256 --seed 4 --trace-scores -o %t.contract_fwd
//
// flamia-causal-safe-scales adds the missing safe block (the pipeline makes
// a leaky recipe safe).
// RUN: flamia-interp %s --function no_safe_block --tokens 256 --seed 4 --trace-scores -o %t.nsb
// RUN: flamia-opt %s --flamia-graph-pipeline | flamia-interp - --function no_safe_block --tokens 256 --seed 4 --trace-scores -o %t.nsb.after
// RUN: not cmp -s %t.nsb %t.nsb.after
// RUN: cmp %t.contract %t.nsb.after
//
// flamia-causal-safe-scales gives Q a per-token copy in S = Q K^T.
// RUN: flamia-interp %s --function token_block_q --tokens 256 --seed 4 --trace-scores -o %t.tbq
// RUN: flamia-opt %s --flamia-causal-safe-scales | flamia-interp - --function token_block_q --tokens 256 --seed 4 --trace-scores -o %t.tbq.after
// RUN: not cmp -s %t.tbq %t.tbq.after
// RUN: cmp %t.contract_fwd %t.tbq.after
//
// flamia-reuse-scale-layouts moves K's per-token uses to its token-block copy.
// RUN: flamia-interp %s --function per_token_k --tokens 256 --seed 4 --trace-scores -o %t.ptk
// RUN: flamia-opt %s --flamia-reuse-scale-layouts 2>/dev/null | flamia-interp - --function per_token_k --tokens 256 --seed 4 --trace-scores -o %t.ptk.after
// RUN: not cmp -s %t.ptk %t.ptk.after
// RUN: cmp %t.contract %t.ptk.after
//
// flamia-fwd-bwd-consistency makes the backward recompute S from the
// forward's copies (here: K in 32x32 blocks, not the backward's own
// per-token copy), so that P matches the forward's.
// RUN: flamia-interp %s --function backward_own_k --tokens 256 --seed 4 --trace-scores -o %t.bok
// RUN: flamia-opt %s --flamia-fwd-bwd-consistency | flamia-interp - --function backward_own_k --tokens 256 --seed 4 --trace-scores -o %t.bok.after
// RUN: not cmp -s %t.bok %t.bok.after
// RUN: cmp %t.contract %t.bok.after

!b = tensor<?x2x64xbf16>
!f = tensor<?x2x64xf32>
!l = tensor<2x?xf32>
!pt = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
#r = #flamia.recipe<mxfp8, safe_block = 128>
#p = #flamia.precision<f8E4M3FN, fixed_scale = 8>
#ds = #flamia.precision<f8E4M3FN, online = 32>

func.func @contract(%q: !b, %k: !b, %v: !b, %do: !b) -> (!b, !l, !f, !f, !f) {
  %o, %lse = flamia.attention %q, %k, %v {causal, recipe = #r} : (!b, !b, !b) -> (!b, !l)
  %dq, %dk, %dv = flamia.attention_grad %q, %k, %v, %o, %lse, %do {causal, recipe = #r}
      : (!b, !b, !b, !b, !l, !b) -> (!f, !f, !f)
  return %o, %lse, %dq, %dk, %dv : !b, !l, !f, !f, !f
}

func.func @contract_fwd(%q: !b, %k: !b, %v: !b) -> (!b, !l) {
  %o, %lse = flamia.attention %q, %k, %v {causal, recipe = #r} : (!b, !b, !b) -> (!b, !l)
  return %o, %lse : !b, !l
}

func.func @no_safe_block(%q: !b, %k: !b, %v: !b, %do: !b) -> (!b, !l, !f, !f, !f) {
  %o, %lse = flamia.attention %q, %k, %v {causal, recipe = #flamia.recipe<mxfp8>} : (!b, !b, !b) -> (!b, !l)
  %dq, %dk, %dv = flamia.attention_grad %q, %k, %v, %o, %lse, %do {causal, recipe = #flamia.recipe<mxfp8>}
      : (!b, !b, !b, !b, !l, !b) -> (!f, !f, !f)
  return %o, %lse, %dq, %dk, %dv : !b, !l, !f, !f, !f
}

func.func @token_block_q(%q: !b, %k: !b, %v: !b) -> (!b, !l) {
  %q8 = flamia.quantize %q : (!b) -> !tb
  %k8 = flamia.quantize %k : (!b) -> !tb
  %v8 = flamia.quantize %v : (!b) -> !tb
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%v8) safe(%q, %k, %v) {causal, p = #p, recipe = #r}
      : (!tb, !tb, !tb, !b, !b, !b) -> (!b, !l)
  return %o, %lse : !b, !l
}

func.func @per_token_k(%q: !b, %k: !b, %v: !b, %do: !b) -> (!b, !l, !f, !f, !f) {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %kpt = flamia.quantize %k : (!b) -> !pt
  %k8 = flamia.quantize %k : (!b) -> !tb
  %v8 = flamia.quantize %v : (!b) -> !tb
  %do8 = flamia.quantize %do : (!b) -> !tb
  %qtb = flamia.quantize %q : (!b) -> !tb
  %o, %lse = flamia.attention_fwd qk(%q8, %kpt) pv(%v8) safe(%q, %k, %v) {causal, p = #p, recipe = #r}
      : (!pt, !pt, !tb, !b, !b, !b) -> (!b, !l)
  %dq, %dk, %dv = flamia.attention_bwd qk(%q8, %kpt) dov(%do8, %v8) dsk(%k8) dsq(%qtb) pdo(%do8)
      safe(%q, %k, %v, %do) o(%o) lse(%lse) {causal, ds = #ds, p = #p, recipe = #r}
      : (!pt, !pt, !tb, !tb, !tb, !tb, !tb, !b, !b, !b, !b, !b, !l) -> (!f, !f, !f)
  return %o, %lse, %dq, %dk, %dv : !b, !l, !f, !f, !f
}

func.func @backward_own_k(%q: !b, %k: !b, %v: !b, %do: !b) -> (!b, !l, !f, !f, !f) {
  %q8 = flamia.quantize %q : (!b) -> !pt
  %k8 = flamia.quantize %k : (!b) -> !tb
  %v8 = flamia.quantize %v : (!b) -> !tb
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%v8) safe(%q, %k, %v) {causal, p = #p, recipe = #r}
      : (!pt, !tb, !tb, !b, !b, !b) -> (!b, !l)
  %bk = flamia.quantize %k : (!b) -> !pt
  %do8 = flamia.quantize %do : (!b) -> !tb
  %qtb = flamia.quantize %q : (!b) -> !tb
  %dq, %dk, %dv = flamia.attention_bwd qk(%q8, %bk) dov(%do8, %v8) dsk(%k8) dsq(%qtb) pdo(%do8)
      safe(%q, %k, %v, %do) o(%o) lse(%lse) {causal, ds = #ds, p = #p, recipe = #r}
      : (!pt, !pt, !tb, !tb, !tb, !tb, !tb, !b, !b, !b, !b, !b, !l) -> (!f, !f, !f)
  return %o, %lse, %dq, %dk, %dv : !b, !l, !f, !f, !f
}
