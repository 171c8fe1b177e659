// A training step of causal attention over packed documents in MXFP8, D = 128.
//
// Q, K, V are packed [T, H, D] bf16 tensors: the tokens of every document of
// the batch back to back (no padding, no repacking). `cu_seqlens` holds the
// document boundaries: [0, L0, L0 + L1, ..., T].
//
// Try:
//   flamia-opt examples/01-packed-documents-d128.mlir      # parse, verify, print
//
// The recipe `mxfp8` quantizes Q per token (1x32 along D) for S = Q K^T and K,
// V, dO in document-local 32x32 token blocks, one copy each reused by the
// forward and every backward GEMM. Keys in a query's safe block (the
// document-local block of 128 tokens holding it) use the original bf16
// operands, so no later token can reach an earlier output through a shared
// scale (docs/numerics.md).
func.func @attention_train_step(%q: tensor<?x16x128xbf16>, %k: tensor<?x16x128xbf16>,
                                %v: tensor<?x16x128xbf16>, %grad_o: tensor<?x16x128xbf16>,
                                %cu_seqlens: tensor<?xi32>)
    -> (tensor<?x16x128xbf16>, tensor<16x?xf32>,
        tensor<?x16x128xf32>, tensor<?x16x128xf32>, tensor<?x16x128xf32>) {
  // Forward: O [T, 16, 128] bf16 and the log-sum-exp LSE [16, T] f32.
  %o, %lse = flamia.attention %q, %k, %v cu_seqlens(%cu_seqlens)
      {causal, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (tensor<?x16x128xbf16>, tensor<?x16x128xbf16>, tensor<?x16x128xbf16>, tensor<?xi32>)
      -> (tensor<?x16x128xbf16>, tensor<16x?xf32>)

  // Backward: gradients for Q, K, V given dO. It recomputes S and P from the
  // forward's exact quantized operands and LSE.
  %dq, %dk, %dv = flamia.attention_grad %q, %k, %v, %o, %lse, %grad_o cu_seqlens(%cu_seqlens)
      {causal, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (tensor<?x16x128xbf16>, tensor<?x16x128xbf16>, tensor<?x16x128xbf16>,
         tensor<?x16x128xbf16>, tensor<16x?xf32>, tensor<?x16x128xbf16>, tensor<?xi32>)
      -> (tensor<?x16x128xf32>, tensor<?x16x128xf32>, tensor<?x16x128xf32>)

  return %o, %lse, %dq, %dk, %dv
      : tensor<?x16x128xbf16>, tensor<16x?xf32>,
        tensor<?x16x128xf32>, tensor<?x16x128xf32>, tensor<?x16x128xf32>
}
