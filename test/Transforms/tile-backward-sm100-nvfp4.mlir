// RUN: flamia-opt %s --flamia-varlen-schedule=target=sm_100a | FileCheck %s --check-prefix=SCHED
// RUN: flamia-opt %s --flamia-varlen-schedule=target=sm_100a --flamia-tile=target=sm_100a | FileCheck %s
// RUN: sed 's/x128x/x64x/g' %s | flamia-opt --flamia-varlen-schedule=target=sm_100a --flamia-tile=target=sm_100a | FileCheck %s --check-prefix=D64
// sm_90a with scale-tiles writes every tile sm_100a's training step reads,
// so that the H200 checks their layout (bench/device-validate-backward-tiles.sh).
// RUN: flamia-opt %s "--flamia-varlen-schedule=target=sm_90a scale-tiles=true" | FileCheck %s --check-prefix=TILES90
// A training step of recipe nvfp4-mixed on sm_100a (GQA 4 query / 2 kv
// heads, D = 128; the third RUN line makes it D = 64). The GEMMs that
// contract the head dim (S = Q K^T, dP = dO V^T, S^T, dP^T) read the E2M1
// per-token copies with their UE4M3 tiles, one 512-byte tile and one
// 4-column chunk per 64 channels (kind::mxf4nvf4); dQ = dS K, dV = P^T dO
// and dK = dS^T Q read the E4M3 token blocks of K, dO and Q with their
// channel-row tiles (kind::mxf8f6f4).

!b = tensor<?x4x128xbf16>
!kv = tensor<?x2x128xbf16>
!q4 = !flamia.qtensor<?x4x128xf4E2M1FN, f8E4M3FN, 1x16>
!k4 = !flamia.qtensor<?x2x128xf4E2M1FN, f8E4M3FN, 1x16>
!qb = !flamia.qtensor<?x4x128xf8E4M3FN, f8E8M0FNU, 32x32>
!kb = !flamia.qtensor<?x2x128xf8E4M3FN, f8E8M0FNU, 32x32>
func.func @train(%q: !b, %k: !kv, %v: !kv, %do: !b, %cu: tensor<?xi32>) -> (!b, tensor<4x?xf32>, !b, !kv, !kv) {
  %q4 = flamia.quantize %q : (!b) -> !q4
  %k4 = flamia.quantize %k : (!kv) -> !k4
  %v8 = flamia.quantize %v cu_seqlens(%cu) : (!kv, tensor<?xi32>) -> !kb
  %o, %lse = flamia.attention_fwd qk(%q4, %k4) pv(%v8) safe(%q, %k, %v) cu_seqlens(%cu)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<nvfp4_mixed, safe_block = 128>}
      : (!q4, !k4, !kb, !b, !kv, !kv, tensor<?xi32>) -> (!b, tensor<4x?xf32>)
  %do4 = flamia.quantize %do : (!b) -> !q4
  %v4 = flamia.quantize %v : (!kv) -> !k4
  %kb = flamia.quantize %k cu_seqlens(%cu) : (!kv, tensor<?xi32>) -> !kb
  %qb = flamia.quantize %q cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !qb
  %dob = flamia.quantize %do cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !qb
  %dq, %dk, %dv = flamia.attention_bwd qk(%q4, %k4) dov(%do4, %v4) dsk(%kb) dsq(%qb) pdo(%dob) safe(%q, %k, %v, %do) o(%o) lse(%lse) cu_seqlens(%cu)
      {causal, ds = #flamia.precision<f8E4M3FN, online = 32>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<nvfp4_mixed, safe_block = 128>}
      : (!q4, !k4, !q4, !k4, !kb, !qb, !qb, !b, !kv, !kv, !b, !b, tensor<4x?xf32>, tensor<?xi32>) -> (!b, !kv, !kv)
  return %o, %lse, %dq, %dk, %dv : !b, tensor<4x?xf32>, !b, !kv, !kv
}

