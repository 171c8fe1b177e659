// RUN: flamia-opt %s '--flamia-varlen-schedule=target=sm_90a payloads=true' | FileCheck %s
// RUN: flamia-opt %s --flamia-varlen-schedule=target=sm_90a | FileCheck %s --check-prefix=LEAN
// RUN: flamia-opt %s --flamia-varlen-schedule=target=sm_100a | FileCheck %s --check-prefix=SM100
// Strict mode (L3) changes none of nvfp4-mixed's layouts: the same kernels.
// RUN: sed 's/safe_block = 128>/safe_block = 128, strict>/' %s | flamia-opt '--flamia-varlen-schedule=target=sm_90a payloads=true' | FileCheck %s
// sm_100a's scale-factor tiles on the H200 (to check their layout there): Q
// and K per token in NVFP4, one 512-byte tile per 64 channels in a slot.
// RUN: flamia-opt %s '--flamia-varlen-schedule=target=sm_90a scale-tiles=true' | FileCheck %s --check-prefix=TILES

// Recipe nvfp4-mixed on sm_90a: Q and K are quantized per token in NVFP4
// (E2M1, one unsigned-E4M3 scale per 16 channels, no cu_seqlens), V in MXFP8
// 32x32 token blocks; the attention kernel reads the bf16 dequantized copies
// (wgmma has no FP4 operands), as it does for mxfp8. Q's token-block copy is
// the backward's (dK = dS^T Q).
!b = tensor<?x8x64xbf16>
!kv = tensor<?x2x64xbf16>
!q4 = !flamia.qtensor<?x8x64xf4E2M1FN, f8E4M3FN, 1x16>
!k4 = !flamia.qtensor<?x2x64xf4E2M1FN, f8E4M3FN, 1x16>
!v8 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
func.func @nvfp4(%q: !b, %k: !kv, %v: !kv, %cu: tensor<?xi32>) -> (!b, tensor<8x?xf32>) {
  %q4 = flamia.quantize %q : (!b) -> !q4
  %k4 = flamia.quantize %k : (!kv) -> !k4
  %v8 = flamia.quantize %v cu_seqlens(%cu) : (!kv, tensor<?xi32>) -> !v8
  %o, %lse = flamia.attention_fwd qk(%q4, %k4) pv(%v8) safe(%q, %k, %v) cu_seqlens(%cu)
      {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<nvfp4_mixed, safe_block = 128>}
      : (!q4, !k4, !v8, !b, !kv, !kv, tensor<?xi32>) -> (!b, tensor<8x?xf32>)
  return %o, %lse : !b, tensor<8x?xf32>
}

// CHECK-LABEL: flamia.kernel @nvfp4_quantize
// CHECK-SAME: !flamia.global<?x8x64xf4E2M1FN> {flamia.param = "q_pt"}, %{{.*}}: !flamia.global<?x8x4xf8E4M3FN> {flamia.param = "q_pt_scales"}
// CHECK-SAME: !flamia.global<?x2x64xf4E2M1FN> {flamia.param = "k_pt"}, %{{.*}}: !flamia.global<?x2x4xf8E4M3FN> {flamia.param = "k_pt_scales"}
// CHECK-NOT: "k_tb"
// CHECK: flamia.quantize_block %arg0 {{.*}} per_token(%arg4, %arg5) per_token_dequant(%arg12) token_block(%arg6, %arg7)
// K: per token, NVFP4, and its dequantized copy; V: token blocks.
// CHECK: flamia.quantize_block %arg1 {{.*}} per_token(%arg8, %arg9) per_token_dequant(%arg13) :
// CHECK-SAME: !flamia.global<?x2x64xf4E2M1FN>, !flamia.global<?x2x4xf8E4M3FN>, !flamia.global<?x2x64xbf16>
// CHECK: flamia.quantize_block %arg2 {{.*}} token_block(%arg10, %arg11) token_block_dequant(%arg14)

// CHECK-LABEL: flamia.kernel @nvfp4_attention_fwd
// CHECK-SAME: {flamia.param = "q_deq"}, %{{.*}}: !flamia.global<?x2x64xbf16> {flamia.param = "k_deq"}, %{{.*}}: !flamia.global<?x2x64xbf16> {flamia.param = "v_deq"}
// CHECK: flamia.attention_tile
// CHECK-SAME: recipe = #flamia.recipe<nvfp4_mixed, safe_block = 128{{(, strict)?}}>

