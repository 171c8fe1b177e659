// RUN: flamia-opt %s -split-input-file --flamia-varlen-schedule="target=sm_90a round-q=false" | FileCheck %s --check-prefix=SM90
// RUN: flamia-opt %s -split-input-file --flamia-varlen-schedule=target=sm_90a | FileCheck %s --check-prefix=ROUNDQ
// RUN: flamia-opt %s -split-input-file --flamia-varlen-schedule=target=sm_100a | FileCheck %s --check-prefix=SM100
// RUN: flamia-opt %s -split-input-file --flamia-varlen-schedule="target=sm_90a order=lpt" | FileCheck %s --check-prefix=LPT
// RUN: not flamia-opt %s -split-input-file --flamia-varlen-schedule="target=sm_90a order=document" 2>&1 | FileCheck %s --check-prefix=BADORDER
// RUN: flamia-opt %s -split-input-file --flamia-varlen-schedule="target=sm_90a prefetch-kv=false round-q=false" | FileCheck %s --check-prefix=NOPF
// RUN: flamia-opt %s -split-input-file --flamia-varlen-schedule="target=sm_90a payloads=true" | FileCheck %s --check-prefix=PAYLOADS

// What flamia-graph-pipeline leaves for a causal forward over packed
// documents, turned into a quantization kernel, a persistent attention
// kernel and the launch plan.
!b = tensor<?x8x128xbf16>
!kv = tensor<?x2x128xbf16>
func.func @attn(%q: !b, %k: !kv, %v: !kv, %cu: tensor<?xi32>) -> (!b, tensor<8x?xf32>) {
  %q8 = flamia.quantize %q : (!b) -> !flamia.qtensor<?x8x128xf8E4M3FN, f8E8M0FNU, 1x32>
  %k8 = flamia.quantize %k cu_seqlens(%cu) : (!kv, tensor<?xi32>) -> !flamia.qtensor<?x2x128xf8E4M3FN, f8E8M0FNU, 32x32>
  %v8 = flamia.quantize %v cu_seqlens(%cu) : (!kv, tensor<?xi32>) -> !flamia.qtensor<?x2x128xf8E4M3FN, f8E8M0FNU, 32x32>
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%v8) safe(%q, %k, %v) cu_seqlens(%cu)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (!flamia.qtensor<?x8x128xf8E4M3FN, f8E8M0FNU, 1x32>, !flamia.qtensor<?x2x128xf8E4M3FN, f8E8M0FNU, 32x32>,
         !flamia.qtensor<?x2x128xf8E4M3FN, f8E8M0FNU, 32x32>, !b, !kv, !kv, tensor<?xi32>) -> (!b, tensor<8x?xf32>)
  return %o, %lse : !b, tensor<8x?xf32>
}

// By default (round-q) the sm_90a forward rounds Q itself from the bf16
// original: the quantizer reads only K and V, over the key/value heads, and
// writes no copy of Q.
// ROUNDQ-LABEL: flamia.kernel @attn_quantize
// ROUNDQ-SAME: (%arg0: !flamia.global<?x2x128xbf16> {flamia.param = "k"}, %arg1: !flamia.global<?x2x128xbf16> {flamia.param = "v"}, %arg2: !flamia.global<?x2xi32> {flamia.param = "block_info"}
// V's rows are asked of L2 before K is quantized.
// ROUNDQ-NOT: flamia.prefetch_rows %arg0
// ROUNDQ: flamia.prefetch_rows %arg1
// ROUNDQ-NOT: flamia.quantize_block %arg{{.*}} per_token
// ROUNDQ: flamia.quantize_block %arg0 {{.*}} token_block_scales(%arg3) token_block_dequant(%arg5) :
// ROUNDQ-NEXT: flamia.quantize_block %arg1 {{.*}} token_block_scales(%arg4) token_block_dequant(%arg6) :
// ROUNDQ-LABEL: flamia.kernel @attn_attention_fwd
// ROUNDQ-SAME: (%arg0: !flamia.global<?x8x128xbf16> {flamia.param = "q"}, %arg1: !flamia.global<?x2x128xbf16> {flamia.param = "k_deq"}, %arg2: !flamia.global<?x2x128xbf16> {flamia.param = "v_deq"}, %arg3: !flamia.global<?x2x128xbf16> {flamia.param = "k"}, %arg4: !flamia.global<?x2x128xbf16> {flamia.param = "v"}
// ROUNDQ: flamia.attention_tile %arg7[%{{.*}}] q(%arg0) k(%arg1) v(%arg2) safe(%arg0, %arg3, %arg4)
// ROUNDQ-SAME: round_q
// ROUNDQ-LABEL: func.func @attn
// ROUNDQ-NOT: workspace "q_
// ROUNDQ: flamia.launch @attn_quantize(%arg1, %arg2, {{.*}}) grid ["NB", "Hkv", "1"]
// ROUNDQ-NEXT: flamia.launch @attn_attention_fwd(%arg0, {{.*}}) grid ["NUM_SMS", "1", "1"]

