// The forward on operands quantized elsewhere (e.g. by a training framework
// that already holds MXFP8 copies): payloads and scales in the logical
// layout are assembled into !flamia.qtensor values and fed to
// flamia.attention_fwd, each named by the GEMM it feeds.
//
//   qk(Q, K)  S = Q K^T, contracted over the head dim
//   pv(V)     O = P V,   contracted over keys
//   safe(...) the bf16 originals used inside each query's safe block
func.func @prequantized_forward(
    %q_data: tensor<?x8x128xf8E4M3FN>, %q_scales: tensor<?x8x4xf8E8M0FNU>,
    %k_data: tensor<?x8x128xf8E4M3FN>, %k_scales: tensor<?x8x4xf8E8M0FNU>,
    %v_data: tensor<?x8x128xf8E4M3FN>, %v_scales: tensor<?x8x4xf8E8M0FNU>,
    %q: tensor<?x8x128xbf16>, %k: tensor<?x8x128xbf16>, %v: tensor<?x8x128xbf16>,
    %cu_seqlens: tensor<?xi32>) -> tensor<?x8x128xbf16> {
  // Q per token: scales [T, 8, 128 / 32].
  %q8 = flamia.qtensor.create %q_data, %q_scales
      : (tensor<?x8x128xf8E4M3FN>, tensor<?x8x4xf8E8M0FNU>)
      -> !flamia.qtensor<?x8x128xf8E4M3FN, f8E8M0FNU, 1x32>
  // K and V in document-local 32x32 token blocks: scales [NB, 8, 4].
  %k8 = flamia.qtensor.create %k_data, %k_scales
      : (tensor<?x8x128xf8E4M3FN>, tensor<?x8x4xf8E8M0FNU>)
      -> !flamia.qtensor<?x8x128xf8E4M3FN, f8E8M0FNU, 32x32>
  %v8 = flamia.qtensor.create %v_data, %v_scales
      : (tensor<?x8x128xf8E4M3FN>, tensor<?x8x4xf8E8M0FNU>)
      -> !flamia.qtensor<?x8x128xf8E4M3FN, f8E8M0FNU, 32x32>
  // P (<= 1) is quantized to E4M3 with the fixed scale 2^8.
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%v8) safe(%q, %k, %v) cu_seqlens(%cu_seqlens)
      {causal, recipe = #flamia.recipe<mxfp8, safe_block = 128>,
       p = #flamia.precision<f8E4M3FN, fixed_scale = 8>}
      : (!flamia.qtensor<?x8x128xf8E4M3FN, f8E8M0FNU, 1x32>,
         !flamia.qtensor<?x8x128xf8E4M3FN, f8E8M0FNU, 32x32>,
         !flamia.qtensor<?x8x128xf8E4M3FN, f8E8M0FNU, 32x32>,
         tensor<?x8x128xbf16>, tensor<?x8x128xbf16>, tensor<?x8x128xbf16>, tensor<?xi32>)
      -> (tensor<?x8x128xbf16>, tensor<8x?xf32>)
  return %o : tensor<?x8x128xbf16>
}
