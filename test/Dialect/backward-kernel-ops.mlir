// RUN: flamia-opt %s -split-input-file | flamia-opt -split-input-file | FileCheck %s
// RUN: flamia-opt %s -split-input-file --mlir-print-op-generic | flamia-opt -split-input-file | FileCheck %s
// The backward's block-level ops print in a form that parses back to the
// same IR (custom and generic forms).

// CHECK-LABEL: flamia.kernel @backward_fragments(
// CHECK: %[[ST:.*]] = flamia.frag.mask %{{.*}} query %{{.*}} key %{{.*}} limit %{{.*}} {causal, transposed} : !flamia.frag<64x64xf32>
// CHECK: %[[P:.*]], %[[DS:.*]] = flamia.softmax.grad %[[ST]], %{{.*}} lse %arg1 delta %arg2 head %{{.*}} queries(%{{.*}}, %{{.*}}, %{{.*}}) tokens %arg4 scale %arg5 {transposed} : !flamia.frag<64x64xf32>, !flamia.global<8x?xf32>
// CHECK: %[[L2:.*]] = flamia.frag.load_lse2 %arg1 head %{{.*}} queries(%{{.*}}, %{{.*}}, %{{.*}}) tokens %arg4 {transposed, unmasked} : !flamia.global<8x?xf32> -> !flamia.frag<64x64xf32>
// CHECK: flamia.softmax.grad %{{.*}}, %{{.*}} lse %arg1 delta %arg2 head %{{.*}} queries(%{{.*}}, %{{.*}}, %{{.*}}) tokens %arg4 scale %arg5 preloaded %[[L2]] : !flamia.frag<64x64xf32> {transposed, unmasked} : !flamia.frag<64x64xf32>, !flamia.global<8x?xf32>
// CHECK: %{{.*}} = flamia.frag.block_quantize %[[DS]] quantized %{{.*}} : !flamia.frag<64x64xf32> -> !flamia.frag<64x64xbf16>
// CHECK: flamia.grad.store %{{.*}} times %arg5 to %arg3 rows(%{{.*}}, %{{.*}}, %{{.*}}) head %{{.*}} : !flamia.frag<64x128xf32>, !flamia.global<?x2x128xf32>
flamia.kernel @backward_fragments(%items: !flamia.global<?x8xi32> {flamia.param = "kv_items"},
                                  %lse: !flamia.global<8x?xf32> {flamia.param = "lse"},
                                  %delta: !flamia.global<8x?xf32> {flamia.param = "delta"},
                                  %dk: !flamia.global<?x2x128xf32> {flamia.param = "dk"},
                                  %tokens: i32 {flamia.param = "T"},
                                  %scale: f32 {flamia.param = "softmax_scale_log2"})
    attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  flamia.role "consumer" warpgroups [1, 3) registers 232 {
    %c0 = arith.constant 0 : i32
    %true = arith.constant true
    %q_start, %q_rows, %doc_start, %doc_end, %q_head, %kv_head, %block_base, %q_tile =
        flamia.item.load %items[%c0] : !flamia.global<?x8xi32>
    %doc_len = arith.subi %doc_end, %doc_start : i32
    %s = flamia.frag.zero : !flamia.frag<64x64xf32>
    %dp = flamia.frag.zero : !flamia.frag<64x64xf32>
    %st = flamia.frag.mask %s query %c0 key %c0 limit %doc_len {causal, transposed}
        : !flamia.frag<64x64xf32>
    %p, %ds = flamia.softmax.grad %st, %dp lse %lse delta %delta head %q_head
        queries(%doc_start, %c0, %doc_len) tokens %tokens scale %scale {transposed}
        : !flamia.frag<64x64xf32>, !flamia.global<8x?xf32>
    %l2 = flamia.frag.load_lse2 %lse head %q_head queries(%doc_start, %c0, %doc_len)
        tokens %tokens {transposed, unmasked} : !flamia.global<8x?xf32> -> !flamia.frag<64x64xf32>
    %p2, %ds2 = flamia.softmax.grad %s, %dp lse %lse delta %delta head %q_head
        queries(%doc_start, %c0, %doc_len) tokens %tokens scale %scale
        preloaded %l2 : !flamia.frag<64x64xf32> {transposed, unmasked}
        : !flamia.frag<64x64xf32>, !flamia.global<8x?xf32>
    %dsq = flamia.frag.block_quantize %ds quantized %true
        : !flamia.frag<64x64xf32> -> !flamia.frag<64x64xbf16>
    %acc = flamia.frag.zero : !flamia.frag<64x128xf32>
    flamia.grad.store %acc times %scale to %dk rows(%q_start, %c0, %q_rows) head %kv_head
        : !flamia.frag<64x128xf32>, !flamia.global<?x2x128xf32>
  }
  flamia.return
}