// The quantizer: each of Q, K, V per token in NVFP4 with its tiles (rows
// are tokens) and in token blocks with tiles whose rows are channels (Q's,
// K's for dS^T Q and dS K; V's for P V).
// SCHED-LABEL: flamia.kernel @train_quantize(
// SCHED-SAME: %[[QSF:arg[0-9]+]]: !flamia.global<?x4x1024xi8> {flamia.param = "q_sf"}, %[[KSF:arg[0-9]+]]: !flamia.global<?x2x1024xi8> {flamia.param = "k_sf"}, %[[VSF:arg[0-9]+]]: !flamia.global<?x2x512xi8> {flamia.param = "v_sf"}, %[[QTBC:arg[0-9]+]]: !flamia.global<?x4x512xi8> {flamia.param = "q_tb_sf_channels"}, %[[KC:arg[0-9]+]]: !flamia.global<?x2x512xi8> {flamia.param = "k_sf_channels"}, %[[VT:arg[0-9]+]]: !flamia.global<?x2x1024xi8> {flamia.param = "v_sf_tokens"})
// SCHED: flamia.quantize_block %arg0 {{.*}} per_token_tiles(%[[QSF]]) token_block_tiles(%[[QTBC]]) {token_block_tile_rows = "channels"}
// SCHED: flamia.quantize_block %arg1 {{.*}} per_token_tiles(%[[KSF]]) token_block_tiles(%[[KC]]) {token_block_tile_rows = "channels"}
// SCHED-NEXT: flamia.quantize_block %arg2 {{.*}} per_token_tiles(%[[VT]]) token_block_tiles(%[[VSF]]) {token_block_tile_rows = "channels"}
// dO the same way.
// SCHED-LABEL: flamia.kernel @train_quantize_grad(
// SCHED: flamia.quantize_block %arg0 {{.*}} per_token(%arg3, %arg4) token_block(%arg5, %arg6) per_token_tiles(%arg7) token_block_tiles(%arg8) {token_block_tile_rows = "channels"} : ({{.*}}, !flamia.global<?x4x128xf4E2M1FN>, !flamia.global<?x4x8xf8E4M3FN>, !flamia.global<?x4x128xf8E4M3FN>, !flamia.global<?x4x4xf8E8M0FNU>, !flamia.global<?x4x1024xi8>, !flamia.global<?x4x512xi8>) -> ()
// The backward kernels: K's (dQ) and dO's (dK/dV) second copies as
// separate operand groups.
// SCHED-LABEL: flamia.kernel @train_attention_dq(
// SCHED-SAME: {flamia.param = "q_pt"}, {{.*}} {flamia.param = "q_sf"}, {{.*}} {flamia.param = "k_pt"}, {{.*}} {flamia.param = "k_sf"}, {{.*}} {flamia.param = "v_pt"}, {{.*}} {flamia.param = "v_sf_tokens"}, {{.*}} {flamia.param = "do_pt"}, {{.*}} {flamia.param = "do_sf"}, {{.*}} {flamia.param = "k_tb"}, {{.*}} {flamia.param = "k_sf_channels"}, {{.*}} {flamia.param = "q"}
// SCHED: flamia.attention_dq_tile {{.*}} q(%arg0, %arg1) k(%arg2, %arg3) v(%arg4, %arg5) grad_o(%arg6, %arg7) k_tb(%arg8, %arg9) safe(
// SCHED-LABEL: flamia.kernel @train_attention_dkdv(
// SCHED-SAME: {flamia.param = "do_sf"}, {{.*}} {flamia.param = "q_tb"}, {{.*}} {flamia.param = "q_tb_sf_channels"}, {{.*}} {flamia.param = "do_tb"}, {{.*}} {flamia.param = "do_sf_channels"}, {{.*}} {flamia.param = "q"}
// SCHED: flamia.attention_dkdv_tile {{.*}} q(%arg0, %arg1) k(%arg2, %arg3) v(%arg4, %arg5) grad_o(%arg6, %arg7) q_tb(%arg8, %arg9) grad_o_tb(%arg10, %arg11) safe(

