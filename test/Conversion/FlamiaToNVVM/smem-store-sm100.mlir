// RUN: flamia-opt %s --convert-flamia-to-nvvm --convert-nvvm-to-llvm --reconcile-unrealized-casts --gpu-module-to-binary=format=isa | %python %S/Inputs/binary_to_ptx.py | FileCheck %s
// flamia.smem.store (P staged in shared memory, flamia-tile{p-in-smem}):
// thread t writes its row where a 128B-swizzled TMA load of the tile would
// have put it, row t at 128 t, 16-byte chunk c at (c ^ (t % 8)) x 16: the
// offset is (128 t + 16 c) ^ ((t % 8) << 4), computed from tid << 7 and
// (tid << 4) & 0x70; eight 16-byte stores of E4M3 (one 128-byte box), then
// the async proxy is fenced before anyone signals the MMA thread. A bf16
// row is two boxes: the second 64 columns 128 x 128 bytes further. (sm_90a
// refuses the op: test/Conversion/FlamiaToNVVM/fragment-ops-invalid.mlir.)
// CHECK-LABEL: .entry sm_100a_smem_store(
// CHECK: mov.u32 [[TID:%r[0-9]+]], %tid.x;
// CHECK: shl.b32 [[ROW:%r[0-9]+]], [[TID]], 7;
// CHECK-NEXT: shl.b32 [[T4:%r[0-9]+]], [[TID]], 4;
// CHECK-NEXT: and.b32 [[SW:%r[0-9]+]], [[T4]], 112;
// CHECK: st.shared.v4.b32
// CHECK-COUNT-7: xor.b32 {{%r[0-9]+}}, {{%r[0-9]+}}, [[SW]];
// CHECK: fence.proxy.async.shared::cta;
// CHECK-COUNT-8: st.shared.v4.b32 [{{%rd[0-9]+}}+32768]
// CHECK-COUNT-8: st.shared.v4.b32 [{{%rd[0-9]+}}+49152]
// CHECK-NEXT: fence.proxy.async.shared::cta;
// CHECK-NOT: st.shared
// CHECK: ret;
flamia.kernel @sm_100a_smem_store(%st: i32 {flamia.param = "stage"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  %p8 = flamia.smem.alloc : !flamia.smem<2x128x128xf8E4M3FN>
  %pb = flamia.smem.alloc : !flamia.smem<1x128x128xbf16>
  %tmem = flamia.tmem.alloc columns 512 by_warpgroup 0
  flamia.role "softmax" warpgroups [0, 1) registers 240 {
    %c0 = arith.constant 0 : i32
    %true = arith.constant true
    %false = arith.constant false
    %x = flamia.tmem.load %tmem[0] : !flamia.frag<128x128xf32>
    %p = flamia.frag.quantize %x quantized %true {precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>} : !flamia.frag<128x128xf32> -> !flamia.frag<128x128xf8E4M3FN>
    flamia.smem.store %p, %p8[%st] : !flamia.frag<128x128xf8E4M3FN>, !flamia.smem<2x128x128xf8E4M3FN>
    %q = flamia.frag.quantize %x quantized %false {precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>} : !flamia.frag<128x128xf32> -> !flamia.frag<128x128xbf16>
    flamia.smem.store %q, %pb[%c0] : !flamia.frag<128x128xbf16>, !flamia.smem<1x128x128xbf16>
    flamia.tmem.dealloc %tmem columns 512
  }
  flamia.return
}
