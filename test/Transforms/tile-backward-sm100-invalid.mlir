// RUN: flamia-opt %s -split-input-file --flamia-tile=target=sm_100a -verify-diagnostics
// What flamia-tile refuses in the operands of sm_100a's backward kernels
// (nvfp4-mixed, D = 64, as flamia-varlen-schedule{target=sm_100a} writes
// them, one type changed per case): NVFP4 only where the head dim is
// contracted, and the two operands of each GEMM in one format.
// K's token blocks (dQ = dS K, contracted over keys) in NVFP4: an
// MN-major operand kind::mxf4nvf4 cannot read.
module {
  flamia.kernel @train_attention_dq(%arg0: !flamia.global<?x4x64xf4E2M1FN> {flamia.param = "q_pt"}, %arg1: !flamia.global<?x4x512xi8> {flamia.param = "q_sf"}, %arg2: !flamia.global<?x2x64xf4E2M1FN> {flamia.param = "k_pt"}, %arg3: !flamia.global<?x2x512xi8> {flamia.param = "k_sf"}, %arg4: !flamia.global<?x2x64xf4E2M1FN> {flamia.param = "v_pt"}, %arg5: !flamia.global<?x2x512xi8> {flamia.param = "v_sf_tokens"}, %arg6: !flamia.global<?x4x64xf4E2M1FN> {flamia.param = "do_pt"}, %arg7: !flamia.global<?x4x512xi8> {flamia.param = "do_sf"}, %arg8: !flamia.global<?x2x64xf4E2M1FN> {flamia.param = "k_tb"}, %arg9: !flamia.global<?x2x512xi8> {flamia.param = "k_sf_channels"}, %arg10: !flamia.global<?x4x64xbf16> {flamia.param = "q"}, %arg11: !flamia.global<?x2x64xbf16> {flamia.param = "k"}, %arg12: !flamia.global<?x2x64xbf16> {flamia.param = "v"}, %arg13: !flamia.global<?x4x64xbf16> {flamia.param = "grad_o"}, %arg14: !flamia.global<4x?xf32> {flamia.param = "lse"}, %arg15: !flamia.global<4x?xf32> {flamia.param = "delta"}, %arg16: !flamia.global<?x4x64xbf16> {flamia.param = "dq"}, %arg17: !flamia.global<?x8xi32> {flamia.param = "items"}, %arg18: i32 {flamia.param = "num_items"}, %arg19: !flamia.global<1xi32> {flamia.param = "counter"}, %arg20: f32 {flamia.param = "softmax_scale_log2"}, %arg21: f32 {flamia.param = "softmax_scale"}, %arg22: i32 {flamia.param = "T"}) attributes {flamia.phase = "backward", launch = #flamia.launch<persistent>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
    %0 = flamia.queue.create %arg19, %arg18 : !flamia.global<1xi32>
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %1:2 = scf.while (%arg23 = %c0_i32) : (i32) -> (i32, i32) {
      %2 = flamia.queue.next fetch %0[%arg23]
      %3 = arith.cmpi slt, %2, %arg18 : i32
      scf.condition(%3) %arg23, %2 : i32, i32
    } do {
    ^bb0(%arg23: i32, %arg24: i32):
      // expected-error @below {{flamia-tile: k_tb is contracted over tokens (rows are channels, for dQ = dS K): an MN-major operand, which kind::mxf4nvf4 cannot read; it must be an E4M3 token-block copy, got '!flamia.global<?x2x64xf4E2M1FN>'}}
      flamia.attention_dq_tile %arg17[%arg24] q(%arg0, %arg1) k(%arg2, %arg3) v(%arg4, %arg5) grad_o(%arg6, %arg7) k_tb(%arg8, %arg9) safe(%arg10, %arg11, %arg12, %arg13) lse %arg14 delta %arg15 to %arg16 scale %arg20, %arg21 tokens %arg22 {block_m = 128 : i64, block_n = 128 : i64, causal, recipe = #flamia.recipe<nvfp4_mixed, safe_block = 128>} : (!flamia.global<?x8xi32>, i32, !flamia.global<?x4x64xf4E2M1FN>, !flamia.global<?x4x512xi8>, !flamia.global<?x2x64xf4E2M1FN>, !flamia.global<?x2x512xi8>, !flamia.global<?x2x64xf4E2M1FN>, !flamia.global<?x2x512xi8>, !flamia.global<?x4x64xf4E2M1FN>, !flamia.global<?x4x512xi8>, !flamia.global<?x2x64xf4E2M1FN>, !flamia.global<?x2x512xi8>, !flamia.global<?x4x64xbf16>, !flamia.global<?x2x64xbf16>, !flamia.global<?x2x64xbf16>, !flamia.global<?x4x64xbf16>, !flamia.global<4x?xf32>, !flamia.global<4x?xf32>, !flamia.global<?x4x64xbf16>, f32, f32, i32) -> ()
      %2 = arith.addi %arg23, %c1_i32 : i32
      scf.yield %2 : i32
    }
    flamia.return
  }
}

// -----

// Q in E4M3 against an NVFP4 K: S = Q K^T needs one format.
module {
  flamia.kernel @train_attention_dq(%arg0: !flamia.global<?x4x64xf8E4M3FN> {flamia.param = "q_pt"}, %arg1: !flamia.global<?x4x512xi8> {flamia.param = "q_sf"}, %arg2: !flamia.global<?x2x64xf4E2M1FN> {flamia.param = "k_pt"}, %arg3: !flamia.global<?x2x512xi8> {flamia.param = "k_sf"}, %arg4: !flamia.global<?x2x64xf4E2M1FN> {flamia.param = "v_pt"}, %arg5: !flamia.global<?x2x512xi8> {flamia.param = "v_sf_tokens"}, %arg6: !flamia.global<?x4x64xf4E2M1FN> {flamia.param = "do_pt"}, %arg7: !flamia.global<?x4x512xi8> {flamia.param = "do_sf"}, %arg8: !flamia.global<?x2x64xf8E4M3FN> {flamia.param = "k_tb"}, %arg9: !flamia.global<?x2x512xi8> {flamia.param = "k_sf_channels"}, %arg10: !flamia.global<?x4x64xbf16> {flamia.param = "q"}, %arg11: !flamia.global<?x2x64xbf16> {flamia.param = "k"}, %arg12: !flamia.global<?x2x64xbf16> {flamia.param = "v"}, %arg13: !flamia.global<?x4x64xbf16> {flamia.param = "grad_o"}, %arg14: !flamia.global<4x?xf32> {flamia.param = "lse"}, %arg15: !flamia.global<4x?xf32> {flamia.param = "delta"}, %arg16: !flamia.global<?x4x64xbf16> {flamia.param = "dq"}, %arg17: !flamia.global<?x8xi32> {flamia.param = "items"}, %arg18: i32 {flamia.param = "num_items"}, %arg19: !flamia.global<1xi32> {flamia.param = "counter"}, %arg20: f32 {flamia.param = "softmax_scale_log2"}, %arg21: f32 {flamia.param = "softmax_scale"}, %arg22: i32 {flamia.param = "T"}) attributes {flamia.phase = "backward", launch = #flamia.launch<persistent>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
    %0 = flamia.queue.create %arg19, %arg18 : !flamia.global<1xi32>
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %1:2 = scf.while (%arg23 = %c0_i32) : (i32) -> (i32, i32) {
      %2 = flamia.queue.next fetch %0[%arg23]
      %3 = arith.cmpi slt, %2, %arg18 : i32
      scf.condition(%3) %arg23, %2 : i32, i32
    } do {
    ^bb0(%arg23: i32, %arg24: i32):
      // expected-error @below {{flamia-tile: the operands of S = Q K^T must have one format (E4M3 or E2M1), got 'f8E4M3FN' and 'f4E2M1FN'}}
      flamia.attention_dq_tile %arg17[%arg24] q(%arg0, %arg1) k(%arg2, %arg3) v(%arg4, %arg5) grad_o(%arg6, %arg7) k_tb(%arg8, %arg9) safe(%arg10, %arg11, %arg12, %arg13) lse %arg14 delta %arg15 to %arg16 scale %arg20, %arg21 tokens %arg22 {block_m = 128 : i64, block_n = 128 : i64, causal, recipe = #flamia.recipe<nvfp4_mixed, safe_block = 128>} : (!flamia.global<?x8xi32>, i32, !flamia.global<?x4x64xf8E4M3FN>, !flamia.global<?x4x512xi8>, !flamia.global<?x2x64xf4E2M1FN>, !flamia.global<?x2x512xi8>, !flamia.global<?x2x64xf4E2M1FN>, !flamia.global<?x2x512xi8>, !flamia.global<?x4x64xf4E2M1FN>, !flamia.global<?x4x512xi8>, !flamia.global<?x2x64xf8E4M3FN>, !flamia.global<?x2x512xi8>, !flamia.global<?x4x64xbf16>, !flamia.global<?x2x64xbf16>, !flamia.global<?x2x64xbf16>, !flamia.global<?x4x64xbf16>, !flamia.global<4x?xf32>, !flamia.global<4x?xf32>, !flamia.global<?x4x64xbf16>, f32, f32, i32) -> ()
      %2 = arith.addi %arg23, %c1_i32 : i32
      scf.yield %2 : i32
    }
    flamia.return
  }
}

// -----

// dO's token blocks (dV = P^T dO, contracted over queries) in NVFP4.
module {
  flamia.kernel @train_attention_dkdv(%arg0: !flamia.global<?x4x64xf4E2M1FN> {flamia.param = "q_pt"}, %arg1: !flamia.global<?x4x512xi8> {flamia.param = "q_sf"}, %arg2: !flamia.global<?x2x64xf4E2M1FN> {flamia.param = "k_pt"}, %arg3: !flamia.global<?x2x512xi8> {flamia.param = "k_sf"}, %arg4: !flamia.global<?x2x64xf4E2M1FN> {flamia.param = "v_pt"}, %arg5: !flamia.global<?x2x512xi8> {flamia.param = "v_sf_tokens"}, %arg6: !flamia.global<?x4x64xf4E2M1FN> {flamia.param = "do_pt"}, %arg7: !flamia.global<?x4x512xi8> {flamia.param = "do_sf"}, %arg8: !flamia.global<?x4x64xf8E4M3FN> {flamia.param = "q_tb"}, %arg9: !flamia.global<?x4x512xi8> {flamia.param = "q_tb_sf_channels"}, %arg10: !flamia.global<?x4x64xf4E2M1FN> {flamia.param = "do_tb"}, %arg11: !flamia.global<?x4x512xi8> {flamia.param = "do_sf_channels"}, %arg12: !flamia.global<?x4x64xbf16> {flamia.param = "q"}, %arg13: !flamia.global<?x2x64xbf16> {flamia.param = "k"}, %arg14: !flamia.global<?x2x64xbf16> {flamia.param = "v"}, %arg15: !flamia.global<?x4x64xbf16> {flamia.param = "grad_o"}, %arg16: !flamia.global<4x?xf32> {flamia.param = "lse"}, %arg17: !flamia.global<4x?xf32> {flamia.param = "delta"}, %arg18: !flamia.global<?x2x64xbf16> {flamia.param = "dk"}, %arg19: !flamia.global<?x2x64xbf16> {flamia.param = "dv"}, %arg20: !flamia.global<?x8xi32> {flamia.param = "kv_items"}, %arg21: i32 {flamia.param = "num_kv_items"}, %arg22: !flamia.global<1xi32> {flamia.param = "counter"}, %arg23: f32 {flamia.param = "softmax_scale_log2"}, %arg24: f32 {flamia.param = "softmax_scale"}, %arg25: i32 {flamia.param = "T"}) attributes {flamia.phase = "backward", launch = #flamia.launch<persistent>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
    %0 = flamia.queue.create %arg22, %arg21 : !flamia.global<1xi32>
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %1:2 = scf.while (%arg26 = %c0_i32) : (i32) -> (i32, i32) {
      %2 = flamia.queue.next fetch %0[%arg26]
      %3 = arith.cmpi slt, %2, %arg21 : i32
      scf.condition(%3) %arg26, %2 : i32, i32
    } do {
    ^bb0(%arg26: i32, %arg27: i32):
      // expected-error @below {{flamia-tile: grad_o_tb is contracted over tokens (rows are channels, for dV = P^T dO): an MN-major operand, which kind::mxf4nvf4 cannot read; it must be an E4M3 token-block copy, got '!flamia.global<?x4x64xf4E2M1FN>'}}
      flamia.attention_dkdv_tile %arg20[%arg27] q(%arg0, %arg1) k(%arg2, %arg3) v(%arg4, %arg5) grad_o(%arg6, %arg7) q_tb(%arg8, %arg9) grad_o_tb(%arg10, %arg11) safe(%arg12, %arg13, %arg14, %arg15) lse %arg16 delta %arg17 to %arg18, %arg19 scale %arg23, %arg24 tokens %arg25 {block_m = 64 : i64, block_n = 128 : i64, causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<nvfp4_mixed, safe_block = 128>} : (!flamia.global<?x8xi32>, i32, !flamia.global<?x4x64xf4E2M1FN>, !flamia.global<?x4x512xi8>, !flamia.global<?x2x64xf4E2M1FN>, !flamia.global<?x2x512xi8>, !flamia.global<?x2x64xf4E2M1FN>, !flamia.global<?x2x512xi8>, !flamia.global<?x4x64xf4E2M1FN>, !flamia.global<?x4x512xi8>, !flamia.global<?x4x64xf8E4M3FN>, !flamia.global<?x4x512xi8>, !flamia.global<?x4x64xf4E2M1FN>, !flamia.global<?x4x512xi8>, !flamia.global<?x4x64xbf16>, !flamia.global<?x2x64xbf16>, !flamia.global<?x2x64xbf16>, !flamia.global<?x4x64xbf16>, !flamia.global<4x?xf32>, !flamia.global<4x?xf32>, !flamia.global<?x2x64xbf16>, !flamia.global<?x2x64xbf16>, f32, f32, i32) -> ()
      %2 = arith.addi %arg26, %c1_i32 : i32
      scf.yield %2 : i32
    }
    flamia.return
  }
}
