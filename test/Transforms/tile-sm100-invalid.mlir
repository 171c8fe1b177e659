// RUN: flamia-opt %s -split-input-file --flamia-tile=target=sm_100a -verify-diagnostics
// RUN: sed 's/sm_100a/sm_90a/g' %s | not flamia-opt -split-input-file '--flamia-tile=target=sm_90a p-in-smem=true' 2>&1 | FileCheck %s --check-prefix=PSMEM90
// What flamia-tile refuses in the sm_100a forward's operands, on the
// nvfp4-mixed kernel flamia-varlen-schedule{target=sm_100a} writes (GQA 4/2,
// D = 128): a Q and a K of two payload formats, scale tiles of the wrong
// size, a single operand where sm_100a reads a payload and its tiles; and
// p-in-smem on sm_90a (whose P never leaves registers).

module {
// Q in E2M1, K in E4M3.
  flamia.kernel @flamia_attention_fwd(%arg0: !flamia.global<?x4x128xf4E2M1FN> {flamia.param = "q_pt"}, %arg1: !flamia.global<?x4x1024xi8> {flamia.param = "q_sf"}, %arg2: !flamia.global<?x2x128xf8E4M3FN> {flamia.param = "k_pt"}, %arg3: !flamia.global<?x2x1024xi8> {flamia.param = "k_sf"}, %arg4: !flamia.global<?x2x128xf8E4M3FN> {flamia.param = "v_tb"}, %arg5: !flamia.global<?x2x512xi8> {flamia.param = "v_sf"}, %arg6: !flamia.global<?x4x128xbf16> {flamia.param = "q"}, %arg7: !flamia.global<?x2x128xbf16> {flamia.param = "k"}, %arg8: !flamia.global<?x2x128xbf16> {flamia.param = "v"}, %arg9: !flamia.global<?x4x128xbf16> {flamia.param = "o"}, %arg10: !flamia.global<4x?xf32> {flamia.param = "lse"}, %arg11: !flamia.global<?x8xi32> {flamia.param = "items"}, %arg12: i32 {flamia.param = "num_items"}, %arg13: !flamia.global<1xi32> {flamia.param = "counter"}, %arg14: f32 {flamia.param = "softmax_scale_log2"}, %arg15: i32 {flamia.param = "T"}) attributes {flamia.phase = "forward", launch = #flamia.launch<persistent>, schedule = {block_m = 128 : i64, block_n = 128 : i64, cost_model = "sm_100a", order = "lpt", safe_block = 128 : i64}, target = #flamia.target<sm_100a>, threads = 128 : i64} {
    %0 = flamia.queue.create %arg13, %arg12 : !flamia.global<1xi32>
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %1:2 = scf.while (%arg16 = %c0_i32) : (i32) -> (i32, i32) {
      %2 = flamia.queue.next fetch %0[%arg16]
      %3 = arith.cmpi slt, %2, %arg12 : i32
      scf.condition(%3) %arg16, %2 : i32, i32
    } do {
    ^bb0(%arg16: i32, %arg17: i32):
      // expected-error @below {{flamia-tile: sm_100a reads Q and K as E4M3 (mxfp8) or E2M1 (nvfp4-mixed) payloads of one format and V as E4M3, got '!flamia.global<?x4x128xf4E2M1FN>', '!flamia.global<?x2x128xf8E4M3FN>', '!flamia.global<?x2x128xf8E4M3FN>'}}
      flamia.attention_tile %arg11[%arg17] q(%arg0, %arg1) k(%arg2, %arg3) v(%arg4, %arg5) safe(%arg6, %arg7, %arg8) to %arg9, %arg10 scale %arg14 tokens %arg15 {block_m = 128 : i64, block_n = 128 : i64, causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<nvfp4_mixed, safe_block = 128>} : (!flamia.global<?x8xi32>, i32, !flamia.global<?x4x128xf4E2M1FN>, !flamia.global<?x4x1024xi8>, !flamia.global<?x2x128xf8E4M3FN>, !flamia.global<?x2x1024xi8>, !flamia.global<?x2x128xf8E4M3FN>, !flamia.global<?x2x512xi8>, !flamia.global<?x4x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x4x128xbf16>, !flamia.global<4x?xf32>, f32, i32) -> ()
      %2 = arith.addi %arg16, %c1_i32 : i32
      scf.yield %2 : i32
    }
    flamia.return
  }

}

// -----

