// One 32k-token document (no cu_seqlens: the whole tensor is one document),
// forward only, with an explicit softmax scale. Static shapes are fine too:
// T is known here.
func.func @long_document_forward(%q: tensor<32768x16x128xbf16>, %k: tensor<32768x16x128xbf16>,
                                 %v: tensor<32768x16x128xbf16>)
    -> (tensor<32768x16x128xbf16>, tensor<16x32768xf32>) {
  %o, %lse = flamia.attention %q, %k, %v
      {causal, softmax_scale = 0.08838834764831845 : f32,
       recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (tensor<32768x16x128xbf16>, tensor<32768x16x128xbf16>, tensor<32768x16x128xbf16>)
      -> (tensor<32768x16x128xbf16>, tensor<16x32768xf32>)
  return %o, %lse : tensor<32768x16x128xbf16>, tensor<16x32768xf32>
}
