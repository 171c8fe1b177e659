// RUN: flamia-opt %s -split-input-file -verify-diagnostics
// Every verifier error of the backward's block-level ops, one per split.

func.func @f(%s: !flamia.frag<64x64xbf16>, %lse: !flamia.global<8x?xf32>, %i: i32, %c: f32) {
  // expected-error @below {{'flamia.softmax.grad' op the scores must be f32, got '!flamia.frag<64x64xbf16>'}}
  %p, %ds = flamia.softmax.grad %s, %s lse %lse delta %lse head %i queries(%i, %i, %i)
      tokens %i scale %c : !flamia.frag<64x64xbf16>, !flamia.global<8x?xf32>
  return
}

// -----
func.func @f(%s: !flamia.frag<64x64xf32>, %lse: !flamia.global<8x?xf32>,
             %delta: !flamia.global<4x?xf32>, %i: i32, %c: f32) {
  // expected-error @below {{'flamia.softmax.grad' op failed to verify that all of {lse, delta} have same type}}
  %p, %ds = "flamia.softmax.grad"(%s, %s, %lse, %delta, %i, %i, %i, %i, %i, %c)
      : (!flamia.frag<64x64xf32>, !flamia.frag<64x64xf32>, !flamia.global<8x?xf32>,
         !flamia.global<4x?xf32>, i32, i32, i32, i32, i32, f32)
      -> (!flamia.frag<64x64xf32>, !flamia.frag<64x64xf32>)
  return
}

// -----
func.func @f(%s: !flamia.frag<64x64xf32>, %lse: !flamia.global<8x?xi32>, %i: i32, %c: f32) {
  // expected-error @below {{'flamia.softmax.grad' op LSE and delta must be f32 [H, T] tensors, got '!flamia.global<8x?xi32>'}}
  %p, %ds = flamia.softmax.grad %s, %s lse %lse delta %lse head %i queries(%i, %i, %i)
      tokens %i scale %c : !flamia.frag<64x64xf32>, !flamia.global<8x?xi32>
  return
}

// -----
func.func @f(%s: !flamia.frag<64x64xf32>, %l2: !flamia.frag<64x32xf32>,
             %lse: !flamia.global<8x?xf32>, %i: i32, %c: f32) {
  // expected-error @below {{'flamia.softmax.grad' op the preloaded LSE must have the scores' type '!flamia.frag<64x64xf32>', got '!flamia.frag<64x32xf32>'}}
  %p, %ds = flamia.softmax.grad %s, %s lse %lse delta %lse head %i queries(%i, %i, %i)
      tokens %i scale %c preloaded %l2 : !flamia.frag<64x32xf32>
      : !flamia.frag<64x64xf32>, !flamia.global<8x?xf32>
  return
}

// -----
func.func @f(%lse: !flamia.global<8x?xf32>, %i: i32) {
  // expected-error @below {{'flamia.frag.load_lse2' op loads f32 values, got '!flamia.frag<64x64xbf16>'}}
  %l2 = flamia.frag.load_lse2 %lse head %i queries(%i, %i, %i) tokens %i
      : !flamia.global<8x?xf32> -> !flamia.frag<64x64xbf16>
  return
}

// -----
func.func @f(%lse: !flamia.global<8x?xbf16>, %i: i32) {
  // expected-error @below {{'flamia.frag.load_lse2' op LSE must be an f32 [H, T] tensor, got '!flamia.global<8x?xbf16>'}}
  %l2 = flamia.frag.load_lse2 %lse head %i queries(%i, %i, %i) tokens %i
      : !flamia.global<8x?xbf16> -> !flamia.frag<64x64xf32>
  return
}

// -----
func.func @f(%s: !flamia.frag<64x48xf32>, %q: i1) {
  // expected-error @below {{'flamia.frag.block_quantize' op blocks of 32 columns need a multiple of 32 columns, got 48}}
  %r = flamia.frag.block_quantize %s quantized %q : !flamia.frag<64x48xf32> -> !flamia.frag<64x48xbf16>
  return
}

// -----
func.func @f(%s: !flamia.frag<64x64xf32>, %q: i1) {
  // expected-error @below {{'flamia.frag.block_quantize' op quantizes an f32 fragment into a bf16 one of the same shape, got '!flamia.frag<64x64xf32>' -> '!flamia.frag<64x64xf8E4M3FN>'}}
  %r = flamia.frag.block_quantize %s quantized %q : !flamia.frag<64x64xf32> -> !flamia.frag<64x64xf8E4M3FN>
  return
}