// With round-q=false, the quantization kernel: one CTA per (32-token
// block, query head); K and V only for the 2 key/value heads (GQA).
// SM90-LABEL: flamia.kernel @attn_quantize
// SM90-SAME: {flamia.param = "q"}
// SM90-SAME: {flamia.param = "block_info"}
// SM90-SAME: {flamia.param = "q_deq"}
// SM90-SAME: attributes {flamia.phase = "forward", launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64}
// SM90: %[[B:.*]] = arith.index_cast %block_id_x
// SM90: %[[H:.*]] = arith.index_cast %block_id_y
// SM90: %[[START:.*]], %[[LEN:.*]] = flamia.block_info.load %{{.*}}[%[[B]]]
// K and V of the CTA's block are asked of L2 first, so that their reads
// overlap Q's quantization.
// SM90: %[[KVH:.*]] = arith.constant 2 : i32
// SM90: %[[ISKV:.*]] = arith.cmpi slt, %[[H]], %[[KVH]]
// SM90: scf.if %[[ISKV]]
// Without the prefetch (prefetch-kv=false, to compare):
// NOPF-LABEL: flamia.kernel @attn_quantize
// NOPF-NOT: flamia.prefetch_rows
// NOPF: flamia.quantize_block %arg0
// SM90-NEXT: flamia.prefetch_rows %arg1 rows(%[[START]], %[[LEN]]) head %[[H]] : !flamia.global<?x2x128xbf16>
// SM90-NEXT: flamia.prefetch_rows %arg2 rows(%[[START]], %[[LEN]]) head %[[H]] : !flamia.global<?x2x128xbf16>
// No sm_90a kernel reads the E4M3 payloads (the MMAs take the bf16
// dequantized copies), so only the scales and the dequantized copies are
// written; a forward alone needs no 32x32 copy of Q.
// SM90: flamia.quantize_block %arg0 rows(%[[START]], %[[LEN]]) block %[[B]] head %[[H]] per_token_scales(%arg4) per_token_dequant(%arg7) : (
// SM90: scf.if %[[ISKV]]
// SM90: flamia.quantize_block %arg1 {{.*}} head %[[H]] token_block_scales(%arg5) token_block_dequant(%arg8) : (
// SM90: flamia.quantize_block %arg2 {{.*}} head %[[H]] token_block_scales(%arg6) token_block_dequant(%arg9) : (
// With payloads=true, every copy of the recipe, payloads included (for
// inspection and flamia-run --check's comparison of the codes):
// PAYLOADS-LABEL: flamia.kernel @attn_quantize
// PAYLOADS: flamia.quantize_block %arg0 {{.*}} per_token(%arg4, %arg5) per_token_dequant(%arg12) token_block(%arg6, %arg7) :
// PAYLOADS: flamia.quantize_block %arg1 {{.*}} token_block(%arg8, %arg9) token_block_dequant(%arg13) :
// PAYLOADS: flamia.quantize_block %arg2 {{.*}} token_block(%arg10, %arg11) token_block_dequant(%arg14) :
// PAYLOADS-LABEL: func.func @attn
// PAYLOADS: flamia.workspace workspace "q_pt" dims ["T", "8", "128"] : !flamia.global<?x8x128xf8E4M3FN>

