// RUN: flamia-opt %s | flamia-opt | FileCheck %s
// RUN: flamia-opt %s --mlir-print-op-generic | flamia-opt | FileCheck %s
// Every graph-level op and attribute prints in a form that parses back to
// the same IR.

// CHECK-LABEL: func.func @graph_attention
// CHECK: flamia.attention %arg0, %arg1, %arg2 cu_seqlens(%arg3) {causal, recipe = #flamia.recipe<mxfp8, safe_block = 128>, softmax_scale = 1.250000e-01 : f32} : (tensor<?x16x128xbf16>, tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?xi32>) -> (tensor<?x16x128xbf16>, tensor<16x?xf32>)
func.func @graph_attention(%q: tensor<?x16x128xbf16>, %k: tensor<?x4x128xbf16>,
                           %v: tensor<?x4x128xbf16>, %cu: tensor<?xi32>)
    -> (tensor<?x16x128xbf16>, tensor<16x?xf32>) {
  %o, %lse = flamia.attention %q, %k, %v cu_seqlens(%cu)
      {causal, softmax_scale = 0.125 : f32, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (tensor<?x16x128xbf16>, tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?xi32>)
      -> (tensor<?x16x128xbf16>, tensor<16x?xf32>)
  return %o, %lse : tensor<?x16x128xbf16>, tensor<16x?xf32>
}

// CHECK-LABEL: func.func @graph_attention_one_document
// CHECK: flamia.attention %arg0, %arg1, %arg2 {recipe = #flamia.recipe<mxfp8, safe_block = 64, strict>} : (tensor<256x2x64xbf16>, tensor<256x2x64xbf16>, tensor<256x2x64xbf16>) -> (tensor<256x2x64xbf16>, tensor<2x256xf32>)
func.func @graph_attention_one_document(%q: tensor<256x2x64xbf16>, %k: tensor<256x2x64xbf16>,
                                        %v: tensor<256x2x64xbf16>) -> tensor<256x2x64xbf16> {
  %o, %lse = flamia.attention %q, %k, %v {recipe = #flamia.recipe<mxfp8, safe_block = 64, strict>}
      : (tensor<256x2x64xbf16>, tensor<256x2x64xbf16>, tensor<256x2x64xbf16>)
      -> (tensor<256x2x64xbf16>, tensor<2x256xf32>)
  return %o : tensor<256x2x64xbf16>
}

// CHECK-LABEL: func.func @graph_attention_grad
// CHECK: flamia.attention_grad %arg0, %arg1, %arg2, %arg3, %arg4, %arg5 cu_seqlens(%arg6) {causal, recipe = #flamia.recipe<mxfp8, safe_block = 128>} : (tensor<?x8x128xbf16>, tensor<?x8x128xbf16>, tensor<?x8x128xbf16>, tensor<?x8x128xbf16>, tensor<8x?xf32>, tensor<?x8x128xbf16>, tensor<?xi32>) -> (tensor<?x8x128xf32>, tensor<?x8x128xf32>, tensor<?x8x128xbf16>)
func.func @graph_attention_grad(%q: tensor<?x8x128xbf16>, %k: tensor<?x8x128xbf16>,
                                %v: tensor<?x8x128xbf16>, %o: tensor<?x8x128xbf16>,
                                %lse: tensor<8x?xf32>, %do: tensor<?x8x128xbf16>,
                                %cu: tensor<?xi32>) {
  %dq, %dk, %dv = flamia.attention_grad %q, %k, %v, %o, %lse, %do cu_seqlens(%cu)
      {causal, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
      : (tensor<?x8x128xbf16>, tensor<?x8x128xbf16>, tensor<?x8x128xbf16>, tensor<?x8x128xbf16>,
         tensor<8x?xf32>, tensor<?x8x128xbf16>, tensor<?xi32>)
      -> (tensor<?x8x128xf32>, tensor<?x8x128xf32>, tensor<?x8x128xbf16>)
  return
}

// CHECK-LABEL: func.func @quantization
// CHECK: flamia.quantize %arg0 cu_seqlens(%arg1) : (tensor<?x4x128xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x4x128xf8E4M3FN, f8E8M0FNU, 32x32>
// CHECK: flamia.quantize %arg0 : (tensor<?x4x128xbf16>) -> !flamia.qtensor<?x4x128xf8E5M2, f8E8M0FNU, 1x32>
// CHECK: flamia.quantize %arg0 cu_seqlens(%arg1) : (tensor<?x4x128xbf16>, tensor<?xi32>) -> !flamia.qtensor<?x4x128xf8E4M3FN, f8E8M0FNU, 32x32, packed>
// CHECK: flamia.quantize %arg0 : (tensor<?x4x128xbf16>) -> !flamia.qtensor<?x4x128xf8E4M3FN, f8E8M0FNU, tensor>
// CHECK: flamia.quantize %arg0 {global_scale = #flamia.global_scale<amax>} : (tensor<?x4x128xbf16>) -> !flamia.qtensor<?x4x128xf4E2M1FN, f8E4M3FN, 1x16>
// CHECK: flamia.quantize %arg0 : (tensor<?x4x128xbf16>) -> !flamia.qtensor<?x4x128xf4E2M1FN, f8E8M0FNU, 1x32>
// CHECK: flamia.dequantize %{{.*}} cu_seqlens(%arg1) : (!flamia.qtensor<?x4x128xf8E4M3FN, f8E8M0FNU, 32x32>, tensor<?xi32>) -> tensor<?x4x128xf32>
// CHECK: flamia.qtensor.payload %{{.*}} : !flamia.qtensor<?x4x128xf8E4M3FN, f8E8M0FNU, 32x32> -> tensor<?x4x128xf8E4M3FN>
// CHECK: flamia.qtensor.scales %{{.*}} : !flamia.qtensor<?x4x128xf8E4M3FN, f8E8M0FNU, 32x32> -> tensor<?x4x4xf8E8M0FNU>
// CHECK: flamia.qtensor.create %{{.*}}, %{{.*}} : (tensor<?x4x128xf8E4M3FN>, tensor<?x4x4xf8E8M0FNU>) -> !flamia.qtensor<?x4x128xf8E4M3FN, f8E8M0FNU, 32x32>
func.func @quantization(%x: tensor<?x4x128xbf16>, %cu: tensor<?xi32>) {
  %a = flamia.quantize %x cu_seqlens(%cu) : (tensor<?x4x128xbf16>, tensor<?xi32>)
      -> !flamia.qtensor<?x4x128xf8E4M3FN, f8E8M0FNU, 32x32>
  %b = flamia.quantize %x : (tensor<?x4x128xbf16>) -> !flamia.qtensor<?x4x128xf8E5M2, f8E8M0FNU, 1x32>
  %c = flamia.quantize %x cu_seqlens(%cu) : (tensor<?x4x128xbf16>, tensor<?xi32>)
      -> !flamia.qtensor<?x4x128xf8E4M3FN, f8E8M0FNU, 32x32, packed>
  %d = flamia.quantize %x : (tensor<?x4x128xbf16>) -> !flamia.qtensor<?x4x128xf8E4M3FN, f8E8M0FNU, tensor>
  %e = flamia.quantize %x {global_scale = #flamia.global_scale<amax>}
      : (tensor<?x4x128xbf16>) -> !flamia.qtensor<?x4x128xf4E2M1FN, f8E4M3FN, 1x16>
  %f = flamia.quantize %x : (tensor<?x4x128xbf16>) -> !flamia.qtensor<?x4x128xf4E2M1FN, f8E8M0FNU, 1x32>
  %g = flamia.dequantize %a cu_seqlens(%cu)
      : (!flamia.qtensor<?x4x128xf8E4M3FN, f8E8M0FNU, 32x32>, tensor<?xi32>) -> tensor<?x4x128xf32>
  %p = flamia.qtensor.payload %a : !flamia.qtensor<?x4x128xf8E4M3FN, f8E8M0FNU, 32x32> -> tensor<?x4x128xf8E4M3FN>
  %s = flamia.qtensor.scales %a : !flamia.qtensor<?x4x128xf8E4M3FN, f8E8M0FNU, 32x32> -> tensor<?x4x4xf8E8M0FNU>
  %h = flamia.qtensor.create %p, %s : (tensor<?x4x128xf8E4M3FN>, tensor<?x4x4xf8E8M0FNU>)
      -> !flamia.qtensor<?x4x128xf8E4M3FN, f8E8M0FNU, 32x32>
  return
}

// CHECK-LABEL: func.func @quantized_forward
// CHECK: flamia.attention_fwd qk(%arg0, %arg1) pv(%arg2) safe(%arg3, %arg4, %arg5) cu_seqlens(%arg6) {causal, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
func.func @quantized_forward(
    %q8: !flamia.qtensor<?x16x128xf8E4M3FN, f8E8M0FNU, 1x32>,
    %k8: !flamia.qtensor<?x4x128xf8E4M3FN, f8E8M0FNU, 32x32>,
    %v8: !flamia.qtensor<?x4x128xf8E4M3FN, f8E8M0FNU, 32x32>,
    %q: tensor<?x16x128xbf16>, %k: tensor<?x4x128xbf16>, %v: tensor<?x4x128xbf16>,
    %cu: tensor<?xi32>) {
  %o, %lse = flamia.attention_fwd qk(%q8, %k8) pv(%v8) safe(%q, %k, %v) cu_seqlens(%cu)
      {causal, recipe = #flamia.recipe<mxfp8, safe_block = 128>,
       p = #flamia.precision<f8E4M3FN, fixed_scale = 8>}
      : (!flamia.qtensor<?x16x128xf8E4M3FN, f8E8M0FNU, 1x32>,
         !flamia.qtensor<?x4x128xf8E4M3FN, f8E8M0FNU, 32x32>,
         !flamia.qtensor<?x4x128xf8E4M3FN, f8E8M0FNU, 32x32>,
         tensor<?x16x128xbf16>, tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?xi32>)
      -> (tensor<?x16x128xbf16>, tensor<16x?xf32>)
  return
}

// An unquantized forward (bf16 operands, bf16 P, no safe block needed).
// CHECK-LABEL: func.func @bf16_forward
// CHECK: flamia.attention_fwd qk(%arg0, %arg1) pv(%arg2) {p = #flamia.precision<bf16>, recipe = #flamia.recipe<mxfp8>}
func.func @bf16_forward(%q: tensor<64x1x64xbf16>, %k: tensor<64x1x64xbf16>, %v: tensor<64x1x64xbf16>) {
  %o, %lse = flamia.attention_fwd qk(%q, %k) pv(%v)
      {recipe = #flamia.recipe<mxfp8>, p = #flamia.precision<bf16>}
      : (tensor<64x1x64xbf16>, tensor<64x1x64xbf16>, tensor<64x1x64xbf16>)
      -> (tensor<64x1x64xbf16>, tensor<1x64xf32>)
  return
}

// CHECK-LABEL: func.func @quantized_backward
// CHECK: flamia.attention_bwd qk(%arg0, %arg1) dov(%arg3, %arg2) dsk(%arg1) dsq(%arg4) pdo(%arg3) safe(%arg5, %arg6, %arg7, %arg8) o(%arg9) lse(%arg10) cu_seqlens(%arg11) {causal, ds = #flamia.precision<f8E4M3FN, online = 32>, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>, recipe = #flamia.recipe<mxfp8, safe_block = 128>}
func.func @quantized_backward(
    %q8: !flamia.qtensor<?x16x128xf8E4M3FN, f8E8M0FNU, 1x32>,
    %k8: !flamia.qtensor<?x4x128xf8E4M3FN, f8E8M0FNU, 32x32>,
    %v8: !flamia.qtensor<?x4x128xf8E4M3FN, f8E8M0FNU, 32x32>,
    %do8: !flamia.qtensor<?x16x128xf8E4M3FN, f8E8M0FNU, 32x32>,
    %qtb: !flamia.qtensor<?x16x128xf8E4M3FN, f8E8M0FNU, 32x32>,
    %q: tensor<?x16x128xbf16>, %k: tensor<?x4x128xbf16>, %v: tensor<?x4x128xbf16>,
    %do: tensor<?x16x128xbf16>, %o: tensor<?x16x128xbf16>, %lse: tensor<16x?xf32>,
    %cu: tensor<?xi32>) {
  %dq, %dk, %dv = flamia.attention_bwd qk(%q8, %k8) dov(%do8, %v8) dsk(%k8) dsq(%qtb) pdo(%do8)
      safe(%q, %k, %v, %do) o(%o) lse(%lse) cu_seqlens(%cu)
      {causal, recipe = #flamia.recipe<mxfp8, safe_block = 128>,
       p = #flamia.precision<f8E4M3FN, fixed_scale = 8>,
       ds = #flamia.precision<f8E4M3FN, online = 32>}
      : (!flamia.qtensor<?x16x128xf8E4M3FN, f8E8M0FNU, 1x32>,
         !flamia.qtensor<?x4x128xf8E4M3FN, f8E8M0FNU, 32x32>,
         !flamia.qtensor<?x16x128xf8E4M3FN, f8E8M0FNU, 32x32>,
         !flamia.qtensor<?x4x128xf8E4M3FN, f8E8M0FNU, 32x32>,
         !flamia.qtensor<?x4x128xf8E4M3FN, f8E8M0FNU, 32x32>,
         !flamia.qtensor<?x16x128xf8E4M3FN, f8E8M0FNU, 32x32>,
         !flamia.qtensor<?x16x128xf8E4M3FN, f8E8M0FNU, 32x32>,
         tensor<?x16x128xbf16>, tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?x16x128xbf16>,
         tensor<?x16x128xbf16>, tensor<16x?xf32>, tensor<?xi32>)
      -> (tensor<?x16x128xf32>, tensor<?x4x128xf32>, tensor<?x4x128xf32>)
  return
}

// CHECK-LABEL: func.func @attributes
// CHECK-SAME: #flamia.scale_layout<32x32>
// CHECK-SAME: #flamia.scale_layout<1x16>
// CHECK-SAME: #flamia.scale_layout<tensor>
// CHECK-SAME: #flamia.scale_layout<64x32, packed>
// CHECK-SAME: #flamia.precision<f8E5M2, fixed_scale = 15>
// CHECK-SAME: #flamia.precision<f4E2M1FN, online = 16>
// CHECK-SAME: #flamia.recipe<nvfp4_mixed, safe_block = 256>
// CHECK-SAME: #flamia.target<sm_100a>
// CHECK-SAME: #flamia.target<sm_100a, cta_group = 2>
// CHECK-SAME: #flamia.target<sm_90a>
func.func @attributes() attributes {
    targets = [#flamia.target<sm_100a>, #flamia.target<sm_100a, cta_group = 2>, #flamia.target<sm_90a>],
    layouts = [#flamia.scale_layout<32x32>, #flamia.scale_layout<1x16>, #flamia.scale_layout<tensor>,
               #flamia.scale_layout<64x32, packed>],
    recipe = #flamia.recipe<nvfp4_mixed, safe_block = 256>,
    precisions = [#flamia.precision<f8E5M2, fixed_scale = 15>, #flamia.precision<f4E2M1FN, online = 16>]} {
  return
}
