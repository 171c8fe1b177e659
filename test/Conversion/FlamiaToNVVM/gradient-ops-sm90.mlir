// RUN: flamia-opt %s -split-input-file --convert-flamia-to-nvvm | FileCheck %s
// Per-op lowering of the backward's fragment ops on sm_90a (the wgmma
// accumulator layout: two rows per thread, a row over a quad; element i in
// column 8 (i / 4) + 2 (lane % 4) + i % 2): softmax.grad (rows and
// transposed, masked and unmasked), frag.block_quantize, grad.store (bf16,
// f32) and row_dot.

// Rows are queries: LSE and D loaded once per row slot (2), P and dS per
// element (4), both selected to 0 where the score is -inf or the query is
// past the limit.
// P = exp2(fma(s, c, LSE * -log2(e))): the negated constant, no subtract.
// CHECK-LABEL: llvm.func @sm_90a_softmax_grad_rows(
// CHECK-SAME: %[[C:[a-z0-9]+]]: f32)
// CHECK: %[[LSE:.*]] = llvm.load {{.*}} -> f32
// CHECK: llvm.load {{.*}} -> f32
// CHECK-NEXT: %[[NLOG2E:.*]] = llvm.mlir.constant(-1.44269502 : f32) : f32
// CHECK-NEXT: %[[NLSE2:.*]] = llvm.fmul %[[LSE]], %[[NLOG2E]] : f32
// CHECK-NEXT: %[[E:.*]] = llvm.intr.fma(%{{.*}}, %[[C]], %[[NLSE2]]) : (f32, f32, f32) -> f32
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%[[E]])
// CHECK: llvm.fcmp "une"
// CHECK-COUNT-2: llvm.select %{{.*}} : i1, f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK-COUNT-2: llvm.load {{.*}} -> f32
// CHECK-NOT: llvm.load
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK-NOT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK: llvm.return
flamia.kernel @sm_90a_softmax_grad_rows(%lse: !flamia.global<4x?xf32> {flamia.param = "lse"}, %delta: !flamia.global<4x?xf32> {flamia.param = "delta"}, %h: i32 {flamia.param = "h"}, %d0: i32 {flamia.param = "d0"}, %qb: i32 {flamia.param = "qb"}, %lim: i32 {flamia.param = "lim"}, %t: i32 {flamia.param = "T"}, %c: f32 {flamia.param = "c"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.role "consumer" warpgroups[0, 1) registers 240 {
    %s = flamia.frag.zero : !flamia.frag<64x8xf32>
    %p, %ds = flamia.softmax.grad %s, %s lse %lse delta %delta head %h queries(%d0, %qb, %lim) tokens %t scale %c : !flamia.frag<64x8xf32>, !flamia.global<4x?xf32>
  }
  flamia.return
}

// -----

// Transposed (rows are keys, columns queries): the query of element i is
// query_base + its column; elements 0 and 2, 1 and 3 share a column, so
// LSE and D are loaded for 2 columns.
// CHECK-LABEL: llvm.func @sm_90a_softmax_grad_transposed(
// CHECK: %[[TWO:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK: llvm.mul %{{.*}}, %[[TWO]] : i32
// CHECK-COUNT-2: llvm.load {{.*}} -> f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK-COUNT-2: llvm.load {{.*}} -> f32
// CHECK-NOT: llvm.load
// CHECK-COUNT-3: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK-NOT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK: llvm.return
flamia.kernel @sm_90a_softmax_grad_transposed(%lse: !flamia.global<4x?xf32> {flamia.param = "lse"}, %delta: !flamia.global<4x?xf32> {flamia.param = "delta"}, %h: i32 {flamia.param = "h"}, %d0: i32 {flamia.param = "d0"}, %qb: i32 {flamia.param = "qb"}, %lim: i32 {flamia.param = "lim"}, %t: i32 {flamia.param = "T"}, %c: f32 {flamia.param = "c"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.role "consumer" warpgroups[0, 1) registers 240 {
    %s = flamia.frag.zero : !flamia.frag<64x8xf32>
    %p, %ds = flamia.softmax.grad %s, %s lse %lse delta %delta head %h queries(%d0, %qb, %lim) tokens %t scale %c {transposed} : !flamia.frag<64x8xf32>, !flamia.global<4x?xf32>
  }
  flamia.return
}

// -----

// Unmasked, rows are queries: the thread's two rows are 8 apart, so LSE and
// D are read at byte offsets 0 and 32 from the address of its first row's
// token; no test per entry (no compare, no select).
// CHECK-LABEL: llvm.func @sm_90a_softmax_grad_rows_unmasked(
// CHECK: %[[LSE0:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: %[[D0:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NOT: llvm.select
// CHECK-NOT: llvm.fcmp
// CHECK-NOT: llvm.icmp
// CHECK: llvm.getelementptr %[[LSE0]][0]
// CHECK: llvm.getelementptr %[[D0]][0]
// CHECK-NOT: llvm.select
// CHECK-NOT: llvm.fcmp
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK: llvm.getelementptr %[[LSE0]][32]
// CHECK: llvm.getelementptr %[[D0]][32]
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK-NOT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK-NOT: llvm.select
// CHECK-NOT: llvm.fcmp
// CHECK-NOT: llvm.icmp
// CHECK: llvm.return
flamia.kernel @sm_90a_softmax_grad_rows_unmasked(%lse: !flamia.global<4x?xf32> {flamia.param = "lse"}, %delta: !flamia.global<4x?xf32> {flamia.param = "delta"}, %h: i32 {flamia.param = "h"}, %d0: i32 {flamia.param = "d0"}, %qb: i32 {flamia.param = "qb"}, %lim: i32 {flamia.param = "lim"}, %t: i32 {flamia.param = "T"}, %c: f32 {flamia.param = "c"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.role "consumer" warpgroups[0, 1) registers 240 {
    %s = flamia.frag.zero : !flamia.frag<64x8xf32>
    %p, %ds = flamia.softmax.grad %s, %s lse %lse delta %delta head %h queries(%d0, %qb, %lim) tokens %t scale %c {unmasked} : !flamia.frag<64x8xf32>, !flamia.global<4x?xf32>
  }
  flamia.return
}

// -----

// Unmasked and transposed: a 16-column fragment holds columns 2 (lane % 4)
// + {0, 1, 8, 9}, read at byte offsets 0, 4, 32 and 36 from the first.
// CHECK-LABEL: llvm.func @sm_90a_softmax_grad_transposed_unmasked(
// CHECK: %[[LSE0:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: %[[D0:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: llvm.getelementptr %[[LSE0]][0]
// CHECK: llvm.getelementptr %[[LSE0]][4]
// CHECK: llvm.getelementptr %[[LSE0]][32]
// CHECK: llvm.getelementptr %[[LSE0]][36]
// CHECK: llvm.getelementptr %[[D0]][36]
// CHECK: llvm.load
// CHECK-NOT: llvm.load
// CHECK-NOT: llvm.select
// CHECK-NOT: llvm.icmp
// CHECK: llvm.return
flamia.kernel @sm_90a_softmax_grad_transposed_unmasked(%lse: !flamia.global<4x?xf32> {flamia.param = "lse"}, %delta: !flamia.global<4x?xf32> {flamia.param = "delta"}, %h: i32 {flamia.param = "h"}, %d0: i32 {flamia.param = "d0"}, %qb: i32 {flamia.param = "qb"}, %lim: i32 {flamia.param = "lim"}, %t: i32 {flamia.param = "T"}, %c: f32 {flamia.param = "c"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.role "consumer" warpgroups[0, 1) registers 240 {
    %s = flamia.frag.zero : !flamia.frag<64x16xf32>
    %p, %ds = flamia.softmax.grad %s, %s lse %lse delta %delta head %h queries(%d0, %qb, %lim) tokens %t scale %c {transposed, unmasked} : !flamia.frag<64x16xf32>, !flamia.global<4x?xf32>
  }
  flamia.return
}

// -----

// LSE loaded ahead (flamia.frag.load_lse2, unmasked and transposed): four
// loads at byte offsets 0, 4, 32 and 36 from the first column's token, each
// times log2(e); softmax.grad with `preloaded` then reads D only (four more
// loads) and adds the negated preloaded values in the exponent's FMA.
// CHECK-LABEL: llvm.func @sm_90a_load_lse2_preloaded(
// CHECK: %[[L0:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT: %[[LOG2E:.*]] = llvm.mlir.constant(1.44269502 : f32) : f32
// CHECK-NEXT: llvm.getelementptr %[[L0]][0]
// CHECK-NEXT: %[[V0:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT: llvm.fmul %[[V0]], %[[LOG2E]] : f32
// CHECK: llvm.getelementptr %[[L0]][4]
// CHECK: llvm.getelementptr %[[L0]][32]
// CHECK: llvm.getelementptr %[[L0]][36]
// CHECK-NOT: llvm.getelementptr %[[L0]]
// CHECK: %[[D0:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: llvm.getelementptr %[[D0]][0]
// CHECK: llvm.getelementptr %[[D0]][4]
// CHECK: llvm.getelementptr %[[D0]][32]
// CHECK: llvm.getelementptr %[[D0]][36]
// CHECK-NEXT: llvm.load
// CHECK-NOT: llvm.load
// CHECK-NOT: llvm.select
// CHECK: %[[NEG:.*]] = llvm.fneg %{{.*}} : f32
// CHECK-NEXT: %[[E:.*]] = llvm.intr.fma(%{{.*}}, %{{.*}}, %[[NEG]]) : (f32, f32, f32) -> f32
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%[[E]])
// CHECK-NOT: llvm.load
// CHECK-NOT: llvm.select
// CHECK: llvm.return
flamia.kernel @sm_90a_load_lse2_preloaded(%lse: !flamia.global<4x?xf32> {flamia.param = "lse"}, %delta: !flamia.global<4x?xf32> {flamia.param = "delta"}, %h: i32 {flamia.param = "h"}, %d0: i32 {flamia.param = "d0"}, %qb: i32 {flamia.param = "qb"}, %lim: i32 {flamia.param = "lim"}, %t: i32 {flamia.param = "T"}, %c: f32 {flamia.param = "c"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.role "consumer" warpgroups[0, 1) registers 240 {
    %s = flamia.frag.zero : !flamia.frag<64x16xf32>
    %l2 = flamia.frag.load_lse2 %lse head %h queries(%d0, %qb, %lim) tokens %t {transposed, unmasked} : !flamia.global<4x?xf32> -> !flamia.frag<64x16xf32>
    %p, %ds = flamia.softmax.grad %s, %s lse %lse delta %delta head %h queries(%d0, %qb, %lim) tokens %t scale %c preloaded %l2 : !flamia.frag<64x16xf32> {transposed, unmasked} : !flamia.frag<64x16xf32>, !flamia.global<4x?xf32>
  }
  flamia.return
}

// -----

// Masked (no `unmasked`): each column's query is tested against the limit
// and a query at or past it reads the document's first token instead.
// CHECK-LABEL: llvm.func @sm_90a_load_lse2_masked(
// CHECK: %[[OK:.*]] = llvm.icmp "slt" %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: %[[Z:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: llvm.select %[[OK]], %{{.*}}, %[[Z]] : i1, i32
// CHECK: llvm.load
// CHECK: llvm.icmp "slt"
// CHECK: llvm.load
// CHECK: llvm.icmp "slt"
// CHECK: llvm.load
// CHECK: llvm.icmp "slt"
// CHECK: llvm.load
// CHECK-NOT: llvm.load
// CHECK: llvm.return
flamia.kernel @sm_90a_load_lse2_masked(%lse: !flamia.global<4x?xf32> {flamia.param = "lse"}, %h: i32 {flamia.param = "h"}, %d0: i32 {flamia.param = "d0"}, %qb: i32 {flamia.param = "qb"}, %lim: i32 {flamia.param = "lim"}, %t: i32 {flamia.param = "T"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.role "consumer" warpgroups[0, 1) registers 240 {
    %l2 = flamia.frag.load_lse2 %lse head %h queries(%d0, %qb, %lim) tokens %t {transposed} : !flamia.global<4x?xf32> -> !flamia.frag<64x16xf32>
  }
  flamia.return
}

// -----

// A 64 x 32 fragment is one 32-column block per row: 8 elements of each of
// the thread's two rows, their amax combined over the quad (butterfly 1,
// 2), the scale, then 8 pairs through E4M3 back to bf16 x 2^e; the safe path
// (quantized = false) rounds the 8 pairs to bf16 directly.
// CHECK-LABEL: llvm.func @sm_90a_block_quantize(
// CHECK: llvm.cond_br
// CHECK-COUNT-16: llvm.intr.fabs
// CHECK: nvvm.shfl.sync  bfly
// CHECK: nvvm.shfl.sync  bfly
// CHECK: nvvm.shfl.sync  bfly
// CHECK: nvvm.shfl.sync  bfly
// CHECK-NOT: nvvm.shfl.sync
// CHECK-COUNT-8: nvvm.convert.f32x2.to.f8x2 {{.*}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>}
// CHECK-NOT: nvvm.convert.f32x2.to.f8x2
// The NaN block's pair (0x7FC07FC0), else the dequantized pair.
// CHECK: llvm.mlir.constant(2143322048 : i32)
// CHECK: llvm.br
// CHECK-COUNT-8: nvvm.convert.f32x2.to.bf16x2
// CHECK-NOT: nvvm.convert
// CHECK: llvm.return
flamia.kernel @sm_90a_block_quantize(%x: i32 {flamia.param = "x"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.role "consumer" warpgroups[0, 1) registers 240 {
    %c0 = arith.constant 0 : i32
    %q = arith.cmpi ne, %x, %c0 : i32
    %s = flamia.frag.zero : !flamia.frag<64x32xf32>
    %r = flamia.frag.block_quantize %s quantized %q : !flamia.frag<64x32xf32> -> !flamia.frag<64x32xbf16>
  }
  flamia.return
}

// -----

// bf16 gradients: one bf16x2 store per element pair of each valid row.
// CHECK-LABEL: llvm.func @sm_90a_grad_store_bf16(
// CHECK-COUNT-2: nvvm.convert.f32x2.to.bf16x2
// CHECK-NOT: nvvm.convert
// CHECK: llvm.return
flamia.kernel @sm_90a_grad_store_bf16(%out: !flamia.global<?x2x8xbf16> {flamia.param = "out"}, %i: i32 {flamia.param = "i"}, %f: f32 {flamia.param = "f"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.role "consumer" warpgroups[0, 1) registers 240 {
    %acc = flamia.frag.zero : !flamia.frag<64x8xf32>
    flamia.grad.store %acc times %f to %out rows(%i, %i, %i) head %i : !flamia.frag<64x8xf32>, !flamia.global<?x2x8xbf16>
  }
  flamia.return
}

// -----

// f32 gradients: one 8-byte store of two scaled floats per pair.
// CHECK-LABEL: llvm.func @sm_90a_grad_store_f32(
// CHECK: llvm.fmul %{{.*}}, %arg2 : f32
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr
// CHECK-NOT: llvm.store
// CHECK: llvm.return
flamia.kernel @sm_90a_grad_store_f32(%out: !flamia.global<?x2x8xf32> {flamia.param = "out"}, %i: i32 {flamia.param = "i"}, %f: f32 {flamia.param = "f"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.role "consumer" warpgroups[0, 1) registers 240 {
    %acc = flamia.frag.zero : !flamia.frag<64x8xf32>
    flamia.grad.store %acc times %f to %out rows(%i, %i, %i) head %i : !flamia.frag<64x8xf32>, !flamia.global<?x2x8xf32>
  }
  flamia.return
}

// -----

// D = rowsum(dO O): 8 rows per warp, D / 32 = 2 channels per lane (one
// 32-bit word of each input), exact f64 products summed as TwoSum pairs, the
// lanes' pairs combined by a 5-step butterfly (both 32-bit halves of hi and
// of lo), rounded once to f32 through round-to-odd, stored by lane 0.
// CHECK-LABEL: llvm.func @sm_90a_row_dot(
// CHECK: llvm.load {{.*}} -> i32
// CHECK: llvm.fpext {{.*}} : f32 to f64
// CHECK: %[[P:.*]] = llvm.fmul {{.*}} : f64
// TwoSum(sum, p): s = sum + p, bb = s - sum, err = (sum - (s - bb)) + (p - bb).
// CHECK-NEXT: %[[S:.*]] = llvm.fadd %[[SUM:.*]], %[[P]] : f64
// CHECK-NEXT: %[[BB:.*]] = llvm.fsub %[[S]], %[[SUM]] : f64
// CHECK-NEXT: %[[T:.*]] = llvm.fsub %[[S]], %[[BB]] : f64
// CHECK-NEXT: %[[U:.*]] = llvm.fsub %[[SUM]], %[[T]] : f64
// CHECK-NEXT: %[[V:.*]] = llvm.fsub %[[P]], %[[BB]] : f64
// CHECK-NEXT: llvm.fadd %[[U]], %[[V]] : f64
// CHECK-COUNT-20: nvvm.shfl.sync  bfly {{.*}} : i32 -> i32
// Round to odd: hi one ulp toward the exact value where lo != 0 and hi is
// even (and finite), then to nearest even in f32.
// CHECK: %[[HI:.*]] = llvm.bitcast %{{.*}} : f64 to i64
// CHECK: llvm.and %[[HI]], %{{.*}} : i64
// CHECK: llvm.fcmp "one"
// CHECK: llvm.fcmp "olt"
// CHECK: llvm.lshr %[[HI]]
// CHECK: llvm.add %[[HI]]
// CHECK: llvm.sub %[[HI]]
// CHECK: %[[ODD:.*]] = llvm.bitcast %{{.*}} : i64 to f64
// CHECK-NEXT: llvm.fptrunc %[[ODD]] : f64 to f32
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr
flamia.kernel @sm_90a_row_dot(%a: !flamia.global<?x4x64xbf16> {flamia.param = "a"}, %b: !flamia.global<?x4x64xbf16> {flamia.param = "b"}, %out: !flamia.global<4x?xf32> {flamia.param = "out"}, %i: i32 {flamia.param = "i"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.row_dot %a, %b rows(%i, %i) head %i to %out tokens %i : !flamia.global<?x4x64xbf16>, !flamia.global<?x4x64xbf16>, !flamia.global<4x?xf32>
  flamia.return
}
