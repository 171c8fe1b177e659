// RUN: flamia-opt %s -split-input-file --flamia-tile=target=sm_100a | FileCheck %s
// RUN: flamia-opt %s -split-input-file '--flamia-tile=target=sm_100a p-in-smem=true' | FileCheck %s --check-prefix=PSMEM
// The persistent kernel flamia-varlen-schedule{target=sm_100a} writes (GQA: 8
// query heads, 2 key/value heads, D = 128, causal, safe block 128), expanded
// into the tcgen05 program: producer, MMA issuer and softmax warpgroups
// around tensor memory (lib/Transforms/TileAttentionSm100.cpp).
module {
  flamia.kernel @attn_attention_fwd(%arg0: !flamia.global<?x8x128xf8E4M3FN> {flamia.param = "q_pt"}, %arg1: !flamia.global<?x8x512xi8> {flamia.param = "q_sf"}, %arg2: !flamia.global<?x2x128xf8E4M3FN> {flamia.param = "k_tb"}, %arg3: !flamia.global<?x2x512xi8> {flamia.param = "k_sf"}, %arg4: !flamia.global<?x2x128xf8E4M3FN> {flamia.param = "v_tb"}, %arg5: !flamia.global<?x2x512xi8> {flamia.param = "v_sf"}, %arg6: !flamia.global<?x8x128xbf16> {flamia.param = "q"}, %arg7: !flamia.global<?x2x128xbf16> {flamia.param = "k"}, %arg8: !flamia.global<?x2x128xbf16> {flamia.param = "v"}, %arg9: !flamia.global<?x8x128xbf16> {flamia.param = "o"}, %arg10: !flamia.global<8x?xf32> {flamia.param = "lse"}, %arg11: !flamia.global<?x8xi32> {flamia.param = "items"}, %arg12: i32 {flamia.param = "num_items"}, %arg13: !flamia.global<1xi32> {flamia.param = "counter"}, %arg14: f32 {flamia.param = "softmax_scale_log2"}, %arg15: i32 {flamia.param = "T"}) attributes {launch = #flamia.launch<persistent>, schedule = {block_m = 128 : i64, block_n = 128 : i64, cost_model = "sm_100a", safe_block = 128 : i64}, target = #flamia.target<sm_100a>, threads = 128 : i64} {
    %0 = flamia.queue.create %arg13, %arg12 : !flamia.global<1xi32>
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %1:2 = scf.while (%arg16 = %c0_i32) : (i32) -> (i32, i32) {
      %2 = flamia.queue.next fetch %0[%arg16]
      %3 = arith.cmpi slt, %2, %arg12 : i32
      scf.condition(%3) %arg16, %2 : i32, i32
    } do {
    ^bb0(%arg16: i32, %arg17: i32):
      flamia.attention_tile %arg11[%arg17] q(%arg0, %arg1) k(%arg2, %arg3) v(%arg4, %arg5) safe(%arg6, %arg7, %arg8) to %arg9, %arg10 scale %arg14 tokens %arg15 {block_m = 128 : i64, block_n = 128 : i64, causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>} : (!flamia.global<?x8xi32>, i32, !flamia.global<?x8x128xf8E4M3FN>, !flamia.global<?x8x512xi8>, !flamia.global<?x2x128xf8E4M3FN>, !flamia.global<?x2x512xi8>, !flamia.global<?x2x128xf8E4M3FN>, !flamia.global<?x2x512xi8>, !flamia.global<?x8x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x8x128xbf16>, !flamia.global<8x?xf32>, f32, i32) -> ()
      %2 = arith.addi %arg16, %c1_i32 : i32
      scf.yield %2 : i32
    }
    flamia.return
  }

// Buffers: E4M3 Q and a ring of E4M3 K/V stages with their 512-byte
// scale-factor tiles, bf16 Q/K/V for the safe block.
// CHECK-LABEL: flamia.kernel @attn_attention_fwd
// CHECK-SAME: threads = 384
// CHECK-SAME: tile = {block_m = 128 : i64, block_n = 128 : i64, stages = 3 : i64, tmem_columns = 512 : i64}
// CHECK: %[[Q8:.*]] = flamia.smem.alloc : !flamia.smem<1x128x128xf8E4M3FN>
// CHECK: %[[QSF:.*]] = flamia.smem.alloc : !flamia.smem<1x8x64xi8>
// CHECK: %[[K8:.*]] = flamia.smem.alloc : !flamia.smem<3x128x128xf8E4M3FN>
// CHECK: %[[V8:.*]] = flamia.smem.alloc : !flamia.smem<3x128x128xf8E4M3FN>
// CHECK: %[[KSF:.*]] = flamia.smem.alloc : !flamia.smem<3x8x64xi8>
// CHECK: %[[VSF:.*]] = flamia.smem.alloc : !flamia.smem<3x8x64xi8>
// CHECK: %[[Q16:.*]] = flamia.smem.alloc : !flamia.smem<1x128x128xbf16>
// CHECK: %[[K16:.*]] = flamia.smem.alloc : !flamia.smem<1x128x128xbf16>
// CHECK: %[[V16:.*]] = flamia.smem.alloc : !flamia.smem<1x128x128xbf16>
// Completion of MMAs (commits) frees Q, K/V and the safe stage (1 arrival);
// S: one commit fills it, 128 softmax threads free it; P: 128 threads fill
// it, the commit after P V frees it.
// CHECK: %[[QP:.*]] = flamia.pipeline.create consumers 1 : !flamia.pipeline<1>
// CHECK: %[[KVP:.*]] = flamia.pipeline.create consumers 1 : !flamia.pipeline<3>
// CHECK: %[[SAFEP:.*]] = flamia.pipeline.create consumers 1 : !flamia.pipeline<1>
// CHECK: %[[SP:.*]] = flamia.pipeline.create consumers 128 : !flamia.pipeline<2>
// CHECK: %[[PP:.*]] = flamia.pipeline.create consumers 1 producers 128 : !flamia.pipeline<1>
// CHECK: flamia.queue.create %arg13, %arg12 receivers 129
// CHECK: %[[TMEM:.*]] = flamia.tmem.alloc columns 512 by_warpgroup 2

// Producer: Q, its scale tile (slot (doc_block_base + 4 q_tile) * 8 + q_head)
// and the bf16 Q; per key tile either the bf16 K/V or the E4M3 K/V with
// their scale tiles (slot (doc_block_base + 4 kt) * 2 + kv_head).
// CHECK: flamia.role "producer" warpgroups[0, 1) registers 40 single_thread
// CHECK: flamia.pipeline.expect %[[QP]][%{{.*}}] bytes 49664
// CHECK: flamia.tma.load %arg0[%q_start, %{{.*}}] -> %[[Q8]]
// CHECK: %[[QT4:.*]] = arith.muli %q_tile, %c4
// CHECK: %[[QB:.*]] = arith.addi %doc_block_base, %[[QT4]]
// CHECK: %[[QS:.*]] = arith.muli %[[QB]], %c8
// CHECK: %[[QSLOT:.*]] = arith.addi %[[QS]], %q_head
// CHECK: flamia.bulk.load %arg1[%[[QSLOT]]] -> %[[QSF]][%{{.*}}] on %[[QP]]
// CHECK: flamia.tma.load %arg6[%q_start, %{{.*}}] -> %[[Q16]]
// CHECK: flamia.pipeline.acquire producer %[[SAFEP]]
// CHECK: flamia.pipeline.expect %[[SAFEP]][%{{.*}}] bytes 65536
// CHECK: flamia.tma.load %arg7{{.*}} -> %[[K16]]
// CHECK: flamia.tma.load %arg8{{.*}} -> %[[V16]]
// CHECK: } else {
// CHECK: flamia.pipeline.acquire producer %[[KVP]]
// CHECK: flamia.pipeline.expect %[[KVP]][%{{.*}}] bytes 33792
// CHECK: flamia.tma.load %arg2{{.*}} -> %[[K8]]
// CHECK: flamia.tma.load %arg4{{.*}} -> %[[V8]]
// CHECK: flamia.bulk.load %arg3[%[[KSLOT:.*]]] -> %[[KSF]]
// CHECK: flamia.bulk.load %arg5[%[[KSLOT]]] -> %[[VSF]]

// MMA issuer: Q's scale factors to TMEM, S_0, then per tile S_{j+1} before
// P_j V_j; K scale factors alternate with the S buffer.
// CHECK: flamia.role "mma" warpgroups[1, 2) registers 104 single_thread
// CHECK: %[[SFP:.*]] = arith.addi %[[TMEM]], %c468
// CHECK: flamia.pipeline.acquire consumer %[[QP]]
// CHECK: %[[SFQ:.*]] = arith.addi %[[TMEM]], %c448
// CHECK: flamia.umma.scales %[[QSF]][%{{.*}}] -> %[[TMEM]][448]
// CHECK: %[[SBUF:.*]] = flamia.pipeline.acquire producer %[[SP]]
// CHECK: %[[SOFF:.*]] = arith.muli %[[SBUF]], %c128
// CHECK: %[[SADDR:.*]] = arith.addi %[[TMEM]], %[[SOFF]]
// CHECK: flamia.umma %[[SADDR]][0] a %[[Q16]][%{{.*}}] b %[[K16]][%{{.*}}] accumulate %false :
// CHECK: } else {
// CHECK: %[[ST:.*]] = flamia.pipeline.acquire consumer %[[KVP]]
// CHECK: %[[SFKOFF:.*]] = arith.muli %[[SBUF]], %c4
// CHECK: %[[SFKCOL:.*]] = arith.addi %c452{{.*}}, %[[SFKOFF]]
// CHECK: %[[SFK:.*]] = arith.addi %[[TMEM]], %[[SFKCOL]]
// CHECK: flamia.umma.scales %[[KSF]][%[[ST]]] -> %[[SFK]][0]
// CHECK: flamia.umma %[[SADDR]][0] a %[[Q8]][%{{.*}}] b %[[K8]][%[[ST]]] accumulate %false scales(%[[SFQ]], %[[SFK]])
// CHECK: flamia.umma.commit full %[[SP]][%[[SBUF]]]
// CHECK: scf.for
// CHECK: flamia.umma.commit full %[[SP]]
// After the item's last S has been issued, Q is freed by its completion.
// CHECK: } else {
// CHECK-NEXT: flamia.umma.commit empty %[[QP]]
// P V reads only the keys inside the document (L2 with NaN/Inf in the next
// document): on a tile past the document's end, the V rows past it up to
// the end of their MMA K step (16 keys bf16, 32 E4M3) are zeroed, and the
// K steps wholly past it read that step's V rows and scales (k_valid).
// CHECK: flamia.pipeline.acquire consumer %[[PP]]
// CHECK: %[[KEYBASE:.*]] = arith.muli %{{.*}}, %c128
// CHECK: %[[KEYS:.*]] = arith.subi %{{.*}}, %[[KEYBASE]]
// CHECK: %[[PART16:.*]] = arith.cmpi slt, %[[KEYS]], %c128
// CHECK: scf.if %[[PART16]] {
// CHECK: %[[END16:.*]] = arith.muli %{{.*}}, %c16
// CHECK-NEXT: flamia.smem.zero_rows %[[V16]][%{{.*}}] from %[[KEYS]] to %[[END16]]
// CHECK: flamia.umma %[[TMEM]][256] b %[[V16]][%{{.*}}] accumulate %{{.*}} k_valid %[[KEYS]] {a_column = 384 : i64, a_type = bf16, b_transposed}
// CHECK-NEXT: flamia.umma.commit empty %[[PP]]
// CHECK-NEXT: flamia.umma.commit empty %[[SAFEP]]
// CHECK: flamia.umma.scales %[[VSF]]
// CHECK: scf.if %{{.*}} {
// CHECK: %[[END32:.*]] = arith.muli %{{.*}}, %c32
// CHECK-NEXT: flamia.smem.zero_rows %[[V8]][%{{.*}}] from %[[KEYS]] to %[[END32]]
// CHECK: flamia.umma %[[TMEM]][256] b %[[V8]][%{{.*}}] accumulate %{{.*}} scales(%[[SFP]], %{{.*}}) k_valid %[[KEYS]] {a_column = 384 : i64, a_type = f8E4M3FN, b_transposed}
// CHECK-NEXT: flamia.umma.commit empty %[[PP]]
// CHECK-NEXT: flamia.umma.commit empty %[[KVP]]

// Softmax: one row per thread; S from TMEM, P back to TMEM (bf16 on the
// safe block, E4M3 codes otherwise), O rescaled 32 columns at a time.
// CHECK: flamia.role "softmax" warpgroups[2, 3) registers 240
// CHECK: flamia.tmem.fill %[[TMEM]][468] columns 4 value 2139062143
// CHECK: flamia.pipeline.acquire consumer %[[SP]]
// CHECK: flamia.tmem.load %{{.*}}[0] : !flamia.frag<128x128xf32>
// CHECK-NEXT: flamia.pipeline.release %[[SP]]
// CHECK: flamia.frag.mask %{{.*}} {causal} : !flamia.frag<128x128xf32>
// CHECK: flamia.softmax.update %{{.*}} {p_scale = 8 : i64} : !flamia.frag<128x128xf32>, !flamia.rows<128 x f32>
// CHECK: flamia.frag.quantize %p quantized %false {{.*}}prescaled} {{.*}} -> !flamia.frag<128x128xbf16>
// CHECK: flamia.pipeline.acquire producer %[[PP]]
// CHECK: flamia.tmem.store %{{.*}}, %[[TMEM]][384] : !flamia.frag<128x128xbf16>
// CHECK: flamia.frag.quantize %p quantized %true {{.*}} -> !flamia.frag<128x128xf8E4M3FN>
// CHECK: flamia.pipeline.acquire producer %[[PP]]
// CHECK: flamia.tmem.store %{{.*}}, %[[TMEM]][384] : !flamia.frag<128x128xf8E4M3FN>
// CHECK-COUNT-4: flamia.tmem.store %{{.*}}, %[[TMEM]][{{256|288|320|352}}] : !flamia.frag<128x32xf32>
// CHECK: flamia.pipeline.arrive %[[PP]]
// CHECK: flamia.pipeline.acquire producer %[[PP]]
// CHECK: %[[O:.*]] = flamia.tmem.load %[[TMEM]][256] : !flamia.frag<128x128xf32>
// CHECK: flamia.attn.store %[[O]] {{.*}} {fixed_scale = 8 : i64, sum_prescaled}
// CHECK: flamia.tmem.dealloc %[[TMEM]] columns 512
}

