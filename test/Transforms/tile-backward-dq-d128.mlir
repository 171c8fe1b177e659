// RUN: flamia-opt %s --flamia-tile=target=sm_90a -split-input-file | FileCheck %s
// RUN: flamia-opt %s '--flamia-tile=target=sm_90a backward-rotate=true' -split-input-file | FileCheck %s
// (backward-rotate is ignored at D = 128: ptxas would serialize the rotated
// loop's MMAs.)
// The dQ program at D = 128 (sm_90a), where shared memory decides the ring
// depth: a query tile meets safe and quantized key tiles, and both forms of
// Q and dO (four 32 KiB tiles) would leave room for one 64 KiB key stage.
// The query-side buffers hold one form at a time instead, reloaded where the
// key tiles switch form, and the key ring has two stages.

flamia.kernel @train_attention_dq(%arg0: !flamia.global<?x4x128xbf16> {flamia.param = "q_deq"}, %arg1: !flamia.global<?x2x128xbf16> {flamia.param = "k_deq"}, %arg2: !flamia.global<?x2x128xbf16> {flamia.param = "v_deq"}, %arg3: !flamia.global<?x4x128xbf16> {flamia.param = "do_deq"}, %arg4: !flamia.global<?x4x128xbf16> {flamia.param = "q"}, %arg5: !flamia.global<?x2x128xbf16> {flamia.param = "k"}, %arg6: !flamia.global<?x2x128xbf16> {flamia.param = "v"}, %arg7: !flamia.global<?x4x128xbf16> {flamia.param = "grad_o"}, %arg8: !flamia.global<4x?xf32> {flamia.param = "lse"}, %arg9: !flamia.global<4x?xf32> {flamia.param = "delta"}, %arg10: !flamia.global<?x4x128xbf16> {flamia.param = "dq"}, %arg11: !flamia.global<?x8xi32> {flamia.param = "items"}, %arg12: i32 {flamia.param = "num_items"}, %arg13: !flamia.global<1xi32> {flamia.param = "counter"}, %arg14: f32 {flamia.param = "softmax_scale_log2"}, %arg15: f32 {flamia.param = "softmax_scale"}, %arg16: i32 {flamia.param = "T"}) attributes {flamia.phase = "backward", launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %0 = flamia.queue.create %arg13, %arg12 : !flamia.global<1xi32>
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %1:2 = scf.while (%arg17 = %c0_i32) : (i32) -> (i32, i32) {
    %2 = flamia.queue.next fetch %0[%arg17]
    %3 = arith.cmpi slt, %2, %arg12 : i32
    scf.condition(%3) %arg17, %2 : i32, i32
  } do {
  ^bb0(%arg17: i32, %arg18: i32):
    flamia.attention_dq_tile %arg11[%arg18] q(%arg0) k(%arg1) v(%arg2) grad_o(%arg3) safe(%arg4, %arg5, %arg6, %arg7) lse %arg8 delta %arg9 to %arg10 scale %arg14, %arg15 tokens %arg16 {block_m = 128 : i64, block_n = 128 : i64, causal, recipe = #flamia.recipe<mxfp8, safe_block = 128>} : (!flamia.global<?x8xi32>, i32, !flamia.global<?x4x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x4x128xbf16>, !flamia.global<?x4x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x4x128xbf16>, !flamia.global<4x?xf32>, !flamia.global<4x?xf32>, !flamia.global<?x4x128xbf16>, f32, f32, i32) -> ()
    %2 = arith.addi %arg17, %c1_i32 : i32
    scf.yield %2 : i32
  }
  flamia.return
}

// CHECK-LABEL: flamia.kernel @train_attention_dq(
// CHECK-SAME: tile = {block_m = 128 : i64, block_n = 128 : i64, stages = 2 : i64}
// CHECK: %[[QD:.*]] = flamia.smem.alloc : !flamia.smem<1x128x128xbf16>
// CHECK-NEXT: %[[GOD:.*]] = flamia.smem.alloc : !flamia.smem<1x128x128xbf16>
// CHECK-NEXT: %[[KS:.*]] = flamia.smem.alloc : !flamia.smem<2x128x128xbf16>
// CHECK-NEXT: %[[VS:.*]] = flamia.smem.alloc : !flamia.smem<2x128x128xbf16>
// CHECK-NEXT: %[[QP:.*]] = flamia.pipeline.create consumers 256 : !flamia.pipeline<1>
// CHECK-NEXT: %[[KVP:.*]] = flamia.pipeline.create consumers 256 : !flamia.pipeline<2>
// The producer loads each key tile's K and V first, then, where the form
// switches (kt = 0, or safe differs from tile kt - 1), Q and dO in the form
// of this tile: bf16 in the safe block (%arg4, %arg7), else dequantized.
// CHECK: flamia.role "producer"
// CHECK: scf.for %[[KT:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[KV:.*]] = %{{.*}}, %[[QC:.*]] = %{{.*}}) -> (i32, i32)
// CHECK: %[[ST:.*]] = flamia.pipeline.acquire producer %[[KVP]][%[[KV]]] : !flamia.pipeline<2>
// CHECK-NEXT: flamia.pipeline.expect %[[KVP]][%[[ST]]] bytes 65536 : !flamia.pipeline<2>
// CHECK: %[[SAFE:.*]] = arith.cmpi eq
// CHECK: flamia.tma.load %arg5[{{.*}}] -> %[[KS]][%[[ST]]]
// CHECK: flamia.tma.load %arg1[{{.*}}] -> %[[KS]][%[[ST]]]
// CHECK: flamia.tma.load %arg6[{{.*}}] -> %[[VS]][%[[ST]]]
// CHECK: flamia.tma.load %arg2[{{.*}}] -> %[[VS]][%[[ST]]]
// CHECK: %[[PREV:.*]] = arith.cmpi eq
// CHECK: %[[THIS:.*]] = arith.cmpi eq
// CHECK-NEXT: %[[DIFFERS:.*]] = arith.xori %[[THIS]], %[[PREV]] : i1
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[KT]], %{{.*}} : i32
// CHECK-NEXT: %[[SWITCH:.*]] = arith.ori %[[FIRST]], %[[DIFFERS]] : i1
// CHECK-NEXT: scf.if %[[SWITCH]] -> (i32) {
// CHECK-NEXT: %[[QST:.*]] = flamia.pipeline.acquire producer %[[QP]][%[[QC]]] : !flamia.pipeline<1>
// CHECK-NEXT: flamia.pipeline.expect %[[QP]][%[[QST]]] bytes 65536 : !flamia.pipeline<1>
// CHECK-NEXT: scf.if %[[SAFE]] {
// CHECK-NEXT: flamia.tma.load %arg4[%q_start, %{{.*}}] -> %[[QD]][%[[QST]]] on %[[QP]]
// CHECK-NEXT: } else {
// CHECK-NEXT: flamia.tma.load %arg0[%q_start, %{{.*}}] -> %[[QD]][%[[QST]]] on %[[QP]]
// CHECK: scf.if %[[SAFE]] {
// CHECK-NEXT: flamia.tma.load %arg7[%q_start, %{{.*}}] -> %[[GOD]][%[[QST]]] on %[[QP]]
// CHECK-NEXT: } else {
// CHECK-NEXT: flamia.tma.load %arg3[%q_start, %{{.*}}] -> %[[GOD]][%[[QST]]] on %[[QP]]
// The consumers wait for the new form's tiles before the key tile's MMAs,
// which read the query-side buffers in stage 0. They free them as soon as
// the last key tile of that form has its S and dP (the next tile switches
// form, or it is the item's last): the producer loads the next ones while
// this tile's softmax gradient and dQ MMA run. Nothing is freed after the
// key loop.
// CHECK: flamia.role "consumer"
// CHECK: scf.for %[[CKT:.*]] = %{{.*}} to %[[NKT:.*]] step %{{.*}} iter_args(%[[CKV:.*]] = %{{.*}}, %{{.*}} = %{{.*}}, %[[CQC:.*]] = %{{.*}}) -> (i32, !flamia.frag<64x128xf32>, i32)
// CHECK: %[[CSWITCH:.*]] = arith.ori
// CHECK-NEXT: scf.if %[[CSWITCH]] -> (i32) {
// CHECK-NEXT: flamia.pipeline.acquire consumer %[[QP]][%[[CQC]]] : !flamia.pipeline<1>
// CHECK-NOT: flamia.pipeline.release
// CHECK: %[[CST:.*]] = flamia.pipeline.acquire consumer %[[KVP]][%[[CKV]]] : !flamia.pipeline<2>
// CHECK: %[[S:.*]] = flamia.wg.mma %[[QD]][%[[C0:.*]]], %[[KS]][%[[CST]]] {async} : !flamia.smem<1x128x128xbf16>, !flamia.smem<2x128x128xbf16> -> !flamia.frag<64x128xf32>
// CHECK: %[[DP:.*]] = flamia.wg.mma %[[GOD]][%[[C0]]], %[[VS]][%[[CST]]] {async} : !flamia.smem<1x128x128xbf16>, !flamia.smem<2x128x128xbf16> -> !flamia.frag<64x128xf32>
// CHECK-NEXT: flamia.wg.wait %[[S]], %[[DP]] pending 0
// CHECK: %[[LASTKT:.*]] = arith.subi %[[NKT]], %{{.*}} : i32
// CHECK-NEXT: %[[LAST:.*]] = arith.cmpi eq, %[[CKT]], %[[LASTKT]] : i32
// CHECK: %[[NEXTKT:.*]] = arith.addi %[[CKT]], %{{.*}} : i32
// CHECK: %[[NEXTFIRST:.*]] = arith.cmpi eq, %[[NEXTKT]], %{{.*}} : i32
// CHECK-NEXT: %[[NEXTSWITCH:.*]] = arith.ori %[[NEXTFIRST]], %{{.*}} : i1
// CHECK-NEXT: %[[LASTUSE:.*]] = arith.ori %[[LAST]], %[[NEXTSWITCH]] : i1
// CHECK-NEXT: scf.if %[[LASTUSE]] {
// CHECK-NEXT: flamia.pipeline.release %[[QP]][%[[C0]]] : !flamia.pipeline<1>
// CHECK-NEXT: }
// CHECK: flamia.softmax.grad
// CHECK: flamia.wg.mma %{{.*}}, %[[KS]][%[[CST]]] acc(%{{.*}} : !flamia.frag<64x128xf32>) {async, b_transposed}
// CHECK: flamia.pipeline.release %[[KVP]][%[[CST]]] : !flamia.pipeline<2>
// CHECK-NOT: flamia.pipeline.release
// CHECK: flamia.grad.store