// -----
func.func @f(%acc: !flamia.frag<64x128xf32>, %out: !flamia.global<?x2x64xf32>, %i: i32, %c: f32) {
  // expected-error @below {{'flamia.grad.store' op the accumulator has 128 columns but the gradient's head dim is 64}}
  flamia.grad.store %acc times %c to %out rows(%i, %i, %i) head %i
      : !flamia.frag<64x128xf32>, !flamia.global<?x2x64xf32>
  return
}

// -----
// A part of the rows: at most the head dim, a multiple of 8 columns.
func.func @f(%acc: !flamia.frag<128x128xf32>, %out: !flamia.global<?x2x64xf32>, %i: i32, %c: f32) {
  // expected-error @below {{'flamia.grad.store' op a part of the rows is a multiple of 8 columns, at most the head dim 64, got 128}}
  flamia.grad.store %acc times %c to %out rows(%i, %i, %i) head %i columns %i
      : !flamia.frag<128x128xf32>, !flamia.global<?x2x64xf32>
  return
}

// -----
func.func @f(%acc: !flamia.frag<128x64xf32>, %out: !flamia.global<?x2x128xf32>, %i: i32, %c: f32) {
  %c96 = arith.constant 96 : i32
  // expected-error @below {{'flamia.grad.store' op columns [96, 160) are not a part of the head dim 128 starting at a multiple of 8}}
  flamia.grad.store %acc times %c to %out rows(%i, %i, %i) head %i columns %c96
      : !flamia.frag<128x64xf32>, !flamia.global<?x2x128xf32>
  return
}

// -----
func.func @f(%acc: !flamia.frag<64x128xf32>, %out: !flamia.global<?x2x128xf16>, %i: i32, %c: f32) {
  // expected-error @below {{'flamia.grad.store' op the gradient must be a bf16 or f32 [T, H, D] tensor with static D, got '!flamia.global<?x2x128xf16>'}}
  flamia.grad.store %acc times %c to %out rows(%i, %i, %i) head %i
      : !flamia.frag<64x128xf32>, !flamia.global<?x2x128xf16>
  return
}

// -----
func.func @f(%a: !flamia.global<?x8x128xbf16>, %out: !flamia.global<4x?xf32>, %i: i32) {
  // expected-error @below {{'flamia.row_dot' op out must be an f32 [H, T] tensor with 8 heads, got '!flamia.global<4x?xf32>'}}
  flamia.row_dot %a, %a rows(%i, %i) head %i to %out tokens %i
      : !flamia.global<?x8x128xbf16>, !flamia.global<?x8x128xbf16>, !flamia.global<4x?xf32>
  return
}

// -----
func.func @f(%a: !flamia.global<?x8x128xbf16>, %b: !flamia.global<?x8x128xf32>,
             %out: !flamia.global<8x?xf32>, %i: i32) {
  // expected-error @below {{'flamia.row_dot' op a and b must be bf16 [T, H, D] tensors of one type, got '!flamia.global<?x8x128xbf16>' and '!flamia.global<?x8x128xf32>'}}
  flamia.row_dot %a, %b rows(%i, %i) head %i to %out tokens %i
      : !flamia.global<?x8x128xbf16>, !flamia.global<?x8x128xf32>, !flamia.global<8x?xf32>
  return
}

