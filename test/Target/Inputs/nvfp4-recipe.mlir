func.func @nvfp4(%q: tensor<?x8x128xbf16>, %k: tensor<?x8x128xbf16>, %v: tensor<?x8x128xbf16>)
    -> tensor<?x8x128xbf16> {
  %o, %lse = flamia.attention %q, %k, %v
      {causal, recipe = #flamia.recipe<nvfp4_mixed, safe_block = 128>}
      : (tensor<?x8x128xbf16>, tensor<?x8x128xbf16>, tensor<?x8x128xbf16>)
      -> (tensor<?x8x128xbf16>, tensor<8x?xf32>)
  return %o : tensor<?x8x128xbf16>
}