// -----

// CHECK-LABEL: flamia.kernel @grad_quantize(
// CHECK: flamia.row_dot %arg0, %arg1 rows(%{{.*}}, %{{.*}}) head %{{.*}} to %arg2 tokens %arg3 : !flamia.global<?x8x128xbf16>, !flamia.global<?x8x128xbf16>, !flamia.global<8x?xf32>
flamia.kernel @grad_quantize(%do: !flamia.global<?x8x128xbf16> {flamia.param = "grad_o"},
                             %o: !flamia.global<?x8x128xbf16> {flamia.param = "o"},
                             %delta: !flamia.global<8x?xf32> {flamia.param = "delta"},
                             %tokens: i32 {flamia.param = "T"})
    attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  flamia.row_dot %do, %o rows(%c0, %c32) head %c0 to %delta tokens %tokens
      : !flamia.global<?x8x128xbf16>, !flamia.global<?x8x128xbf16>, !flamia.global<8x?xf32>
  flamia.return
}

// -----
// The second copies of K (dQ = dS K) and dO (dV = P^T dO), where a recipe
// quantizes them differently for their other GEMM.
// CHECK-LABEL: func.func @second_copies
// CHECK: flamia.attention_dq_tile %{{.*}} q(%{{.*}}) k(%[[K:.*]]) v(%[[K]]) grad_o(%[[Q:.*]]) k_tb(%[[K]]) safe() lse
// CHECK: flamia.attention_dkdv_tile %{{.*}} grad_o(%[[Q]]) q_tb(%[[Q]]) grad_o_tb(%[[Q]]) safe() lse
func.func @second_copies(%items: !flamia.global<?x8xi32>, %i: i32, %q: !flamia.global<?x8x128xbf16>,
                         %k: !flamia.global<?x2x128xbf16>, %lse: !flamia.global<8x?xf32>,
                         %dq: !flamia.global<?x8x128xf32>, %dk: !flamia.global<?x2x128xf32>, %c: f32) {
  flamia.attention_dq_tile %items[%i] q(%q) k(%k) v(%k) grad_o(%q) k_tb(%k) safe() lse %lse delta %lse
      to %dq scale %c, %c tokens %i
      {recipe = #flamia.recipe<mxfp8, strict>, block_m = 128 : i64, block_n = 128 : i64}
      : (!flamia.global<?x8xi32>, i32, !flamia.global<?x8x128xbf16>, !flamia.global<?x2x128xbf16>,
         !flamia.global<?x2x128xbf16>, !flamia.global<?x8x128xbf16>, !flamia.global<?x2x128xbf16>,
         !flamia.global<8x?xf32>, !flamia.global<8x?xf32>, !flamia.global<?x8x128xf32>, f32, f32, i32) -> ()
  flamia.attention_dkdv_tile %items[%i] q(%q) k(%k) v(%k) grad_o(%q) q_tb(%q) grad_o_tb(%q) safe() lse %lse delta %lse
      to %dk, %dk scale %c, %c tokens %i
      {recipe = #flamia.recipe<mxfp8, strict>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, block_m = 64 : i64, block_n = 128 : i64}
      : (!flamia.global<?x8xi32>, i32, !flamia.global<?x8x128xbf16>, !flamia.global<?x2x128xbf16>,
         !flamia.global<?x2x128xbf16>, !flamia.global<?x8x128xbf16>, !flamia.global<?x8x128xbf16>,
         !flamia.global<?x8x128xbf16>, !flamia.global<8x?xf32>, !flamia.global<8x?xf32>,
         !flamia.global<?x2x128xf32>, !flamia.global<?x2x128xf32>, f32, f32, i32) -> ()
  return
}