// The dQ kernel: packed E2M1 tiles of Q, dO, K, V with two scale tiles a
// slot at D = 128; K's token blocks share K's stage; two V stages.
// CHECK-LABEL: flamia.kernel @train_attention_dq(
// CHECK: %[[Q:.*]] = flamia.smem.alloc : !flamia.smem<1x128x128xf4E2M1FN>
// CHECK-NEXT: %[[QSF:.*]] = flamia.smem.alloc : !flamia.smem<1x16x64xi8>
// CHECK-NEXT: %[[DO:.*]] = flamia.smem.alloc : !flamia.smem<1x128x128xf4E2M1FN>
// CHECK-NEXT: %[[DOSF:.*]] = flamia.smem.alloc : !flamia.smem<1x16x64xi8>
// CHECK: %[[K:.*]] = flamia.smem.alloc : !flamia.smem<2x128x128xf4E2M1FN>
// CHECK-NEXT: %[[KSF:.*]] = flamia.smem.alloc : !flamia.smem<2x16x64xi8>
// CHECK-NEXT: %[[KB:.*]] = flamia.smem.alloc : !flamia.smem<2x128x128xf8E4M3FN>
// CHECK-NEXT: %[[KC:.*]] = flamia.smem.alloc : !flamia.smem<2x8x64xi8>
// CHECK-NEXT: %[[V:.*]] = flamia.smem.alloc : !flamia.smem<2x128x128xf4E2M1FN>
// CHECK-NEXT: %[[VSF:.*]] = flamia.smem.alloc : !flamia.smem<2x16x64xi8>
// The producer fills K's stage with both copies and their tiles.
// CHECK: flamia.pipeline.expect %{{.*}} bytes 26112
// CHECK-NEXT: flamia.tma.load %arg2{{.*}} -> %[[K]]
// CHECK-NEXT: flamia.bulk.load %arg3{{.*}} -> %[[KSF]]
// CHECK-NEXT: flamia.tma.load %arg8{{.*}} -> %[[KB]]
// CHECK-NEXT: flamia.bulk.load %arg9{{.*}} -> %[[KC]]
// The MMA thread: a chunk per 64 channels (Q 448, dO 456, K 464, V 472),
// S and dP on the E2M1 tiles.
// CHECK: flamia.umma.scales %[[QSF]][%{{.*}}] -> %{{.*}}[448] :
// CHECK-NEXT: flamia.umma.scales %[[QSF]][%{{.*}}] -> %{{.*}}[452] {part = 1 : i64}
// CHECK-NEXT: flamia.umma.scales %[[DOSF]][%{{.*}}] -> %{{.*}}[456] :
// CHECK-NEXT: flamia.umma.scales %[[DOSF]][%{{.*}}] -> %{{.*}}[460] {part = 1 : i64}
// CHECK: flamia.umma.scales %[[KSF]][%{{.*}}] -> %{{.*}}[464] :
// CHECK-NEXT: flamia.umma.scales %[[KSF]][%{{.*}}] -> %{{.*}}[468] {part = 1 : i64}
// CHECK-NEXT: flamia.umma.scales %[[VSF]][%{{.*}}] -> %{{.*}}[472] :
// CHECK-NEXT: flamia.umma.scales %[[VSF]][%{{.*}}] -> %{{.*}}[476] {part = 1 : i64}
// CHECK: flamia.umma %{{.*}}[0] a %[[Q]][%{{.*}}] b %[[K]][%{{.*}}] accumulate %{{.*}} scales(
// CHECK: flamia.umma %{{.*}}[128] a %[[DO]][%{{.*}}] b %[[V]][%{{.*}}] accumulate %{{.*}} scales(
// dQ += dS K on K's E4M3 token blocks (dS 480, K's channel rows 484),
// their rows past the document's end zeroed first.
// CHECK: flamia.umma.scales %{{.*}} -> %{{.*}}[480]
// CHECK-NEXT: flamia.umma.scales %[[KC]][%{{.*}}] -> %{{.*}}[484]
// CHECK: flamia.smem.zero_rows %[[KB]]
// CHECK: flamia.umma %{{.*}}[256] b %[[KB]][%{{.*}}] accumulate %{{.*}} scales({{.*}}) k_valid %{{.*}} {a_column = 384 : i64, a_type = f8E4M3FN, b_transposed}