// -----

// D = 64, not causal, no safe block: a 4-stage E4M3 ring, no bf16 buffers or
// safe pipeline, masking only at the document end, every P in E4M3.
// CHECK-LABEL: flamia.kernel @attn_d64_attention_fwd
// CHECK-SAME: stages = 4 : i64
// CHECK: flamia.smem.alloc : !flamia.smem<1x128x64xf8E4M3FN>
// CHECK: flamia.smem.alloc : !flamia.smem<4x128x64xf8E4M3FN>
// CHECK-NOT: xbf16>
// CHECK: flamia.pipeline.create consumers 1 : !flamia.pipeline<4>
// CHECK-NEXT: flamia.pipeline.create consumers 128 : !flamia.pipeline<2>
// CHECK: flamia.umma %{{.*}}[0] a %{{.*}} : (i32, !flamia.smem<1x128x64xf8E4M3FN>, i32, !flamia.smem<4x128x64xf8E4M3FN>, i32, i1, i32, i32) -> ()
// CHECK: flamia.frag.mask %{{.*}} limit %{{[^{]*}} : !flamia.frag<128x128xf32>
// CHECK-NOT: quantized %false
// CHECK: flamia.frag.quantize %p quantized %true
// CHECK-COUNT-2: flamia.tmem.store %{{.*}} : !flamia.frag<128x32xf32>
// CHECK-NOT: flamia.tmem.store %{{.*}} : !flamia.frag<128x32xf32>
// CHECK: flamia.pipeline.arrive
module {
  flamia.kernel @attn_d64_attention_fwd(%arg0: !flamia.global<?x8x64xf8E4M3FN> {flamia.param = "q_pt"}, %arg1: !flamia.global<?x8x512xi8> {flamia.param = "q_sf"}, %arg2: !flamia.global<?x2x64xf8E4M3FN> {flamia.param = "k_tb"}, %arg3: !flamia.global<?x2x512xi8> {flamia.param = "k_sf"}, %arg4: !flamia.global<?x2x64xf8E4M3FN> {flamia.param = "v_tb"}, %arg5: !flamia.global<?x2x512xi8> {flamia.param = "v_sf"}, %arg6: !flamia.global<?x8x64xbf16> {flamia.param = "o"}, %arg7: !flamia.global<8x?xf32> {flamia.param = "lse"}, %arg8: !flamia.global<?x8xi32> {flamia.param = "items"}, %arg9: i32 {flamia.param = "num_items"}, %arg10: !flamia.global<1xi32> {flamia.param = "counter"}, %arg11: f32 {flamia.param = "softmax_scale_log2"}, %arg12: i32 {flamia.param = "T"}) attributes {launch = #flamia.launch<persistent>, schedule = {block_m = 128 : i64, block_n = 128 : i64, cost_model = "sm_100a", safe_block = 128 : i64}, target = #flamia.target<sm_100a>, threads = 128 : i64} {
    %0 = flamia.queue.create %arg10, %arg9 : !flamia.global<1xi32>
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %1:2 = scf.while (%arg13 = %c0_i32) : (i32) -> (i32, i32) {
      %2 = flamia.queue.next fetch %0[%arg13]
      %3 = arith.cmpi slt, %2, %arg9 : i32
      scf.condition(%3) %arg13, %2 : i32, i32
    } do {
    ^bb0(%arg13: i32, %arg14: i32):
      flamia.attention_tile %arg8[%arg14] q(%arg0, %arg1) k(%arg2, %arg3) v(%arg4, %arg5) safe() to %arg6, %arg7 scale %arg11 tokens %arg12 {block_m = 128 : i64, block_n = 128 : i64, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8>} : (!flamia.global<?x8xi32>, i32, !flamia.global<?x8x64xf8E4M3FN>, !flamia.global<?x8x512xi8>, !flamia.global<?x2x64xf8E4M3FN>, !flamia.global<?x2x512xi8>, !flamia.global<?x2x64xf8E4M3FN>, !flamia.global<?x2x512xi8>, !flamia.global<?x8x64xbf16>, !flamia.global<8x?xf32>, f32, i32) -> ()
      %2 = arith.addi %arg13, %c1_i32 : i32
      scf.yield %2 : i32
    }
    flamia.return
  }
}

