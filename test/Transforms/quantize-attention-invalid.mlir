// RUN: flamia-opt %s -split-input-file --flamia-quantize-attention -verify-diagnostics

// D = 48: NVFP4's 16-channel blocks tile it, the 32x32 E4M3 token blocks
// of the token-contracted GEMMs do not.
func.func @nvfp4_head_dim_48(%q: tensor<64x1x48xbf16>) -> tensor<64x1x48xbf16> {
  // expected-error @below {{recipe nvfp4_mixed cannot quantize head dim 48: V in PV: head dim 48 is not divisible by the channel block 32}}
  %o, %lse = flamia.attention %q, %q, %q {recipe = #flamia.recipe<nvfp4_mixed, safe_block = 128>}
      : (tensor<64x1x48xbf16>, tensor<64x1x48xbf16>, tensor<64x1x48xbf16>) -> (tensor<64x1x48xbf16>, tensor<1x64xf32>)
  return %o : tensor<64x1x48xbf16>
}

// -----

func.func @mxfp8_head_dim_48(%q: tensor<64x1x48xbf16>) -> tensor<64x1x48xbf16> {
  // expected-error @below {{recipe mxfp8 cannot quantize head dim 48: Q in QK^T: head dim 48 is not divisible by the channel block 32}}
  %o, %lse = flamia.attention %q, %q, %q {recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (tensor<64x1x48xbf16>, tensor<64x1x48xbf16>, tensor<64x1x48xbf16>) -> (tensor<64x1x48xbf16>, tensor<1x64xf32>)
  return %o : tensor<64x1x48xbf16>
}