// The dK/dV kernel: K and V per token (E2M1) for the item; a query stage
// holds Q and dO per token (E2M1) and dO's and Q's E4M3 token blocks.
// CHECK-LABEL: flamia.kernel @train_attention_dkdv(
// CHECK: %[[K:.*]] = flamia.smem.alloc : !flamia.smem<1x128x128xf4E2M1FN>
// CHECK-NEXT: %[[KSF:.*]] = flamia.smem.alloc : !flamia.smem<1x16x64xi8>
// CHECK-NEXT: %[[V:.*]] = flamia.smem.alloc : !flamia.smem<1x128x128xf4E2M1FN>
// CHECK-NEXT: %[[VSF:.*]] = flamia.smem.alloc : !flamia.smem<1x16x64xi8>
// CHECK: %[[Q:.*]] = flamia.smem.alloc : !flamia.smem<2x64x128xf4E2M1FN>
// CHECK-NEXT: %[[QSF:.*]] = flamia.smem.alloc : !flamia.smem<2x16x64xi8>
// CHECK-NEXT: %[[DO:.*]] = flamia.smem.alloc : !flamia.smem<2x64x128xf4E2M1FN>
// CHECK-NEXT: %[[DOSF:.*]] = flamia.smem.alloc : !flamia.smem<2x16x64xi8>
// CHECK-NEXT: %[[DOB:.*]] = flamia.smem.alloc : !flamia.smem<2x64x128xf8E4M3FN>
// CHECK-NEXT: %[[DOC:.*]] = flamia.smem.alloc : !flamia.smem<2x8x64xi8>
// CHECK-NEXT: %[[QB:.*]] = flamia.smem.alloc : !flamia.smem<2x64x128xf8E4M3FN>
// CHECK-NEXT: %[[QBC:.*]] = flamia.smem.alloc : !flamia.smem<2x8x64xi8>
// CHECK: flamia.pipeline.expect %{{.*}} bytes 27648
// CHECK: flamia.umma.scales %[[KSF]][%{{.*}}] -> %{{.*}}[448] :
// CHECK-NEXT: flamia.umma.scales %[[KSF]][%{{.*}}] -> %{{.*}}[452] {part = 1 : i64}
// CHECK-NEXT: flamia.umma.scales %[[VSF]][%{{.*}}] -> %{{.*}}[456] :
// CHECK-NEXT: flamia.umma.scales %[[VSF]][%{{.*}}] -> %{{.*}}[460] {part = 1 : i64}
// CHECK: flamia.umma.scales %[[QSF]][%{{.*}}] -> %{{.*}}[464] :
// CHECK-NEXT: flamia.umma.scales %[[QSF]][%{{.*}}] -> %{{.*}}[468] {part = 1 : i64}
// CHECK-NEXT: flamia.umma.scales %[[DOSF]][%{{.*}}] -> %{{.*}}[472] :
// CHECK-NEXT: flamia.umma.scales %[[DOSF]][%{{.*}}] -> %{{.*}}[476] {part = 1 : i64}
// The 64 queries' scale rows: 2 (qt % 2) columns on, for both B operands.
// CHECK: %[[ODD:.*]] = arith.remsi
// CHECK: flamia.umma %{{.*}}[0] a %[[K]][%{{.*}}] b %[[Q]][%{{.*}}] accumulate %{{.*}} scales(
// CHECK: flamia.umma %{{.*}}[64] a %[[V]][%{{.*}}] b %[[DO]][%{{.*}}] accumulate %{{.*}} scales(
// dV and dK on the token blocks (dO 480, Q 484, dS^T 488 and P's unit
// scale at 492).
// CHECK: flamia.umma.scales %[[DOC]][%{{.*}}] -> %{{.*}}[480]
// CHECK-NEXT: flamia.umma.scales %[[QBC]][%{{.*}}] -> %{{.*}}[484]
// CHECK: flamia.umma.scales %{{.*}} -> %{{.*}}[488]
// CHECK: flamia.umma %{{.*}}[128] b %[[DOB]][%{{.*}}] accumulate {{.*}} {a_column = 384 : i64, a_type = f8E4M3FN, b_transposed}
// CHECK-NEXT: flamia.umma %{{.*}}[256] b %[[QB]][%{{.*}}] accumulate {{.*}} {a_column = 416 : i64, a_type = f8E4M3FN, b_transposed}
// CHECK: flamia.tmem.fill %{{.*}}[492] columns 4
// The gradient role zeroes the token blocks' rows past the end.
// CHECK: flamia.smem.zero_rows %[[DOB]]
// CHECK: flamia.smem.zero_rows %[[QB]]

// D = 64: one tile and one chunk each, so the columns are mxfp8's
// (dQ: dS 464, K's channel rows 468; dK/dV: P's unit scale 476); three
// V stages without the 128-channel safe-block tiles' pressure.
// D64-LABEL: flamia.kernel @train_attention_dq(
// D64: flamia.smem.alloc : !flamia.smem<3x128x64xf4E2M1FN>
// D64-NEXT: flamia.smem.alloc : !flamia.smem<3x8x64xi8>
// D64-NOT: part = 1
// D64: flamia.umma.scales %{{.*}} -> %{{.*}}[464]
// D64-NEXT: flamia.umma.scales %{{.*}} -> %{{.*}}[468]
// D64-LABEL: flamia.kernel @train_attention_dkdv(
// D64: flamia.tmem.fill %{{.*}}[476] columns 4

// TILES90-LABEL: flamia.kernel @train_quantize(
// TILES90-SAME: {flamia.param = "q_sf"}, {{.*}} {flamia.param = "k_sf"}, {{.*}} {flamia.param = "v_sf"}, {{.*}} {flamia.param = "q_tb_sf_channels"}, {{.*}} {flamia.param = "k_sf_channels"}, {{.*}} {flamia.param = "v_sf_tokens"})
// TILES90-LABEL: flamia.kernel @train_quantize_grad(
// TILES90: per_token_tiles(%{{.*}}) token_block_tiles(%{{.*}}) {token_block_tile_rows = "channels"}
// TILES90-LABEL: flamia.kernel @train_attention_dq(
// TILES90-SAME: {flamia.param = "q_deq"}
