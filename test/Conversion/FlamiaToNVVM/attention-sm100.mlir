// RUN: flamia-opt %s --convert-flamia-to-nvvm | FileCheck %s
// RUN: flamia-opt %s --convert-flamia-to-nvvm --convert-nvvm-to-llvm --reconcile-unrealized-casts --gpu-module-to-binary=format=isa | FileCheck %s --check-prefix=PTX
// The sm_100a program flamia-tile writes for D = 64, 4 query / 2 key-value
// heads, causal, packed documents (flamia-compile --target sm_100a --head-dim
// 64 --heads 4 --kv-heads 2 --causal --varlen --emit-ir: block.mlir), lowered
// to NVVM's tcgen05 ops. Only ptxas and these checks see this code: there is
// no Blackwell GPU here.

// CHECK: gpu.module @flamia_attention_fwd_module [#nvvm.target<O = 3, chip = "sm_100a"
// CHECK-LABEL: llvm.func @flamia_attention_fwd(
// One warp allocates all 512 columns and gives up the permit at once.
// CHECK: %[[COLS:.*]] = llvm.mlir.constant(512 : i32) : i32
// CHECK-NEXT: nvvm.tcgen05.alloc %{{.*}}, %[[COLS]] : !llvm.ptr<3>, i32
// CHECK-NEXT: nvvm.tcgen05.relinquish_alloc_permit
// Everyone reads the base column after the allocation is visible.
// CHECK: nvvm.tcgen05.fence <before>
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// Producer: 40 registers, TMA loads of the fp8 tiles, bulk copies of the
// 128x4 scale-factor tiles.
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: nvvm.cp.async.bulk.shared.cluster.global
// MMA warpgroup: the diagonal (safe) tile in bf16, then scales to tensor
// memory and block-scaled MXFP8 MMAs for the others; commits to mbarriers.
// CHECK: nvvm.setmaxregister decrease 104
// CHECK: nvvm.tcgen05.mma %{{.*}} {ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<f16>} : (!llvm.ptr<6>, i64, i64, i32, i1)
// CHECK: nvvm.tcgen05.cp %{{.*}}, %{{.*}} {multicast = #nvvm.tcgen05_cp_multicast<warpx4>, shape = #nvvm.tcgen05_cp_shape<shape_32x128b>}
// CHECK: nvvm.tcgen05.mma.block_scale %{{.*}} {blockScale = #nvvm.tcgen05_mma_block_scale<block32>, ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.block_scale_kind<mxf8f6f4>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>, !llvm.ptr<6>)
// CHECK: nvvm.tcgen05.commit %{{.*}} : !llvm.ptr<3>
// PV: P comes from tensor memory (A operand address space 6).
// CHECK: nvvm.tcgen05.mma %{{.*}} {ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<f16>} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
// CHECK: nvvm.tcgen05.mma.block_scale %{{.*}} {blockScale = #nvvm.tcgen05_mma_block_scale<block32>, ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.block_scale_kind<mxf8f6f4>} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1, !llvm.ptr<6>, !llvm.ptr<6>)
// Softmax warpgroups: 240 registers; one row per thread out of tensor memory
// in 32-column chunks; P back to tensor memory.
// CHECK: nvvm.setmaxregister increase 240
// CHECK: nvvm.tcgen05.ld %{{.*}} {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<32xi32>
// CHECK: nvvm.tcgen05.wait <load>
// CHECK: nvvm.tcgen05.st %{{.*}} {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>}
// CHECK: nvvm.tcgen05.wait <store>
// CHECK: nvvm.tcgen05.dealloc %{{.*}}, %{{.*}} : !llvm.ptr<6>, i32
// CHECK-NOT: flamia.

// PTX: .target sm_100a
// PTX: tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32
// PTX: tcgen05.mma.cta_group::1.kind::f16
// PTX: tcgen05.cp.cta_group::1.32x128b.warpx4
// PTX: tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32
// PTX: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64
// PTX: tcgen05.ld.sync.aligned.32x32b.x32.b32
// PTX: tcgen05.st.sync.aligned.32x32b
// PTX: tcgen05.dealloc.cta_group::1.sync.aligned.b32

