// RUN: flamia-opt %s --flamia-tile=ping-pong=true | FileCheck %s
// RUN: flamia-opt %s --flamia-tile | FileCheck %s --check-prefixes=NOTURNS,OVERLAP
// RUN: flamia-opt %s --flamia-tile=overlap-softmax=false | FileCheck %s --check-prefix=SERIAL
// RUN: sed -e 's/x128xbf16>/x64xbf16>/g' %s | flamia-opt --flamia-tile | FileCheck %s --check-prefix=D64
// RUN: not flamia-opt %s --flamia-tile=target=sm_100a -o /dev/null 2>&1 | FileCheck %s --check-prefix=WRONG
// RUN: not flamia-opt %s --flamia-tile=target=sm_80 -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// The persistent kernel flamia-varlen-schedule{target=sm_90a} writes (GQA: 8
// query heads, 2 key/value heads, D = 128), expanded into the warp-specialized program.
flamia.kernel @attn_attention_fwd(%arg0: !flamia.global<?x8x128xbf16> {flamia.param = "q_deq"}, %arg1: !flamia.global<?x2x128xbf16> {flamia.param = "k_deq"}, %arg2: !flamia.global<?x2x128xbf16> {flamia.param = "v_deq"}, %arg3: !flamia.global<?x8x128xbf16> {flamia.param = "q"}, %arg4: !flamia.global<?x2x128xbf16> {flamia.param = "k"}, %arg5: !flamia.global<?x2x128xbf16> {flamia.param = "v"}, %arg6: !flamia.global<?x8x128xbf16> {flamia.param = "o"}, %arg7: !flamia.global<8x?xf32> {flamia.param = "lse"}, %arg8: !flamia.global<?x8xi32> {flamia.param = "items"}, %arg9: i32 {flamia.param = "num_items"}, %arg10: !flamia.global<1xi32> {flamia.param = "counter"}, %arg11: f32 {flamia.param = "softmax_scale_log2"}, %arg12: i32 {flamia.param = "T"}) attributes {launch = #flamia.launch<persistent>, schedule = {block_m = 128 : i64, block_n = 128 : i64, cost_model = "sm_90a", safe_block = 128 : i64}, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %0 = flamia.queue.create %arg10, %arg9 : !flamia.global<1xi32>
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %1:2 = scf.while (%arg13 = %c0_i32) : (i32) -> (i32, i32) {
    %2 = flamia.queue.next fetch %0[%arg13]
    %3 = arith.cmpi slt, %2, %arg9 : i32
    scf.condition(%3) %arg13, %2 : i32, i32
  } do {
  ^bb0(%arg13: i32, %arg14: i32):
    flamia.attention_tile %arg8[%arg14] q(%arg0) k(%arg1) v(%arg2) safe(%arg3, %arg4, %arg5) to %arg6, %arg7 scale %arg11 tokens %arg12 {block_m = 128 : i64, block_n = 128 : i64, causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>} : (!flamia.global<?x8xi32>, i32, !flamia.global<?x8x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x8x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x8x128xbf16>, !flamia.global<8x?xf32>, f32, i32) -> ()
    %2 = arith.addi %arg13, %c1_i32 : i32
    scf.yield %2 : i32
  }
  flamia.return
}

// Shared memory: the Q tile twice (dequantized copy, bf16 original for the
// safe block) and 2-stage rings of K and V tiles; a Q and a K/V pipeline and
// the work queue, freed by the 256 consumer threads.
// CHECK-LABEL: flamia.kernel @attn_attention_fwd
// CHECK-SAME: threads = 384 : i64, tile = {block_m = 128 : i64, block_n = 128 : i64, stages = 2 : i64}
// CHECK: %[[QD:.*]] = flamia.smem.alloc : !flamia.smem<1x128x128xbf16>
// CHECK: %[[QS:.*]] = flamia.smem.alloc : !flamia.smem<1x128x128xbf16>
// CHECK: %[[KS:.*]] = flamia.smem.alloc : !flamia.smem<2x128x128xbf16>
// CHECK: %[[VS:.*]] = flamia.smem.alloc : !flamia.smem<2x128x128xbf16>
// CHECK: %[[QP:.*]] = flamia.pipeline.create consumers 256 : !flamia.pipeline<1>
// CHECK: %[[KVP:.*]] = flamia.pipeline.create consumers 256 : !flamia.pipeline<2>
// CHECK: %[[QUEUE:.*]] = flamia.queue.create %arg10, %arg9 receivers 256

