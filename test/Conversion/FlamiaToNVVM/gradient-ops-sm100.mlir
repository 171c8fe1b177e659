// RUN: flamia-opt %s -split-input-file --convert-flamia-to-nvvm --convert-nvvm-to-llvm --reconcile-unrealized-casts --gpu-module-to-binary=format=isa | %python %S/Inputs/binary_to_ptx.py | FileCheck %s
// The sm_100a backward's ops, checked in the PTX: dS quantized to E4M3 codes
// with its scales written into a scale-factor tile (frag.mx_quantize), a
// gradient written half by half (grad.store columns), and a block-scaled
// MMA whose B scales start at a runtime K-block (umma b_k_block).

// One row per thread, two 32-column blocks: per block the amax (NaN as
// +inf), its E8M0 scale from the amax's bits, the codes (x * 2^-e rounded
// to E4M3, four per word, 0x7F7F7F7F for a non-finite block); each block's
// scale byte at (row % 32) * 16 + (row / 32) * 4 + k_block + b of stage 1
// (+512), then the async proxy fenced before the codes go to tensor memory.
// CHECK-LABEL: .entry sm_100a_mx_quantize(
// CHECK: ld.param.b32 [[KB:%r[0-9]+]], [sm_100a_mx_quantize_param_0];
// CHECK: tcgen05.ld.sync.aligned.32x32b.x32.b32
// CHECK: tcgen05.ld.sync.aligned.32x32b.x32.b32
// CHECK: tcgen05.wait::ld.sync.aligned;
// CHECK: setp.nan.f32
// CHECK: bfe.u32 {{%r[0-9]+}}, [[AMAX0:%r[0-9]+]], 23, 8;
// CHECK: bfe.u32 {{%r[0-9]+}}, [[AMAX1:%r[0-9]+]], 23, 8;
// CHECK-COUNT-32: cvt.rn.satfinite.e4m3x2.f32
// CHECK: selp.b32 {{%r[0-9]+}}, 2139062143,
// CHECK: add.s32 [[OFF:%r[0-9]+]], {{%r[0-9]+}}, [[KB]];
// CHECK: st.shared.b8 [{{%rd[0-9]+}}+512],
// CHECK-NEXT: st.shared.b8 [{{%rd[0-9]+}}+513],
// CHECK-NEXT: fence.proxy.async.shared::cta;
// CHECK: tcgen05.st.sync.aligned.32x32b.x16.b32
// CHECK-NOT: cvt.rn.satfinite.e4m3x2.f32
// CHECK: ret;
flamia.kernel @sm_100a_mx_quantize(%kb: i32 {flamia.param = "kb"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  %sf = flamia.smem.alloc : !flamia.smem<2x8x64xi8>
  %tmem = flamia.tmem.alloc columns 512 by_warpgroup 0
  flamia.role "grad" warpgroups [0, 1) registers 240 {
    %c1 = arith.constant 1 : i32
    %ds = flamia.tmem.load %tmem[0] : !flamia.frag<128x64xf32>
    %codes = flamia.frag.mx_quantize %ds scales %sf[%c1] k_block %kb
        : !flamia.frag<128x64xf32>, !flamia.smem<2x8x64xi8> -> !flamia.frag<128x64xf8E4M3FN>
    flamia.tmem.store %codes, %tmem[384] : !flamia.frag<128x64xf8E4M3FN>
    flamia.tmem.dealloc %tmem columns 512
  }
  flamia.return
}

// -----

// Columns [c, c + 64) of each row: the row's address plus 2 c bytes, then
// eight 16-byte stores of bf16 (64 values) and no more.
// CHECK-LABEL: .entry sm_100a_grad_store_columns(
// CHECK: ld.param.b32 [[COL:%r[0-9]+]], [sm_100a_grad_store_columns_param_2];
// CHECK: mul.wide.u32 {{%rd[0-9]+}}, [[COL]], 2;
// CHECK-COUNT-8: st.global.v4.b32
// CHECK-NOT: st.global
// CHECK: ret;
flamia.kernel @sm_100a_grad_store_columns(%dq: !flamia.global<?x4x128xbf16> {flamia.param = "dq"},
                                          %s: i32 {flamia.param = "start"},
                                          %c: i32 {flamia.param = "col"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  %tmem = flamia.tmem.alloc columns 512 by_warpgroup 0
  flamia.role "grad" warpgroups [0, 1) registers 240 {
    %c0 = arith.constant 0 : i32
    %c128 = arith.constant 128 : i32
    %f = arith.constant 1.0 : f32
    %acc = flamia.tmem.load %tmem[256] : !flamia.frag<128x64xf32>
    flamia.grad.store %acc times %f to %dq rows(%s, %c0, %c128) head %c0 columns %c
        : !flamia.frag<128x64xf32>, !flamia.global<?x4x128xbf16>
    flamia.tmem.dealloc %tmem columns 512
  }
  flamia.return
}

// -----

// dV += P^T dO over a 64-query tile: two block-scaled K steps whose B
// scale-factor IDs (bits 4-5 of the instruction descriptor) start at the
// runtime K-block: (kb << 4) is added to each step's descriptor.
// CHECK-LABEL: .entry sm_100a_umma_b_k_block(
// CHECK: ld.param.b32 [[KB:%r[0-9]+]], [sm_100a_umma_b_k_block_param_0];
// CHECK: shl.b32 [[SHIFTED:%r[0-9]+]], [[KB]], 4;
// CHECK: add.s32 [[I0:%r[0-9]+]], [[SHIFTED]], {{.*}};
// CHECK: tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32.collector::a::discard [{{%r[0-9]+}}], [{{%r[0-9]+}}], {{%rd[0-9]+}}, [[I0]],
// CHECK: add.s32 [[I1:%r[0-9]+]], [[SHIFTED]], {{.*}};
// CHECK: tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32.collector::a::discard [{{%r[0-9]+}}], [{{%r[0-9]+}}], {{%rd[0-9]+}}, [[I1]],
// CHECK-NOT: tcgen05.mma
// CHECK: ret;
flamia.kernel @sm_100a_umma_b_k_block(%kb: i32 {flamia.param = "kb"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  %do8 = flamia.smem.alloc : !flamia.smem<1x64x128xf8E4M3FN>
  %tmem = flamia.tmem.alloc columns 512 by_warpgroup 0
  flamia.role "mma" warpgroups [0, 1) registers 104 single_thread {
    %c0 = arith.constant 0 : i32
    %c448 = arith.constant 448 : i32
    %c452 = arith.constant 452 : i32
    %true = arith.constant true
    %sfp = arith.addi %tmem, %c448 : i32
    %sfd = arith.addi %tmem, %c452 : i32
    flamia.umma %tmem[128] b %do8[%c0] accumulate %true scales(%sfp, %sfd) b_k_block %kb {a_column = 384 : i64, a_type = f8E4M3FN, b_transposed}
        : (i32, !flamia.smem<1x64x128xf8E4M3FN>, i32, i1, i32, i32, i32) -> ()
  }
  flamia.return
}
