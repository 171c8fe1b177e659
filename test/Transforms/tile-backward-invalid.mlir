// RUN: flamia-opt %s --flamia-tile=target=sm_90a -split-input-file -verify-diagnostics

// The sm_90a dK/dV program is built for 64-query tiles at both head dims
// (128-query tiles at D = 64 spilled and ran 54% slower: docs/performance.md,
// run 59). A tile op that asks for another shape is refused, naming both.

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
    // expected-error @+1 {{flamia-tile: 64 x 128 tiles only, got 128 x 128}}
    flamia.attention_dkdv_tile %arg13[%arg20] q(%arg0) k(%arg1) v(%arg2) grad_o(%arg3) q_tb(%arg4) safe(%arg5, %arg6, %arg7, %arg8) lse %arg9 delta %arg10 to %arg11, %arg12 scale %arg16, %arg17 tokens %arg18 {block_m = 128 : i64, block_n = 128 : i64, causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>} : (!flamia.global<?x8xi32>, i32, !flamia.global<?x4x64xbf16>, !flamia.global<?x2x64xbf16>, !flamia.global<?x2x64xbf16>, !flamia.global<?x4x64xbf16>, !flamia.global<?x4x64xbf16>, !flamia.global<?x4x64xbf16>, !flamia.global<?x2x64xbf16>, !flamia.global<?x2x64xbf16>, !flamia.global<?x4x64xbf16>, !flamia.global<4x?xf32>, !flamia.global<4x?xf32>, !flamia.global<?x2x64xbf16>, !flamia.global<?x2x64xbf16>, f32, f32, i32) -> ()
    %2 = arith.addi %arg19, %c1_i32 : i32
    scf.yield %2 : i32
  }
  flamia.return
}

// -----

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
    // expected-error @+1 {{flamia-tile: 64 x 128 tiles only, got 128 x 128}}
    flamia.attention_dkdv_tile %arg13[%arg20] q(%arg0) k(%arg1) v(%arg2) grad_o(%arg3) q_tb(%arg4) safe(%arg5, %arg6, %arg7, %arg8) lse %arg9 delta %arg10 to %arg11, %arg12 scale %arg16, %arg17 tokens %arg18 {block_m = 128 : i64, block_n = 128 : i64, causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>} : (!flamia.global<?x8xi32>, i32, !flamia.global<?x4x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x4x128xbf16>, !flamia.global<?x4x128xbf16>, !flamia.global<?x4x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x4x128xbf16>, !flamia.global<4x?xf32>, !flamia.global<4x?xf32>, !flamia.global<?x2x128xbf16>, !flamia.global<?x2x128xbf16>, f32, f32, i32) -> ()
    %2 = arith.addi %arg19, %c1_i32 : i32
    scf.yield %2 : i32
  }
  flamia.return
}