// The producer: one thread takes items and issues TMA copies, K and V from
// the bf16 originals inside the safe block and from the dequantized copies
// elsewhere (GQA: the key/value head's columns).
// CHECK: flamia.role "producer" warpgroups[0, 1) registers 40 single_thread
// CHECK: flamia.queue.next fetch %[[QUEUE]]
// CHECK: %[[Q_START:q_start]], %{{.*}}, %[[DOC_START:doc_start]], %{{.*}}, %[[Q_HEAD:q_head]], %[[KV_HEAD:kv_head]], %{{.*}}, %[[Q_TILE:q_tile]] = flamia.item.load
// CHECK: flamia.pipeline.acquire producer %[[QP]]
// CHECK: flamia.pipeline.expect %[[QP]][%{{.*}}] bytes 65536
// CHECK: flamia.tma.load %arg0[%[[Q_START]], %{{.*}}] -> %[[QD]]
// CHECK: flamia.tma.load %arg3[%[[Q_START]], %{{.*}}] -> %[[QS]]
// CHECK: scf.for
// CHECK: flamia.pipeline.acquire producer %[[KVP]]
// CHECK: flamia.pipeline.expect %[[KVP]][%{{.*}}] bytes 65536
// CHECK: scf.if
// CHECK: flamia.tma.load %arg4[{{.*}}] -> %[[KS]]
// CHECK: flamia.tma.load %arg5[{{.*}}] -> %[[VS]]
// CHECK: } else {
// CHECK: flamia.tma.load %arg1[{{.*}}] -> %[[KS]]
// CHECK: flamia.tma.load %arg2[{{.*}}] -> %[[VS]]

// The consumers: per key tile S = Q K^T (bf16 Q inside the safe block),
// masking of the diagonal and document-end tiles, the online softmax, P
// rounded (E4M3 * 2^8 off the safe block), O = O alpha + P V, release.
// CHECK: flamia.role "consumer" warpgroups[1, 3) registers 232
// CHECK: flamia.warpgroup_id
// Ping-pong: warpgroup 0 takes the first turn on the tensor cores.
// CHECK: scf.if
// CHECK-NEXT: flamia.turn give among 2
// CHECK: flamia.queue.next receive %[[QUEUE]]
// CHECK: flamia.rows.fill 0xFF800000 : !flamia.rows<64 x f32>
// CHECK: flamia.frag.zero : !flamia.frag<64x128xf32>
// CHECK: scf.for {{.*}} -> (i32, !flamia.rows<64 x f32>, !flamia.rows<64 x f32>, !flamia.frag<64x128xf32>)
// CHECK: flamia.pipeline.acquire consumer %[[KVP]]
// CHECK: flamia.turn take among 2
// CHECK: flamia.wg.mma %[[QS]][%{{.*}}], %[[KS]][%{{.*}}]
// CHECK: flamia.wg.mma %[[QD]][%{{.*}}], %[[KS]][%{{.*}}]
// CHECK: flamia.turn give among 2
// Q is free after the item's last S = Q K^T.
// CHECK: scf.if
// CHECK-NEXT: flamia.pipeline.release %[[QP]]
// CHECK: flamia.frag.mask {{.*}} {causal}
// CHECK: flamia.softmax.update {{.*}} scale %arg11 {p_scale = 8 : i64}
// The serial consumer keeps P's conversion through f32 (run 76).
// CHECK: flamia.frag.quantize {{.*}} {precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>, prescaled}
// The serial consumer multiplies every tile (no skip_ones: run 63).
// CHECK: flamia.frag.scale_rows
// CHECK-NOT: skip_ones
// CHECK-SAME: : !flamia.frag
// CHECK: flamia.turn take among 2
// CHECK: flamia.wg.mma {{.*}}, %[[VS]][%{{.*}}] acc({{.*}}) {b_transposed}
// CHECK: flamia.turn give among 2
// CHECK: flamia.pipeline.release %[[KVP]]
// CHECK: flamia.attn.store {{.*}} to %arg6, %arg7 {{.*}} {fixed_scale = 8 : i64, sum_prescaled}

// WRONG: error: 'flamia.kernel' op flamia-tile was asked for target sm_100a but the kernel targets #flamia.target<sm_90a>
// UNKNOWN: error: flamia-tile: unknown target 'sm_80' (expected sm_90a or sm_100a)

// By default the warpgroups do not take turns.
// NOTURNS-LABEL: flamia.kernel @attn_attention_fwd
// NOTURNS-NOT: flamia.turn

