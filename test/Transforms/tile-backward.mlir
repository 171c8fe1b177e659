// RUN: flamia-opt %s --flamia-tile=target=sm_90a | FileCheck %s
// RUN: flamia-opt %s '--flamia-tile=target=sm_90a backward-ping-pong=true' | FileCheck %s --check-prefix=PP
// RUN: flamia-opt %s '--flamia-tile=target=sm_90a backward-rotate=true' | FileCheck %s --check-prefix=ROT
// RUN: flamia-opt %s '--flamia-tile=target=sm_90a backward-rotate=true backward-ping-pong=true' | FileCheck %s --check-prefix=PPROT
// RUN: sed 's/sm_90a/sm_100a/g' %s | not flamia-opt --flamia-tile -o /dev/null 2>&1 | FileCheck %s --check-prefix=SM100
// The backward's persistent kernels as flamia-varlen-schedule{target=sm_90a}
// writes them (a training step, GQA 4 query / 2 kv heads, D = 64), expanded
// into the sm_90a programs: dQ with rows = queries, dK/dV with rows = keys.

flamia.kernel @train_attention_dq(%arg0: !flamia.global<?x4x64xbf16> {flamia.param = "q_deq"}, %arg1: !flamia.global<?x2x64xbf16> {flamia.param = "k_deq"}, %arg2: !flamia.global<?x2x64xbf16> {flamia.param = "v_deq"}, %arg3: !flamia.global<?x4x64xbf16> {flamia.param = "do_deq"}, %arg4: !flamia.global<?x4x64xbf16> {flamia.param = "q"}, %arg5: !flamia.global<?x2x64xbf16> {flamia.param = "k"}, %arg6: !flamia.global<?x2x64xbf16> {flamia.param = "v"}, %arg7: !flamia.global<?x4x64xbf16> {flamia.param = "grad_o"}, %arg8: !flamia.global<4x?xf32> {flamia.param = "lse"}, %arg9: !flamia.global<4x?xf32> {flamia.param = "delta"}, %arg10: !flamia.global<?x4x64xbf16> {flamia.param = "dq"}, %arg11: !flamia.global<?x8xi32> {flamia.param = "items"}, %arg12: i32 {flamia.param = "num_items"}, %arg13: !flamia.global<1xi32> {flamia.param = "counter"}, %arg14: f32 {flamia.param = "softmax_scale_log2"}, %arg15: f32 {flamia.param = "softmax_scale"}, %arg16: i32 {flamia.param = "T"}) attributes {flamia.phase = "backward", launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %0 = flamia.queue.create %arg13, %arg12 : !flamia.global<1xi32>
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %1:2 = scf.while (%arg17 = %c0_i32) : (i32) -> (i32, i32) {
    %2 = flamia.queue.next fetch %0[%arg17]
    %3 = arith.cmpi slt, %2, %arg12 : i32
    scf.condition(%3) %arg17, %2 : i32, i32
  } do {
  ^bb0(%arg17: i32, %arg18: i32):
    flamia.attention_dq_tile %arg11[%arg18] q(%arg0) k(%arg1) v(%arg2) grad_o(%arg3) safe(%arg4, %arg5, %arg6, %arg7) lse %arg8 delta %arg9 to %arg10 scale %arg14, %arg15 tokens %arg16 {block_m = 128 : i64, block_n = 128 : i64, causal, recipe = #flamia.recipe<mxfp8, safe_block = 128>} : (!flamia.global<?x8xi32>, i32, !flamia.global<?x4x64xbf16>, !flamia.global<?x2x64xbf16>, !flamia.global<?x2x64xbf16>, !flamia.global<?x4x64xbf16>, !flamia.global<?x4x64xbf16>, !flamia.global<?x2x64xbf16>, !flamia.global<?x2x64xbf16>, !flamia.global<?x4x64xbf16>, !flamia.global<4x?xf32>, !flamia.global<4x?xf32>, !flamia.global<?x4x64xbf16>, f32, f32, i32) -> ()
    %2 = arith.addi %arg17, %c1_i32 : i32
    scf.yield %2 : i32
  }
  flamia.return
}

flamia.kernel @train_attention_dkdv(%arg0: !flamia.global<?x4x64xbf16> {flamia.param = "q_deq"}, %arg1: !flamia.global<?x2x64xbf16> {flamia.param = "k_deq"}, %arg2: !flamia.global<?x2x64xbf16> {flamia.param = "v_deq"}, %arg3: !flamia.global<?x4x64xbf16> {flamia.param = "do_deq"}, %arg4: !flamia.global<?x4x64xbf16> {flamia.param = "q_tb_deq"}, %arg5: !flamia.global<?x4x64xbf16> {flamia.param = "q"}, %arg6: !flamia.global<?x2x64xbf16> {flamia.param = "k"}, %arg7: !flamia.global<?x2x64xbf16> {flamia.param = "v"}, %arg8: !flamia.global<?x4x64xbf16> {flamia.param = "grad_o"}, %arg9: !flamia.global<4x?xf32> {flamia.param = "lse"}, %arg10: !flamia.global<4x?xf32> {flamia.param = "delta"}, %arg11: !flamia.global<?x2x64xbf16> {flamia.param = "dk"}, %arg12: !flamia.global<?x2x64xbf16> {flamia.param = "dv"}, %arg13: !flamia.global<?x8xi32> {flamia.param = "kv_items"}, %arg14: i32 {flamia.param = "num_kv_items"}, %arg15: !flamia.global<1xi32> {flamia.param = "counter"}, %arg16: f32 {flamia.param = "softmax_scale_log2"}, %arg17: f32 {flamia.param = "softmax_scale"}, %arg18: i32 {flamia.param = "T"}) attributes {flamia.phase = "backward", launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %0 = flamia.queue.create %arg15, %arg14 : !flamia.global<1xi32>
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %1:2 = scf.while (%arg19 = %c0_i32) : (i32) -> (i32, i32) {
    %2 = flamia.queue.next fetch %0[%arg19]
    %3 = arith.cmpi slt, %2, %arg14 : i32
    scf.condition(%3) %arg19, %2 : i32, i32
  } do {
  ^bb0(%arg19: i32, %arg20: i32):
    flamia.attention_dkdv_tile %arg13[%arg20] q(%arg0) k(%arg1) v(%arg2) grad_o(%arg3) q_tb(%arg4) safe(%arg5, %arg6, %arg7, %arg8) lse %arg9 delta %arg10 to %arg11, %arg12 scale %arg16, %arg17 tokens %arg18 {block_m = 64 : i64, block_n = 128 : i64, causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>} : (!flamia.global<?x8xi32>, i32, !flamia.global<?x4x64xbf16>, !flamia.global<?x2x64xbf16>, !flamia.global<?x2x64xbf16>, !flamia.global<?x4x64xbf16>, !flamia.global<?x4x64xbf16>, !flamia.global<?x4x64xbf16>, !flamia.global<?x2x64xbf16>, !flamia.global<?x2x64xbf16>, !flamia.global<?x4x64xbf16>, !flamia.global<4x?xf32>, !flamia.global<4x?xf32>, !flamia.global<?x2x64xbf16>, !flamia.global<?x2x64xbf16>, f32, f32, i32) -> ()
    %2 = arith.addi %arg19, %c1_i32 : i32
    scf.yield %2 : i32
  }
  flamia.return
}

// dQ: Q and dO (quantized and safe copies) once per item, a 3-deep K/V ring
// at D = 64; a single-thread producer with 24 registers, two consumer
// warpgroups with 240.
// CHECK-LABEL: flamia.kernel @train_attention_dq(
// CHECK-SAME: threads = 384 : i64, tile = {block_m = 128 : i64, block_n = 128 : i64, stages = 3 : i64}
// CHECK-COUNT-4: flamia.smem.alloc : !flamia.smem<1x128x64xbf16>
// CHECK-NEXT: %[[KS:.*]] = flamia.smem.alloc : !flamia.smem<3x128x64xbf16>
// CHECK-NEXT: %[[VS:.*]] = flamia.smem.alloc : !flamia.smem<3x128x64xbf16>
// CHECK: flamia.role "producer" warpgroups[0, 1) registers 24 single_thread {
// CHECK: flamia.pipeline.expect %{{.*}}[%{{.*}}] bytes 65536 : !flamia.pipeline<1>
// CHECK: flamia.pipeline.expect %{{.*}}[%{{.*}}] bytes 32768 : !flamia.pipeline<3>
// CHECK: flamia.role "consumer" warpgroups[1, 3) registers 240 {
// CHECK: %[[QST:.*]] = flamia.pipeline.acquire consumer %[[QP:.*]][%{{.*}}] : !flamia.pipeline<1>
// CHECK: scf.for %[[KT:.*]] = %{{.*}} to %[[NKT:.*]] step
// K rows past the document end are zeroed before any MMA reads K.
// CHECK: flamia.smem.zero_rows %[[KS]][%[[ST:.*]]] from
// S and dP issue as one asynchronous pair, waited for once.
// CHECK: %[[SA:.*]] = flamia.wg.mma %{{.*}}, %[[KS]][%[[ST]]] {async} : !flamia.smem<1x128x64xbf16>, !flamia.smem<3x128x64xbf16> -> !flamia.frag<64x128xf32>
// CHECK-NEXT: %[[DPA:.*]] = flamia.wg.mma %{{.*}}, %[[VS]][%[[ST]]] {async} : !flamia.smem<1x128x64xbf16>, !flamia.smem<3x128x64xbf16> -> !flamia.frag<64x128xf32>
// CHECK-NEXT: %[[SDP:.*]]:2 = flamia.wg.wait %[[SA]], %[[DPA]] pending 0
// Q and dO are read by S and dP only: freed after the last key tile's.
// CHECK: %[[LASTKT:.*]] = arith.subi %[[NKT]], %c1{{.*}} : i32
// CHECK-NEXT: %[[LAST:.*]] = arith.cmpi eq, %[[KT]], %[[LASTKT]] : i32
// CHECK-NEXT: scf.if %[[LAST]] {
// CHECK-NEXT: flamia.pipeline.release %[[QP]][%[[QST]]] : !flamia.pipeline<1>
// CHECK-NEXT: }
// The mask and the per-entry tests where the key tile needs a mask or the
// warpgroup's 64 query rows reach past the document end; the other tiles
// take the unmasked softmax gradient.
// CHECK: %[[ROWEND:.*]] = arith.addi %[[QBASE:.*]], %c64_i32{{.*}} : i32
// CHECK-NEXT: %[[ROWSPAST:.*]] = arith.cmpi sgt, %[[ROWEND]], %[[LEN:.*]] : i32
// CHECK: %[[KEYMASK:.*]] = arith.ori
// CHECK-NEXT: %[[TESTS:.*]] = arith.ori %[[KEYMASK]], %[[ROWSPAST]] : i1
// CHECK-NEXT: %[[GRAD:.*]]:2 = scf.if %[[TESTS]] -> (!flamia.frag<64x128xf32>, !flamia.frag<64x128xf32>) {
// CHECK-NEXT: %[[M:.*]] = flamia.frag.mask %[[SDP]]#0 query %[[QBASE]] key %{{.*}} limit %[[LEN]] {causal} : !flamia.frag<64x128xf32>
// CHECK-NEXT: %p, %ds = flamia.softmax.grad %[[M]], %[[SDP]]#1 lse %arg8 delta %arg9 head %q_head queries(%doc_start, %[[QBASE]], %[[LEN]]) tokens %arg16 scale %arg14 : !flamia.frag<64x128xf32>, !flamia.global<4x?xf32>
// CHECK-NEXT: scf.yield %p, %ds
// CHECK-NEXT: } else {
// CHECK-NEXT: %p, %ds = flamia.softmax.grad %[[SDP]]#0, %[[SDP]]#1 lse %arg8 delta %arg9 head %q_head queries(%doc_start, %[[QBASE]], %[[LEN]]) tokens %arg16 scale %arg14 {unmasked} : !flamia.frag<64x128xf32>, !flamia.global<4x?xf32>
// CHECK-NEXT: scf.yield %p, %ds
// CHECK-NEXT: }
// CHECK: %[[DSQ:.*]] = flamia.frag.block_quantize %[[GRAD]]#1 quantized %{{.*}} : !flamia.frag<64x128xf32> -> !flamia.frag<64x128xbf16>
// CHECK-NEXT: %[[DQA:.*]] = flamia.wg.mma %[[DSQ]], %[[KS]][%[[ST]]] acc(%{{.*}} : !flamia.frag<64x64xf32>) {async, b_transposed} : !flamia.frag<64x128xbf16>, !flamia.smem<3x128x64xbf16> -> !flamia.frag<64x64xf32>
// CHECK-NEXT: flamia.wg.wait %[[DQA]] pending 0
// After the loop, only an item without key tiles frees them.
// CHECK: %[[NONE:.*]] = arith.cmpi sle, %[[NKT]], %c0{{.*}} : i32
// CHECK-NEXT: scf.if %[[NONE]] {
// CHECK-NEXT: flamia.pipeline.release %[[QP]][%[[QST]]] : !flamia.pipeline<1>
// CHECK: flamia.grad.store %{{.*}} times %arg15 to %arg10 rows(%q_start, %{{.*}}, %q_rows) head %q_head : !flamia.frag<64x64xf32>, !flamia.global<?x4x64xbf16>

// dK/dV: K and V (both forms) once per item, three 64-row ring slots per
// query tile (Q for S^T, Q's token-block copy, dO), S^T and dP^T with keys
// as rows, P^T rounded with the fixed scale, dS^T in 32-query blocks.
// CHECK-LABEL: flamia.kernel @train_attention_dkdv(
// CHECK-SAME: tile = {block_m = 64 : i64, block_n = 128 : i64, stages = 3 : i64}
// CHECK-COUNT-4: flamia.smem.alloc : !flamia.smem<1x128x64xbf16>
// CHECK-NEXT: %[[QA:.*]] = flamia.smem.alloc : !flamia.smem<3x64x64xbf16>
// CHECK-NEXT: %[[QB:.*]] = flamia.smem.alloc : !flamia.smem<3x64x64xbf16>
// CHECK-NEXT: %[[GO:.*]] = flamia.smem.alloc : !flamia.smem<3x64x64xbf16>
// CHECK: flamia.role "producer" warpgroups[0, 1) registers 24 single_thread {
// CHECK: flamia.pipeline.expect %{{.*}}[%{{.*}}] bytes 65536 : !flamia.pipeline<1>
// CHECK: flamia.pipeline.expect %{{.*}}[%{{.*}}] bytes 24576 : !flamia.pipeline<3>
// CHECK: flamia.role "consumer" warpgroups[1, 3) registers 240 {
// CHECK: %[[KST:.*]] = flamia.pipeline.acquire consumer %[[KP:.*]][%{{.*}}] : !flamia.pipeline<1>
// The loop carries the visit (query tile, head) from (first tile, q_head):
// no division of the loop index per iteration.
// CHECK: scf.for %[[VI:[a-z0-9_]+]] = %{{.*}} to %[[NV:[a-z0-9_]+]] step {{.*}} iter_args({{.*}}, %[[QT:[a-z0-9_]+]] = %[[FIRST:[0-9]+]], %[[HEAD:[a-z0-9_]+]] = %q_head) -> (i32, !flamia.frag<64x64xf32>, !flamia.frag<64x64xf32>, i32, i32)
// CHECK-NOT: arith.divsi %arg{{[0-9]+}}
// CHECK: flamia.smem.zero_rows %[[GO]][%[[ST:.*]]] from
// CHECK: flamia.smem.zero_rows %[[QB]][%[[ST]]] from
// CHECK: %[[STA:.*]] = flamia.wg.mma %{{.*}}, %[[QA]][%[[ST]]] {async} : !flamia.smem<1x128x64xbf16>, !flamia.smem<3x64x64xbf16> -> !flamia.frag<64x64xf32>
// CHECK-NEXT: %[[DPTA:.*]] = flamia.wg.mma %{{.*}}, %[[GO]][%[[ST]]] {async} : !flamia.smem<1x128x64xbf16>, !flamia.smem<3x64x64xbf16> -> !flamia.frag<64x64xf32>
// CHECK-NEXT: %[[SDPT:.*]]:2 = flamia.wg.wait %[[STA]], %[[DPTA]] pending 0
// K and V are read by S^T and dP^T only: freed after the last visit's.
// CHECK: %[[LASTV:.*]] = arith.subi %[[NV]], %c1{{.*}} : i32
// CHECK-NEXT: %[[ISLAST:.*]] = arith.cmpi eq, %[[VI]], %[[LASTV]] : i32
// CHECK-NEXT: scf.if %[[ISLAST]] {
// CHECK-NEXT: flamia.pipeline.release %[[KP]][%[[KST]]] : !flamia.pipeline<1>
// CHECK-NEXT: }
// Masked where the query tile reaches past the end or meets the diagonal,
// else unmasked.
// CHECK: %[[GRAD:.*]]:2 = scf.if %{{.*}} -> (!flamia.frag<64x64xf32>, !flamia.frag<64x64xf32>) {
// CHECK-NEXT: %[[M:.*]] = flamia.frag.mask %[[SDPT]]#0 query %{{.*}} key %{{.*}} limit %{{.*}} {causal, transposed} : !flamia.frag<64x64xf32>
// CHECK-NEXT: %p, %ds = flamia.softmax.grad %[[M]], %[[SDPT]]#1 lse %arg9 delta %arg10 head %{{.*}} queries(%doc_start, %{{.*}}, %{{.*}}) tokens %arg18 scale %arg16 {transposed}
// CHECK: } else {
// CHECK-NEXT: %p, %ds = flamia.softmax.grad %[[SDPT]]#0, %[[SDPT]]#1 lse %arg9 delta %arg10 head %{{.*}} queries(%doc_start, %{{.*}}, %{{.*}}) tokens %arg18 scale %arg16 {transposed, unmasked}
// dV sums P^T dO with no row sum that would carry a NaN of P: the rounding
// keeps NaN (no nan_via_row_sum).
// CHECK: %[[PQ:.*]] = flamia.frag.quantize %[[GRAD]]#0 quantized %[[QUANT:.*]] {precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>} : !flamia.frag<64x64xf32> -> !flamia.frag<64x64xbf16>
// dS is rounded while dV += P^T dO runs; dK's MMA follows, one wait for both.
// CHECK-NEXT: %[[DVA:.*]] = flamia.wg.mma %[[PQ]], %[[GO]][%[[ST]]] acc(%{{.*}} : !flamia.frag<64x64xf32>) {async, b_transposed}
// CHECK-NEXT: %[[DSQ:.*]] = flamia.frag.block_quantize %[[GRAD]]#1 quantized %[[QUANT]] : !flamia.frag<64x64xf32> -> !flamia.frag<64x64xbf16>
// CHECK-NEXT: %[[DKA:.*]] = flamia.wg.mma %[[DSQ]], %[[QB]][%[[ST]]] acc(%{{.*}} : !flamia.frag<64x64xf32>) {async, b_transposed}
// CHECK-NEXT: flamia.wg.wait %[[DVA]], %[[DKA]] pending 0
// The next visit: the next tile, or the first tile of the next head.
// CHECK: %[[FOLLOW:.*]] = arith.addi %[[QT]], %{{.*}} : i32
// CHECK: %[[WRAPS:.*]] = arith.cmpi eq, %[[FOLLOW]], %{{.*}} : i32
// CHECK-NEXT: %[[QTN:.*]] = arith.select %[[WRAPS]], %[[FIRST]], %[[FOLLOW]] : i32
// CHECK: %[[HN:.*]] = arith.select %[[WRAPS]], %{{.*}}, %[[HEAD]] : i32
// CHECK: scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %[[QTN]], %[[HN]] : i32, !flamia.frag<64x64xf32>, !flamia.frag<64x64xf32>, i32, i32
// After the loop, only an item without query tiles frees them.
// CHECK: %[[NOVISIT:.*]] = arith.cmpi sle, %[[NV]], %c0{{.*}} : i32
// CHECK-NEXT: scf.if %[[NOVISIT]] {
// CHECK-NEXT: flamia.pipeline.release %[[KP]][%[[KST]]] : !flamia.pipeline<1>
// dK times the softmax scale, dV times 2^-8 (P carried the fixed scale).
// CHECK: flamia.grad.store %{{.*}} times %arg17 to %arg11 rows(%q_start, %{{.*}}, %q_rows) head %kv_head
// CHECK: %[[INV:.*]] = arith.constant 3.906250e-03 : f32
// CHECK-NEXT: flamia.grad.store %{{.*}} times %[[INV]] to %arg12 rows(%q_start, %{{.*}}, %q_rows) head %kv_head

// backward-rotate (D = 64): both loops rotated, so that each tile's
// gradient MMAs and the next tile's score MMAs issue as one group with one
// wait; a prologue issues tile 0's scores.
// dQ: Q and dO (quantized and safe copies) once per item, a 3-deep K/V ring
// at D = 64; a single-thread producer with 24 registers, two consumer
// warpgroups with 240.
// ROT-LABEL: flamia.kernel @train_attention_dq(
// ROT-SAME: threads = 384 : i64, tile = {block_m = 128 : i64, block_n = 128 : i64, stages = 3 : i64}
// ROT-COUNT-4: flamia.smem.alloc : !flamia.smem<1x128x64xbf16>
// ROT-NEXT: %[[KS:.*]] = flamia.smem.alloc : !flamia.smem<3x128x64xbf16>
// ROT-NEXT: %[[VS:.*]] = flamia.smem.alloc : !flamia.smem<3x128x64xbf16>
// ROT-NEXT: %[[QP:.*]] = flamia.pipeline.create consumers 256 : !flamia.pipeline<1>
// ROT-NEXT: %[[KVP:.*]] = flamia.pipeline.create consumers 256 : !flamia.pipeline<3>
// ROT: flamia.role "producer" warpgroups[0, 1) registers 24 single_thread {
// ROT: flamia.pipeline.expect %{{.*}}[%{{.*}}] bytes 65536 : !flamia.pipeline<1>
// ROT: flamia.pipeline.expect %{{.*}}[%{{.*}}] bytes 32768 : !flamia.pipeline<3>
// ROT: flamia.role "consumer" warpgroups[1, 3) registers 240 {
// ROT: %[[QST:.*]] = flamia.pipeline.acquire consumer %[[QP]][%{{.*}}] : !flamia.pipeline<1>
// The key loop is rotated at D = 64. Prologue: key tile 0's S and dP, as one
// asynchronous pair waited for once, its K rows past the document end zeroed
// before any MMA reads K.
// ROT: %[[HEAD:.*]]:3 = scf.if %{{.*}} -> (!flamia.frag<64x128xf32>, !flamia.frag<64x128xf32>, i32) {
// ROT: %[[ST0:.*]] = flamia.pipeline.acquire consumer %[[KVP]][%{{.*}}] : !flamia.pipeline<3>
// ROT: flamia.smem.zero_rows %[[KS]][%[[ST0]]] from
// ROT: %[[S0:.*]] = flamia.wg.mma %{{.*}}[%[[QST]]], %[[KS]][%[[ST0]]] {async} : !flamia.smem<1x128x64xbf16>, !flamia.smem<3x128x64xbf16> -> !flamia.frag<64x128xf32>
// ROT-NEXT: %[[DP0:.*]] = flamia.wg.mma %{{.*}}[%[[QST]]], %[[VS]][%[[ST0]]] {async} : !flamia.smem<1x128x64xbf16>, !flamia.smem<3x128x64xbf16> -> !flamia.frag<64x128xf32>
// ROT-NEXT: %[[SDP0:.*]]:2 = flamia.wg.wait %[[S0]], %[[DP0]] pending 0
// ROT: scf.yield %[[SDP0]]#0, %[[SDP0]]#1, %[[ST0]] :
// Iteration kt carries tile kt's S, dP and stage.
// ROT: scf.for %[[KT:[a-z0-9_]+]] = %{{.*}} to %[[NKT:[a-z0-9_]+]] step %{{.*}} iter_args(%[[KV:[a-z0-9_]+]] = %{{.*}}, %[[ACC:[a-z0-9_]+]] = %{{.*}}, %[[S:[a-z0-9_]+]] = %[[HEAD]]#0, %[[DP:[a-z0-9_]+]] = %[[HEAD]]#1, %[[ST:[a-z0-9_]+]] = %[[HEAD]]#2) -> (i32, !flamia.frag<64x64xf32>, !flamia.frag<64x128xf32>, !flamia.frag<64x128xf32>, i32)
// The mask and the per-entry tests where the key tile needs a mask or the
// warpgroup's 64 query rows reach past the document end; the other tiles
// take the unmasked softmax gradient.
// ROT: %[[ROWEND:.*]] = arith.addi %[[QBASE:.*]], %c64_i32{{.*}} : i32
// ROT-NEXT: %[[ROWSPAST:.*]] = arith.cmpi sgt, %[[ROWEND]], %[[LEN:.*]] : i32
// ROT: %[[KEYMASK:.*]] = arith.ori
// ROT-NEXT: %[[TESTS:.*]] = arith.ori %[[KEYMASK]], %[[ROWSPAST]] : i1
// ROT-NEXT: %[[GRAD:.*]]:2 = scf.if %[[TESTS]] -> (!flamia.frag<64x128xf32>, !flamia.frag<64x128xf32>) {
// ROT-NEXT: %[[M:.*]] = flamia.frag.mask %[[S]] query %[[QBASE]] key %{{.*}} limit %[[LEN]] {causal} : !flamia.frag<64x128xf32>
// ROT-NEXT: %p, %ds = flamia.softmax.grad %[[M]], %[[DP]] lse %arg8 delta %arg9 head %q_head queries(%doc_start, %[[QBASE]], %[[LEN]]) tokens %arg16 scale %arg14 : !flamia.frag<64x128xf32>, !flamia.global<4x?xf32>
// ROT-NEXT: scf.yield %p, %ds
// ROT-NEXT: } else {
// ROT-NEXT: %p, %ds = flamia.softmax.grad %[[S]], %[[DP]] lse %arg8 delta %arg9 head %q_head queries(%doc_start, %[[QBASE]], %[[LEN]]) tokens %arg16 scale %arg14 {unmasked} : !flamia.frag<64x128xf32>, !flamia.global<4x?xf32>
// ROT-NEXT: scf.yield %p, %ds
// ROT-NEXT: }
// ROT: %[[DSQ:.*]] = flamia.frag.block_quantize %[[GRAD]]#1 quantized %{{.*}} : !flamia.frag<64x128xf32> -> !flamia.frag<64x128xbf16>
// ROT: %[[KTN:.*]] = arith.addi %[[KT]], %c1{{.*}} : i32
// ROT: %[[KVN:.*]] = arith.addi %[[KV]], %c1{{.*}} : i32
// ROT: %[[MORE:.*]] = arith.cmpi slt, %[[KTN]], %[[NKT]] : i32
// ROT-NEXT: %[[STEP:.*]]:4 = scf.if %[[MORE]] -> (!flamia.frag<64x64xf32>, !flamia.frag<64x128xf32>, !flamia.frag<64x128xf32>, i32) {
// dQ_kt issues first; tile kt + 1's stage is acquired and its K rows zeroed
// while it runs; tile kt + 1's S and dP queue behind it; one wait for three.
// ROT-NEXT: %[[DQA:.*]] = flamia.wg.mma %[[DSQ]], %[[KS]][%[[ST]]] acc(%[[ACC]] : !flamia.frag<64x64xf32>) {async, b_transposed} : !flamia.frag<64x128xbf16>, !flamia.smem<3x128x64xbf16> -> !flamia.frag<64x64xf32>
// ROT-NEXT: %[[STN:.*]] = flamia.pipeline.acquire consumer %[[KVP]][%[[KVN]]] : !flamia.pipeline<3>
// ROT: flamia.smem.zero_rows %[[KS]][%[[STN]]] from
// ROT: %[[SN:.*]] = flamia.wg.mma %{{.*}}[%[[QST]]], %[[KS]][%[[STN]]] {async}
// ROT-NEXT: %[[DPN:.*]] = flamia.wg.mma %{{.*}}[%[[QST]]], %[[VS]][%[[STN]]] {async}
// ROT-NEXT: %[[DONE:.*]]:3 = flamia.wg.wait %[[DQA]], %[[SN]], %[[DPN]] pending 0
// Q and dO are read by S and dP only: freed once the last key tile's are in.
// ROT: %[[LASTKT:.*]] = arith.subi %[[NKT]], %c1{{.*}} : i32
// ROT-NEXT: %[[LAST:.*]] = arith.cmpi eq, %[[KTN]], %[[LASTKT]] : i32
// ROT-NEXT: scf.if %[[LAST]] {
// ROT-NEXT: flamia.pipeline.release %[[QP]][%[[QST]]] : !flamia.pipeline<1>
// ROT-NEXT: }
// ROT-NEXT: scf.yield %[[DONE]]#0, %[[DONE]]#1, %[[DONE]]#2, %[[STN]] :
// The item's last key tile: dQ alone; zeros, not the old S and dP, leave.
// ROT-NEXT: } else {
// ROT-NEXT: %[[DQL:.*]] = flamia.wg.mma %[[DSQ]], %[[KS]][%[[ST]]] acc(%[[ACC]] : !flamia.frag<64x64xf32>) {async, b_transposed}
// ROT-NEXT: %[[DQW:.*]] = flamia.wg.wait %[[DQL]] pending 0
// ROT-NEXT: %[[Z:.*]] = flamia.frag.zero : !flamia.frag<64x128xf32>
// ROT-NEXT: scf.yield %[[DQW]], %[[Z]], %[[Z]], %[[ST]] :
// ROT-NEXT: }
// Tile kt's K and V go once dQ_kt is complete.
// ROT-NEXT: flamia.pipeline.release %[[KVP]][%[[ST]]] : !flamia.pipeline<3>
// ROT-NEXT: scf.yield %[[KVN]], %[[STEP]]#0, %[[STEP]]#1, %[[STEP]]#2, %[[STEP]]#3 :
// After the loop, only an item without key tiles frees them.
// ROT: %[[NONE:.*]] = arith.cmpi sle, %[[NKT]], %c0{{.*}} : i32
// ROT-NEXT: scf.if %[[NONE]] {
// ROT-NEXT: flamia.pipeline.release %[[QP]][%[[QST]]] : !flamia.pipeline<1>
// ROT: flamia.grad.store %{{.*}} times %arg15 to %arg10 rows(%q_start, %{{.*}}, %q_rows) head %q_head : !flamia.frag<64x64xf32>, !flamia.global<?x4x64xbf16>

// dK/dV: K and V (both forms) once per item, three 64-row ring slots per
// query tile (Q for S^T, Q's token-block copy, dO), S^T and dP^T with keys
// as rows, P^T rounded with the fixed scale, dS^T in 32-query blocks.
// ROT-LABEL: flamia.kernel @train_attention_dkdv(
// ROT-SAME: tile = {block_m = 64 : i64, block_n = 128 : i64, stages = 3 : i64}
// ROT-COUNT-4: flamia.smem.alloc : !flamia.smem<1x128x64xbf16>
// ROT-NEXT: %[[QA:.*]] = flamia.smem.alloc : !flamia.smem<3x64x64xbf16>
// ROT-NEXT: %[[QB:.*]] = flamia.smem.alloc : !flamia.smem<3x64x64xbf16>
// ROT-NEXT: %[[GO:.*]] = flamia.smem.alloc : !flamia.smem<3x64x64xbf16>
// ROT-NEXT: %[[KP:.*]] = flamia.pipeline.create consumers 256 : !flamia.pipeline<1>
// ROT-NEXT: %[[QRING:.*]] = flamia.pipeline.create consumers 256 : !flamia.pipeline<3>
// ROT: flamia.role "producer" warpgroups[0, 1) registers 24 single_thread {
// ROT: flamia.pipeline.expect %{{.*}}[%{{.*}}] bytes 65536 : !flamia.pipeline<1>
// ROT: flamia.pipeline.expect %{{.*}}[%{{.*}}] bytes 24576 : !flamia.pipeline<3>
// ROT: flamia.role "consumer" warpgroups[1, 3) registers 240 {
// ROT: %[[KST:.*]] = flamia.pipeline.acquire consumer %[[KP]][%{{.*}}] : !flamia.pipeline<1>
// ROT: %[[FIRST:[0-9]+]] = arith.muli %q_tile, %c2{{.*}} : i32
// ROT: %[[NV:.*]] = arith.muli %{{.*}}, %c2{{.*}} : i32
// The visit loop is rotated at D = 64. Prologue: visit 0's S^T and dP^T,
// dO's and Q's token-block rows past the document end zeroed first.
// ROT: %[[HEAD:.*]]:3 = scf.if %{{.*}} -> (!flamia.frag<64x64xf32>, !flamia.frag<64x64xf32>, i32) {
// ROT-NEXT: %[[ST0:.*]] = flamia.pipeline.acquire consumer %[[QRING]][%{{.*}}] : !flamia.pipeline<3>
// ROT: flamia.smem.zero_rows %[[GO]][%[[ST0]]] from
// ROT: flamia.smem.zero_rows %[[QB]][%[[ST0]]] from
// ROT: %[[STA0:.*]] = flamia.wg.mma %{{.*}}[%[[KST]]], %[[QA]][%[[ST0]]] {async} : !flamia.smem<1x128x64xbf16>, !flamia.smem<3x64x64xbf16> -> !flamia.frag<64x64xf32>
// ROT-NEXT: %[[DPTA0:.*]] = flamia.wg.mma %{{.*}}[%[[KST]]], %[[GO]][%[[ST0]]] {async} : !flamia.smem<1x128x64xbf16>, !flamia.smem<3x64x64xbf16> -> !flamia.frag<64x64xf32>
// ROT-NEXT: %[[SDPT0:.*]]:2 = flamia.wg.wait %[[STA0]], %[[DPTA0]] pending 0
// K and V are read by S^T and dP^T only: freed once the last visit's are in.
// ROT: %[[LASTV0:.*]] = arith.subi %[[NV]], %c1{{.*}} : i32
// ROT-NEXT: %[[ISLAST0:.*]] = arith.cmpi eq, %{{.*}}, %[[LASTV0]] : i32
// ROT-NEXT: scf.if %[[ISLAST0]] {
// ROT-NEXT: flamia.pipeline.release %[[KP]][%[[KST]]] : !flamia.pipeline<1>
// ROT-NEXT: }
// ROT-NEXT: scf.yield %[[SDPT0]]#0, %[[SDPT0]]#1, %[[ST0]] :
// The loop carries the visit (query tile, head) from (first tile, q_head),
// with no division of the loop index per iteration, and its S^T, dP^T and
// stage.
// ROT: scf.for %[[VI:[a-z0-9_]+]] = %{{.*}} to %[[NV]] step {{.*}} iter_args(%[[QI:[a-z0-9_]+]] = %{{.*}}, %[[DKACC:[a-z0-9_]+]] = %{{.*}}, %[[DVACC:[a-z0-9_]+]] = %{{.*}}, %[[QT:[a-z0-9_]+]] = %[[FIRST]], %[[HD:[a-z0-9_]+]] = %q_head, %[[ST_:[a-z0-9_]+]] = %[[HEAD]]#0, %[[DPT:[a-z0-9_]+]] = %[[HEAD]]#1, %[[ST:[a-z0-9_]+]] = %[[HEAD]]#2) -> (i32, !flamia.frag<64x64xf32>, !flamia.frag<64x64xf32>, i32, i32, !flamia.frag<64x64xf32>, !flamia.frag<64x64xf32>, i32)
// ROT-NOT: arith.divsi %arg{{[0-9]+}}
// Masked where the query tile reaches past the end or meets the diagonal,
// else unmasked.
// ROT: %[[GRAD:.*]]:2 = scf.if %{{.*}} -> (!flamia.frag<64x64xf32>, !flamia.frag<64x64xf32>) {
// ROT-NEXT: %[[M:.*]] = flamia.frag.mask %[[ST_]] query %{{.*}} key %{{.*}} limit %{{.*}} {causal, transposed} : !flamia.frag<64x64xf32>
// ROT-NEXT: %p, %ds = flamia.softmax.grad %[[M]], %[[DPT]] lse %arg9 delta %arg10 head %[[HD]] queries(%doc_start, %{{.*}}, %{{.*}}) tokens %arg18 scale %arg16 {transposed}
// ROT: } else {
// ROT-NEXT: %p, %ds = flamia.softmax.grad %[[ST_]], %[[DPT]] lse %arg9 delta %arg10 head %[[HD]] queries(%doc_start, %{{.*}}, %{{.*}}) tokens %arg18 scale %arg16 {transposed, unmasked}
// ROT: %[[PQ:.*]] = flamia.frag.quantize %[[GRAD]]#0 quantized %[[QUANT:.*]] {precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>} : !flamia.frag<64x64xf32> -> !flamia.frag<64x64xbf16>
// The next visit: the next tile, or the first tile of the next head.
// ROT: %[[FOLLOW:.*]] = arith.addi %[[QT]], %{{.*}} : i32
// ROT: %[[WRAPS:.*]] = arith.cmpi eq, %[[FOLLOW]], %{{.*}} : i32
// ROT: %[[QTN:.*]] = arith.select %[[WRAPS]], %[[FIRST]], %[[FOLLOW]] : i32
// ROT: %[[HN:.*]] = arith.select %[[WRAPS]], %{{.*}}, %[[HD]] : i32
// ROT: %[[VIN:.*]] = arith.addi %[[VI]], %c1{{.*}} : i32
// ROT: %[[QIN:.*]] = arith.addi %[[QI]], %c1{{.*}} : i32
// ROT: %[[MORE:.*]] = arith.cmpi slt, %[[VIN]], %[[NV]] : i32
// ROT-NEXT: %[[STEP:.*]]:5 = scf.if %[[MORE]] -> (!flamia.frag<64x64xf32>, !flamia.frag<64x64xf32>, !flamia.frag<64x64xf32>, !flamia.frag<64x64xf32>, i32) {
// dS is rounded while dV += P^T dO runs; dK's MMA follows; the next visit's
// stage is acquired and zeroed; its S^T and dP^T queue behind; one wait for
// the four.
// ROT-NEXT: %[[DVA:.*]] = flamia.wg.mma %[[PQ]], %[[GO]][%[[ST]]] acc(%[[DVACC]] : !flamia.frag<64x64xf32>) {async, b_transposed}
// ROT-NEXT: %[[DSQ:.*]] = flamia.frag.block_quantize %[[GRAD]]#1 quantized %[[QUANT]] : !flamia.frag<64x64xf32> -> !flamia.frag<64x64xbf16>
// ROT-NEXT: %[[DKA:.*]] = flamia.wg.mma %[[DSQ]], %[[QB]][%[[ST]]] acc(%[[DKACC]] : !flamia.frag<64x64xf32>) {async, b_transposed}
// ROT-NEXT: %[[STN:.*]] = flamia.pipeline.acquire consumer %[[QRING]][%[[QIN]]] : !flamia.pipeline<3>
// ROT: flamia.smem.zero_rows %[[GO]][%[[STN]]] from
// ROT: flamia.smem.zero_rows %[[QB]][%[[STN]]] from
// ROT: %[[STAN:.*]] = flamia.wg.mma %{{.*}}[%[[KST]]], %[[QA]][%[[STN]]] {async}
// ROT-NEXT: %[[DPTAN:.*]] = flamia.wg.mma %{{.*}}[%[[KST]]], %[[GO]][%[[STN]]] {async}
// ROT-NEXT: %[[DONE:.*]]:4 = flamia.wg.wait %[[DVA]], %[[DKA]], %[[STAN]], %[[DPTAN]] pending 0
// ROT: %[[LASTVN:.*]] = arith.subi %[[NV]], %c1{{.*}} : i32
// ROT-NEXT: %[[ISLAST:.*]] = arith.cmpi eq, %[[VIN]], %[[LASTVN]] : i32
// ROT-NEXT: scf.if %[[ISLAST]] {
// ROT-NEXT: flamia.pipeline.release %[[KP]][%[[KST]]] : !flamia.pipeline<1>
// ROT-NEXT: }
// ROT-NEXT: scf.yield %[[DONE]]#1, %[[DONE]]#0, %[[DONE]]#2, %[[DONE]]#3, %[[STN]] :
// The item's last visit: dV and dK alone.
// ROT-NEXT: } else {
// ROT-NEXT: %[[DVL:.*]] = flamia.wg.mma %[[PQ]], %[[GO]][%[[ST]]] acc(%[[DVACC]] : !flamia.frag<64x64xf32>) {async, b_transposed}
// ROT-NEXT: %[[DSQL:.*]] = flamia.frag.block_quantize %[[GRAD]]#1 quantized %[[QUANT]]
// ROT-NEXT: %[[DKL:.*]] = flamia.wg.mma %[[DSQL]], %[[QB]][%[[ST]]] acc(%[[DKACC]] : !flamia.frag<64x64xf32>) {async, b_transposed}
// ROT-NEXT: %[[LASTW:.*]]:2 = flamia.wg.wait %[[DVL]], %[[DKL]] pending 0
// ROT-NEXT: %[[Z:.*]] = flamia.frag.zero : !flamia.frag<64x64xf32>
// ROT-NEXT: scf.yield %[[LASTW]]#1, %[[LASTW]]#0, %[[Z]], %[[Z]], %[[ST]] :
// ROT-NEXT: }
// The visit's query tiles go once its dV and dK are complete.
// ROT-NEXT: flamia.pipeline.release %[[QRING]][%[[ST]]] : !flamia.pipeline<3>
// ROT-NEXT: scf.yield %[[QIN]], %[[STEP]]#0, %[[STEP]]#1, %[[QTN]], %[[HN]], %[[STEP]]#2, %[[STEP]]#3, %[[STEP]]#4 :
// After the loop, only an item without query tiles frees them.
// ROT: %[[NOVISIT:.*]] = arith.cmpi sle, %[[NV]], %c0{{.*}} : i32
// ROT-NEXT: scf.if %[[NOVISIT]] {
// ROT-NEXT: flamia.pipeline.release %[[KP]][%[[KST]]] : !flamia.pipeline<1>
// dK times the softmax scale, dV times 2^-8 (P carried the fixed scale).
// ROT: flamia.grad.store %{{.*}} times %arg17 to %arg11 rows(%q_start, %{{.*}}, %q_rows) head %kv_head
// ROT: %[[INV:.*]] = arith.constant 3.906250e-03 : f32
// ROT-NEXT: flamia.grad.store %{{.*}} times %[[INV]] to %arg12 rows(%q_start, %{{.*}}, %q_rows) head %kv_head

// sm_90a's operands (bf16 dequantized copies) are not sm_100a's.
// SM100: error: 'flamia.attention_dq_tile' op flamia-tile: sm_100a reads q as its payload and 1 set of scale-factor tiles (rows are tokens, for S = Q K^T), got 1 operand(s)
// SM100-NOT: reads k as its payload

// backward-ping-pong: warpgroup 1 gives the first turn away before the
// work loop; each pair of MMAs is issued inside a turn and waited for after
// it (both roundings of dK/dV before the turn).
// PP-LABEL: flamia.kernel @train_attention_dq(
// PP: flamia.role "consumer"
// PP: %[[WG:.*]] = flamia.warpgroup_id
// PP: %[[LAST:.*]] = arith.cmpi eq, %[[WG]], %{{.*}} : i32
// PP-NEXT: scf.if %[[LAST]] {
// PP-NEXT: flamia.turn give among 2
// PP: flamia.turn take among 2
// PP-NEXT: %[[S:.*]] = flamia.wg.mma {{.*}} {async}
// PP-NEXT: %[[DP:.*]] = flamia.wg.mma {{.*}} {async}
// PP-NEXT: flamia.turn give among 2
// PP-NEXT: flamia.wg.wait %[[S]], %[[DP]] pending 0
// PP: flamia.turn take among 2
// PP-NEXT: %[[DQ:.*]] = flamia.wg.mma {{.*}} {async, b_transposed}
// PP-NEXT: flamia.turn give among 2
// PP-NEXT: flamia.wg.wait %[[DQ]] pending 0
// PP-LABEL: flamia.kernel @train_attention_dkdv(
// PP: flamia.turn give among 2
// PP: flamia.turn take among 2
// PP-NEXT: flamia.wg.mma {{.*}} {async}
// PP-NEXT: flamia.wg.mma {{.*}} {async}
// PP-NEXT: flamia.turn give among 2
// PP: flamia.frag.quantize
// PP-NEXT: flamia.frag.block_quantize
// PP-NEXT: flamia.turn take among 2
// PP-NEXT: %[[DV:.*]] = flamia.wg.mma {{.*}} {async, b_transposed}
// PP-NEXT: %[[DK:.*]] = flamia.wg.mma {{.*}} {async, b_transposed}
// PP-NEXT: flamia.turn give among 2
// PP-NEXT: flamia.wg.wait %[[DV]], %[[DK]] pending 0

// backward-ping-pong with backward-rotate: each group of MMAs is issued
// inside a turn and waited for after it. In the rotated loops the next stage is acquired and zeroed before the
// turn (the zeroing ends with a barrier of both warpgroups), and dK/dV
// rounds both operands before it.
// PPROT-LABEL: flamia.kernel @train_attention_dq(
// PPROT: flamia.role "consumer"
// PPROT: %[[WG:.*]] = flamia.warpgroup_id
// PPROT: %[[LAST:.*]] = arith.cmpi eq, %[[WG]], %{{.*}} : i32
// PPROT-NEXT: scf.if %[[LAST]] {
// PPROT-NEXT: flamia.turn give among 2
// PPROT: flamia.turn take among 2
// PPROT-NEXT: %[[S:.*]] = flamia.wg.mma {{.*}} {async}
// PPROT-NEXT: %[[DP:.*]] = flamia.wg.mma {{.*}} {async}
// PPROT-NEXT: flamia.turn give among 2
// PPROT-NEXT: flamia.wg.wait %[[S]], %[[DP]] pending 0
// PPROT: flamia.pipeline.acquire consumer
// PPROT: flamia.smem.zero_rows
// PPROT: flamia.turn take among 2
// PPROT-NEXT: %[[DQ:.*]] = flamia.wg.mma {{.*}} {async, b_transposed}
// PPROT-NEXT: %[[SN:.*]] = flamia.wg.mma {{.*}} {async}
// PPROT-NEXT: %[[DPN:.*]] = flamia.wg.mma {{.*}} {async}
// PPROT-NEXT: flamia.turn give among 2
// PPROT-NEXT: flamia.wg.wait %[[DQ]], %[[SN]], %[[DPN]] pending 0
// PPROT: } else {
// PPROT-NEXT: flamia.turn take among 2
// PPROT-NEXT: %[[DQL:.*]] = flamia.wg.mma {{.*}} {async, b_transposed}
// PPROT-NEXT: flamia.turn give among 2
// PPROT-NEXT: flamia.wg.wait %[[DQL]] pending 0
// PPROT-LABEL: flamia.kernel @train_attention_dkdv(
// PPROT: flamia.turn give among 2
// PPROT: flamia.turn take among 2
// PPROT-NEXT: flamia.wg.mma {{.*}} {async}
// PPROT-NEXT: flamia.wg.mma {{.*}} {async}
// PPROT-NEXT: flamia.turn give among 2
// PPROT: flamia.frag.quantize
// PPROT: flamia.pipeline.acquire consumer
// PPROT: flamia.smem.zero_rows
// PPROT: flamia.frag.block_quantize
// PPROT-NEXT: flamia.turn take among 2
// PPROT-NEXT: %[[DV:.*]] = flamia.wg.mma {{.*}} {async, b_transposed}
// PPROT-NEXT: %[[DK:.*]] = flamia.wg.mma {{.*}} {async, b_transposed}
// PPROT-NEXT: %[[STN:.*]] = flamia.wg.mma {{.*}} {async}
// PPROT-NEXT: %[[DPTN:.*]] = flamia.wg.mma {{.*}} {async}
// PPROT-NEXT: flamia.turn give among 2
// PPROT-NEXT: flamia.wg.wait %[[DV]], %[[DK]], %[[STN]], %[[DPTN]] pending 0
// PPROT: } else {
// PPROT-NEXT: flamia.frag.block_quantize
// PPROT-NEXT: flamia.turn take among 2
// PPROT-NEXT: %[[DVL:.*]] = flamia.wg.mma {{.*}} {async, b_transposed}
// PPROT-NEXT: %[[DKL:.*]] = flamia.wg.mma {{.*}} {async, b_transposed}
// PPROT-NEXT: flamia.turn give among 2
// PPROT-NEXT: flamia.wg.wait %[[DVL]], %[[DKL]] pending 0
