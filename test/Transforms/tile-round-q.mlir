// RUN: flamia-opt %s -split-input-file --flamia-tile | FileCheck %s
// RUN: flamia-opt %s -split-input-file --flamia-tile=overlap-softmax=false | FileCheck %s --check-prefix=SERIAL
// RUN: sed -e 's/target<sm_90a>/target<sm_100a>/' %s | not flamia-opt --flamia-tile -o /dev/null 2>&1 | FileCheck %s --check-prefix=SM100
// round_q (flamia-varlen-schedule round-q, the sm_90a default for a
// forward-only mxfp8 set): the producer loads Q once, the bf16 original,
// into the safe-block tile, and each consumer warpgroup rounds its 64 rows
// into the quantized tile before its first MMA. Inside the safe block S
// reads the original, outside the rounded copy.
flamia.kernel @attn_attention_fwd(%arg0: !flamia.global<?x8x128xbf16> {flamia.param = "q"}, %arg1: !flamia.global<?x2x128xbf16> {flamia.param = "k_deq"}, %arg2: !flamia.global<?x2x128xbf16> {flamia.param = "v_deq"}, %arg3: !flamia.global<?x2x128xbf16> {flamia.param = "k"}, %arg4: !flamia.global<?x2x128xbf16> {flamia.param = "v"}, %arg5: !flamia.global<?x8x128xbf16> {flamia.param = "o"}, %arg6: !flamia.global<8x?xf32> {flamia.param = "lse"}, %arg7: !flamia.global<?x8xi32> {flamia.param = "items"}, %arg8: i32 {flamia.param = "num_items"}, %arg9: !flamia.global<1xi32> {flamia.param = "counter"}, %arg10: f32 {flamia.param = "softmax_scale_log2"}, %arg11: i32 {flamia.param = "T"}) attributes {flamia.phase = "forward", launch = #flamia.launch<persistent>, schedule = {block_m = 128 : i64, block_n = 128 : i64, cost_model = "sm_90a", order = "l2-sections", safe_block = 128 : i64}, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %0 = flamia.queue.create %arg9, %arg8 : !flamia.global<1xi32>
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %1:2 = scf.while (%arg12 = %c0_i32) : (i32) -> (i32, i32) {
    %2 = flamia.queue.next fetch %0[%arg12]
    %3 = arith.cmpi slt, %2, %arg8 : i32
    scf.condition(%3) %arg12, %2 : i32, i32
  } do {
  ^bb0(%arg12: i32, %arg13: i32):
    flamia.attention_tile %arg7[%arg13] q(%arg0) k(%arg1) v(%arg2) safe(%arg0, %arg3, %arg4) to %arg5, %arg6 scale %arg10 tokens %arg11 {block_m = 128 : i64, block_n = 128 : i64, causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>, round_q} : (!flamia.global<?x8xi32>, i32, !flamia.global<?x8x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x8x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x8x128xbf16>, !flamia.global<8x?xf32>, f32, i32) -> ()
    %2 = arith.addi %arg12, %c1_i32 : i32
    scf.yield %2 : i32
  }
  flamia.return
}


// CHECK-LABEL: flamia.kernel @attn_attention_fwd
// CHECK: %[[QD:.*]] = flamia.smem.alloc : !flamia.smem<1x128x128xbf16>
// CHECK-NEXT: %[[QS:.*]] = flamia.smem.alloc : !flamia.smem<1x128x128xbf16>
// CHECK: flamia.role "producer"
// CHECK: %[[QST:.*]] = flamia.pipeline.acquire producer %[[QP:.*]][%{{.*}}] : !flamia.pipeline<1>
// One 128 x 128 bf16 tile (32 KiB), not two.
// CHECK-NEXT: flamia.pipeline.expect %[[QP]][%[[QST]]] bytes 32768
// CHECK-NOT: flamia.tma.load %arg0
// CHECK: flamia.tma.load %arg0[%{{.*}}, %{{.*}}] -> %[[QS]][%[[QST]]]
// CHECK-NOT: flamia.tma.load %arg0
// CHECK: flamia.role "consumer"
// CHECK: %[[CST:.*]] = flamia.pipeline.acquire consumer %[[QP]]
// CHECK: %[[ROW:.*]] = arith.muli %{{.*}}, %c64_i32
// The overlapped consumer (D = 128) rounds every item: behind a branch ptxas
// moved its S = Q K^T descriptors out of the uniform registers (run 56).
// CHECK-NEXT: flamia.smem.mx_round %[[QS]][%[[CST]]] to %[[QD]][%[[CST]]] rows %[[ROW]]
// CHECK: %[[Q:.*]] = arith.select %{{.*}}, %[[QS]], %[[QD]] : !flamia.smem<1x128x128xbf16>
// CHECK-NEXT: flamia.wg.mma %[[Q]][%[[CST]]]
// The serial consumer rounds only when a key tile of the item lies outside
// the safe block: the first (key tile 0) or the last (num_key_tiles - 1) is
// not in q_tile's block.
// SERIAL-LABEL: flamia.kernel @attn_attention_fwd
// SERIAL: flamia.role "consumer"
// SERIAL: %[[CST:.*]] = flamia.pipeline.acquire consumer
// SERIAL-NEXT: arith.constant 64
// SERIAL-NEXT: %[[ROW:.*]] = arith.muli
// SERIAL: %[[FIRST:.*]] = arith.cmpi eq, %{{.*}}, %[[QBLK:.*]] : i32
// SERIAL: %[[QBLK2:.*]] = arith.divsi %q_tile
// SERIAL: %[[LAST:.*]] = arith.cmpi eq, %{{.*}}, %[[QBLK2]] : i32
// SERIAL-NEXT: %[[ALL:.*]] = arith.andi %[[FIRST]], %[[LAST]] : i1
// SERIAL-NEXT: %[[TRUE:.*]] = arith.constant true
// SERIAL-NEXT: %[[NEED:.*]] = arith.xori %[[ALL]], %[[TRUE]] : i1
// SERIAL-NEXT: scf.if %[[NEED]] {
// SERIAL-NEXT: flamia.smem.mx_round %{{.*}}[%[[CST]]] to %{{.*}}[%[[CST]]] rows %[[ROW]]
// SERIAL-NEXT: }
// SM100: error: 'flamia.attention_tile' op flamia-tile: round_q is sm_90a's