module {
// An NVFP4 K with one 512-byte tile per slot instead of one per 64 channels.
  flamia.kernel @flamia_attention_fwd(%arg0: !flamia.global<?x4x128xf4E2M1FN> {flamia.param = "q_pt"}, %arg1: !flamia.global<?x4x1024xi8> {flamia.param = "q_sf"}, %arg2: !flamia.global<?x2x128xf4E2M1FN> {flamia.param = "k_pt"}, %arg3: !flamia.global<?x2x512xi8> {flamia.param = "k_sf"}, %arg4: !flamia.global<?x2x128xf8E4M3FN> {flamia.param = "v_tb"}, %arg5: !flamia.global<?x2x512xi8> {flamia.param = "v_sf"}, %arg6: !flamia.global<?x4x128xbf16> {flamia.param = "q"}, %arg7: !flamia.global<?x2x128xbf16> {flamia.param = "k"}, %arg8: !flamia.global<?x2x128xbf16> {flamia.param = "v"}, %arg9: !flamia.global<?x4x128xbf16> {flamia.param = "o"}, %arg10: !flamia.global<4x?xf32> {flamia.param = "lse"}, %arg11: !flamia.global<?x8xi32> {flamia.param = "items"}, %arg12: i32 {flamia.param = "num_items"}, %arg13: !flamia.global<1xi32> {flamia.param = "counter"}, %arg14: f32 {flamia.param = "softmax_scale_log2"}, %arg15: i32 {flamia.param = "T"}) attributes {flamia.phase = "forward", launch = #flamia.launch<persistent>, schedule = {block_m = 128 : i64, block_n = 128 : i64, cost_model = "sm_100a", order = "lpt", safe_block = 128 : i64}, target = #flamia.target<sm_100a>, threads = 128 : i64} {
    %0 = flamia.queue.create %arg13, %arg12 : !flamia.global<1xi32>
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %1:2 = scf.while (%arg16 = %c0_i32) : (i32) -> (i32, i32) {
      %2 = flamia.queue.next fetch %0[%arg16]
      %3 = arith.cmpi slt, %2, %arg12 : i32
      scf.condition(%3) %arg16, %2 : i32, i32
    } do {
    ^bb0(%arg16: i32, %arg17: i32):
      // expected-error @below {{flamia-tile: scale-factor tiles are [NB, H, 1024] i8, got '!flamia.global<?x2x512xi8>'}}
      flamia.attention_tile %arg11[%arg17] q(%arg0, %arg1) k(%arg2, %arg3) v(%arg4, %arg5) safe(%arg6, %arg7, %arg8) to %arg9, %arg10 scale %arg14 tokens %arg15 {block_m = 128 : i64, block_n = 128 : i64, causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<nvfp4_mixed, safe_block = 128>} : (!flamia.global<?x8xi32>, i32, !flamia.global<?x4x128xf4E2M1FN>, !flamia.global<?x4x1024xi8>, !flamia.global<?x2x128xf4E2M1FN>, !flamia.global<?x2x512xi8>, !flamia.global<?x2x128xf8E4M3FN>, !flamia.global<?x2x512xi8>, !flamia.global<?x4x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x4x128xbf16>, !flamia.global<4x?xf32>, f32, i32) -> ()
      %2 = arith.addi %arg16, %c1_i32 : i32
      scf.yield %2 : i32
    }
    flamia.return
  }

}

// PSMEM90: error: 'flamia.attention_tile' op flamia-tile: p-in-smem stages the sm_100a forward's P in shared memory; sm_90a keeps P in registers

// -----

// A tile op with one operand for q (sm_90a's dequantized copy).
module {
  flamia.kernel @one_q(%q: !flamia.global<?x4x128xf8E4M3FN> {flamia.param = "q_pt"}, %k: !flamia.global<?x2x128xf8E4M3FN> {flamia.param = "k_tb"}, %ksf: !flamia.global<?x2x512xi8> {flamia.param = "k_sf"}, %v: !flamia.global<?x2x128xf8E4M3FN> {flamia.param = "v_tb"}, %vsf: !flamia.global<?x2x512xi8> {flamia.param = "v_sf"}, %o: !flamia.global<?x4x128xbf16> {flamia.param = "o"}, %lse: !flamia.global<4x?xf32> {flamia.param = "lse"}, %items: !flamia.global<?x8xi32> {flamia.param = "items"}, %n: i32 {flamia.param = "num_items"}, %c: !flamia.global<1xi32> {flamia.param = "counter"}, %s: f32 {flamia.param = "softmax_scale_log2"}, %t: i32 {flamia.param = "T"}) attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
    %0 = flamia.queue.create %c, %n : !flamia.global<1xi32>
    %i = arith.constant 0 : i32
    // expected-error @below {{flamia-tile: sm_100a reads each of q, k, v as its payload and its [NB, H, 512 x tiles] scale-factor tiles (two operands each)}}
    flamia.attention_tile %items[%i] q(%q) k(%k, %ksf) v(%v, %vsf) safe() to %o, %lse scale %s tokens %t {block_m = 128 : i64, block_n = 128 : i64, causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8>} : (!flamia.global<?x8xi32>, i32, !flamia.global<?x4x128xf8E4M3FN>, !flamia.global<?x2x128xf8E4M3FN>, !flamia.global<?x2x512xi8>, !flamia.global<?x2x128xf8E4M3FN>, !flamia.global<?x2x512xi8>, !flamia.global<?x4x128xbf16>, !flamia.global<4x?xf32>, f32, i32) -> ()
    flamia.return
  }
}
