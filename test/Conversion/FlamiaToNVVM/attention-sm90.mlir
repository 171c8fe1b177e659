// RUN: flamia-opt %s --convert-flamia-to-nvvm | FileCheck %s
// RUN: not flamia-opt %s --convert-flamia-to-nvvm=chip=sm_80 -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: convert-flamia-to-nvvm: unknown chip 'sm_80' (expected sm_90a or sm_100a)
// RUN: flamia-opt %s --convert-flamia-to-nvvm --convert-nvvm-to-llvm --reconcile-unrealized-casts --gpu-module-to-binary=format=isa | FileCheck %s --check-prefix=PTX
// The sm_90a attention program flamia-tile writes (tile.mlir), lowered.
flamia.kernel @attn_attention_fwd(%arg0: !flamia.global<?x8x128xbf16> {flamia.param = "q_deq"}, %arg1: !flamia.global<?x2x128xbf16> {flamia.param = "k_deq"}, %arg2: !flamia.global<?x2x128xbf16> {flamia.param = "v_deq"}, %arg3: !flamia.global<?x8x128xbf16> {flamia.param = "q"}, %arg4: !flamia.global<?x2x128xbf16> {flamia.param = "k"}, %arg5: !flamia.global<?x2x128xbf16> {flamia.param = "v"}, %arg6: !flamia.global<?x8x128xbf16> {flamia.param = "o"}, %arg7: !flamia.global<8x?xf32> {flamia.param = "lse"}, %arg8: !flamia.global<?x8xi32> {flamia.param = "items"}, %arg9: i32 {flamia.param = "num_items"}, %arg10: !flamia.global<1xi32> {flamia.param = "counter"}, %arg11: f32 {flamia.param = "softmax_scale_log2"}, %arg12: i32 {flamia.param = "T"}) attributes {launch = #flamia.launch<persistent>, schedule = {block_m = 128 : i64, block_n = 128 : i64, cost_model = "sm_90a", safe_block = 128 : i64}, target = #flamia.target<sm_90a>, threads = 384 : i64, tile = {block_m = 128 : i64, block_n = 128 : i64, stages = 2 : i64}} {
  %0 = flamia.smem.alloc : !flamia.smem<1x128x128xbf16>
  %1 = flamia.smem.alloc : !flamia.smem<1x128x128xbf16>
  %2 = flamia.smem.alloc : !flamia.smem<2x128x128xbf16>
  %3 = flamia.smem.alloc : !flamia.smem<2x128x128xbf16>
  %4 = flamia.pipeline.create consumers 256 : !flamia.pipeline<1>
  %5 = flamia.pipeline.create consumers 256 : !flamia.pipeline<2>
  %6 = flamia.queue.create %arg10, %arg9 receivers 256 : !flamia.global<1xi32>
  flamia.role "producer" warpgroups[0, 1) registers 40 single_thread {
    %c0_i32 = arith.constant 0 : i32
    %c0_i32_0 = arith.constant 0 : i32
    %7:3 = scf.while (%arg13 = %c0_i32, %arg14 = %c0_i32_0) : (i32, i32) -> (i32, i32, i32) {
      %8 = flamia.queue.next fetch %6[%arg13]
      %9 = arith.cmpi slt, %8, %arg9 : i32
      scf.condition(%9) %arg13, %arg14, %8 : i32, i32, i32
    } do {
    ^bb0(%arg13: i32, %arg14: i32, %arg15: i32):
      %q_start, %q_rows, %doc_start, %doc_end, %q_head, %kv_head, %doc_block_base, %q_tile = flamia.item.load %arg8[%arg15] : !flamia.global<?x8xi32>
      %8 = arith.subi %doc_end, %doc_start : i32
      %c1_i32 = arith.constant 1 : i32
      %9 = arith.addi %q_tile, %c1_i32 : i32
      %10 = flamia.pipeline.acquire producer %4[%arg13] : !flamia.pipeline<1>
      flamia.pipeline.expect %4[%10] bytes 65536 : !flamia.pipeline<1>
      %c128_i32 = arith.constant 128 : i32
      %11 = arith.muli %q_head, %c128_i32 : i32
      flamia.tma.load %arg0[%q_start, %11] -> %0[%10] on %4 : !flamia.global<?x8x128xbf16>, !flamia.smem<1x128x128xbf16>, !flamia.pipeline<1>
      flamia.tma.load %arg3[%q_start, %11] -> %1[%10] on %4 : !flamia.global<?x8x128xbf16>, !flamia.smem<1x128x128xbf16>, !flamia.pipeline<1>
      %c128_i32_1 = arith.constant 128 : i32
      %12 = arith.muli %kv_head, %c128_i32_1 : i32
      %c1_i32_2 = arith.constant 1 : i32
      %c0_i32_3 = arith.constant 0 : i32
      %13 = scf.for %arg16 = %c0_i32_3 to %9 step %c1_i32_2 iter_args(%arg17 = %arg14) -> (i32)  : i32 {
        %15 = flamia.pipeline.acquire producer %5[%arg17] : !flamia.pipeline<2>
        flamia.pipeline.expect %5[%15] bytes 65536 : !flamia.pipeline<2>
        %c128_i32_5 = arith.constant 128 : i32
        %16 = arith.muli %arg16, %c128_i32_5 : i32
        %17 = arith.addi %doc_start, %16 : i32
        %c1_i32_6 = arith.constant 1 : i32
        %18 = arith.divsi %q_tile, %c1_i32_6 : i32
        %c1_i32_7 = arith.constant 1 : i32
        %19 = arith.divsi %arg16, %c1_i32_7 : i32
        %20 = arith.cmpi eq, %19, %18 : i32
        scf.if %20 {
          flamia.tma.load %arg4[%17, %12] -> %2[%15] on %5 : !flamia.global<?x2x128xbf16>, !flamia.smem<2x128x128xbf16>, !flamia.pipeline<2>
          flamia.tma.load %arg5[%17, %12] -> %3[%15] on %5 : !flamia.global<?x2x128xbf16>, !flamia.smem<2x128x128xbf16>, !flamia.pipeline<2>
        } else {
          flamia.tma.load %arg1[%17, %12] -> %2[%15] on %5 : !flamia.global<?x2x128xbf16>, !flamia.smem<2x128x128xbf16>, !flamia.pipeline<2>
          flamia.tma.load %arg2[%17, %12] -> %3[%15] on %5 : !flamia.global<?x2x128xbf16>, !flamia.smem<2x128x128xbf16>, !flamia.pipeline<2>
        }
        %c1_i32_8 = arith.constant 1 : i32
        %21 = arith.addi %arg17, %c1_i32_8 : i32
        scf.yield %21 : i32
      }
      %c1_i32_4 = arith.constant 1 : i32
      %14 = arith.addi %arg13, %c1_i32_4 : i32
      scf.yield %14, %13 : i32, i32
    }
  }
  flamia.role "consumer" warpgroups[1, 3) registers 232 {
    %7 = flamia.warpgroup_id
    %c1_i32 = arith.constant 1 : i32
    %8 = arith.cmpi eq, %7, %c1_i32 : i32
    scf.if %8 {
      flamia.turn give among 2
    }
    %c0_i32 = arith.constant 0 : i32
    %c0_i32_0 = arith.constant 0 : i32
    %9:3 = scf.while (%arg13 = %c0_i32, %arg14 = %c0_i32_0) : (i32, i32) -> (i32, i32, i32) {
      %10 = flamia.queue.next receive %6[%arg13]
      %11 = arith.cmpi slt, %10, %arg9 : i32
      scf.condition(%11) %arg13, %arg14, %10 : i32, i32, i32
    } do {
    ^bb0(%arg13: i32, %arg14: i32, %arg15: i32):
      %q_start, %q_rows, %doc_start, %doc_end, %q_head, %kv_head, %doc_block_base, %q_tile = flamia.item.load %arg8[%arg15] : !flamia.global<?x8xi32>
      %10 = arith.subi %doc_end, %doc_start : i32
      %c1_i32_1 = arith.constant 1 : i32
      %11 = arith.addi %q_tile, %c1_i32_1 : i32
      %12 = flamia.pipeline.acquire consumer %4[%arg13] : !flamia.pipeline<1>
      %c64_i32 = arith.constant 64 : i32
      %13 = arith.muli %7, %c64_i32 : i32
      %c128_i32 = arith.constant 128 : i32
      %14 = arith.muli %q_tile, %c128_i32 : i32
      %15 = arith.addi %14, %13 : i32
      %16 = flamia.rows.fill 0xFF800000 : !flamia.rows<64 x f32>
      %17 = flamia.rows.fill 0.000000e+00 : !flamia.rows<64 x f32>
      %18 = flamia.frag.zero : !flamia.frag<64x128xf32>
      %c1_i32_2 = arith.constant 1 : i32
      %c0_i32_3 = arith.constant 0 : i32
      %19:4 = scf.for %arg16 = %c0_i32_3 to %11 step %c1_i32_2 iter_args(%arg17 = %arg14, %arg18 = %16, %arg19 = %17, %arg20 = %18) -> (i32, !flamia.rows<64 x f32>, !flamia.rows<64 x f32>, !flamia.frag<64x128xf32>)  : i32 {
        %21 = flamia.pipeline.acquire consumer %5[%arg17] : !flamia.pipeline<2>
        %c1_i32_5 = arith.constant 1 : i32
        %22 = arith.divsi %q_tile, %c1_i32_5 : i32
        %c1_i32_6 = arith.constant 1 : i32
        %23 = arith.divsi %arg16, %c1_i32_6 : i32
        %24 = arith.cmpi eq, %23, %22 : i32
        flamia.turn take among 2
        %25 = scf.if %24 -> (!flamia.frag<64x128xf32>) {
          %39 = flamia.wg.mma %1[%12], %2[%21] : !flamia.smem<1x128x128xbf16>, !flamia.smem<2x128x128xbf16> -> !flamia.frag<64x128xf32>
          scf.yield %39 : !flamia.frag<64x128xf32>
        } else {
          %39 = flamia.wg.mma %0[%12], %2[%21] : !flamia.smem<1x128x128xbf16>, !flamia.smem<2x128x128xbf16> -> !flamia.frag<64x128xf32>
          scf.yield %39 : !flamia.frag<64x128xf32>
        }
        flamia.turn give among 2
        %c1_i32_7 = arith.constant 1 : i32
        %26 = arith.subi %11, %c1_i32_7 : i32
        %27 = arith.cmpi eq, %arg16, %26 : i32
        scf.if %27 {
          flamia.pipeline.release %4[%12] : !flamia.pipeline<1>
        }
        %c128_i32_8 = arith.constant 128 : i32
        %28 = arith.muli %arg16, %c128_i32_8 : i32
        %c128_i32_9 = arith.constant 128 : i32
        %29 = arith.addi %28, %c128_i32_9 : i32
        %30 = arith.cmpi sgt, %29, %10 : i32
        %31 = arith.cmpi eq, %arg16, %q_tile : i32
        %32 = arith.ori %30, %31 : i1
        %33 = scf.if %32 -> (!flamia.frag<64x128xf32>) {
          %39 = flamia.frag.mask %25 query %15 key %28 limit %10 {causal} : !flamia.frag<64x128xf32>
          scf.yield %39 : !flamia.frag<64x128xf32>
        } else {
          scf.yield %25 : !flamia.frag<64x128xf32>
        }
        %p, %new_max, %new_sum, %alpha = flamia.softmax.update %33 max %arg18 sum %arg19 scale %arg11 : !flamia.frag<64x128xf32>, !flamia.rows<64 x f32>
        %true = arith.constant true
        %34 = arith.xori %24, %true : i1
        %35 = flamia.frag.quantize %p quantized %34 {precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>} : !flamia.frag<64x128xf32> -> !flamia.frag<64x128xbf16>
        %36 = flamia.frag.scale_rows %arg20 by %alpha : !flamia.frag<64x128xf32>, !flamia.rows<64 x f32>
        flamia.turn take among 2
        %37 = flamia.wg.mma %35, %3[%21] acc(%36 : !flamia.frag<64x128xf32>) {b_transposed} : !flamia.frag<64x128xbf16>, !flamia.smem<2x128x128xbf16> -> !flamia.frag<64x128xf32>
        flamia.turn give among 2
        flamia.pipeline.release %5[%21] : !flamia.pipeline<2>
        %c1_i32_10 = arith.constant 1 : i32
        %38 = arith.addi %arg17, %c1_i32_10 : i32
        scf.yield %38, %new_max, %new_sum, %37 : i32, !flamia.rows<64 x f32>, !flamia.rows<64 x f32>, !flamia.frag<64x128xf32>
      }
      flamia.attn.store %19#3 max %19#1 sum %19#2 to %arg6, %arg7 rows(%q_start, %13, %q_rows) head %q_head tokens %arg12 {fixed_scale = 8 : i64} : !flamia.frag<64x128xf32>, !flamia.rows<64 x f32>, !flamia.global<?x8x128xbf16>, !flamia.global<8x?xf32>
      %c1_i32_4 = arith.constant 1 : i32
      %20 = arith.addi %arg13, %c1_i32_4 : i32
      scf.yield %20, %19#0 : i32, i32
    }
  }
  flamia.return
}

