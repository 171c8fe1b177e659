func.func @first(%q: tensor<?x2x64xbf16>, %cu: tensor<?xi32>) -> tensor<?x2x64xf32> {
  %x8 = flamia.quantize %q cu_seqlens(%cu) : (tensor<?x2x64xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %x = flamia.dequantize %x8 : (!flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>) -> tensor<?x2x64xf32>
  return %x : tensor<?x2x64xf32>
}

func.func @second(%cu: tensor<3xi32>) -> tensor<3xi32> {
  return %cu : tensor<3xi32>
}
