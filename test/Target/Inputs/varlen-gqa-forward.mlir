// One forward attention over packed documents, D = 64, 8 query / 2 key-value
// heads, causal: the input of pipeline-options-same-ptx.test.
func.func @gqa(%q: tensor<?x8x64xbf16>, %k: tensor<?x2x64xbf16>, %v: tensor<?x2x64xbf16>,
               %cu: tensor<?xi32>) -> (tensor<?x8x64xbf16>, tensor<8x?xf32>) {
  %o, %lse = flamia.attention %q, %k, %v cu_seqlens(%cu)
      {causal, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (tensor<?x8x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?xi32>)
      -> (tensor<?x8x64xbf16>, tensor<8x?xf32>)
  return %o, %lse : tensor<?x8x64xbf16>, tensor<8x?xf32>
}