// The kernel's parameters and resources, for the manifest.
// CHECK: module attributes {flamia.kernel_infos = [{launch = "persistent", name = "attn_attention_fwd", params = [{box_cols = 64 : i64, box_rows = 128 : i64, dtype = "bf16", kind = "tensormap", name = "q_deq", swizzle = 128 : i64}
// CHECK-SAME: {dtype = "bf16", kind = "ptr", name = "o"}
// CHECK-SAME: {kind = "i32", name = "num_items"}
// CHECK-SAME: smem_bytes = 196736 : i64, target = "sm_90a", threads = 384 : i64
// CHECK: gpu.module @attn_attention_fwd_module [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">]
// CHECK: llvm.mlir.global external @__flamia_dynamic_smem() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// Tensor maps by value (grid constants), the rest global pointers.
// CHECK: llvm.func @attn_attention_fwd(%arg0: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}
// CHECK-SAME: %arg6: !llvm.ptr<1>
// CHECK-SAME: attributes {nvvm.kernel, nvvm.maxntid = array<i32: 384, 1, 1>, nvvm.minctasm = 1 : i32}
// Prologue: thread 0 initializes the mbarriers, then the CTA syncs.
// CHECK: nvvm.mbarrier.init
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.barrier0
// The producer gives registers back and takes items with an atomic.
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK: llvm.atomicrmw add {{.*}} monotonic
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: llvm.addrspacecast {{.*}} : !llvm.ptr<3> to !llvm.ptr<7>
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}}, %arg0, {{.*}}, box[
// The consumers: S = Q K^T from shared memory ...
// CHECK: nvvm.setmaxregister  increase 232
// Ping-pong turns on named barriers 1 and 2 (256 threads).
// CHECK: nvvm.barrier.arrive id = {{.*}} number_of_threads = {{.*}}
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.barrier id = {{.*}} number_of_threads = {{.*}}
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-COUNT-7: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// ... the online softmax: exp2 and quad reductions ...
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK: nvvm.shfl.sync bfly
// ... P rounded to E4M3 (x 2^8) or bf16 ...
// CHECK: nvvm.convert.f32x2.to.f8x2 {{.*}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : vector<2xi8>(f8E4M3FN)
// CHECK: nvvm.convert.f8x2.to.f16x2
// CHECK: nvvm.convert.f32x2.to.bf16x2
// ... O += P V with P in registers (inline assembly, a named gap of the NVVM
// dialect: nvvm.wgmma.mma_async has no register-A form).
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $133, 0;\0Awgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK: nvvm.mbarrier.arrive
// CHECK-NOT: flamia.

// PTX-LABEL: gpu.binary @attn_attention_fwd_module
// PTX-SAME: .target sm_90a
// PTX-SAME: .maxntid 384, 1, 1
// PTX-SAME: .minnctapersm 1
// PTX-DAG: setmaxnreg.dec.sync.aligned.u32 {{.*}}40;
// PTX-DAG: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-DAG: setmaxnreg.inc.sync.aligned.u32 {{.*}}232;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX-DAG: cvt.rn.satfinite.e4m3x2.f32
// PTX-DAG: ex2.approx.ftz.f32
// The exponent's argument is one FMA; the row maximum is scaled rounded up.
// PTX-DAG: fma.rn.f32
// PTX-DAG: mul.rp.f32