// The persistent kernel: a work loop over scheduled items.
// SM90-LABEL: flamia.kernel @attn_attention_fwd
// SM90-SAME: launch = #flamia.launch<persistent>, schedule = {block_m = 128 : i64, block_n = 128 : i64, cost_model = "sm_90a", order = "l2-sections", safe_block = 128 : i64}
// The order the host hands out the items in: sm_90a's default above, the
// option's here; the document order is a baseline, not a kernel's order.
// LPT-LABEL: flamia.kernel @attn_attention_fwd
// LPT-SAME: cost_model = "sm_90a", order = "lpt"
// BADORDER: error: 'flamia.attention_fwd' op flamia-varlen-schedule: unknown order 'document' (expected lpt or l2-sections)
// SM90: %[[QUEUE:.*]] = flamia.queue.create %arg10, %arg9
// SM90: scf.while
// SM90: flamia.queue.next fetch %[[QUEUE]]
// SM90: flamia.attention_tile %arg8[%{{.*}}] q(%arg0) k(%arg1) v(%arg2) safe(%arg3, %arg4, %arg5) to %arg6, %arg7 scale %arg11 tokens %arg12

// The launch plan: buffers in, workspaces, launches in order.
// SM90-LABEL: func.func @attn
// SM90-SAME: {flamia.buffer = "q", flamia.dims = ["T", "8", "128"]}
// SM90-SAME: {flamia.buffer = "cu_seqlens", flamia.dims = ["NUM_DOCS + 1"]}
// SM90-SAME: {flamia.buffer = "lse", flamia.dims = ["8", "T"], flamia.output}
// SM90-NOT: workspace "q_pt"
// SM90-NOT: workspace "q_tb"
// SM90-NOT: workspace "k_tb"
// SM90: flamia.workspace workspace "k_tb_scales" dims ["NB", "2", "4"]
// SM90: flamia.workspace schedule "items" dims ["NUM_ITEMS", "8"]
// SM90: flamia.launch @attn_quantize({{.*}}) grid ["NB", "Hq", "1"]
// SM90: flamia.launch @attn_attention_fwd({{.*}}) grid ["NUM_SMS", "1", "1"]

// On sm_100a the attention kernel reads payloads and scales (block-scaled
// MMAs), not dequantized copies, and the cost model is Blackwell's.
// SM100-LABEL: flamia.kernel @attn_quantize
// SM100-NOT: q_deq
// SM100-SAME: {flamia.param = "q_sf"}, %{{.*}}: !flamia.global<?x2x512xi8> {flamia.param = "k_sf"}, %{{.*}}: !flamia.global<?x2x512xi8> {flamia.param = "v_sf"}
// The scale-factor tiles of Q (per token), K (rows = keys) and V (rows =
// channels), next to the logical scales.
// SM100: flamia.quantize_block %arg0 {{.*}} per_token(%arg4, %arg5) token_block(%arg6, %arg7) per_token_tiles(%arg12)
// SM100: flamia.quantize_block %arg1 {{.*}} token_block(%arg8, %arg9) token_block_tiles(%arg13) {token_block_tile_rows = "tokens"}
// SM100: flamia.quantize_block %arg2 {{.*}} token_block(%arg10, %arg11) token_block_tiles(%arg14) {token_block_tile_rows = "channels"}
// SM100-LABEL: flamia.kernel @attn_attention_fwd
// SM100-SAME: {flamia.param = "q_pt"}, %arg1: !flamia.global<?x8x512xi8> {flamia.param = "q_sf"}
// SM100-SAME: {flamia.param = "k_tb"}, %arg3: !flamia.global<?x2x512xi8> {flamia.param = "k_sf"}
// SM100-SAME: {flamia.param = "v_tb"}, %arg5: !flamia.global<?x2x512xi8> {flamia.param = "v_sf"}
// SM100-SAME: cost_model = "sm_100a", order = "lpt"
// SM100: flamia.attention_tile %arg11[%{{.*}}] q(%arg0, %arg1) k(%arg2, %arg3) v(%arg4, %arg5) safe(%arg6, %arg7, %arg8)
// One 512-byte tile slot per (token block, head):
// SM100: flamia.workspace workspace "q_sf" dims ["NB", "8", "512"] : !flamia.global<?x8x512xi8>
// SM100: flamia.workspace workspace "k_sf" dims ["NB", "2", "512"] : !flamia.global<?x2x512xi8>
// SM100: flamia.workspace workspace "v_sf" dims ["NB", "2", "512"] : !flamia.global<?x2x512xi8>
