// runtime-heads-training.mlir (test/Target/Inputs) with 4 query / 2 key-value
// heads written into the types.
func.func @train(%q: tensor<?x4x128xbf16>, %k: tensor<?x2x128xbf16>, %v: tensor<?x2x128xbf16>,
                 %do: tensor<?x4x128xbf16>, %cu: tensor<?xi32>)
    -> (tensor<?x4x128xbf16>, tensor<4x?xf32>, tensor<?x4x128xbf16>, tensor<?x2x128xbf16>, tensor<?x2x128xbf16>) {
  %o, %lse = flamia.attention %q, %k, %v cu_seqlens(%cu)
      {causal, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (tensor<?x4x128xbf16>, tensor<?x2x128xbf16>, tensor<?x2x128xbf16>, tensor<?xi32>)
      -> (tensor<?x4x128xbf16>, tensor<4x?xf32>)
  %dq, %dk, %dv = flamia.attention_grad %q, %k, %v, %o, %lse, %do cu_seqlens(%cu)
      {causal, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (tensor<?x4x128xbf16>, tensor<?x2x128xbf16>, tensor<?x2x128xbf16>, tensor<?x4x128xbf16>,
         tensor<4x?xf32>, tensor<?x4x128xbf16>, tensor<?xi32>)
      -> (tensor<?x4x128xbf16>, tensor<?x2x128xbf16>, tensor<?x2x128xbf16>)
  return %o, %lse, %dq, %dk, %dv : tensor<?x4x128xbf16>, tensor<4x?xf32>, tensor<?x4x128xbf16>, tensor<?x2x128xbf16>, tensor<?x2x128xbf16>
}
