// RUN: flamia-opt %s --flamia-tile=target=sm_90a | FileCheck %s
// RUN: flamia-opt %s '--flamia-tile=target=sm_90a backward-rotate=true' | FileCheck %s
// The dK/dV program at D = 128 (sm_90a). Its visit loop is never rotated,
// backward-rotate or not (dK and dV alone take 128 registers;
// tile-backward.mlir has the rotated loop at D = 64): each visit issues S^T
// and dP^T and waits for them, computes the softmax gradient, then issues dV
// and dK and waits.

flamia.kernel @train_attention_dkdv(%arg0: !flamia.global<?x4x128xbf16> {flamia.param = "q_deq"}, %arg1: !flamia.global<?x2x128xbf16> {flamia.param = "k_deq"}, %arg2: !flamia.global<?x2x128xbf16> {flamia.param = "v_deq"}, %arg3: !flamia.global<?x4x128xbf16> {flamia.param = "do_deq"}, %arg4: !flamia.global<?x4x128xbf16> {flamia.param = "q_tb_deq"}, %arg5: !flamia.global<?x4x128xbf16> {flamia.param = "q"}, %arg6: !flamia.global<?x2x128xbf16> {flamia.param = "k"}, %arg7: !flamia.global<?x2x128xbf16> {flamia.param = "v"}, %arg8: !flamia.global<?x4x128xbf16> {flamia.param = "grad_o"}, %arg9: !flamia.global<4x?xf32> {flamia.param = "lse"}, %arg10: !flamia.global<4x?xf32> {flamia.param = "delta"}, %arg11: !flamia.global<?x2x128xbf16> {flamia.param = "dk"}, %arg12: !flamia.global<?x2x128xbf16> {flamia.param = "dv"}, %arg13: !flamia.global<?x8xi32> {flamia.param = "kv_items"}, %arg14: i32 {flamia.param = "num_kv_items"}, %arg15: !flamia.global<1xi32> {flamia.param = "counter"}, %arg16: f32 {flamia.param = "softmax_scale_log2"}, %arg17: f32 {flamia.param = "softmax_scale"}, %arg18: i32 {flamia.param = "T"}) attributes {flamia.phase = "backward", launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %0 = flamia.queue.create %arg15, %arg14 : !flamia.global<1xi32>
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %1:2 = scf.while (%arg19 = %c0_i32) : (i32) -> (i32, i32) {
    %2 = flamia.queue.next fetch %0[%arg19]
    %3 = arith.cmpi slt, %2, %arg14 : i32
    scf.condition(%3) %arg19, %2 : i32, i32
  } do {
  ^bb0(%arg19: i32, %arg20: i32):
    flamia.attention_dkdv_tile %arg13[%arg20] q(%arg0) k(%arg1) v(%arg2) grad_o(%arg3) q_tb(%arg4) safe(%arg5, %arg6, %arg7, %arg8) lse %arg9 delta %arg10 to %arg11, %arg12 scale %arg16, %arg17 tokens %arg18 {block_m = 64 : i64, block_n = 128 : i64, causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>} : (!flamia.global<?x8xi32>, i32, !flamia.global<?x4x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x4x128xbf16>, !flamia.global<?x4x128xbf16>, !flamia.global<?x4x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x4x128xbf16>, !flamia.global<4x?xf32>, !flamia.global<4x?xf32>, !flamia.global<?x2x128xbf16>, !flamia.global<?x2x128xbf16>, f32, f32, i32) -> ()
    %2 = arith.addi %arg19, %c1_i32 : i32
    scf.yield %2 : i32
  }
  flamia.return
}

