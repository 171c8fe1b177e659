// RUN: flamia-opt %s -split-input-file --convert-flamia-to-nvvm --convert-nvvm-to-llvm --reconcile-unrealized-casts --gpu-module-to-binary=format=isa | FileCheck %s --check-prefixes=CHECK,TILES

// An NVFP4 per-token copy (recipe nvfp4-mixed, K of S = Q K^T) as the varlen
// schedule writes it for sm_90a: E2M1 payload, one unsigned-E4M3 scale per 16
// channels, the bf16 dequantized copy the attention kernel reads. Each thread
// quantizes 32 channels of one token: two scale groups.
flamia.kernel @nvfp4_quantize(%k: !flamia.global<?x2x64xbf16> {flamia.param = "k"}, %info: !flamia.global<?x2xi32> {flamia.param = "block_info"}, %kpt: !flamia.global<?x2x64xf4E2M1FN> {flamia.param = "k_pt"}, %kscales: !flamia.global<?x2x4xf8E4M3FN> {flamia.param = "k_pt_scales"}, %kdeq: !flamia.global<?x2x64xbf16> {flamia.param = "k_deq"}) attributes {flamia.phase = "forward", launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %bx = gpu.block_id x
  %b = arith.index_cast %bx : index to i32
  %by = gpu.block_id y
  %h = arith.index_cast %by : index to i32
  %start, %length = flamia.block_info.load %info[%b] : !flamia.global<?x2xi32>
  flamia.quantize_block %k rows(%start, %length) block %b head %h per_token(%kpt, %kscales) per_token_dequant(%kdeq) : (!flamia.global<?x2x64xbf16>, i32, i32, i32, i32, !flamia.global<?x2x64xf4E2M1FN>, !flamia.global<?x2x4xf8E4M3FN>, !flamia.global<?x2x64xbf16>) -> ()
  flamia.return
}

// CHECK-LABEL: gpu.binary @nvfp4_quantize_module
// CHECK-SAME: .target sm_90a
// A NaN makes the group's amax infinite (the non-finite test).
// CHECK-SAME: setp.nan.f32
// CHECK-SAME: selp.f32 {{[^;]*}}0f7F800000
// The scale: E4M3 of amax / 6 (round to nearest), one code up where 6 s <
// amax, never past 0x7E (448).
// CHECK-SAME: div.rn.f32 {{[^;]*}}0f40C00000;
// CHECK-SAME: cvt.rn.satfinite.e4m3x2.f32
// CHECK-SAME: cvt.rn.f16x2.e4m3x2
// CHECK-SAME: mul.rn.f32 {{[^;]*}}0f40C00000;
// CHECK-SAME: setp.lt.u16 {{[^;]*}}126;
// Elements: x / s rounded to E2M1 without a division: |x| against the seven
// boundaries of RNE times s (exact in f32; ties 0.75, 1.75, 3.5 round up,
// 0.25, 1.25, 2.5, 5 down).
// CHECK-SAME: mul.rn.f32 {{[^;]*}}0f40A00000;
// CHECK-SAME: mul.rn.f32 {{[^;]*}}0f40600000;
// CHECK-SAME: mul.rn.f32 {{[^;]*}}0f40200000;
// CHECK-SAME: mul.rn.f32 {{[^;]*}}0f3FE00000;
// CHECK-SAME: mul.rn.f32 {{[^;]*}}0f3FA00000;
// CHECK-SAME: mul.rn.f32 {{[^;]*}}0f3F400000;
// CHECK-SAME: mul.rn.f32 {{[^;]*}}0f3E800000;
// CHECK-NOT: div.rn.f32 {{[^;]*}}, %r{{[0-9]+}};
// CHECK-SAME: abs.f32
// CHECK-SAME: setp.gt.f32
// CHECK-SAME: setp.ge.f32
// The dequantized pairs of a non-finite group are bf16 NaN (0x7FC07FC0).
// CHECK-SAME: cvt.rn.bf16x2.f32
// CHECK-SAME: selp.b32 {{[^;]*}}2143322048
// 32 codes, two a byte: one 16-byte store at byte (element / 2); then the
// 64 bytes of bf16; then both scale bytes in one 2-byte store (0xFF for a
// non-finite group).
// CHECK-SAME: shr.u64
// CHECK-SAME: st.global.v4.b32
// CHECK-SAME: st.global.v4.b32
// CHECK-SAME: st.global.v4.b32
// CHECK-SAME: st.global.v4.b32
// CHECK-SAME: st.global.v4.b32
// CHECK-SAME: selp.b32 {{[^;]*}}65280
// CHECK-SAME: selp.b32 {{[^;]*}}255
// CHECK-SAME: st.global.b16
// CHECK-NOT: st.global.b8

// -----

// With sm_100a's scale-factor tiles (scale_vec::4X), D = 128: a slot of
// [NB, H, 1024] holds a 512-byte tile per 64 channels; each thread stores its
// two scale bytes as one 2-byte value at tile (cb / 2), row r, position j,
// column 2 (cb % 2), in the four slots that cover its block; the last block's
// CTA fills the slots past the end with UE4M3 1.0 pairs (0x3838 = 14392).
flamia.kernel @nvfp4_tiles(%q: !flamia.global<?x2x128xbf16> {flamia.param = "q"}, %info: !flamia.global<?x2xi32> {flamia.param = "block_info"}, %qpt: !flamia.global<?x2x128xf4E2M1FN> {flamia.param = "q_pt"}, %qscales: !flamia.global<?x2x8xf8E4M3FN> {flamia.param = "q_pt_scales"}, %qsf: !flamia.global<?x2x1024xi8> {flamia.param = "q_sf"}) attributes {flamia.phase = "forward", launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %bx = gpu.block_id x
  %b = arith.index_cast %bx : index to i32
  %by = gpu.block_id y
  %h = arith.index_cast %by : index to i32
  %start, %length = flamia.block_info.load %info[%b] : !flamia.global<?x2xi32>
  flamia.quantize_block %q rows(%start, %length) block %b head %h per_token(%qpt, %qscales) per_token_tiles(%qsf) : (!flamia.global<?x2x128xbf16>, i32, i32, i32, i32, !flamia.global<?x2x128xf4E2M1FN>, !flamia.global<?x2x8xf8E4M3FN>, !flamia.global<?x2x1024xi8>) -> ()
  flamia.return
}

// TILES-LABEL: gpu.binary @nvfp4_tiles_module
// TILES-SAME: st.global.v4.b32
// TILES-SAME: st.global.b16
// The slot stride: 1024 bytes per (block, head).
// TILES-SAME: shl.b64 {{[^;]*}}, 10;
// TILES-SAME: st.global.b16
// TILES-SAME: 14392
// TILES-SAME: st.global.b16
// TILES-NOT: st.global.b8
