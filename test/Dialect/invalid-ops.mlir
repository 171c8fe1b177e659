// RUN: flamia-opt %s -split-input-file -verify-diagnostics
// Every op verifier error, one per split.

!bf = tensor<?x16x128xbf16>
!kv = tensor<?x4x128xbf16>
!lse = tensor<16x?xf32>
#r = #flamia.recipe<mxfp8, safe_block = 128>

func.func @f(%q: tensor<16x128xbf16>, %k: !kv, %v: !kv) {
  // expected-error @below {{operand 'q' must be a packed [T, H, D] tensor (rank 3), got 'tensor<16x128xbf16>'}}
  %o, %l = flamia.attention %q, %k, %v {recipe = #r} : (tensor<16x128xbf16>, !kv, !kv) -> (!bf, !lse)
  return
}

// -----
func.func @f(%q: tensor<?x16x128xbf16>, %k: tensor<?x4x64xbf16>, %v: tensor<?x4x64xbf16>) {
  // expected-error @below {{head dim mismatch: 'q' has D = 128 but 'k' has D = 64}}
  %o, %l = flamia.attention %q, %k, %v {recipe = #flamia.recipe<mxfp8>}
      : (tensor<?x16x128xbf16>, tensor<?x4x64xbf16>, tensor<?x4x64xbf16>) -> (tensor<?x16x128xbf16>, tensor<16x?xf32>)
  return
}

// -----
func.func @f(%q: tensor<?x16x128xbf16>, %k: tensor<?x4x128xbf16>, %v: tensor<?x4x64xbf16>) {
  // expected-error @below {{head dim mismatch: 'v' has D = 64 but 'k' has D = 128 (value and key head dims must be equal)}}
  %o, %l = flamia.attention %q, %k, %v {recipe = #flamia.recipe<mxfp8>}
      : (tensor<?x16x128xbf16>, tensor<?x4x128xbf16>, tensor<?x4x64xbf16>) -> (tensor<?x16x128xbf16>, tensor<16x?xf32>)
  return
}

// -----
func.func @f(%q: tensor<?x16x128xbf16>, %k: tensor<?x4x128xbf16>, %v: tensor<?x8x128xbf16>) {
  // expected-error @below {{'k' and 'v' must have the same head count, got 4 and 8}}
  %o, %l = flamia.attention %q, %k, %v {recipe = #flamia.recipe<mxfp8>}
      : (tensor<?x16x128xbf16>, tensor<?x4x128xbf16>, tensor<?x8x128xbf16>) -> (tensor<?x16x128xbf16>, tensor<16x?xf32>)
  return
}

// -----
// Runtime head counts ('?') are all or nothing: the GQA ratio of a static
// query count over a runtime key/value count is unknowable.
func.func @f(%q: tensor<?x12x128xbf16>, %k: tensor<?x?x128xbf16>, %v: tensor<?x?x128xbf16>) {
  // expected-error @below {{query heads (12) and key/value heads (?) must both be static or both runtime values ('?')}}
  %o, %l = flamia.attention %q, %k, %v {recipe = #flamia.recipe<mxfp8>}
      : (tensor<?x12x128xbf16>, tensor<?x?x128xbf16>, tensor<?x?x128xbf16>) -> (tensor<?x12x128xbf16>, tensor<12x?xf32>)
  return
}

// -----
func.func @f(%q: tensor<?x?x?xbf16>, %k: tensor<?x?x128xbf16>, %v: tensor<?x?x128xbf16>) {
  // expected-error @below {{operand 'q' must have a static head dim, got 'tensor<?x?x?xbf16>'}}
  %o, %l = flamia.attention %q, %k, %v {recipe = #flamia.recipe<mxfp8>}
      : (tensor<?x?x?xbf16>, tensor<?x?x128xbf16>, tensor<?x?x128xbf16>) -> (tensor<?x?x?xbf16>, tensor<?x?xf32>)
  return
}

// -----
func.func @f(%q: tensor<?x12x128xbf16>, %k: tensor<?x5x128xbf16>, %v: tensor<?x5x128xbf16>) {
  // expected-error @below {{query heads (12) must be a multiple of key/value heads (5) (GQA)}}
  %o, %l = flamia.attention %q, %k, %v {recipe = #flamia.recipe<mxfp8>}
      : (tensor<?x12x128xbf16>, tensor<?x5x128xbf16>, tensor<?x5x128xbf16>) -> (tensor<?x12x128xbf16>, tensor<12x?xf32>)
  return
}

// -----
func.func @f(%q: tensor<10x1x64xbf16>, %k: tensor<12x1x64xbf16>, %v: tensor<12x1x64xbf16>) {
  // expected-error @below {{token count mismatch: 'q' has T = 10, 'k' has T = 12, 'v' has T = 12 (packed self-attention has one token axis)}}
  %o, %l = flamia.attention %q, %k, %v {recipe = #flamia.recipe<mxfp8>}
      : (tensor<10x1x64xbf16>, tensor<12x1x64xbf16>, tensor<12x1x64xbf16>) -> (tensor<10x1x64xbf16>, tensor<1x10xf32>)
  return
}

// -----
func.func @f(%q: tensor<?x1x72xbf16>) {
  // expected-error @below {{head dim 72 is not supported: it must be a multiple of 16 between 16 and 256}}
  %o, %l = flamia.attention %q, %q, %q {recipe = #flamia.recipe<mxfp8>}
      : (tensor<?x1x72xbf16>, tensor<?x1x72xbf16>, tensor<?x1x72xbf16>) -> (tensor<?x1x72xbf16>, tensor<1x?xf32>)
  return
}

// -----
func.func @f(%q: tensor<?x1x64xbf16>) {
  // expected-error @below {{'flamia.attention' op softmax_scale -1 must be finite and > 0}}
  %o, %l = flamia.attention %q, %q, %q {recipe = #flamia.recipe<mxfp8>, softmax_scale = -1.0 : f32}
      : (tensor<?x1x64xbf16>, tensor<?x1x64xbf16>, tensor<?x1x64xbf16>) -> (tensor<?x1x64xbf16>, tensor<1x?xf32>)
  return
}

// -----
// 0 is refused too (no attribute means 1/sqrt(D)), and so is inf: the rule of
// flamia::validation::validateSoftmaxScale, with its wording.
func.func @f(%q: tensor<?x1x64xbf16>) {
  // expected-error @below {{'flamia.attention' op softmax_scale 0 must be finite and > 0}}
  %o, %l = flamia.attention %q, %q, %q {recipe = #flamia.recipe<mxfp8>, softmax_scale = 0.0 : f32}
      : (tensor<?x1x64xbf16>, tensor<?x1x64xbf16>, tensor<?x1x64xbf16>) -> (tensor<?x1x64xbf16>, tensor<1x?xf32>)
  return
}

// -----
func.func @f(%q: tensor<?x1x64xbf16>) {
  // expected-error @below {{'flamia.attention' op softmax_scale inf must be finite and > 0}}
  %o, %l = flamia.attention %q, %q, %q {recipe = #flamia.recipe<mxfp8>, softmax_scale = 0x7F800000 : f32}
      : (tensor<?x1x64xbf16>, tensor<?x1x64xbf16>, tensor<?x1x64xbf16>) -> (tensor<?x1x64xbf16>, tensor<1x?xf32>)
  return
}

// -----
func.func @f(%q: tensor<?x1x64xbf16>, %cu: tensor<2x2xi32>) {
  // expected-error @below {{cu_seqlens must be a rank-1 i32 tensor [num_docs + 1], got 'tensor<2x2xi32>'}}
  %o, %l = flamia.attention %q, %q, %q cu_seqlens(%cu) {recipe = #flamia.recipe<mxfp8>}
      : (tensor<?x1x64xbf16>, tensor<?x1x64xbf16>, tensor<?x1x64xbf16>, tensor<2x2xi32>) -> (tensor<?x1x64xbf16>, tensor<1x?xf32>)
  return
}

// -----
func.func @f(%q: tensor<?x1x64xbf16>, %cu: tensor<1xi32>) {
  // expected-error @below {{cu_seqlens must have at least 2 entries (one document), got 'tensor<1xi32>'}}
  %o, %l = flamia.attention %q, %q, %q cu_seqlens(%cu) {recipe = #flamia.recipe<mxfp8>}
      : (tensor<?x1x64xbf16>, tensor<?x1x64xbf16>, tensor<?x1x64xbf16>, tensor<1xi32>) -> (tensor<?x1x64xbf16>, tensor<1x?xf32>)
  return
}

// -----
func.func @f(%q: tensor<?x2x64xbf16>) {
  // expected-error @below {{operand 'o' must have the shape of 'q' [?, 2, 64], got 'tensor<?x1x64xbf16>'}}
  %o, %l = flamia.attention %q, %q, %q {recipe = #flamia.recipe<mxfp8>}
      : (tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>) -> (tensor<?x1x64xbf16>, tensor<2x?xf32>)
  return
}

// -----
func.func @f(%q: tensor<?x2x64xbf16>) {
  // expected-error @below {{lse must be [Hq, T] = [2, ?] f32, got 'tensor<?x2xf32>'}}
  %o, %l = flamia.attention %q, %q, %q {recipe = #flamia.recipe<mxfp8>}
      : (tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>) -> (tensor<?x2x64xbf16>, tensor<?x2xf32>)
  return
}

// -----
func.func @f(%q: tensor<?x2x64xbf16>, %lse: tensor<2x?xf32>) {
  // expected-error @below {{operand 'grad_k' must have the shape of 'k' [?, 2, 64], got 'tensor<?x2x128xf32>'}}
  %dq, %dk, %dv = flamia.attention_grad %q, %q, %q, %q, %lse, %q {recipe = #flamia.recipe<mxfp8>}
      : (tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<2x?xf32>, tensor<?x2x64xbf16>)
      -> (tensor<?x2x64xf32>, tensor<?x2x128xf32>, tensor<?x2x64xf32>)
  return
}

// -----
func.func @f(%x: tensor<?x2x64xbf16>) {
  // expected-error @below {{result shape [?, 4, 64] does not match the input 'tensor<?x2x64xbf16>'}}
  %a = flamia.quantize %x : (tensor<?x2x64xbf16>) -> !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 1x32>
  return
}

// -----
func.func @f(%x: tensor<?x2x64xbf16>) {
  // expected-error @below {{global_scale = amax is NVFP4's second-level scale; it needs an f4E2M1FN result}}
  %a = flamia.quantize %x {global_scale = #flamia.global_scale<amax>}
      : (tensor<?x2x64xbf16>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
  return
}

// -----
func.func @f(%x: !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>) {
  // expected-error @below {{result 'tensor<?x2x32xf32>' does not have the input's shape [?, 2, 64]}}
  %a = flamia.dequantize %x : (!flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>) -> tensor<?x2x32xf32>
  return
}

// -----
func.func @f(%p: tensor<?x2x64xf8E5M2>, %s: tensor<?x2x2xf8E8M0FNU>) {
  // expected-error @below {{payload element type 'f8E5M2' does not match the qtensor format 'f8E4M3FN'}}
  %a = flamia.qtensor.create %p, %s : (tensor<?x2x64xf8E5M2>, tensor<?x2x2xf8E8M0FNU>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
  return
}

// -----
func.func @f(%p: tensor<?x3x64xf8E4M3FN>, %s: tensor<?x2x2xf8E8M0FNU>) {
  // expected-error @below {{payload 'tensor<?x3x64xf8E4M3FN>' does not have the qtensor's shape [?, 2, 64]}}
  %a = flamia.qtensor.create %p, %s : (tensor<?x3x64xf8E4M3FN>, tensor<?x2x2xf8E8M0FNU>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
  return
}

// -----
func.func @f(%p: tensor<?x2x64xf8E4M3FN>, %s: tensor<?x2x2xi8>) {
  // expected-error @below {{scale element type 'i8' does not match the qtensor's scale type 'f8E8M0FNU'}}
  %a = flamia.qtensor.create %p, %s : (tensor<?x2x64xf8E4M3FN>, tensor<?x2x2xi8>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
  return
}

// -----
func.func @f(%p: tensor<?x2x64xf8E4M3FN>, %s: tensor<?x2x4xf8E8M0FNU>) {
  // expected-error @below {{scales 'tensor<?x2x4xf8E8M0FNU>' do not match layout #flamia.scale_layout<32x32>: expected [NB, 2, 2] (NB = number of token blocks)}}
  %a = flamia.qtensor.create %p, %s : (tensor<?x2x64xf8E4M3FN>, tensor<?x2x4xf8E8M0FNU>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
  return
}

// -----
func.func @f(%p: tensor<100x2x64xf8E4M3FN>, %s: tensor<3x2x2xf8E8M0FNU>) {
  // expected-error @below {{100 tokens in document-local blocks of 32 need between 4 and 100 scale blocks, got 3}}
  %a = flamia.qtensor.create %p, %s : (tensor<100x2x64xf8E4M3FN>, tensor<3x2x2xf8E8M0FNU>) -> !flamia.qtensor<100x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
  return
}

// -----
func.func @f(%x: !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>) {
  // expected-error @below {{result must be 'tensor<?x2x64xf8E4M3FN>', got 'tensor<?x2x64xi8>'}}
  %a = flamia.qtensor.payload %x : !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32> -> tensor<?x2x64xi8>
  return
}

// -----
func.func @f(%x: !flamia.qtensor<8x2x64xf8E4M3FN, f8E8M0FNU, 1x32>) {
  // expected-error @below {{result must be 'tensor<8x2x2xf8E8M0FNU>', got 'tensor<4x2x2xf8E8M0FNU>'}}
  %a = flamia.qtensor.scales %x : !flamia.qtensor<8x2x64xf8E4M3FN, f8E8M0FNU, 1x32> -> tensor<4x2x2xf8E8M0FNU>
  return
}

// -----
!q8 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!kv8 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
!b = tensor<?x2x64xbf16>
func.func @f(%q8: !q8, %k: !b, %v8: !kv8) {
  // expected-error @below {{the operands of S = Q K^T must both be quantized or both bf16, but q is quantized and k is bf16}}
  %o, %l = flamia.attention_fwd qk(%q8, %k) pv(%v8)
      {recipe = #flamia.recipe<mxfp8>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>}
      : (!q8, !b, !kv8) -> (!b, tensor<2x?xf32>)
  return
}

// -----
!q8 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!kv8 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
!b = tensor<?x2x64xbf16>
func.func @f(%q8: !q8, %k8: !kv8, %v: !b) {
  // expected-error @below {{the operands of O = P V must both be quantized or both bf16, but p is quantized and v is bf16}}
  %o, %l = flamia.attention_fwd qk(%q8, %k8) pv(%v)
      {recipe = #flamia.recipe<mxfp8>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>}
      : (!q8, !kv8, !b) -> (!b, tensor<2x?xf32>)
  return
}

// -----
!q8 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!v4 = !flamia.qtensor<?x2x64xf4E2M1FN, f8E8M0FNU, 32x32>
!b = tensor<?x2x64xbf16>
func.func @f(%q8: !q8, %v4: !v4) {
  // expected-error @below {{v in O = P V is contracted over tokens (an MN-major operand), but FP4 (f4E2M1FN) payloads can only be K-major: use an FP8 copy for token-contracted GEMMs}}
  %o, %l = flamia.attention_fwd qk(%q8, %q8) pv(%v4)
      {recipe = #flamia.recipe<mxfp8>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>}
      : (!q8, !q8, !v4) -> (!b, tensor<2x?xf32>)
  return
}

// -----
// nvfp4-mixed's NVFP4 per-token copy of K fed to dQ = dS K, of Q to
// dK = dS^T Q, of dO to dV = P^T dO: each GEMM contracts it over tokens.
!nv = !flamia.qtensor<?x2x64xf4E2M1FN, f8E4M3FN, 1x16>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
!b = tensor<?x2x64xbf16>
func.func @f(%nv: !nv, %tb: !tb, %o: !b, %lse: tensor<2x?xf32>) {
  // expected-error @below {{k in dQ = dS K is contracted over tokens (an MN-major operand), but FP4 (f4E2M1FN) payloads can only be K-major: use an FP8 copy for token-contracted GEMMs}}
  %dq, %dk, %dv = flamia.attention_bwd qk(%nv, %nv) dov(%nv, %nv) dsk(%nv) dsq(%tb) pdo(%tb) o(%o) lse(%lse)
      {recipe = #flamia.recipe<nvfp4_mixed>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, ds = #flamia.precision<f8E4M3FN, online = 32>}
      : (!nv, !nv, !nv, !nv, !nv, !tb, !tb, !b, tensor<2x?xf32>) -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return
}

// -----
!nv = !flamia.qtensor<?x2x64xf4E2M1FN, f8E4M3FN, 1x16>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
!b = tensor<?x2x64xbf16>
func.func @f(%nv: !nv, %tb: !tb, %o: !b, %lse: tensor<2x?xf32>) {
  // expected-error @below {{q in dK = dS^T Q is contracted over tokens (an MN-major operand), but FP4 (f4E2M1FN) payloads can only be K-major}}
  %dq, %dk, %dv = flamia.attention_bwd qk(%nv, %nv) dov(%nv, %nv) dsk(%tb) dsq(%nv) pdo(%tb) o(%o) lse(%lse)
      {recipe = #flamia.recipe<nvfp4_mixed>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, ds = #flamia.precision<f8E4M3FN, online = 32>}
      : (!nv, !nv, !nv, !nv, !tb, !nv, !tb, !b, tensor<2x?xf32>) -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return
}

// -----
!nv = !flamia.qtensor<?x2x64xf4E2M1FN, f8E4M3FN, 1x16>
!tb = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
!b = tensor<?x2x64xbf16>
func.func @f(%nv: !nv, %tb: !tb, %o: !b, %lse: tensor<2x?xf32>) {
  // expected-error @below {{grad_o in dV = P^T dO is contracted over tokens (an MN-major operand), but FP4 (f4E2M1FN) payloads can only be K-major}}
  %dq, %dk, %dv = flamia.attention_bwd qk(%nv, %nv) dov(%nv, %nv) dsk(%tb) dsq(%tb) pdo(%nv) o(%o) lse(%lse)
      {recipe = #flamia.recipe<nvfp4_mixed>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, ds = #flamia.precision<f8E4M3FN, online = 32>}
      : (!nv, !nv, !nv, !nv, !tb, !tb, !nv, !b, tensor<2x?xf32>) -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return
}

// -----
!q8 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!b = tensor<?x2x64xbf16>
func.func @f(%q8: !q8) {
  // expected-error @below {{v in O = P V is contracted over tokens, but its per-token (1x32) scales change with every token: a block-scaled MMA applies one scale per 32 contraction elements, so use token blocks (e.g. 32x32)}}
  %o, %l = flamia.attention_fwd qk(%q8, %q8) pv(%q8)
      {recipe = #flamia.recipe<mxfp8>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>}
      : (!q8, !q8, !q8) -> (!b, tensor<2x?xf32>)
  return
}

// -----
!q8 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!v16 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 16x32>
!b = tensor<?x2x64xbf16>
func.func @f(%q8: !q8, %v: !v16) {
  // expected-error @below {{v in O = P V is contracted over tokens, but its token block 16 does not cover whole 32-element MMA scale vectors}}
  %o, %l = flamia.attention_fwd qk(%q8, %q8) pv(%v)
      {recipe = #flamia.recipe<mxfp8>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>}
      : (!q8, !q8, !v16) -> (!b, tensor<2x?xf32>)
  return
}

// -----
!q8 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!kv8 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
!b = tensor<?x2x64xbf16>
func.func @f(%q8: !q8, %k8: !kv8) {
  // expected-error @below {{the recipe has safe_block = 128, so the safe-block path needs the bf16 originals: add safe(q, k, v)}}
  %o, %l = flamia.attention_fwd qk(%q8, %k8) pv(%k8)
      {recipe = #flamia.recipe<mxfp8, safe_block = 128>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>}
      : (!q8, !kv8, !kv8) -> (!b, tensor<2x?xf32>)
  return
}

// -----
!q8 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!kv8 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
!b = tensor<?x2x64xbf16>
func.func @f(%q8: !q8, %k8: !kv8, %x: !b) {
  // expected-error @below {{safe-block operands given, but the recipe has no safe_block}}
  %o, %l = flamia.attention_fwd qk(%q8, %k8) pv(%k8) safe(%x, %x, %x)
      {recipe = #flamia.recipe<mxfp8>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>}
      : (!q8, !kv8, !kv8, !b, !b, !b) -> (!b, tensor<2x?xf32>)
  return
}

// -----
!q8 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!kv8 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
!b = tensor<?x2x64xbf16>
func.func @f(%q8: !q8, %k8: !kv8, %x: !b) {
  // expected-error @below {{safe(...) takes 3 bf16 tensors (q, k, v), got 2}}
  %o, %l = flamia.attention_fwd qk(%q8, %k8) pv(%k8) safe(%x, %x)
      {recipe = #flamia.recipe<mxfp8, safe_block = 32>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>}
      : (!q8, !kv8, !kv8, !b, !b) -> (!b, tensor<2x?xf32>)
  return
}

// -----
!q8 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!kv8 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
!b = tensor<?x2x64xbf16>
func.func @f(%q8: !q8, %k8: !kv8, %x: !b, %y: tensor<?x1x64xbf16>) {
  // expected-error @below {{operand 'safe k' must have the shape of 'k' [?, 2, 64], got 'tensor<?x1x64xbf16>'}}
  %o, %l = flamia.attention_fwd qk(%q8, %k8) pv(%k8) safe(%x, %y, %x)
      {recipe = #flamia.recipe<mxfp8, safe_block = 32>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>}
      : (!q8, !kv8, !kv8, !b, tensor<?x1x64xbf16>, !b) -> (!b, tensor<2x?xf32>)
  return
}

// -----
!q8 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!kv8 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
!b = tensor<?x2x64xbf16>
func.func @f(%q8: !q8, %k8: !kv8, %o: !b, %lse: tensor<2x?xf32>) {
  // expected-error @below {{ds is not bounded by 1, so a fixed scale cannot represent it: use an online scale (e.g. #flamia.precision<f8E4M3FN, online = 32>)}}
  %dq, %dk, %dv = flamia.attention_bwd qk(%q8, %k8) dov(%k8, %k8) dsk(%k8) dsq(%k8) pdo(%k8) o(%o) lse(%lse)
      {recipe = #flamia.recipe<mxfp8>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>,
       ds = #flamia.precision<f8E4M3FN, fixed_scale = 8>}
      : (!q8, !kv8, !kv8, !kv8, !kv8, !kv8, !kv8, !b, tensor<2x?xf32>)
      -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return
}

// -----
!q8 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!kv8 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
!b = tensor<?x2x64xbf16>
func.func @f(%q8: !q8, %k8: !kv8, %o: !b, %lse: tensor<2x?xf32>) {
  // expected-error @below {{the operands of dP = dO V^T must both be quantized or both bf16, but dov grad_o is bf16 and dov v is quantized}}
  %dq, %dk, %dv = flamia.attention_bwd qk(%q8, %k8) dov(%o, %k8) dsk(%k8) dsq(%k8) pdo(%k8) o(%o) lse(%lse)
      {recipe = #flamia.recipe<mxfp8>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>,
       ds = #flamia.precision<f8E4M3FN, online = 32>}
      : (!q8, !kv8, !b, !kv8, !kv8, !kv8, !kv8, !b, tensor<2x?xf32>)
      -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return
}

// -----
!q8 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!kv8 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
!b = tensor<?x2x64xbf16>
func.func @f(%q8: !q8, %k8: !kv8, %o: !b, %lse: tensor<2x?xf32>) {
  // expected-error @below {{q in dK = dS^T Q is contracted over tokens, but its per-token (1x32) scales change with every token}}
  %dq, %dk, %dv = flamia.attention_bwd qk(%q8, %k8) dov(%k8, %k8) dsk(%k8) dsq(%q8) pdo(%k8) o(%o) lse(%lse)
      {recipe = #flamia.recipe<mxfp8>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>,
       ds = #flamia.precision<f8E4M3FN, online = 32>}
      : (!q8, !kv8, !kv8, !kv8, !kv8, !q8, !kv8, !b, tensor<2x?xf32>)
      -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return
}

// -----
!q8 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!kv8 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
!b = tensor<?x2x64xbf16>
func.func @f(%q8: !q8, %k8: !kv8, %o: !b, %lse: tensor<2x?xf32>) {
  // expected-error @below {{safe(...) takes 4 bf16 tensors (q, k, v, grad_o), got 3}}
  %dq, %dk, %dv = flamia.attention_bwd qk(%q8, %k8) dov(%k8, %k8) dsk(%k8) dsq(%k8) pdo(%k8) safe(%o, %o, %o) o(%o) lse(%lse)
      {recipe = #flamia.recipe<mxfp8, safe_block = 128>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>,
       ds = #flamia.precision<f8E4M3FN, online = 32>}
      : (!q8, !kv8, !kv8, !kv8, !kv8, !kv8, !kv8, !b, !b, !b, !b, tensor<2x?xf32>)
      -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return
}

// -----
!q8 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
!kv8 = !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
!b = tensor<?x2x64xbf16>
func.func @f(%q8: !q8, %k8: !kv8, %o: !b, %lse: tensor<2x?xf32>, %do: !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>) {
  // expected-error @below {{operand 'pdo grad_o' must have the shape of 'q' [?, 2, 64], got '!flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>'}}
  %dq, %dk, %dv = flamia.attention_bwd qk(%q8, %k8) dov(%k8, %k8) dsk(%k8) dsq(%k8) pdo(%do) o(%o) lse(%lse)
      {recipe = #flamia.recipe<mxfp8>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>,
       ds = #flamia.precision<f8E4M3FN, online = 32>}
      : (!q8, !kv8, !kv8, !kv8, !kv8, !kv8, !flamia.qtensor<?x4x64xf8E4M3FN, f8E8M0FNU, 32x32>, !b, tensor<2x?xf32>)
      -> (tensor<?x2x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>)
  return
}