// p-in-smem: the E4M3 P goes through a 16 KiB shared-memory tile (one K/V
// stage fewer at D = 128 with the safe block), P V reads A from it with a
// descriptor; the bf16 safe-block P stays in tensor memory.
// PSMEM-LABEL: flamia.kernel @attn_attention_fwd
// PSMEM-SAME: stages = 2 : i64
// PSMEM: flamia.smem.alloc : !flamia.smem<2x128x128xf8E4M3FN>
// PSMEM-NEXT: %[[V8:.*]] = flamia.smem.alloc : !flamia.smem<2x128x128xf8E4M3FN>
// PSMEM: %[[P8:.*]] = flamia.smem.alloc : !flamia.smem<1x128x128xf8E4M3FN>
// PSMEM: flamia.umma %{{.*}}[256] b %{{.*}} {a_column = 384 : i64, a_type = bf16, b_transposed}
// PSMEM: flamia.umma %{{.*}}[256] a %[[P8]][%{{.*}}] b %[[V8]][%{{.*}}] accumulate %{{.*}} scales(%{{.*}}, %{{.*}}) k_valid %{{.*}} {b_transposed}
// PSMEM: flamia.tmem.store %{{.*}}[384] : !flamia.frag<128x128xbf16>
// PSMEM: flamia.smem.store %{{.*}}, %[[P8]][%{{.*}}] : !flamia.frag<128x128xf8E4M3FN>, !flamia.smem<1x128x128xf8E4M3FN>
// PSMEM-NOT: flamia.tmem.store %{{.*}} : !flamia.frag<128x128xf8E4M3FN>
// PSMEM-LABEL: flamia.kernel @attn_d64_attention_fwd
// PSMEM-SAME: stages = 4 : i64
// PSMEM: flamia.smem.store