// By default (D = 128) the consumer overlaps the softmax with the MMAs, and
// K and V travel in rings of their own (K of tile j and V of tile j - 1 are
// held at once). Tile 0 is the prologue, the last P V the epilogue.
// OVERLAP: %[[KP:.*]] = flamia.pipeline.create consumers 256 : !flamia.pipeline<2>
// OVERLAP-NEXT: %[[VP:.*]] = flamia.pipeline.create consumers 256 : !flamia.pipeline<2>
// OVERLAP: flamia.role "producer"
// OVERLAP: flamia.pipeline.acquire producer %[[KP]]
// OVERLAP: flamia.tma.load {{.*}} %[[KP]]
// OVERLAP: flamia.pipeline.acquire producer %[[VP]]
// OVERLAP: flamia.tma.load {{.*}} %[[VP]]
// OVERLAP: flamia.role "consumer"
// OVERLAP: %[[K0:.*]] = flamia.pipeline.acquire consumer %[[KP]]
// OVERLAP: flamia.wg.mma {{.*}}[%[[K0]]] : !flamia.smem<1x128x128xbf16>
// OVERLAP-NEXT: flamia.pipeline.release %[[KP]][%[[K0]]]
// OVERLAP: flamia.softmax.update
// OVERLAP: scf.for
// OVERLAP: %[[K:.*]] = flamia.pipeline.acquire consumer %[[KP]]
// OVERLAP: %[[SP:.*]] = flamia.wg.mma {{.*}}[%[[K]]] {async}
// OVERLAP: %[[V:.*]] = flamia.pipeline.acquire consumer %[[VP]]
// OVERLAP-NEXT: %[[OP:.*]] = flamia.wg.mma {{.*}}[%[[V]]] acc({{.*}}) {async, b_transposed}
// OVERLAP-NEXT: %[[S:.*]] = flamia.wg.wait %[[SP]] pending 1
// OVERLAP-NEXT: flamia.pipeline.release %[[KP]][%[[K]]]
// OVERLAP: flamia.softmax.update %{{.*}}
// The overlapped consumer's P enters the row sum too, so its rounding may
// turn a NaN finite: the cheaper E4M3-to-bf16 conversion.
// OVERLAP: flamia.frag.quantize {{.*}} {nan_via_row_sum, precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>, prescaled}
// OVERLAP-NEXT: %[[O:.*]] = flamia.wg.wait %[[OP]] pending 0
// OVERLAP-NEXT: flamia.pipeline.release %[[VP]][%[[V]]]
// OVERLAP-NEXT: flamia.frag.scale_rows %[[O]] by %{{.*}} skip_ones
// OVERLAP: %[[VL:.*]] = flamia.pipeline.acquire consumer %[[VP]]
// Rows of the last key tile past the document end hold the next document's
// values: zeroed before P V (P = 0 there, but 0 x NaN is NaN).
// OVERLAP: %[[IN_DOC:.*]] = arith.subi %[[DOC_LEN:.*]], %{{.*}} : i32
// OVERLAP-NEXT: arith.constant 128 : i32
// OVERLAP-NEXT: %[[PAST:.*]] = arith.cmpi slt, %[[IN_DOC]], %{{.*}} : i32
// OVERLAP-NEXT: scf.if %[[PAST]] {
// OVERLAP-NEXT: flamia.smem.zero_rows %[[VS:.*]][%[[VL]]] from %[[IN_DOC]] : !flamia.smem<2x128x128xbf16>
// OVERLAP-NEXT: }
// OVERLAP-NEXT: %[[OL:.*]] = flamia.wg.mma {{.*}}, %[[VS]][%[[VL]]] acc({{.*}}) {b_transposed}
// OVERLAP-NEXT: flamia.pipeline.release %[[VP]][%[[VL]]]
// OVERLAP-NEXT: flamia.attn.store %[[OL]]

// overlap-softmax=false: one K/V ring, every MMA waited for.
// SERIAL: flamia.pipeline.create consumers 256 : !flamia.pipeline<2>
// SERIAL-NOT: flamia.pipeline.create
// SERIAL: flamia.role "consumer"
// SERIAL-NOT: flamia.wg.wait
// SERIAL: flamia.softmax.update
// SERIAL: flamia.frag.quantize {{.*}} {precision
// SERIAL: scf.if
// SERIAL-NEXT: flamia.smem.zero_rows
// SERIAL: flamia.wg.mma {{.*}} {b_transposed}
// SERIAL: flamia.attn.store

// D = 64 (the same kernel with 64 channels): the serial consumer and one
// K/V ring of 4 stages (3 and 5 measured slower, docs/performance.md runs
// 71 and 73), however overlap-softmax is set.
// D64-LABEL: flamia.kernel @attn_attention_fwd
// D64: flamia.smem.alloc : !flamia.smem<1x128x64xbf16>
// D64: flamia.smem.alloc : !flamia.smem<1x128x64xbf16>
// D64-NEXT: %[[KS:.*]] = flamia.smem.alloc : !flamia.smem<4x128x64xbf16>
// D64-NEXT: %[[VS:.*]] = flamia.smem.alloc : !flamia.smem<4x128x64xbf16>
// D64: flamia.pipeline.create consumers 256 : !flamia.pipeline<1>
// D64-NEXT: flamia.pipeline.create consumers 256 : !flamia.pipeline<4>
// D64-NOT: flamia.pipeline.create
// D64: flamia.role "consumer"
// D64: flamia.frag.quantize {{.*}} {precision
