// Quantize/dequantize round trips in every layout flamia-interp executes.
!b = tensor<?x2x64xbf16>
!f = tensor<?x2x64xf32>
func.func @round_trips(%x: !b, %cu: tensor<?xi32>) -> (!f, !f, !f, !f, !f, !f) {
  %a = flamia.quantize %x : (!b) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>
  %b = flamia.quantize %x cu_seqlens(%cu) : (!b, tensor<?xi32>) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>
  %c = flamia.quantize %x : (!b) -> !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32, packed>
  %d = flamia.quantize %x : (!b) -> !flamia.qtensor<?x2x64xf8E5M2, f8E8M0FNU, tensor>
  %e = flamia.quantize %x : (!b) -> !flamia.qtensor<?x2x64xf4E2M1FN, f8E8M0FNU, 1x32>
  %f = flamia.quantize %x : (!b) -> !flamia.qtensor<?x2x64xf4E2M1FN, f8E4M3FN, 1x16>
  %ra = flamia.dequantize %a : (!flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 1x32>) -> !f
  %rb = flamia.dequantize %b cu_seqlens(%cu) : (!flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32>, tensor<?xi32>) -> !f
  %rc = flamia.dequantize %c : (!flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 32x32, packed>) -> !f
  %rd = flamia.dequantize %d : (!flamia.qtensor<?x2x64xf8E5M2, f8E8M0FNU, tensor>) -> !f
  %re = flamia.dequantize %e : (!flamia.qtensor<?x2x64xf4E2M1FN, f8E8M0FNU, 1x32>) -> !f
  %rf = flamia.dequantize %f : (!flamia.qtensor<?x2x64xf4E2M1FN, f8E4M3FN, 1x16>) -> !f
  return %ra, %rb, %rc, %rd, %re, %rf : !f, !f, !f, !f, !f, !f
}
