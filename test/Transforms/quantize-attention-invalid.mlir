// RUN: flamia-opt %s -split-input-file --flamia-quantize-attention -verify-diagnostics

func.func @nvfp4_not_yet(%q: tensor<64x1x64xbf16>) -> tensor<64x1x64xbf16> {
  // expected-error @below {{recipe nvfp4-mixed is not implemented by the numerics library (it implements mxfp8)}}
  %o, %lse = flamia.attention %q, %q, %q {recipe = #flamia.recipe<nvfp4_mixed, safe_block = 128>}
      : (tensor<64x1x64xbf16>, tensor<64x1x64xbf16>, tensor<64x1x64xbf16>) -> (tensor<64x1x64xbf16>, tensor<1x64xf32>)
  return %o : tensor<64x1x64xbf16>
}
