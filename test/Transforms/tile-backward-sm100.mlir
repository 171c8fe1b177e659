// RUN: flamia-opt %s --flamia-tile=target=sm_100a | FileCheck %s
// RUN: sed 's/x64x/x128x/g' %s | flamia-opt --flamia-tile=target=sm_100a | FileCheck %s --check-prefix=D128
// The backward's persistent kernels as flamia-varlen-schedule{target=sm_100a}
// writes them (a training step, GQA 4 query / 2 kv heads, D = 64; the second
// RUN line makes it D = 128), expanded into the sm_100a programs of
// lib/Transforms/TileAttentionBackwardSm100.cpp: a one-thread TMA producer,
// a one-thread tcgen05 MMA issuer and a two-warpgroup gradient role, with
// S/dP and dQ (or S^T/dP^T, dV and dK) in tensor memory.

flamia.kernel @train_attention_dq(%arg0: !flamia.global<?x4x64xf8E4M3FN> {flamia.param = "q_pt"}, %arg1: !flamia.global<?x4x512xi8> {flamia.param = "q_sf"}, %arg2: !flamia.global<?x2x64xf8E4M3FN> {flamia.param = "k_tb"}, %arg3: !flamia.global<?x2x512xi8> {flamia.param = "k_sf"}, %arg4: !flamia.global<?x2x512xi8> {flamia.param = "k_sf_channels"}, %arg5: !flamia.global<?x2x64xf8E4M3FN> {flamia.param = "v_tb"}, %arg6: !flamia.global<?x2x512xi8> {flamia.param = "v_sf_tokens"}, %arg7: !flamia.global<?x4x64xf8E4M3FN> {flamia.param = "do_tb"}, %arg8: !flamia.global<?x4x512xi8> {flamia.param = "do_sf"}, %arg9: !flamia.global<?x4x64xbf16> {flamia.param = "q"}, %arg10: !flamia.global<?x2x64xbf16> {flamia.param = "k"}, %arg11: !flamia.global<?x2x64xbf16> {flamia.param = "v"}, %arg12: !flamia.global<?x4x64xbf16> {flamia.param = "grad_o"}, %arg13: !flamia.global<4x?xf32> {flamia.param = "lse"}, %arg14: !flamia.global<4x?xf32> {flamia.param = "delta"}, %arg15: !flamia.global<?x4x64xbf16> {flamia.param = "dq"}, %arg16: !flamia.global<?x8xi32> {flamia.param = "items"}, %arg17: i32 {flamia.param = "num_items"}, %arg18: !flamia.global<1xi32> {flamia.param = "counter"}, %arg19: f32 {flamia.param = "softmax_scale_log2"}, %arg20: f32 {flamia.param = "softmax_scale"}, %arg21: i32 {flamia.param = "T"}) attributes {flamia.phase = "backward", launch = #flamia.launch<persistent>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  %0 = flamia.queue.create %arg18, %arg17 : !flamia.global<1xi32>
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %1:2 = scf.while (%arg22 = %c0_i32) : (i32) -> (i32, i32) {
    %2 = flamia.queue.next fetch %0[%arg22]
    %3 = arith.cmpi slt, %2, %arg17 : i32
    scf.condition(%3) %arg22, %2 : i32, i32
  } do {
  ^bb0(%arg22: i32, %arg23: i32):
    flamia.attention_dq_tile %arg16[%arg23] q(%arg0, %arg1) k(%arg2, %arg3, %arg4) v(%arg5, %arg6) grad_o(%arg7, %arg8) safe(%arg9, %arg10, %arg11, %arg12) lse %arg13 delta %arg14 to %arg15 scale %arg19, %arg20 tokens %arg21 {block_m = 128 : i64, block_n = 128 : i64, causal, recipe = #flamia.recipe<mxfp8, safe_block = 128>} : (!flamia.global<?x8xi32>, i32, !flamia.global<?x4x64xf8E4M3FN>, !flamia.global<?x4x512xi8>, !flamia.global<?x2x64xf8E4M3FN>, !flamia.global<?x2x512xi8>, !flamia.global<?x2x512xi8>, !flamia.global<?x2x64xf8E4M3FN>, !flamia.global<?x2x512xi8>, !flamia.global<?x4x64xf8E4M3FN>, !flamia.global<?x4x512xi8>, !flamia.global<?x4x64xbf16>, !flamia.global<?x2x64xbf16>, !flamia.global<?x2x64xbf16>, !flamia.global<?x4x64xbf16>, !flamia.global<4x?xf32>, !flamia.global<4x?xf32>, !flamia.global<?x4x64xbf16>, f32, f32, i32) -> ()
    %2 = arith.addi %arg22, %c1_i32 : i32
    scf.yield %2 : i32
  }
  flamia.return
}
flamia.kernel @train_attention_dkdv(%arg0: !flamia.global<?x4x64xf8E4M3FN> {flamia.param = "q_pt"}, %arg1: !flamia.global<?x4x512xi8> {flamia.param = "q_sf"}, %arg2: !flamia.global<?x2x64xf8E4M3FN> {flamia.param = "k_tb"}, %arg3: !flamia.global<?x2x512xi8> {flamia.param = "k_sf"}, %arg4: !flamia.global<?x2x64xf8E4M3FN> {flamia.param = "v_tb"}, %arg5: !flamia.global<?x2x512xi8> {flamia.param = "v_sf_tokens"}, %arg6: !flamia.global<?x4x64xf8E4M3FN> {flamia.param = "do_tb"}, %arg7: !flamia.global<?x4x512xi8> {flamia.param = "do_sf"}, %arg8: !flamia.global<?x4x512xi8> {flamia.param = "do_sf_channels"}, %arg9: !flamia.global<?x4x64xf8E4M3FN> {flamia.param = "q_tb"}, %arg10: !flamia.global<?x4x512xi8> {flamia.param = "q_tb_sf_channels"}, %arg11: !flamia.global<?x4x64xbf16> {flamia.param = "q"}, %arg12: !flamia.global<?x2x64xbf16> {flamia.param = "k"}, %arg13: !flamia.global<?x2x64xbf16> {flamia.param = "v"}, %arg14: !flamia.global<?x4x64xbf16> {flamia.param = "grad_o"}, %arg15: !flamia.global<4x?xf32> {flamia.param = "lse"}, %arg16: !flamia.global<4x?xf32> {flamia.param = "delta"}, %arg17: !flamia.global<?x2x64xbf16> {flamia.param = "dk"}, %arg18: !flamia.global<?x2x64xbf16> {flamia.param = "dv"}, %arg19: !flamia.global<?x8xi32> {flamia.param = "kv_items"}, %arg20: i32 {flamia.param = "num_kv_items"}, %arg21: !flamia.global<1xi32> {flamia.param = "counter"}, %arg22: f32 {flamia.param = "softmax_scale_log2"}, %arg23: f32 {flamia.param = "softmax_scale"}, %arg24: i32 {flamia.param = "T"}) attributes {flamia.phase = "backward", launch = #flamia.launch<persistent>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  %0 = flamia.queue.create %arg21, %arg20 : !flamia.global<1xi32>
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %1:2 = scf.while (%arg25 = %c0_i32) : (i32) -> (i32, i32) {
    %2 = flamia.queue.next fetch %0[%arg25]
    %3 = arith.cmpi slt, %2, %arg20 : i32
    scf.condition(%3) %arg25, %2 : i32, i32
  } do {
  ^bb0(%arg25: i32, %arg26: i32):
    flamia.attention_dkdv_tile %arg19[%arg26] q(%arg0, %arg1) k(%arg2, %arg3) v(%arg4, %arg5) grad_o(%arg6, %arg7, %arg8) q_tb(%arg9, %arg10) safe(%arg11, %arg12, %arg13, %arg14) lse %arg15 delta %arg16 to %arg17, %arg18 scale %arg22, %arg23 tokens %arg24 {block_m = 64 : i64, block_n = 128 : i64, causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>} : (!flamia.global<?x8xi32>, i32, !flamia.global<?x4x64xf8E4M3FN>, !flamia.global<?x4x512xi8>, !flamia.global<?x2x64xf8E4M3FN>, !flamia.global<?x2x512xi8>, !flamia.global<?x2x64xf8E4M3FN>, !flamia.global<?x2x512xi8>, !flamia.global<?x4x64xf8E4M3FN>, !flamia.global<?x4x512xi8>, !flamia.global<?x4x512xi8>, !flamia.global<?x4x64xf8E4M3FN>, !flamia.global<?x4x512xi8>, !flamia.global<?x4x64xbf16>, !flamia.global<?x2x64xbf16>, !flamia.global<?x2x64xbf16>, !flamia.global<?x4x64xbf16>, !flamia.global<4x?xf32>, !flamia.global<4x?xf32>, !flamia.global<?x2x64xbf16>, !flamia.global<?x2x64xbf16>, f32, f32, i32) -> ()
    %2 = arith.addi %arg25, %c1_i32 : i32
    scf.yield %2 : i32
  }
  flamia.return
}

// dQ: Q and dO (E4M3 payloads + scale-factor tiles, and the bf16 safe
// copies) once per item; a K ring (3 stages at D = 64, 2 at D = 128) with K's
// two scale orientations, a V ring, the safe block's bf16 K and V.
// CHECK-LABEL: flamia.kernel @train_attention_dq(
// CHECK-SAME: threads = 512 : i64
// CHECK: %[[Q:.*]] = flamia.smem.alloc : !flamia.smem<1x128x64xf8E4M3FN>
// CHECK-NEXT: %[[QSF:.*]] = flamia.smem.alloc : !flamia.smem<1x8x64xi8>
// CHECK-NEXT: %[[DO:.*]] = flamia.smem.alloc : !flamia.smem<1x128x64xf8E4M3FN>
// CHECK-NEXT: %[[DOSF:.*]] = flamia.smem.alloc : !flamia.smem<1x8x64xi8>
// CHECK-NEXT: %[[QS:.*]] = flamia.smem.alloc : !flamia.smem<1x128x64xbf16>
// CHECK-NEXT: %[[DOS:.*]] = flamia.smem.alloc : !flamia.smem<1x128x64xbf16>
// CHECK-NEXT: %[[K:.*]] = flamia.smem.alloc : !flamia.smem<3x128x64xf8E4M3FN>
// CHECK-NEXT: %[[KSF:.*]] = flamia.smem.alloc : !flamia.smem<3x8x64xi8>
// CHECK-NEXT: %[[KSFC:.*]] = flamia.smem.alloc : !flamia.smem<3x8x64xi8>
// CHECK-NEXT: %[[V:.*]] = flamia.smem.alloc : !flamia.smem<3x128x64xf8E4M3FN>
// CHECK-NEXT: %[[VSF:.*]] = flamia.smem.alloc : !flamia.smem<3x8x64xi8>
// CHECK-NEXT: %[[KS:.*]] = flamia.smem.alloc : !flamia.smem<1x128x64xbf16>
// CHECK-NEXT: %[[VS:.*]] = flamia.smem.alloc : !flamia.smem<1x128x64xbf16>
// dS's scale-factor tile, written by the gradient role.
// CHECK-NEXT: %[[DSSF:.*]] = flamia.smem.alloc : !flamia.smem<1x8x64xi8>
// CHECK: %[[SFULL:.*]] = flamia.pipeline.create consumers 256 : !flamia.pipeline<1>
// CHECK-NEXT: %[[DSREADY:.*]] = flamia.pipeline.create consumers 1 producers 256 : !flamia.pipeline<1>
// CHECK-NEXT: %[[DQFULL:.*]] = flamia.pipeline.create consumers 256 : !flamia.pipeline<1>
// CHECK: %[[TM:.*]] = flamia.tmem.alloc columns 512 by_warpgroup 2
// CHECK: flamia.role "producer" warpgroups[0, 1) registers 40 single_thread {
// CHECK: flamia.tma.load %arg0[%q_start, %{{.*}}] -> %[[Q]]
// CHECK-NEXT: flamia.bulk.load %arg1[%{{.*}}] -> %[[QSF]]
// CHECK-NEXT: flamia.tma.load %arg7[%q_start, %{{.*}}] -> %[[DO]]
// CHECK-NEXT: flamia.bulk.load %arg8[%{{.*}}] -> %[[DOSF]]
// CHECK: flamia.tma.load %arg10[{{.*}}] -> %[[KS]]
// CHECK-NEXT: flamia.tma.load %arg11[{{.*}}] -> %[[VS]]
// CHECK: flamia.tma.load %arg2[{{.*}}] -> %[[K]]
// CHECK-NEXT: flamia.bulk.load %arg3[{{.*}}] -> %[[KSF]]
// CHECK-NEXT: flamia.bulk.load %arg4[{{.*}}] -> %[[KSFC]]
// CHECK: flamia.tma.load %arg5[{{.*}}] -> %[[V]]
// CHECK-NEXT: flamia.bulk.load %arg6[{{.*}}] -> %[[VSF]]
// Tensor-memory column plan: S at 0, dP at 128, dQ at 256, dS at 384, the
// scale factors from 448 (Q 448, dO 452, K 456, V 460, dS 464, K^T 468).
// CHECK: flamia.role "mma" warpgroups[1, 2) registers 168 single_thread {
// CHECK: flamia.umma.scales %[[QSF]][%{{.*}}] -> %[[TM]][448]
// CHECK: flamia.umma.scales %[[DOSF]][%{{.*}}] -> %[[TM]][452]
// The safe block in bf16 (kind::f16): S = Q K^T, dP = dO V^T.
// CHECK: flamia.umma %[[TM]][0] a %[[QS]][%{{.*}}] b %[[KS]][%{{.*}}] accumulate %false :
// CHECK: flamia.umma %[[TM]][128] a %[[DOS]][%{{.*}}] b %[[VS]][%{{.*}}] accumulate %{{.*}} :
// Off it block-scaled E4M3 with the forward's operands.
// CHECK: flamia.umma.scales %[[KSF]][%{{.*}}] -> %[[TM]][456]
// CHECK: flamia.umma.scales %[[VSF]][%{{.*}}] -> %[[TM]][460]
// CHECK: flamia.umma %[[TM]][0] a %[[Q]][%{{.*}}] b %[[K]][%{{.*}}] accumulate %false scales(
// CHECK: flamia.umma %[[TM]][128] a %[[DO]][%{{.*}}] b %[[V]][%{{.*}}] accumulate %{{.*}} scales(
// The V stage goes back as soon as dP is done; K waits for dQ = dS K.
// CHECK: flamia.umma.commit empty %{{.*}} : !flamia.pipeline<3>
// CHECK: flamia.umma.commit full %[[SFULL]]
// The next key tile's S and dP are issued before this one's dQ (the
// gradient role's dS is in flight meanwhile).
// CHECK: scf.for
// CHECK: flamia.umma %[[TM]][0] a %[[QS]]
// CHECK: flamia.umma %[[TM]][0] a %[[Q]]
// CHECK: flamia.umma.commit full %[[SFULL]]
// CHECK: flamia.pipeline.acquire consumer %[[DSREADY]]
// dQ += dS K on the safe block: dS in bf16 from tensor memory, K's bf16
// rows past the document end zeroed first (L2 with NaN in the next
// document), K steps past the end skipped (k_valid).
// CHECK: flamia.smem.zero_rows %[[KS]][%{{.*}}] from %[[VALID:.*]] to
// CHECK: flamia.umma %[[TM]][256] b %[[KS]][%{{.*}}] accumulate %{{.*}} k_valid %[[VALID]] {a_column = 384 : i64, a_type = bf16, b_transposed}
// CHECK: flamia.umma.commit empty %[[DSREADY]]
// Off it: dS's and K's channel-row scales, then the block-scaled MMA with
// K (MN-major) from the ring.
// CHECK: flamia.umma.scales %[[DSSF]][%{{.*}}] -> %[[TM]][464]
// CHECK: flamia.umma.scales %[[KSFC]][%{{.*}}] -> %[[TM]][468]
// CHECK: flamia.smem.zero_rows %[[K]][%{{.*}}] from %[[VALID8:.*]] to
// CHECK: flamia.umma %[[TM]][256] b %[[K]][%{{.*}}] accumulate %{{.*}} scales(%{{.*}}, %{{.*}}) k_valid %[[VALID8]] {a_column = 384 : i64, a_type = f8E4M3FN, b_transposed}
// CHECK: flamia.umma.commit empty %[[DSREADY]]
// CHECK: flamia.umma.commit empty %{{.*}} : !flamia.pipeline<3>
// CHECK: flamia.umma.commit full %[[DQFULL]]
// The gradient role: S and dP out of tensor memory (64 columns per
// warpgroup), the mask, P and dS, dS quantized along the keys (dQ's
// contraction axis) into E4M3 codes and the scale tile, or kept in bf16 on
// the safe block.
// CHECK: flamia.role "grad" warpgroups[2, 4) registers 152 {
// CHECK: flamia.pipeline.acquire consumer %[[SFULL]]
// CHECK-NEXT: flamia.tmem.load %{{.*}}[0] : !flamia.frag<128x64xf32>
// CHECK-NEXT: flamia.tmem.load %{{.*}}[128] : !flamia.frag<128x64xf32>
// CHECK-NEXT: flamia.pipeline.release %[[SFULL]]
// CHECK: flamia.frag.mask
// CHECK: %p, %[[DS:.*]] = flamia.softmax.grad
// CHECK-NEXT: flamia.pipeline.acquire producer %[[DSREADY]]
// CHECK: flamia.frag.block_quantize %[[DS]] quantized %false : !flamia.frag<128x64xf32> -> !flamia.frag<128x64xbf16>
// CHECK: flamia.tmem.store %{{.*}}[384] : !flamia.frag<128x64xbf16>
// CHECK: flamia.frag.mx_quantize %[[DS]] scales %[[DSSF]][%{{.*}}] k_block %{{.*}} : !flamia.frag<128x64xf32>, !flamia.smem<1x8x64xi8> -> !flamia.frag<128x64xf8E4M3FN>
// CHECK: flamia.tmem.store %{{.*}}[384] : !flamia.frag<128x64xf8E4M3FN>
// CHECK: flamia.pipeline.arrive %[[DSREADY]]
// The epilogue: each warpgroup stores half of dQ's columns, times the
// softmax scale.
// CHECK: flamia.pipeline.acquire consumer %[[DQFULL]]
// CHECK: flamia.tmem.load %{{.*}}[256] : !flamia.frag<128x32xf32>
// CHECK-NEXT: flamia.pipeline.release %[[DQFULL]]
// CHECK: flamia.grad.store %{{.*}} times %arg20 to %arg15 rows(%q_start, %{{.*}}, %q_rows) head %q_head columns
// CHECK: flamia.tmem.dealloc %[[TM]] columns 512

// dK/dV: the key tile's K and V once per item, query-side tiles of 64 rows
// (S^T = K Q^T, dP^T = V dO^T have N = 64) in a 4-stage ring at D = 64.
// CHECK-LABEL: flamia.kernel @train_attention_dkdv(
// CHECK-SAME: threads = 512 : i64
// CHECK: %[[K2:.*]] = flamia.smem.alloc : !flamia.smem<1x128x64xf8E4M3FN>
// CHECK-NEXT: %[[KSF2:.*]] = flamia.smem.alloc : !flamia.smem<1x8x64xi8>
// CHECK-NEXT: %[[V2:.*]] = flamia.smem.alloc : !flamia.smem<1x128x64xf8E4M3FN>
// CHECK-NEXT: %[[VSF2:.*]] = flamia.smem.alloc : !flamia.smem<1x8x64xi8>
// CHECK-NEXT: %[[KS2:.*]] = flamia.smem.alloc : !flamia.smem<1x128x64xbf16>
// CHECK-NEXT: %[[VS2:.*]] = flamia.smem.alloc : !flamia.smem<1x128x64xbf16>
// CHECK-NEXT: %[[Q2:.*]] = flamia.smem.alloc : !flamia.smem<4x64x64xf8E4M3FN>
// CHECK-NEXT: %[[QSF2:.*]] = flamia.smem.alloc : !flamia.smem<4x8x64xi8>
// CHECK-NEXT: %[[DO2:.*]] = flamia.smem.alloc : !flamia.smem<4x64x64xf8E4M3FN>
// CHECK-NEXT: %[[DOSF2:.*]] = flamia.smem.alloc : !flamia.smem<4x8x64xi8>
// CHECK-NEXT: %[[DOSFC2:.*]] = flamia.smem.alloc : !flamia.smem<4x8x64xi8>
// CHECK-NEXT: %[[QTB2:.*]] = flamia.smem.alloc : !flamia.smem<4x64x64xf8E4M3FN>
// CHECK-NEXT: %[[QTBSF2:.*]] = flamia.smem.alloc : !flamia.smem<4x8x64xi8>
// CHECK-NEXT: %[[QS2:.*]] = flamia.smem.alloc : !flamia.smem<2x64x64xbf16>
// CHECK-NEXT: %[[DOS2:.*]] = flamia.smem.alloc : !flamia.smem<2x64x64xbf16>
// CHECK-NEXT: %[[DSSF2:.*]] = flamia.smem.alloc : !flamia.smem<1x8x64xi8>
// CHECK: %[[TM2:.*]] = flamia.tmem.alloc columns 512 by_warpgroup 2
// CHECK: flamia.role "producer" warpgroups[0, 1) registers 40 single_thread {
// CHECK: flamia.tma.load %arg2[%q_start, %{{.*}}] -> %[[K2]]
// CHECK: flamia.tma.load %arg11[{{.*}}] -> %[[QS2]]
// CHECK-NEXT: flamia.tma.load %arg14[{{.*}}] -> %[[DOS2]]
// CHECK: flamia.tma.load %arg0[{{.*}}] -> %[[Q2]]
// CHECK-NEXT: flamia.bulk.load %arg1[{{.*}}] -> %[[QSF2]]
// CHECK-NEXT: flamia.tma.load %arg6[{{.*}}] -> %[[DO2]]
// CHECK-NEXT: flamia.bulk.load %arg7[{{.*}}] -> %[[DOSF2]]
// CHECK-NEXT: flamia.bulk.load %arg8[{{.*}}] -> %[[DOSFC2]]
// CHECK-NEXT: flamia.tma.load %arg9[{{.*}}] -> %[[QTB2]]
// CHECK-NEXT: flamia.bulk.load %arg10[{{.*}}] -> %[[QTBSF2]]
// Column plan: S^T at 0, dP^T at 64, dV at 128, dK at 256, P^T at 384,
// dS^T at 416; scale factors from 448 (P^T's fixed 2^0 scale at 476).
// CHECK: flamia.role "mma" warpgroups[1, 2) registers 168 single_thread {
// CHECK: flamia.umma.scales %[[KSF2]][%{{.*}}] -> %[[TM2]][448]
// CHECK: flamia.umma.scales %[[VSF2]][%{{.*}}] -> %[[TM2]][452]
// CHECK: flamia.umma %[[TM2]][0] a %[[KS2]][%{{.*}}] b %[[QS2]][%{{.*}}] accumulate %false :
// CHECK: flamia.umma %[[TM2]][64] a %[[VS2]][%{{.*}}] b %[[DOS2]][%{{.*}}] accumulate %{{.*}} :
// CHECK: flamia.umma.scales %[[QSF2]][%{{.*}}] -> %[[TM2]][456]
// CHECK: flamia.umma.scales %[[DOSF2]][%{{.*}}] -> %[[TM2]][460]
// A 64-row query tile is half of a 128-row scale tile: B's scale-factor
// ID picks the half.
// CHECK: flamia.umma %[[TM2]][0] a %[[K2]][%{{.*}}] b %[[Q2]][%{{.*}}] accumulate %false scales(
// CHECK: flamia.umma %[[TM2]][64] a %[[V2]][%{{.*}}] b %[[DO2]][%{{.*}}] accumulate %{{.*}} scales(
// CHECK: flamia.umma.commit full
// dV += P^T dO and dK += dS^T Q on the safe block in bf16 ...
// CHECK: flamia.umma %[[TM2]][128] b %[[DOS2]][%{{.*}}] accumulate %{{.*}} k_valid %[[QV:[^ ]*]] {a_column = 384 : i64, a_type = bf16, b_transposed}
// CHECK: flamia.umma %[[TM2]][256] b %[[QS2]][%{{.*}}] accumulate %{{.*}} k_valid %[[QV]] {a_column = 416 : i64, a_type = bf16, b_transposed}
// ... and off it block-scaled, the scales of dO and Q_tb with channels as
// rows, dS^T's from the gradient role; B's K-block from the query tile's
// half.
// CHECK: flamia.umma.scales %[[DOSFC2]][%{{.*}}] -> %[[TM2]][464]
// CHECK: flamia.umma.scales %[[QTBSF2]][%{{.*}}] -> %[[TM2]][468]
// CHECK: flamia.umma.scales %[[DSSF2]][%{{.*}}] -> %[[TM2]][472]
// CHECK: flamia.umma %[[TM2]][128] b %[[DO2]][%{{.*}}] accumulate %{{.*}} scales(%{{.*}}, %{{.*}}) b_k_block %[[KB:[^ ]*]] k_valid %[[QV2:[^ ]*]] {a_column = 384 : i64, a_type = f8E4M3FN, b_transposed}
// CHECK: flamia.umma %[[TM2]][256] b %[[QTB2]][%{{.*}}] accumulate %{{.*}} scales(%{{.*}}, %{{.*}}) b_k_block %[[KB]] k_valid %[[QV2]] {a_column = 416 : i64, a_type = f8E4M3FN, b_transposed}
// CHECK: flamia.role "grad" warpgroups[2, 4) registers 152 {
// CHECK: flamia.tmem.fill %{{.*}}[476] columns 4 value 2139062143
// CHECK: flamia.tmem.load %{{.*}}[0] : !flamia.frag<128x32xf32>
// CHECK-NEXT: flamia.tmem.load %{{.*}}[64] : !flamia.frag<128x32xf32>
// CHECK: flamia.frag.mask %{{.*}} {causal, transposed}
// CHECK: flamia.softmax.grad {{.*}} {transposed}
// The query rows past the document end of dO and Q_tb are zeroed before
// they meet a zero P^T or dS^T: to the next 16 rows on the safe block ...
// CHECK: flamia.smem.zero_rows %[[DOS2]]
// CHECK: flamia.smem.zero_rows %[[QS2]]
// CHECK: flamia.tmem.store %{{.*}}[384] : !flamia.frag<128x32xbf16>
// CHECK: flamia.tmem.store %{{.*}}[416] : !flamia.frag<128x32xbf16>
// ... to the next 32 (one K step of E4M3) off it; dS^T quantized along the
// queries (dK's contraction axis).
// CHECK: flamia.smem.zero_rows %[[DO2]]
// CHECK: flamia.smem.zero_rows %[[QTB2]]
// CHECK: flamia.frag.quantize %p quantized %true {precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>}
// CHECK: flamia.tmem.store %{{.*}}[384] : !flamia.frag<128x32xf8E4M3FN>
// CHECK: flamia.frag.mx_quantize %{{.*}} scales %[[DSSF2]][%{{.*}}] k_block
// CHECK: flamia.tmem.store %{{.*}}[416] : !flamia.frag<128x32xf8E4M3FN>
// The epilogue: dK times the softmax scale, dV times 2^-8 (P's fixed scale).
// CHECK: flamia.tmem.load %{{.*}}[256] : !flamia.frag<128x32xf32>
// CHECK: flamia.grad.store %{{.*}} times %arg23 to %arg17
// CHECK: flamia.tmem.load %{{.*}}[128] : !flamia.frag<128x32xf32>
// CHECK: %[[P8:.*]] = arith.constant 3.906250e-03 : f32
// CHECK: flamia.grad.store %{{.*}} times %[[P8]] to %arg18
// CHECK: flamia.tmem.dealloc %[[TM2]] columns 512

// D = 128: a 2-stage K ring and a single V stage in the dQ kernel (the
// smem budget), a 2-stage query ring in the dK/dV kernel; the same columns.
// D128-LABEL: flamia.kernel @train_attention_dq(
// D128: flamia.smem.alloc : !flamia.smem<2x128x128xf8E4M3FN>
// D128: flamia.smem.alloc : !flamia.smem<1x128x128xf8E4M3FN>
// D128: flamia.tmem.alloc columns 512 by_warpgroup 2
// D128: flamia.umma %{{.*}}[256] b %{{.*}} {a_column = 384 : i64, a_type = f8E4M3FN, b_transposed}
// D128: flamia.tmem.load %{{.*}}[0] : !flamia.frag<128x64xf32>
// D128: flamia.tmem.load %{{.*}}[256] : !flamia.frag<128x64xf32>
// D128-LABEL: flamia.kernel @train_attention_dkdv(
// D128: flamia.smem.alloc : !flamia.smem<2x64x128xf8E4M3FN>
// D128: flamia.umma %{{.*}}[128] b %{{.*}} {a_column = 384 : i64, a_type = f8E4M3FN, b_transposed}
// D128: flamia.umma %{{.*}}[256] b %{{.*}} {a_column = 416 : i64, a_type = f8E4M3FN, b_transposed}
// D128: flamia.tmem.load %{{.*}}[256] : !flamia.frag<128x64xf32>
// D128: flamia.tmem.load %{{.*}}[128] : !flamia.frag<128x64xf32>