// The manifest's dims of a packed E2M1 payload are bytes: D/2.
// CHECK-LABEL: func.func @nvfp4
// CHECK: flamia.workspace workspace "q_pt" dims ["T", "8", "32"] : !flamia.global<?x8x64xf4E2M1FN>
// CHECK: flamia.workspace workspace "q_pt_scales" dims ["T", "8", "4"] : !flamia.global<?x8x4xf8E4M3FN>
// CHECK: flamia.workspace workspace "k_pt" dims ["T", "2", "32"]
// CHECK: flamia.workspace workspace "k_pt_scales" dims ["T", "2", "4"]
// CHECK: flamia.workspace workspace "k_deq" dims ["T", "2", "64"] : !flamia.global<?x2x64xbf16>

// By default (LEAN) sm_90a writes no payloads, as no kernel of it reads
// them: the NVFP4 copies are their UE4M3 scales and dequantized values.
// LEAN-LABEL: flamia.kernel @nvfp4_quantize
// LEAN-NOT: "q_pt"
// LEAN-NOT: "k_pt"
// LEAN: flamia.quantize_block %arg0 {{.*}} per_token_scales(%arg4) per_token_dequant(%arg7) :
// LEAN-SAME: !flamia.global<?x8x4xf8E4M3FN>, !flamia.global<?x8x64xbf16>) -> ()
// LEAN: flamia.quantize_block %arg1 {{.*}} per_token_scales(%arg5) per_token_dequant(%arg8) :
// LEAN: flamia.quantize_block %arg2 {{.*}} token_block_scales(%arg6) token_block_dequant(%arg9) :
// LEAN-LABEL: func.func @nvfp4
// LEAN-NOT: workspace "q_pt"
// LEAN: flamia.workspace workspace "q_pt_scales" dims ["T", "8", "4"] : !flamia.global<?x8x4xf8E4M3FN>

// sm_100a's forward reads the E2M1 payloads of Q and K per token (two a
// byte: [T, H, 32] bytes at D = 64) with their UE4M3 scale-factor tiles (one
// 512-byte tile per 64 channels), and V's E4M3 32x32 copy.
// SM100-LABEL: flamia.kernel @nvfp4_quantize(
// SM100: flamia.quantize_block %arg0 {{.*}} per_token(%arg4, %arg5) {{.*}} per_token_tiles(%arg12) :
// SM100: flamia.quantize_block %arg1 {{.*}} per_token(%arg8, %arg9) per_token_tiles(%arg13) :
// SM100-SAME: !flamia.global<?x2x64xf4E2M1FN>, !flamia.global<?x2x4xf8E4M3FN>, !flamia.global<?x2x512xi8>
// SM100-LABEL: flamia.kernel @nvfp4_attention_fwd(
// SM100-SAME: %arg0: !flamia.global<?x8x64xf4E2M1FN> {flamia.param = "q_pt"}, %arg1: !flamia.global<?x8x512xi8> {flamia.param = "q_sf"}, %arg2: !flamia.global<?x2x64xf4E2M1FN> {flamia.param = "k_pt"}, %arg3: !flamia.global<?x2x512xi8> {flamia.param = "k_sf"}, %arg4: !flamia.global<?x2x64xf8E4M3FN> {flamia.param = "v_tb"}
// SM100: flamia.attention_tile %arg11[%{{.*}}] q(%arg0, %arg1) k(%arg2, %arg3) v(%arg4, %arg5)
// SM100: flamia.workspace workspace "q_pt" dims ["T", "8", "32"] : !flamia.global<?x8x64xf4E2M1FN>
// SM100: flamia.workspace workspace "k_pt" dims ["T", "2", "32"] : !flamia.global<?x2x64xf4E2M1FN>
// SM100: flamia.workspace workspace "q_sf" dims ["NB", "8", "512"]

// TILES-LABEL: flamia.kernel @nvfp4_quantize
// TILES: flamia.quantize_block %arg0 {{.*}} per_token_scales(%{{.*}}) per_token_dequant(%{{.*}}) per_token_tiles(%{{.*}}) :
// TILES-SAME: !flamia.global<?x8x512xi8>
// TILES: flamia.quantize_block %arg1 {{.*}} per_token_scales(%{{.*}}) per_token_dequant(%{{.*}}) per_token_tiles(%{{.*}}) :
// TILES-SAME: !flamia.global<?x2x4xf8E4M3FN>, !flamia.global<?x2x64xbf16>, !flamia.global<?x2x512xi8>
// TILES: flamia.quantize_block %arg2 {{.*}} token_block_tiles(%{{.*}}) {token_block_tile_rows = "channels"}
// TILES-LABEL: func.func @nvfp4
// TILES: flamia.workspace workspace "q_sf" dims ["NB", "8", "512"]
// TILES: flamia.workspace workspace "k_sf" dims ["NB", "2", "512"]
// TILES: flamia.workspace workspace "v_sf" dims ["NB", "2", "512"]
