// Two forward attentions in one function: flamia-compile writes one kernel
// set per attention, into DIR/<function> and DIR/<function>.1.
func.func @two(%q: tensor<?x8x64xbf16>, %k: tensor<?x2x64xbf16>, %v: tensor<?x2x64xbf16>,
               %cu: tensor<?xi32>) -> (tensor<?x8x64xbf16>, tensor<?x8x64xbf16>) {
  %o, %lse = flamia.attention %q, %k, %v cu_seqlens(%cu)
      {causal, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (tensor<?x8x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?xi32>)
      -> (tensor<?x8x64xbf16>, tensor<8x?xf32>)
  %o2, %lse2 = flamia.attention %q, %k, %v cu_seqlens(%cu)
      {recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (tensor<?x8x64xbf16>, tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?xi32>)
      -> (tensor<?x8x64xbf16>, tensor<8x?xf32>)
  return %o, %o2 : tensor<?x8x64xbf16>, tensor<?x8x64xbf16>
}
