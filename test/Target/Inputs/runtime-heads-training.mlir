// A training step with runtime head counts ('?' query and key/value heads):
// flamia-compile gives one kernel set that serves every Hq and Hkv.
func.func @train(%q: tensor<?x?x128xbf16>, %k: tensor<?x?x128xbf16>, %v: tensor<?x?x128xbf16>,
                 %do: tensor<?x?x128xbf16>, %cu: tensor<?xi32>)
    -> (tensor<?x?x128xbf16>, tensor<?x?xf32>, tensor<?x?x128xbf16>, tensor<?x?x128xbf16>, tensor<?x?x128xbf16>) {
  %o, %lse = flamia.attention %q, %k, %v cu_seqlens(%cu)
      {causal, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (tensor<?x?x128xbf16>, tensor<?x?x128xbf16>, tensor<?x?x128xbf16>, tensor<?xi32>)
      -> (tensor<?x?x128xbf16>, tensor<?x?xf32>)
  %dq, %dk, %dv = flamia.attention_grad %q, %k, %v, %o, %lse, %do cu_seqlens(%cu)
      {causal, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (tensor<?x?x128xbf16>, tensor<?x?x128xbf16>, tensor<?x?x128xbf16>, tensor<?x?x128xbf16>,
         tensor<?x?xf32>, tensor<?x?x128xbf16>, tensor<?xi32>)
      -> (tensor<?x?x128xbf16>, tensor<?x?x128xbf16>, tensor<?x?x128xbf16>)
  return %o, %lse, %dq, %dk, %dv : tensor<?x?x128xbf16>, tensor<?x?xf32>, tensor<?x?x128xbf16>, tensor<?x?x128xbf16>, tensor<?x?x128xbf16>
}