// -----
!q = !flamia.global<?x8x128xbf16>
!kv = !flamia.global<?x2x128xbf16>
func.func @f(%items: !flamia.global<?x8xi32>, %i: i32, %q: !q, %k: !kv, %lse: !flamia.global<8x?xf32>,
             %dq: !flamia.global<?x8x128xf32>, %c: f32) {
  // expected-error @below {{'flamia.attention_dq_tile' op the recipe has safe_block = 128: give the bf16 q, k, v, grad_o in safe(...)}}
  flamia.attention_dq_tile %items[%i] q(%q) k(%k) v(%k) grad_o(%q) safe(%q, %k, %k) lse %lse delta %lse
      to %dq scale %c, %c tokens %i
      {recipe = #flamia.recipe<mxfp8, safe_block = 128>, block_m = 128 : i64, block_n = 128 : i64}
      : (!flamia.global<?x8xi32>, i32, !q, !kv, !kv, !q, !q, !kv, !kv, !flamia.global<8x?xf32>,
         !flamia.global<8x?xf32>, !flamia.global<?x8x128xf32>, f32, f32, i32) -> ()
  return
}

// -----
!q = !flamia.global<?x8x128xbf16>
!kv = !flamia.global<?x2x128xbf16>
func.func @f(%items: !flamia.global<?x8xi32>, %i: i32, %q: !q, %k: !kv, %lse: !flamia.global<8x?xf32>,
             %dq: !flamia.global<?x8x64xf32>, %c: f32) {
  // expected-error @below {{'flamia.attention_dq_tile' op dq must be a bf16 or f32 [T, H, D] tensor with the H and D of '!flamia.global<?x8x128xbf16>', got '!flamia.global<?x8x64xf32>'}}
  flamia.attention_dq_tile %items[%i] q(%q) k(%k) v(%k) grad_o(%q) safe() lse %lse delta %lse
      to %dq scale %c, %c tokens %i
      {recipe = #flamia.recipe<mxfp8>, block_m = 128 : i64, block_n = 128 : i64}
      : (!flamia.global<?x8xi32>, i32, !q, !kv, !kv, !q, !flamia.global<8x?xf32>,
         !flamia.global<8x?xf32>, !flamia.global<?x8x64xf32>, f32, f32, i32) -> ()
  return
}

// -----
!q = !flamia.global<?x8x128xbf16>
!kv = !flamia.global<?x3x128xbf16>
func.func @f(%items: !flamia.global<?x8xi32>, %i: i32, %q: !q, %k: !kv, %lse: !flamia.global<8x?xf32>,
             %dk: !flamia.global<?x3x128xf32>, %c: f32) {
  // expected-error @below {{'flamia.attention_dkdv_tile' op k must be a [T, Hkv, D] tensor whose Hkv divides q's heads, got '!flamia.global<?x3x128xbf16>' for '!flamia.global<?x8x128xbf16>'}}
  flamia.attention_dkdv_tile %items[%i] q(%q) k(%k) v(%k) grad_o(%q) q_tb(%q) safe() lse %lse delta %lse
      to %dk, %dk scale %c, %c tokens %i
      {recipe = #flamia.recipe<mxfp8>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>,
       block_m = 64 : i64, block_n = 128 : i64}
      : (!flamia.global<?x8xi32>, i32, !q, !kv, !kv, !q, !q, !flamia.global<8x?xf32>,
         !flamia.global<8x?xf32>, !flamia.global<?x3x128xf32>, !flamia.global<?x3x128xf32>, f32, f32, i32) -> ()
  return
}

// -----
!q = !flamia.global<?x8x128xbf16>
!kv = !flamia.global<?x2x128xbf16>
func.func @f(%items: !flamia.global<?x8xi32>, %i: i32, %q: !q, %k: !kv, %lse: !flamia.global<8x?xf32>,
             %dq: !flamia.global<?x8x128xf32>, %c: f32) {
  // expected-error @below {{'flamia.attention_dq_tile' op k_tb must be a copy of the same tensor as k (as many operands, a [T, H, D] tensor with k's heads), got 1 operand(s) of type '!flamia.global<?x8x128xbf16>' for '!flamia.global<?x2x128xbf16>'}}
  flamia.attention_dq_tile %items[%i] q(%q) k(%k) v(%k) grad_o(%q) k_tb(%q) safe() lse %lse delta %lse
      to %dq scale %c, %c tokens %i
      {recipe = #flamia.recipe<mxfp8>, block_m = 128 : i64, block_n = 128 : i64}
      : (!flamia.global<?x8xi32>, i32, !q, !kv, !kv, !q, !q, !flamia.global<8x?xf32>,
         !flamia.global<8x?xf32>, !flamia.global<?x8x128xf32>, f32, f32, i32) -> ()
  return
}

// -----
!q = !flamia.global<?x8x128xbf16>
!kv = !flamia.global<?x2x128xbf16>
func.func @f(%items: !flamia.global<?x8xi32>, %i: i32, %q: !q, %k: !kv, %lse: !flamia.global<8x?xf32>,
             %dk: !flamia.global<?x2x128xf32>, %c: f32) {
  // expected-error @below {{'flamia.attention_dkdv_tile' op grad_o_tb must be a copy of the same tensor as grad_o (as many operands, a [T, H, D] tensor with grad_o's heads), got 2 operand(s) of type '!flamia.global<?x8x128xbf16>' for '!flamia.global<?x8x128xbf16>'}}
  flamia.attention_dkdv_tile %items[%i] q(%q) k(%k) v(%k) grad_o(%q) q_tb(%q) grad_o_tb(%q, %q) safe() lse %lse delta %lse
      to %dk, %dk scale %c, %c tokens %i
      {recipe = #flamia.recipe<mxfp8>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, block_m = 64 : i64, block_n = 128 : i64}
      : (!flamia.global<?x8xi32>, i32, !q, !kv, !kv, !q, !q, !q, !q, !flamia.global<8x?xf32>,
         !flamia.global<8x?xf32>, !flamia.global<?x2x128xf32>, !flamia.global<?x2x128xf32>, f32, f32, i32) -> ()
  return
}