// dK/dV at D = 128: K and V (both forms) once per item, a 2-deep ring of
// three 64-row slots per query tile (Q for S^T, Q's token-block copy, dO), S^T and dP^T with keys
// as rows, P^T rounded with the fixed scale, dS^T in 32-query blocks.
// CHECK-LABEL: flamia.kernel @train_attention_dkdv(
// CHECK-SAME: tile = {block_m = 64 : i64, block_n = 128 : i64, stages = 2 : i64}
// CHECK-COUNT-4: flamia.smem.alloc : !flamia.smem<1x128x128xbf16>
// CHECK-NEXT: %[[QA:.*]] = flamia.smem.alloc : !flamia.smem<2x64x128xbf16>
// CHECK-NEXT: %[[QB:.*]] = flamia.smem.alloc : !flamia.smem<2x64x128xbf16>
// CHECK-NEXT: %[[GO:.*]] = flamia.smem.alloc : !flamia.smem<2x64x128xbf16>
// CHECK: flamia.role "producer" warpgroups[0, 1) registers 24 single_thread {
// CHECK: flamia.pipeline.expect %{{.*}}[%{{.*}}] bytes 131072 : !flamia.pipeline<1>
// CHECK: flamia.pipeline.expect %{{.*}}[%{{.*}}] bytes 49152 : !flamia.pipeline<2>
// CHECK: flamia.role "consumer" warpgroups[1, 3) registers 240 {
// CHECK: %[[KST:.*]] = flamia.pipeline.acquire consumer %[[KP:.*]][%{{.*}}] : !flamia.pipeline<1>
// The loop carries the visit (query tile, head) from (first tile, q_head):
// no division of the loop index per iteration.
// CHECK: scf.for %[[VI:[a-z0-9_]+]] = %{{.*}} to %[[NV:[a-z0-9_]+]] step {{.*}} iter_args({{.*}}, %[[QT:[a-z0-9_]+]] = %[[FIRST:[0-9]+]], %[[HEAD:[a-z0-9_]+]] = %q_head) -> (i32, !flamia.frag<64x128xf32>, !flamia.frag<64x128xf32>, i32, i32)
// CHECK-NOT: arith.divsi %arg{{[0-9]+}}
// CHECK: flamia.smem.zero_rows %[[GO]][%[[ST:.*]]] from
// CHECK: flamia.smem.zero_rows %[[QB]][%[[ST]]] from
// CHECK: %[[STA:.*]] = flamia.wg.mma %{{.*}}, %[[QA]][%[[ST]]] {async} : !flamia.smem<1x128x128xbf16>, !flamia.smem<2x64x128xbf16> -> !flamia.frag<64x64xf32>
// CHECK-NEXT: %[[DPTA:.*]] = flamia.wg.mma %{{.*}}, %[[GO]][%[[ST]]] {async} : !flamia.smem<1x128x128xbf16>, !flamia.smem<2x64x128xbf16> -> !flamia.frag<64x64xf32>
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
// CHECK: %[[PQ:.*]] = flamia.frag.quantize %[[GRAD]]#0 quantized %[[QUANT:.*]] {precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>} : !flamia.frag<64x64xf32> -> !flamia.frag<64x64xbf16>
// dS is rounded while dV += P^T dO runs; dK's MMA follows, one wait for both.
// CHECK-NEXT: %[[DVA:.*]] = flamia.wg.mma %[[PQ]], %[[GO]][%[[ST]]] acc(%{{.*}} : !flamia.frag<64x128xf32>) {async, b_transposed}
// CHECK-NEXT: %[[DSQ:.*]] = flamia.frag.block_quantize %[[GRAD]]#1 quantized %[[QUANT]] : !flamia.frag<64x64xf32> -> !flamia.frag<64x64xbf16>
// CHECK-NEXT: %[[DKA:.*]] = flamia.wg.mma %[[DSQ]], %[[QB]][%[[ST]]] acc(%{{.*}} : !flamia.frag<64x128xf32>) {async, b_transposed}
// CHECK-NEXT: flamia.wg.wait %[[DVA]], %[[DKA]] pending 0
// The next visit: the next tile, or the first tile of the next head.
// CHECK: %[[FOLLOW:.*]] = arith.addi %[[QT]], %{{.*}} : i32
// CHECK: %[[WRAPS:.*]] = arith.cmpi eq, %[[FOLLOW]], %{{.*}} : i32
// CHECK-NEXT: %[[QTN:.*]] = arith.select %[[WRAPS]], %[[FIRST]], %[[FOLLOW]] : i32
// CHECK: %[[HN:.*]] = arith.select %[[WRAPS]], %{{.*}}, %[[HEAD]] : i32
// CHECK: scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %[[QTN]], %[[HN]] : i32, !flamia.frag<64x128xf32>, !flamia.frag<64x128xf32>, i32, i32
// After the loop, only an item without query tiles frees them.
// CHECK: %[[NOVISIT:.*]] = arith.cmpi sle, %[[NV]], %c0{{.*}} : i32
// CHECK-NEXT: scf.if %[[NOVISIT]] {
// CHECK-NEXT: flamia.pipeline.release %[[KP]][%[[KST]]] : !flamia.pipeline<1>
// dK times the softmax scale, dV times 2^-8 (P carried the fixed scale).
// CHECK: flamia.grad.store %{{.*}} times %arg17 to %arg11 rows(%q_start, %{{.*}}, %q_rows) head %kv_head
// CHECK: %[[INV:.*]] = arith.constant 3.906250e-03 : f32
// CHECK-NEXT: flamia.grad.store %{{.*}} times %[[INV]] to %arg12 rows(%q_start, %{{.*}}, %q_rows) head %kv_head