module {
  flamia.kernel @flamia_quantize(%arg0: !flamia.global<?x4x64xbf16> {flamia.param = "q"}, %arg1: !flamia.global<?x2x64xbf16> {flamia.param = "k"}, %arg2: !flamia.global<?x2x64xbf16> {flamia.param = "v"}, %arg3: !flamia.global<?x2xi32> {flamia.param = "block_info"}, %arg4: !flamia.global<?x4x64xf8E4M3FN> {flamia.param = "q_pt"}, %arg5: !flamia.global<?x4x2xf8E8M0FNU> {flamia.param = "q_pt_scales"}, %arg6: !flamia.global<?x4x64xf8E4M3FN> {flamia.param = "q_tb"}, %arg7: !flamia.global<?x4x2xf8E8M0FNU> {flamia.param = "q_tb_scales"}, %arg8: !flamia.global<?x2x64xf8E4M3FN> {flamia.param = "k_tb"}, %arg9: !flamia.global<?x2x2xf8E8M0FNU> {flamia.param = "k_tb_scales"}, %arg10: !flamia.global<?x2x64xf8E4M3FN> {flamia.param = "v_tb"}, %arg11: !flamia.global<?x2x2xf8E8M0FNU> {flamia.param = "v_tb_scales"}, %arg12: !flamia.global<?x4x512xi8> {flamia.param = "q_sf"}, %arg13: !flamia.global<?x2x512xi8> {flamia.param = "k_sf"}, %arg14: !flamia.global<?x2x512xi8> {flamia.param = "v_sf"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
    %block_id_x = gpu.block_id  x
    %0 = arith.index_cast %block_id_x : index to i32
    %block_id_y = gpu.block_id  y
    %1 = arith.index_cast %block_id_y : index to i32
    %start, %length = flamia.block_info.load %arg3[%0] : !flamia.global<?x2xi32>
    flamia.quantize_block %arg0 rows(%start, %length) block %0 head %1 per_token(%arg4, %arg5) token_block(%arg6, %arg7) per_token_tiles(%arg12) : (!flamia.global<?x4x64xbf16>, i32, i32, i32, i32, !flamia.global<?x4x64xf8E4M3FN>, !flamia.global<?x4x2xf8E8M0FNU>, !flamia.global<?x4x64xf8E4M3FN>, !flamia.global<?x4x2xf8E8M0FNU>, !flamia.global<?x4x512xi8>) -> ()
    %c2_i32 = arith.constant 2 : i32
    %2 = arith.cmpi slt, %1, %c2_i32 : i32
    scf.if %2 {
      flamia.quantize_block %arg1 rows(%start, %length) block %0 head %1 token_block(%arg8, %arg9) token_block_tiles(%arg13) {token_block_tile_rows = "tokens"} : (!flamia.global<?x2x64xbf16>, i32, i32, i32, i32, !flamia.global<?x2x64xf8E4M3FN>, !flamia.global<?x2x2xf8E8M0FNU>, !flamia.global<?x2x512xi8>) -> ()
      flamia.quantize_block %arg2 rows(%start, %length) block %0 head %1 token_block(%arg10, %arg11) token_block_tiles(%arg14) {token_block_tile_rows = "channels"} : (!flamia.global<?x2x64xbf16>, i32, i32, i32, i32, !flamia.global<?x2x64xf8E4M3FN>, !flamia.global<?x2x2xf8E8M0FNU>, !flamia.global<?x2x512xi8>) -> ()
    }
    flamia.return
  }
  flamia.kernel @flamia_attention_fwd(%arg0: !flamia.global<?x4x64xf8E4M3FN> {flamia.param = "q_pt"}, %arg1: !flamia.global<?x4x512xi8> {flamia.param = "q_sf"}, %arg2: !flamia.global<?x2x64xf8E4M3FN> {flamia.param = "k_tb"}, %arg3: !flamia.global<?x2x512xi8> {flamia.param = "k_sf"}, %arg4: !flamia.global<?x2x64xf8E4M3FN> {flamia.param = "v_tb"}, %arg5: !flamia.global<?x2x512xi8> {flamia.param = "v_sf"}, %arg6: !flamia.global<?x4x64xbf16> {flamia.param = "q"}, %arg7: !flamia.global<?x2x64xbf16> {flamia.param = "k"}, %arg8: !flamia.global<?x2x64xbf16> {flamia.param = "v"}, %arg9: !flamia.global<?x4x64xbf16> {flamia.param = "o"}, %arg10: !flamia.global<4x?xf32> {flamia.param = "lse"}, %arg11: !flamia.global<?x8xi32> {flamia.param = "items"}, %arg12: i32 {flamia.param = "num_items"}, %arg13: !flamia.global<1xi32> {flamia.param = "counter"}, %arg14: f32 {flamia.param = "softmax_scale_log2"}, %arg15: i32 {flamia.param = "T"}) attributes {launch = #flamia.launch<persistent>, schedule = {block_m = 128 : i64, block_n = 128 : i64, cost_model = "sm_100a", safe_block = 128 : i64}, target = #flamia.target<sm_100a>, threads = 384 : i64, tile = {block_m = 128 : i64, block_n = 128 : i64, stages = 4 : i64, tmem_columns = 512 : i64}} {
    %0 = flamia.smem.alloc : !flamia.smem<1x128x64xf8E4M3FN>
    %1 = flamia.smem.alloc : !flamia.smem<1x8x64xi8>
    %2 = flamia.smem.alloc : !flamia.smem<4x128x64xf8E4M3FN>
    %3 = flamia.smem.alloc : !flamia.smem<4x128x64xf8E4M3FN>
    %4 = flamia.smem.alloc : !flamia.smem<4x8x64xi8>
    %5 = flamia.smem.alloc : !flamia.smem<4x8x64xi8>
    %6 = flamia.smem.alloc : !flamia.smem<1x128x64xbf16>
    %7 = flamia.smem.alloc : !flamia.smem<1x128x64xbf16>
    %8 = flamia.smem.alloc : !flamia.smem<1x128x64xbf16>
    %9 = flamia.pipeline.create consumers 1 : !flamia.pipeline<1>
    %10 = flamia.pipeline.create consumers 1 : !flamia.pipeline<4>
    %11 = flamia.pipeline.create consumers 1 : !flamia.pipeline<1>
    %12 = flamia.pipeline.create consumers 128 : !flamia.pipeline<2>
    %13 = flamia.pipeline.create consumers 1 producers 128 : !flamia.pipeline<1>
    %14 = flamia.queue.create %arg13, %arg12 receivers 129 : !flamia.global<1xi32>
    %15 = flamia.tmem.alloc columns 512 by_warpgroup 2
    flamia.role "producer" warpgroups[0, 1) registers 40 single_thread {
      %c0_i32 = arith.constant 0 : i32
      %c0_i32_0 = arith.constant 0 : i32
      %c0_i32_1 = arith.constant 0 : i32
      %16:4 = scf.while (%arg16 = %c0_i32_1, %arg17 = %c0_i32, %arg18 = %c0_i32_0) : (i32, i32, i32) -> (i32, i32, i32, i32) {
        %17 = flamia.queue.next fetch %14[%arg16]
        %18 = arith.cmpi slt, %17, %arg12 : i32
        scf.condition(%18) %arg16, %arg17, %arg18, %17 : i32, i32, i32, i32
      } do {
      ^bb0(%arg16: i32, %arg17: i32, %arg18: i32, %arg19: i32):
        %q_start, %q_rows, %doc_start, %doc_end, %q_head, %kv_head, %doc_block_base, %q_tile = flamia.item.load %arg11[%arg19] : !flamia.global<?x8xi32>
        %17 = arith.subi %doc_end, %doc_start : i32
        %c1_i32 = arith.constant 1 : i32
        %18 = arith.addi %q_tile, %c1_i32 : i32
        %19 = flamia.pipeline.acquire producer %9[%arg16] : !flamia.pipeline<1>
        flamia.pipeline.expect %9[%19] bytes 25088 : !flamia.pipeline<1>
        %c64_i32 = arith.constant 64 : i32
        %20 = arith.muli %q_head, %c64_i32 : i32
        flamia.tma.load %arg0[%q_start, %20] -> %0[%19] on %9 : !flamia.global<?x4x64xf8E4M3FN>, !flamia.smem<1x128x64xf8E4M3FN>, !flamia.pipeline<1>
        %c4_i32 = arith.constant 4 : i32
        %c4_i32_2 = arith.constant 4 : i32
        %21 = arith.muli %q_tile, %c4_i32_2 : i32
        %22 = arith.addi %doc_block_base, %21 : i32
        %23 = arith.muli %22, %c4_i32 : i32
        %24 = arith.addi %23, %q_head : i32
        flamia.bulk.load %arg1[%24] -> %1[%19] on %9 : !flamia.global<?x4x512xi8>, !flamia.smem<1x8x64xi8>, !flamia.pipeline<1>
        flamia.tma.load %arg6[%q_start, %20] -> %6[%19] on %9 : !flamia.global<?x4x64xbf16>, !flamia.smem<1x128x64xbf16>, !flamia.pipeline<1>
        %c64_i32_3 = arith.constant 64 : i32
        %25 = arith.muli %kv_head, %c64_i32_3 : i32
        %c1_i32_4 = arith.constant 1 : i32
        %c0_i32_5 = arith.constant 0 : i32
        %26:2 = scf.for %arg20 = %c0_i32_5 to %18 step %c1_i32_4 iter_args(%arg21 = %arg17, %arg22 = %arg18) -> (i32, i32)  : i32 {
          %c128_i32 = arith.constant 128 : i32
          %28 = arith.muli %arg20, %c128_i32 : i32
          %29 = arith.addi %doc_start, %28 : i32
          %c1_i32_7 = arith.constant 1 : i32
          %30 = arith.divsi %q_tile, %c1_i32_7 : i32
          %c1_i32_8 = arith.constant 1 : i32
          %31 = arith.divsi %arg20, %c1_i32_8 : i32
          %32 = arith.cmpi eq, %31, %30 : i32
          %33:2 = scf.if %32 -> (i32, i32) {
            %34 = flamia.pipeline.acquire producer %11[%arg22] : !flamia.pipeline<1>
            flamia.pipeline.expect %11[%34] bytes 32768 : !flamia.pipeline<1>
            flamia.tma.load %arg7[%29, %25] -> %7[%34] on %11 : !flamia.global<?x2x64xbf16>, !flamia.smem<1x128x64xbf16>, !flamia.pipeline<1>
            flamia.tma.load %arg8[%29, %25] -> %8[%34] on %11 : !flamia.global<?x2x64xbf16>, !flamia.smem<1x128x64xbf16>, !flamia.pipeline<1>
            %c1_i32_9 = arith.constant 1 : i32
            %35 = arith.addi %arg22, %c1_i32_9 : i32
            scf.yield %arg21, %35 : i32, i32
          } else {
            %34 = flamia.pipeline.acquire producer %10[%arg21] : !flamia.pipeline<4>
            flamia.pipeline.expect %10[%34] bytes 17408 : !flamia.pipeline<4>
            flamia.tma.load %arg2[%29, %25] -> %2[%34] on %10 : !flamia.global<?x2x64xf8E4M3FN>, !flamia.smem<4x128x64xf8E4M3FN>, !flamia.pipeline<4>
            flamia.tma.load %arg4[%29, %25] -> %3[%34] on %10 : !flamia.global<?x2x64xf8E4M3FN>, !flamia.smem<4x128x64xf8E4M3FN>, !flamia.pipeline<4>
            %c2_i32 = arith.constant 2 : i32
            %c4_i32_9 = arith.constant 4 : i32
            %35 = arith.muli %arg20, %c4_i32_9 : i32
            %36 = arith.addi %doc_block_base, %35 : i32
            %37 = arith.muli %36, %c2_i32 : i32
            %38 = arith.addi %37, %kv_head : i32
            flamia.bulk.load %arg3[%38] -> %4[%34] on %10 : !flamia.global<?x2x512xi8>, !flamia.smem<4x8x64xi8>, !flamia.pipeline<4>
            flamia.bulk.load %arg5[%38] -> %5[%34] on %10 : !flamia.global<?x2x512xi8>, !flamia.smem<4x8x64xi8>, !flamia.pipeline<4>
            %c1_i32_10 = arith.constant 1 : i32
            %39 = arith.addi %arg21, %c1_i32_10 : i32
            scf.yield %39, %arg22 : i32, i32
          }
          scf.yield %33#0, %33#1 : i32, i32
        }
        %c1_i32_6 = arith.constant 1 : i32
        %27 = arith.addi %arg16, %c1_i32_6 : i32
        scf.yield %27, %26#0, %26#1 : i32, i32, i32
      }
    }
    flamia.role "mma" warpgroups[1, 2) registers 104 single_thread {
      %c468_i32 = arith.constant 468 : i32
      %16 = arith.addi %15, %c468_i32 : i32
      %c0_i32 = arith.constant 0 : i32
      %c0_i32_0 = arith.constant 0 : i32
      %c0_i32_1 = arith.constant 0 : i32
      %c0_i32_2 = arith.constant 0 : i32
      %c0_i32_3 = arith.constant 0 : i32
      %17:6 = scf.while (%arg16 = %c0_i32_3, %arg17 = %c0_i32, %arg18 = %c0_i32_0, %arg19 = %c0_i32_1, %arg20 = %c0_i32_2) : (i32, i32, i32, i32, i32) -> (i32, i32, i32, i32, i32, i32) {
        %18 = flamia.queue.next receive %14[%arg16]
        %19 = arith.cmpi slt, %18, %arg12 : i32
        scf.condition(%19) %arg16, %arg17, %arg18, %arg19, %arg20, %18 : i32, i32, i32, i32, i32, i32
      } do {
      ^bb0(%arg16: i32, %arg17: i32, %arg18: i32, %arg19: i32, %arg20: i32, %arg21: i32):
        %q_start, %q_rows, %doc_start, %doc_end, %q_head, %kv_head, %doc_block_base, %q_tile = flamia.item.load %arg11[%arg21] : !flamia.global<?x8xi32>
        %18 = arith.subi %doc_end, %doc_start : i32
        %c1_i32 = arith.constant 1 : i32
        %19 = arith.addi %q_tile, %c1_i32 : i32
        %20 = flamia.pipeline.acquire consumer %9[%arg16] : !flamia.pipeline<1>
        %c448_i32 = arith.constant 448 : i32
        %21 = arith.addi %15, %c448_i32 : i32
        flamia.umma.scales %1[%20] -> %15[448] : !flamia.smem<1x8x64xi8>
        %c0_i32_4 = arith.constant 0 : i32
        %22 = flamia.pipeline.acquire producer %12[%arg19] : !flamia.pipeline<2>
        %c128_i32 = arith.constant 128 : i32
        %23 = arith.muli %22, %c128_i32 : i32
        %24 = arith.addi %15, %23 : i32
        %c1_i32_5 = arith.constant 1 : i32
        %25 = arith.divsi %q_tile, %c1_i32_5 : i32
        %c1_i32_6 = arith.constant 1 : i32
        %26 = arith.divsi %c0_i32_4, %c1_i32_6 : i32
        %27 = arith.cmpi eq, %26, %25 : i32
        %28:3 = scf.if %27 -> (i32, i32, i32) {
          %33 = flamia.pipeline.acquire consumer %11[%arg18] : !flamia.pipeline<1>
          %false = arith.constant false
          flamia.umma %24[0] a %6[%20] b %7[%33] accumulate %false : (i32, !flamia.smem<1x128x64xbf16>, i32, !flamia.smem<1x128x64xbf16>, i32, i1) -> ()
          %c1_i32_12 = arith.constant 1 : i32
          %34 = arith.addi %arg18, %c1_i32_12 : i32
          scf.yield %arg17, %34, %33 : i32, i32, i32
        } else {
          %33 = flamia.pipeline.acquire consumer %10[%arg17] : !flamia.pipeline<4>
          %c4_i32 = arith.constant 4 : i32
          %34 = arith.muli %22, %c4_i32 : i32
          %c452_i32 = arith.constant 452 : i32
          %35 = arith.addi %c452_i32, %34 : i32
          %36 = arith.addi %15, %35 : i32
          flamia.umma.scales %4[%33] -> %36[0] : !flamia.smem<4x8x64xi8>
          %false = arith.constant false
          flamia.umma %24[0] a %0[%20] b %2[%33] accumulate %false scales(%21, %36) : (i32, !flamia.smem<1x128x64xf8E4M3FN>, i32, !flamia.smem<4x128x64xf8E4M3FN>, i32, i1, i32, i32) -> ()
          %c1_i32_12 = arith.constant 1 : i32
          %37 = arith.addi %arg17, %c1_i32_12 : i32
          scf.yield %37, %arg18, %33 : i32, i32, i32
        }
        flamia.umma.commit full %12[%22] : !flamia.pipeline<2>
        %c1_i32_7 = arith.constant 1 : i32
        %29 = arith.subi %19, %c1_i32_7 : i32
        %c1_i32_8 = arith.constant 1 : i32
        %30 = arith.addi %arg19, %c1_i32_8 : i32
        %c1_i32_9 = arith.constant 1 : i32
        %c0_i32_10 = arith.constant 0 : i32
        %31:6 = scf.for %arg22 = %c0_i32_10 to %19 step %c1_i32_9 iter_args(%arg23 = %28#0, %arg24 = %28#1, %arg25 = %30, %arg26 = %arg20, %arg27 = %28#2, %arg28 = %22) -> (i32, i32, i32, i32, i32, i32)  : i32 {
          %33 = arith.cmpi slt, %arg22, %29 : i32
          %34:5 = scf.if %33 -> (i32, i32, i32, i32, i32) {
            %c1_i32_16 = arith.constant 1 : i32
            %41 = arith.addi %arg22, %c1_i32_16 : i32
            %42 = flamia.pipeline.acquire producer %12[%arg25] : !flamia.pipeline<2>
            %c128_i32_17 = arith.constant 128 : i32
            %43 = arith.muli %42, %c128_i32_17 : i32
            %44 = arith.addi %15, %43 : i32
            %c1_i32_18 = arith.constant 1 : i32
            %45 = arith.divsi %q_tile, %c1_i32_18 : i32
            %c1_i32_19 = arith.constant 1 : i32
            %46 = arith.divsi %41, %c1_i32_19 : i32
            %47 = arith.cmpi eq, %46, %45 : i32
            %48:3 = scf.if %47 -> (i32, i32, i32) {
              %50 = flamia.pipeline.acquire consumer %11[%arg24] : !flamia.pipeline<1>
              %false = arith.constant false
              flamia.umma %44[0] a %6[%20] b %7[%50] accumulate %false : (i32, !flamia.smem<1x128x64xbf16>, i32, !flamia.smem<1x128x64xbf16>, i32, i1) -> ()
              %c1_i32_21 = arith.constant 1 : i32
              %51 = arith.addi %arg24, %c1_i32_21 : i32
              scf.yield %arg23, %51, %50 : i32, i32, i32
            } else {
              %50 = flamia.pipeline.acquire consumer %10[%arg23] : !flamia.pipeline<4>
              %c4_i32 = arith.constant 4 : i32
              %51 = arith.muli %42, %c4_i32 : i32
              %c452_i32 = arith.constant 452 : i32
              %52 = arith.addi %c452_i32, %51 : i32
              %53 = arith.addi %15, %52 : i32
              flamia.umma.scales %4[%50] -> %53[0] : !flamia.smem<4x8x64xi8>
              %false = arith.constant false
              flamia.umma %44[0] a %0[%20] b %2[%50] accumulate %false scales(%21, %53) : (i32, !flamia.smem<1x128x64xf8E4M3FN>, i32, !flamia.smem<4x128x64xf8E4M3FN>, i32, i1, i32, i32) -> ()
              %c1_i32_21 = arith.constant 1 : i32
              %54 = arith.addi %arg23, %c1_i32_21 : i32
              scf.yield %54, %arg24, %50 : i32, i32, i32
            }
            flamia.umma.commit full %12[%42] : !flamia.pipeline<2>
            %c1_i32_20 = arith.constant 1 : i32
            %49 = arith.addi %arg25, %c1_i32_20 : i32
            scf.yield %48#0, %48#1, %49, %48#2, %42 : i32, i32, i32, i32, i32
          } else {
            flamia.umma.commit empty %9[%20] : !flamia.pipeline<1>
            scf.yield %arg23, %arg24, %arg25, %arg27, %arg28 : i32, i32, i32, i32, i32
          }
          %35 = flamia.pipeline.acquire consumer %13[%arg26] : !flamia.pipeline<1>
          %c0_i32_12 = arith.constant 0 : i32
          %36 = arith.cmpi sgt, %arg22, %c0_i32_12 : i32
          %c1_i32_13 = arith.constant 1 : i32
          %37 = arith.divsi %q_tile, %c1_i32_13 : i32
          %c1_i32_14 = arith.constant 1 : i32
          %38 = arith.divsi %arg22, %c1_i32_14 : i32
          %39 = arith.cmpi eq, %38, %37 : i32
          scf.if %39 {
            flamia.umma %15[256] b %8[%arg27] accumulate %36 {a_column = 384 : i64, a_type = bf16, b_transposed} : (i32, !flamia.smem<1x128x64xbf16>, i32, i1) -> ()
            flamia.umma.commit empty %13[%35] : !flamia.pipeline<1>
            flamia.umma.commit empty %11[%arg27] : !flamia.pipeline<1>
          } else {
            %c4_i32 = arith.constant 4 : i32
            %41 = arith.muli %arg28, %c4_i32 : i32
            %c460_i32 = arith.constant 460 : i32
            %42 = arith.addi %c460_i32, %41 : i32
            %43 = arith.addi %15, %42 : i32
            flamia.umma.scales %5[%arg27] -> %43[0] : !flamia.smem<4x8x64xi8>
            flamia.umma %15[256] b %3[%arg27] accumulate %36 scales(%16, %43) {a_column = 384 : i64, a_type = f8E4M3FN, b_transposed} : (i32, !flamia.smem<4x128x64xf8E4M3FN>, i32, i1, i32, i32) -> ()
            flamia.umma.commit empty %13[%35] : !flamia.pipeline<1>
            flamia.umma.commit empty %10[%arg27] : !flamia.pipeline<4>
          }
          %c1_i32_15 = arith.constant 1 : i32
          %40 = arith.addi %arg26, %c1_i32_15 : i32
          scf.yield %34#0, %34#1, %34#2, %40, %34#3, %34#4 : i32, i32, i32, i32, i32, i32
        }
        %c1_i32_11 = arith.constant 1 : i32
        %32 = arith.addi %arg16, %c1_i32_11 : i32
        scf.yield %32, %31#0, %31#1, %31#2, %31#3 : i32, i32, i32, i32, i32
      }
    }
    flamia.role "softmax" warpgroups[2, 3) registers 240 {
      flamia.tmem.fill %15[468] columns 4 value 2139062143
      %c0_i32 = arith.constant 0 : i32
      %c0_i32_0 = arith.constant 0 : i32
      %c0_i32_1 = arith.constant 0 : i32
      %16:4 = scf.while (%arg16 = %c0_i32_1, %arg17 = %c0_i32, %arg18 = %c0_i32_0) : (i32, i32, i32) -> (i32, i32, i32, i32) {
        %17 = flamia.queue.next receive %14[%arg16]
        %18 = arith.cmpi slt, %17, %arg12 : i32
        scf.condition(%18) %arg16, %arg17, %arg18, %17 : i32, i32, i32, i32
      } do {
      ^bb0(%arg16: i32, %arg17: i32, %arg18: i32, %arg19: i32):
        %q_start, %q_rows, %doc_start, %doc_end, %q_head, %kv_head, %doc_block_base, %q_tile = flamia.item.load %arg11[%arg19] : !flamia.global<?x8xi32>
        %17 = arith.subi %doc_end, %doc_start : i32
        %c1_i32 = arith.constant 1 : i32
        %18 = arith.addi %q_tile, %c1_i32 : i32
        %c128_i32 = arith.constant 128 : i32
        %19 = arith.muli %q_tile, %c128_i32 : i32
        %20 = flamia.rows.fill 0xFF800000 : !flamia.rows<128 x f32>
        %21 = flamia.rows.fill 0.000000e+00 : !flamia.rows<128 x f32>
        %c1_i32_2 = arith.constant 1 : i32
        %c0_i32_3 = arith.constant 0 : i32
        %22:4 = scf.for %arg20 = %c0_i32_3 to %18 step %c1_i32_2 iter_args(%arg21 = %arg17, %arg22 = %arg18, %arg23 = %20, %arg24 = %21) -> (i32, i32, !flamia.rows<128 x f32>, !flamia.rows<128 x f32>)  : i32 {
          %26 = flamia.pipeline.acquire consumer %12[%arg21] : !flamia.pipeline<2>
          %c128_i32_6 = arith.constant 128 : i32
          %27 = arith.muli %26, %c128_i32_6 : i32
          %28 = arith.addi %15, %27 : i32
          %29 = flamia.tmem.load %28[0] : !flamia.frag<128x128xf32>
          flamia.pipeline.release %12[%26] : !flamia.pipeline<2>
          %c128_i32_7 = arith.constant 128 : i32
          %30 = arith.muli %arg20, %c128_i32_7 : i32
          %c128_i32_8 = arith.constant 128 : i32
          %31 = arith.muli %arg20, %c128_i32_8 : i32
          %c128_i32_9 = arith.constant 128 : i32
          %32 = arith.addi %31, %c128_i32_9 : i32
          %33 = arith.cmpi sgt, %32, %17 : i32
          %34 = arith.cmpi eq, %arg20, %q_tile : i32
          %35 = arith.ori %33, %34 : i1
          %36 = scf.if %35 -> (!flamia.frag<128x128xf32>) {
            %44 = flamia.frag.mask %29 query %19 key %30 limit %17 {causal} : !flamia.frag<128x128xf32>
            scf.yield %44 : !flamia.frag<128x128xf32>
          } else {
            scf.yield %29 : !flamia.frag<128x128xf32>
          }
          %p, %new_max, %new_sum, %alpha = flamia.softmax.update %36 max %arg23 sum %arg24 scale %arg14 : !flamia.frag<128x128xf32>, !flamia.rows<128 x f32>
          %c1_i32_10 = arith.constant 1 : i32
          %37 = arith.divsi %q_tile, %c1_i32_10 : i32
          %c1_i32_11 = arith.constant 1 : i32
          %38 = arith.divsi %arg20, %c1_i32_11 : i32
          %39 = arith.cmpi eq, %38, %37 : i32
          %40 = scf.if %39 -> (i32) {
            %false = arith.constant false
            %44 = flamia.frag.quantize %p quantized %false {precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>} : !flamia.frag<128x128xf32> -> !flamia.frag<128x128xbf16>
            %45 = flamia.pipeline.acquire producer %13[%arg22] : !flamia.pipeline<1>
            flamia.tmem.store %44, %15[384] : !flamia.frag<128x128xbf16>
            scf.yield %45 : i32
          } else {
            %true = arith.constant true
            %44 = flamia.frag.quantize %p quantized %true {precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>} : !flamia.frag<128x128xf32> -> !flamia.frag<128x128xf8E4M3FN>
            %45 = flamia.pipeline.acquire producer %13[%arg22] : !flamia.pipeline<1>
            flamia.tmem.store %44, %15[384] : !flamia.frag<128x128xf8E4M3FN>
            scf.yield %45 : i32
          }
          %c0_i32_12 = arith.constant 0 : i32
          %41 = arith.cmpi sgt, %arg20, %c0_i32_12 : i32
          scf.if %41 {
            %44 = flamia.tmem.load %15[256] : !flamia.frag<128x32xf32>
            %45 = flamia.frag.scale_rows %44 by %alpha : !flamia.frag<128x32xf32>, !flamia.rows<128 x f32>
            flamia.tmem.store %45, %15[256] : !flamia.frag<128x32xf32>
            %46 = flamia.tmem.load %15[288] : !flamia.frag<128x32xf32>
            %47 = flamia.frag.scale_rows %46 by %alpha : !flamia.frag<128x32xf32>, !flamia.rows<128 x f32>
            flamia.tmem.store %47, %15[288] : !flamia.frag<128x32xf32>
          }
          flamia.pipeline.arrive %13[%40] : !flamia.pipeline<1>
          %c1_i32_13 = arith.constant 1 : i32
          %42 = arith.addi %arg21, %c1_i32_13 : i32
          %c1_i32_14 = arith.constant 1 : i32
          %43 = arith.addi %arg22, %c1_i32_14 : i32
          scf.yield %42, %43, %new_max, %new_sum : i32, i32, !flamia.rows<128 x f32>, !flamia.rows<128 x f32>
        }
        %23 = flamia.pipeline.acquire producer %13[%22#1] : !flamia.pipeline<1>
        %24 = flamia.tmem.load %15[256] : !flamia.frag<128x64xf32>
        %c0_i32_4 = arith.constant 0 : i32
        flamia.attn.store %24 max %22#2 sum %22#3 to %arg9, %arg10 rows(%q_start, %c0_i32_4, %q_rows) head %q_head tokens %arg15 {fixed_scale = 8 : i64} : !flamia.frag<128x64xf32>, !flamia.rows<128 x f32>, !flamia.global<?x4x64xbf16>, !flamia.global<4x?xf32>
        %c1_i32_5 = arith.constant 1 : i32
        %25 = arith.addi %arg16, %c1_i32_5 : i32
        scf.yield %25, %22#0, %22#1 : i32, i32, i32
      }
      flamia.tmem.dealloc %15 columns 512
    }
    flamia.return
  }
  func.func @flamia(%arg0: !flamia.global<?x4x64xbf16> {flamia.buffer = "q", flamia.dims = ["T", "4", "64"]}, %arg1: !flamia.global<?x2x64xbf16> {flamia.buffer = "k", flamia.dims = ["T", "2", "64"]}, %arg2: !flamia.global<?x2x64xbf16> {flamia.buffer = "v", flamia.dims = ["T", "2", "64"]}, %arg3: !flamia.global<?xi32> {flamia.buffer = "cu_seqlens", flamia.dims = ["NUM_DOCS + 1"]}, %arg4: !flamia.global<?x4x64xbf16> {flamia.buffer = "o", flamia.dims = ["T", "4", "64"], flamia.output}, %arg5: !flamia.global<4x?xf32> {flamia.buffer = "lse", flamia.dims = ["4", "T"], flamia.output}) attributes {flamia.causal, flamia.recipe = #flamia.recipe<mxfp8, safe_block = 128>, flamia.target = #flamia.target<sm_100a>} {
    %0 = flamia.workspace workspace "q_pt" dims ["T", "4", "64"] : !flamia.global<?x4x64xf8E4M3FN>
    %1 = flamia.workspace workspace "q_pt_scales" dims ["T", "4", "2"] : !flamia.global<?x4x2xf8E8M0FNU>
    %2 = flamia.workspace workspace "q_tb" dims ["T", "4", "64"] : !flamia.global<?x4x64xf8E4M3FN>
    %3 = flamia.workspace workspace "q_tb_scales" dims ["NB", "4", "2"] : !flamia.global<?x4x2xf8E8M0FNU>
    %4 = flamia.workspace workspace "k_tb" dims ["T", "2", "64"] : !flamia.global<?x2x64xf8E4M3FN>
    %5 = flamia.workspace workspace "k_tb_scales" dims ["NB", "2", "2"] : !flamia.global<?x2x2xf8E8M0FNU>
    %6 = flamia.workspace workspace "v_tb" dims ["T", "2", "64"] : !flamia.global<?x2x64xf8E4M3FN>
    %7 = flamia.workspace workspace "v_tb_scales" dims ["NB", "2", "2"] : !flamia.global<?x2x2xf8E8M0FNU>
    %8 = flamia.workspace workspace "q_sf" dims ["NB", "4", "512"] : !flamia.global<?x4x512xi8>
    %9 = flamia.workspace workspace "k_sf" dims ["NB", "2", "512"] : !flamia.global<?x2x512xi8>
    %10 = flamia.workspace workspace "v_sf" dims ["NB", "2", "512"] : !flamia.global<?x2x512xi8>
    %11 = flamia.workspace schedule "block_info" dims ["NB", "2"] : !flamia.global<?x2xi32>
    %12 = flamia.workspace schedule "items" dims ["NUM_ITEMS", "8"] : !flamia.global<?x8xi32>
    %13 = flamia.workspace schedule "counter" dims ["1"] : !flamia.global<1xi32>
    %14 = flamia.runtime_value "NUM_ITEMS" : i32
    %15 = flamia.runtime_value "softmax_scale_log2" : f32
    %16 = flamia.runtime_value "T" : i32
    flamia.launch @flamia_quantize(%arg0, %arg1, %arg2, %11, %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10) grid ["NB", "Hq", "1"] : (!flamia.global<?x4x64xbf16>, !flamia.global<?x2x64xbf16>, !flamia.global<?x2x64xbf16>, !flamia.global<?x2xi32>, !flamia.global<?x4x64xf8E4M3FN>, !flamia.global<?x4x2xf8E8M0FNU>, !flamia.global<?x4x64xf8E4M3FN>, !flamia.global<?x4x2xf8E8M0FNU>, !flamia.global<?x2x64xf8E4M3FN>, !flamia.global<?x2x2xf8E8M0FNU>, !flamia.global<?x2x64xf8E4M3FN>, !flamia.global<?x2x2xf8E8M0FNU>, !flamia.global<?x4x512xi8>, !flamia.global<?x2x512xi8>, !flamia.global<?x2x512xi8>) -> ()
    flamia.launch @flamia_attention_fwd(%0, %8, %4, %9, %6, %10, %arg0, %arg1, %arg2, %arg4, %arg5, %12, %14, %13, %15, %16) grid ["NUM_SMS", "1", "1"] : (!flamia.global<?x4x64xf8E4M3FN>, !flamia.global<?x4x512xi8>, !flamia.global<?x2x64xf8E4M3FN>, !flamia.global<?x2x512xi8>, !flamia.global<?x2x64xf8E4M3FN>, !flamia.global<?x2x512xi8>, !flamia.global<?x4x64xbf16>, !flamia.global<?x2x64xbf16>, !flamia.global<?x2x64xbf16>, !flamia.global<?x4x64xbf16>, !flamia.global<4x?xf32>, !flamia.global<?x8xi32>, i32, !flamia.global<1xi32>, f32, i32) -> ()
    return
  }
}
