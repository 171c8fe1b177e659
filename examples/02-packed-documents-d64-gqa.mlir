// Packed documents at head dim 64 with grouped-query attention: 16 query
// heads share 4 key/value heads (query head h reads key/value head h / 4).
// The safe block is the 128-token diagonal tile. The dialect and the CPU
// reference accept any positive multiple of 32 (try safe_block = 64 with
// flamia-interp); the GPU kernels implement whole 128-key tiles, and
// flamia-compile says so for anything else.
func.func @attention_d64_gqa(%q: tensor<?x16x64xbf16>, %k: tensor<?x4x64xbf16>,
                             %v: tensor<?x4x64xbf16>, %grad_o: tensor<?x16x64xbf16>,
                             %cu_seqlens: tensor<?xi32>)
    -> (tensor<?x16x64xbf16>, tensor<?x16x64xf32>, tensor<?x4x64xf32>, tensor<?x4x64xf32>) {
  %o, %lse = flamia.attention %q, %k, %v cu_seqlens(%cu_seqlens)
      {causal, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (tensor<?x16x64xbf16>, tensor<?x4x64xbf16>, tensor<?x4x64xbf16>, tensor<?xi32>)
      -> (tensor<?x16x64xbf16>, tensor<16x?xf32>)
  // dK and dV sum the contributions of the 4 query heads of each group.
  %dq, %dk, %dv = flamia.attention_grad %q, %k, %v, %o, %lse, %grad_o cu_seqlens(%cu_seqlens)
      {causal, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (tensor<?x16x64xbf16>, tensor<?x4x64xbf16>, tensor<?x4x64xbf16>,
         tensor<?x16x64xbf16>, tensor<16x?xf32>, tensor<?x16x64xbf16>, tensor<?xi32>)
      -> (tensor<?x16x64xf32>, tensor<?x4x64xf32>, tensor<?x4x64xf32>)
  return %o, %dq, %dk, %dv
      : tensor<?x16x64xbf16>, tensor<?x16x64xf32>, tensor<?x4x64xf32>, tensor<?x4x64xf32>
}