// -----

// Recipe nvfp4-mixed (GQA 4 query / 2 key-value heads, D = 128, causal): Q and
// K per token as E2M1 payloads with a 1024-byte slot of two unsigned-E4M3
// scale tiles each.
module {
  flamia.kernel @flamia_attention_fwd(%arg0: !flamia.global<?x4x128xf4E2M1FN> {flamia.param = "q_pt"}, %arg1: !flamia.global<?x4x1024xi8> {flamia.param = "q_sf"}, %arg2: !flamia.global<?x2x128xf4E2M1FN> {flamia.param = "k_pt"}, %arg3: !flamia.global<?x2x1024xi8> {flamia.param = "k_sf"}, %arg4: !flamia.global<?x2x128xf8E4M3FN> {flamia.param = "v_tb"}, %arg5: !flamia.global<?x2x512xi8> {flamia.param = "v_sf"}, %arg6: !flamia.global<?x4x128xbf16> {flamia.param = "q"}, %arg7: !flamia.global<?x2x128xbf16> {flamia.param = "k"}, %arg8: !flamia.global<?x2x128xbf16> {flamia.param = "v"}, %arg9: !flamia.global<?x4x128xbf16> {flamia.param = "o"}, %arg10: !flamia.global<4x?xf32> {flamia.param = "lse"}, %arg11: !flamia.global<?x8xi32> {flamia.param = "items"}, %arg12: i32 {flamia.param = "num_items"}, %arg13: !flamia.global<1xi32> {flamia.param = "counter"}, %arg14: f32 {flamia.param = "softmax_scale_log2"}, %arg15: i32 {flamia.param = "T"}) attributes {flamia.phase = "forward", launch = #flamia.launch<persistent>, schedule = {block_m = 128 : i64, block_n = 128 : i64, cost_model = "sm_100a", order = "lpt", safe_block = 128 : i64}, target = #flamia.target<sm_100a>, threads = 128 : i64} {
    %0 = flamia.queue.create %arg13, %arg12 : !flamia.global<1xi32>
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %1:2 = scf.while (%arg16 = %c0_i32) : (i32) -> (i32, i32) {
      %2 = flamia.queue.next fetch %0[%arg16]
      %3 = arith.cmpi slt, %2, %arg12 : i32
      scf.condition(%3) %arg16, %2 : i32, i32
    } do {
    ^bb0(%arg16: i32, %arg17: i32):
      flamia.attention_tile %arg11[%arg17] q(%arg0, %arg1) k(%arg2, %arg3) v(%arg4, %arg5) safe(%arg6, %arg7, %arg8) to %arg9, %arg10 scale %arg14 tokens %arg15 {block_m = 128 : i64, block_n = 128 : i64, causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<nvfp4_mixed, safe_block = 128>} : (!flamia.global<?x8xi32>, i32, !flamia.global<?x4x128xf4E2M1FN>, !flamia.global<?x4x1024xi8>, !flamia.global<?x2x128xf4E2M1FN>, !flamia.global<?x2x1024xi8>, !flamia.global<?x2x128xf8E4M3FN>, !flamia.global<?x2x512xi8>, !flamia.global<?x4x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x4x128xbf16>, !flamia.global<4x?xf32>, f32, i32) -> ()
      %2 = arith.addi %arg16, %c1_i32 : i32
      scf.yield %2 : i32
    }
    flamia.return
  }
}
// Half-size E2M1 tiles, so 4 K/V stages at D = 128 too; each Q and K slot
// two 512-byte tiles, copied part by part into consecutive 4-column chunks
// (Q 448 and 452, K from 456 + 8 per S buffer); S = Q K^T on the E2M1 tiles
// with both chunks' base addresses; V's scales after K's (472 + 4 per
// buffer), P's fixed scale at 480.
// CHECK-LABEL: flamia.kernel @flamia_attention_fwd
// CHECK-SAME: stages = 4 : i64
// CHECK: %[[Q4:.*]] = flamia.smem.alloc : !flamia.smem<1x128x128xf4E2M1FN>
// CHECK-NEXT: %[[QSF:.*]] = flamia.smem.alloc : !flamia.smem<1x16x64xi8>
// CHECK-NEXT: %[[K4:.*]] = flamia.smem.alloc : !flamia.smem<4x128x128xf4E2M1FN>
// CHECK-NEXT: %[[V8:.*]] = flamia.smem.alloc : !flamia.smem<4x128x128xf8E4M3FN>
// CHECK-NEXT: %[[KSF:.*]] = flamia.smem.alloc : !flamia.smem<4x16x64xi8>
// CHECK-NEXT: %[[VSF:.*]] = flamia.smem.alloc : !flamia.smem<4x8x64xi8>
// Q: 8 KiB of E2M1 + 1 KiB of scale tiles + 32 KiB of bf16; K/V: 8 + 16 KiB
// + 1 KiB + 512 bytes.
// CHECK: flamia.pipeline.expect %{{.*}} bytes 41984
// CHECK: flamia.tma.load %arg0[%q_start, %{{.*}}] -> %[[Q4]]
// CHECK: flamia.bulk.load %arg1[%{{.*}}] -> %[[QSF]]
// CHECK: flamia.pipeline.expect %{{.*}} bytes 26112
// CHECK: flamia.umma.scales %[[QSF]][%{{.*}}] -> %[[TM:.*]][448] :
// CHECK-NEXT: flamia.umma.scales %[[QSF]][%{{.*}}] -> %[[TM]][452] {part = 1 : i64} :
// CHECK: %[[C456:.*]] = arith.constant 456 : i32
// CHECK: %[[C8:.*]] = arith.constant 8 : i32
// CHECK: flamia.umma.scales %[[KSF]][%{{.*}}] -> %[[SFK:.*]][0] :
// CHECK-NEXT: flamia.umma.scales %[[KSF]][%{{.*}}] -> %[[SFK]][4] {part = 1 : i64} :
// CHECK: flamia.umma %{{.*}}[0] a %[[Q4]][%{{.*}}] b %[[K4]][%{{.*}}] accumulate %false scales(%{{.*}}, %[[SFK]]) : (i32, !flamia.smem<1x128x128xf4E2M1FN>, i32, !flamia.smem<4x128x128xf4E2M1FN>, i32, i1, i32, i32) -> ()
// CHECK: arith.constant 472 : i32
// CHECK: flamia.umma.scales %[[VSF]]
// CHECK: flamia.umma %[[TM]][256] b %[[V8]][%{{.*}}] {{.*}} {a_column = 384 : i64, a_type = f8E4M3FN, b_transposed}
// CHECK: flamia.tmem.fill %{{.*}}[480] columns 4 value 2139062143