// -----

flamia.kernel @dq_no_safe_block(%arg0: !flamia.global<?x4x128xbf16> {flamia.param = "q_deq"}, %arg1: !flamia.global<?x2x128xbf16> {flamia.param = "k_deq"}, %arg2: !flamia.global<?x2x128xbf16> {flamia.param = "v_deq"}, %arg3: !flamia.global<?x4x128xbf16> {flamia.param = "do_deq"}, %arg4: !flamia.global<?x4x128xbf16> {flamia.param = "q"}, %arg5: !flamia.global<?x2x128xbf16> {flamia.param = "k"}, %arg6: !flamia.global<?x2x128xbf16> {flamia.param = "v"}, %arg7: !flamia.global<?x4x128xbf16> {flamia.param = "grad_o"}, %arg8: !flamia.global<4x?xf32> {flamia.param = "lse"}, %arg9: !flamia.global<4x?xf32> {flamia.param = "delta"}, %arg10: !flamia.global<?x4x128xbf16> {flamia.param = "dq"}, %arg11: !flamia.global<?x8xi32> {flamia.param = "items"}, %arg12: i32 {flamia.param = "num_items"}, %arg13: !flamia.global<1xi32> {flamia.param = "counter"}, %arg14: f32 {flamia.param = "softmax_scale_log2"}, %arg15: f32 {flamia.param = "softmax_scale"}, %arg16: i32 {flamia.param = "T"}) attributes {flamia.phase = "backward", launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %0 = flamia.queue.create %arg13, %arg12 : !flamia.global<1xi32>
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %1:2 = scf.while (%arg17 = %c0_i32) : (i32) -> (i32, i32) {
    %2 = flamia.queue.next fetch %0[%arg17]
    %3 = arith.cmpi slt, %2, %arg12 : i32
    scf.condition(%3) %arg17, %2 : i32, i32
  } do {
  ^bb0(%arg17: i32, %arg18: i32):
    flamia.attention_dq_tile %arg11[%arg18] q(%arg0) k(%arg1) v(%arg2) grad_o(%arg3) safe() lse %arg8 delta %arg9 to %arg10 scale %arg14, %arg15 tokens %arg16 {block_m = 128 : i64, block_n = 128 : i64, causal, recipe = #flamia.recipe<mxfp8>} : (!flamia.global<?x8xi32>, i32, !flamia.global<?x4x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x4x128xbf16>, !flamia.global<4x?xf32>, !flamia.global<4x?xf32>, !flamia.global<?x4x128xbf16>, f32, f32, i32) -> ()
    %2 = arith.addi %arg17, %c1_i32 : i32
    scf.yield %2 : i32
  }
  flamia.return
}

// No safe block: one form, Q and dO once per item, two key stages.
// CHECK-LABEL: flamia.kernel @dq_no_safe_block(
// CHECK-SAME: stages = 2 : i64
// CHECK-COUNT-2: flamia.smem.alloc : !flamia.smem<1x128x128xbf16>
// CHECK-NEXT: flamia.smem.alloc : !flamia.smem<2x128x128xbf16>
// CHECK-NEXT: flamia.smem.alloc : !flamia.smem<2x128x128xbf16>
// CHECK: flamia.role "producer"
// CHECK: flamia.pipeline.expect %{{.*}}[%{{.*}}] bytes 65536 : !flamia.pipeline<1>
// CHECK-NOT: scf.for
// CHECK: scf.for
// CHECK-NOT: flamia.pipeline<1>
// CHECK: flamia.role "consumer"

// -----

flamia.kernel @dq_k_tb(%arg0: !flamia.global<?x4x128xbf16> {flamia.param = "q_deq"}, %arg1: !flamia.global<?x2x128xbf16> {flamia.param = "k_deq"}, %arg2: !flamia.global<?x2x128xbf16> {flamia.param = "v_deq"}, %arg3: !flamia.global<?x4x128xbf16> {flamia.param = "do_deq"}, %arg4: !flamia.global<?x4x128xbf16> {flamia.param = "q"}, %arg5: !flamia.global<?x2x128xbf16> {flamia.param = "k"}, %arg6: !flamia.global<?x2x128xbf16> {flamia.param = "v"}, %arg7: !flamia.global<?x4x128xbf16> {flamia.param = "grad_o"}, %arg8: !flamia.global<4x?xf32> {flamia.param = "lse"}, %arg9: !flamia.global<4x?xf32> {flamia.param = "delta"}, %arg10: !flamia.global<?x4x128xbf16> {flamia.param = "dq"}, %arg11: !flamia.global<?x8xi32> {flamia.param = "items"}, %arg12: i32 {flamia.param = "num_items"}, %arg13: !flamia.global<1xi32> {flamia.param = "counter"}, %arg14: f32 {flamia.param = "softmax_scale_log2"}, %arg15: f32 {flamia.param = "softmax_scale"}, %arg16: i32 {flamia.param = "T"}) attributes {flamia.phase = "backward", launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %0 = flamia.queue.create %arg13, %arg12 : !flamia.global<1xi32>
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %1:2 = scf.while (%arg17 = %c0_i32) : (i32) -> (i32, i32) {
    %2 = flamia.queue.next fetch %0[%arg17]
    %3 = arith.cmpi slt, %2, %arg12 : i32
    scf.condition(%3) %arg17, %2 : i32, i32
  } do {
  ^bb0(%arg17: i32, %arg18: i32):
    flamia.attention_dq_tile %arg11[%arg18] q(%arg0) k(%arg1) v(%arg2) grad_o(%arg3) k_tb(%arg1) safe(%arg4, %arg5, %arg6, %arg7) lse %arg8 delta %arg9 to %arg10 scale %arg14, %arg15 tokens %arg16 {block_m = 128 : i64, block_n = 128 : i64, causal, recipe = #flamia.recipe<mxfp8, strict, safe_block = 128>} : (!flamia.global<?x8xi32>, i32, !flamia.global<?x4x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x4x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x4x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x4x128xbf16>, !flamia.global<4x?xf32>, !flamia.global<4x?xf32>, !flamia.global<?x4x128xbf16>, f32, f32, i32) -> ()
    %2 = arith.addi %arg17, %c1_i32 : i32
    scf.yield %2 : i32
  }
  flamia.return
}

// K's second copy (mxfp8-strict): a key stage is 96 KiB, so one stage is
// all that fits either way; both forms of Q and dO stay for the item.
// CHECK-LABEL: flamia.kernel @dq_k_tb(
// CHECK-SAME: stages = 1 : i64
// CHECK-COUNT-7: flamia.smem.alloc : !flamia.smem<1x128x128xbf16>
// CHECK: flamia.role "producer"
// CHECK: flamia.pipeline.expect %{{.*}}[%{{.*}}] bytes 131072 : !flamia.pipeline<1>
// CHECK: flamia.pipeline.expect %{{.*}}[%{{.*}}] bytes 98304 : !flamia.pipeline<1>
