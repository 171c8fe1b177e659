// RUN: flamia-opt %s --convert-flamia-to-nvvm | FileCheck %s
// RUN: flamia-opt %s --convert-flamia-to-nvvm --convert-nvvm-to-llvm --reconcile-unrealized-casts --gpu-module-to-binary=format=isa | FileCheck %s --check-prefix=PTX
// The sm_90a program flamia-tile writes by default for D = 128 (8 query / 2
// key-value heads, causal, packed documents; flamia-compile --emit-ir:
// block.mlir): the consumer overlaps the softmax with its MMAs. Checked: an
// async flamia.wg.mma commits its group without waiting, flamia.wg.wait
// waits for the right number of groups and passes the waited fragment (and
// the P registers the P V MMA reads) through a side-effecting asm, so LLVM
// cannot touch them before the wait.

// CHECK-LABEL: llvm.func @flamia_attention_fwd(
// The prologue's S = Q K^T is waited for at once.
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// In the loop: S_j (descriptor A) and O += P_{j-1} V_{j-1} (register A,
// inline asm, since NVVM has no register-A wgmma) issued back to back.
// CHECK: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.wait.group
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// S_j: one group may stay pending; S's 64 registers come out of the asm.
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "", "{{(=f,)+}}=f,0,1,2,{{[0-9,]+}}63"
// CHECK-SAME: -> !llvm.struct<(f32,
// O: wait for all; P's 32 registers are inputs of the asm too.
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "", "{{(=f,)+}}=f,0,1,2,{{[0-9,]+}}63,r,r,r,r,r,r,r,r,r,r,r,r,r,r,r,r,r,r,r,r,r,r,r,r,r,r,r,r,r,r,r,r"
// The last tile's V rows past the document end (the next document's) are
// zeroed before its P V: 16 bytes per thread and step, each 16 KiB swizzle
// atom's rows contiguous; then the async proxy (the MMA's reads) is fenced
// and the consumers' 256 threads meet at named barrier 14.
// CHECK: llvm.mlir.constant(16384 : i32) : i32
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: %[[THREADS:.*]] = llvm.mlir.constant(256 : i32) : i32
// CHECK-NEXT: %[[ID:.*]] = llvm.mlir.constant(14 : i32) : i32
// CHECK-NEXT: nvvm.barrier id = %[[ID]] number_of_threads = %[[THREADS]]
// The epilogue's P V is waited for at once.
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0

// PTX: .target sm_90a
// PTX: wgmma.commit_group.sync.aligned;
// PTX: wgmma.wait_group.sync.aligned{{[^;]*}}1;
// PTX: wgmma.wait_group.sync.aligned{{[^;]*}}0;

module {
  flamia.kernel @flamia_quantize(%arg0: !flamia.global<?x8x128xbf16> {flamia.param = "q"}, %arg1: !flamia.global<?x2x128xbf16> {flamia.param = "k"}, %arg2: !flamia.global<?x2x128xbf16> {flamia.param = "v"}, %arg3: !flamia.global<?x2xi32> {flamia.param = "block_info"}, %arg4: !flamia.global<?x8x128xf8E4M3FN> {flamia.param = "q_pt"}, %arg5: !flamia.global<?x8x4xf8E8M0FNU> {flamia.param = "q_pt_scales"}, %arg6: !flamia.global<?x8x128xf8E4M3FN> {flamia.param = "q_tb"}, %arg7: !flamia.global<?x8x4xf8E8M0FNU> {flamia.param = "q_tb_scales"}, %arg8: !flamia.global<?x2x128xf8E4M3FN> {flamia.param = "k_tb"}, %arg9: !flamia.global<?x2x4xf8E8M0FNU> {flamia.param = "k_tb_scales"}, %arg10: !flamia.global<?x2x128xf8E4M3FN> {flamia.param = "v_tb"}, %arg11: !flamia.global<?x2x4xf8E8M0FNU> {flamia.param = "v_tb_scales"}, %arg12: !flamia.global<?x8x128xbf16> {flamia.param = "q_deq"}, %arg13: !flamia.global<?x2x128xbf16> {flamia.param = "k_deq"}, %arg14: !flamia.global<?x2x128xbf16> {flamia.param = "v_deq"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
    %block_id_x = gpu.block_id  x
    %0 = arith.index_cast %block_id_x : index to i32
    %block_id_y = gpu.block_id  y
    %1 = arith.index_cast %block_id_y : index to i32
    %start, %length = flamia.block_info.load %arg3[%0] : !flamia.global<?x2xi32>
    flamia.quantize_block %arg0 rows(%start, %length) block %0 head %1 per_token(%arg4, %arg5) per_token_dequant(%arg12) token_block(%arg6, %arg7) : (!flamia.global<?x8x128xbf16>, i32, i32, i32, i32, !flamia.global<?x8x128xf8E4M3FN>, !flamia.global<?x8x4xf8E8M0FNU>, !flamia.global<?x8x128xbf16>, !flamia.global<?x8x128xf8E4M3FN>, !flamia.global<?x8x4xf8E8M0FNU>) -> ()
    %c2_i32 = arith.constant 2 : i32
    %2 = arith.cmpi slt, %1, %c2_i32 : i32
    scf.if %2 {
      flamia.quantize_block %arg1 rows(%start, %length) block %0 head %1 token_block(%arg8, %arg9) token_block_dequant(%arg13) : (!flamia.global<?x2x128xbf16>, i32, i32, i32, i32, !flamia.global<?x2x128xf8E4M3FN>, !flamia.global<?x2x4xf8E8M0FNU>, !flamia.global<?x2x128xbf16>) -> ()
      flamia.quantize_block %arg2 rows(%start, %length) block %0 head %1 token_block(%arg10, %arg11) token_block_dequant(%arg14) : (!flamia.global<?x2x128xbf16>, i32, i32, i32, i32, !flamia.global<?x2x128xf8E4M3FN>, !flamia.global<?x2x4xf8E8M0FNU>, !flamia.global<?x2x128xbf16>) -> ()
    }
    flamia.return
  }
  flamia.kernel @flamia_attention_fwd(%arg0: !flamia.global<?x8x128xbf16> {flamia.param = "q_deq"}, %arg1: !flamia.global<?x2x128xbf16> {flamia.param = "k_deq"}, %arg2: !flamia.global<?x2x128xbf16> {flamia.param = "v_deq"}, %arg3: !flamia.global<?x8x128xbf16> {flamia.param = "q"}, %arg4: !flamia.global<?x2x128xbf16> {flamia.param = "k"}, %arg5: !flamia.global<?x2x128xbf16> {flamia.param = "v"}, %arg6: !flamia.global<?x8x128xbf16> {flamia.param = "o"}, %arg7: !flamia.global<8x?xf32> {flamia.param = "lse"}, %arg8: !flamia.global<?x8xi32> {flamia.param = "items"}, %arg9: i32 {flamia.param = "num_items"}, %arg10: !flamia.global<1xi32> {flamia.param = "counter"}, %arg11: f32 {flamia.param = "softmax_scale_log2"}, %arg12: i32 {flamia.param = "T"}) attributes {launch = #flamia.launch<persistent>, schedule = {block_m = 128 : i64, block_n = 128 : i64, cost_model = "sm_90a", safe_block = 128 : i64}, target = #flamia.target<sm_90a>, threads = 384 : i64, tile = {block_m = 128 : i64, block_n = 128 : i64, stages = 2 : i64}} {
    %0 = flamia.smem.alloc : !flamia.smem<1x128x128xbf16>
    %1 = flamia.smem.alloc : !flamia.smem<1x128x128xbf16>
    %2 = flamia.smem.alloc : !flamia.smem<2x128x128xbf16>
    %3 = flamia.smem.alloc : !flamia.smem<2x128x128xbf16>
    %4 = flamia.pipeline.create consumers 256 : !flamia.pipeline<1>
    %5 = flamia.pipeline.create consumers 256 : !flamia.pipeline<2>
    %6 = flamia.pipeline.create consumers 256 : !flamia.pipeline<2>
    %7 = flamia.queue.create %arg10, %arg9 receivers 256 : !flamia.global<1xi32>
    flamia.role "producer" warpgroups[0, 1) registers 40 single_thread {
      %c0_i32 = arith.constant 0 : i32
      %c0_i32_0 = arith.constant 0 : i32
      %8:3 = scf.while (%arg13 = %c0_i32_0, %arg14 = %c0_i32) : (i32, i32) -> (i32, i32, i32) {
        %9 = flamia.queue.next fetch %7[%arg13]
        %10 = arith.cmpi slt, %9, %arg9 : i32
        scf.condition(%10) %arg13, %arg14, %9 : i32, i32, i32
      } do {
      ^bb0(%arg13: i32, %arg14: i32, %arg15: i32):
        %q_start, %q_rows, %doc_start, %doc_end, %q_head, %kv_head, %doc_block_base, %q_tile = flamia.item.load %arg8[%arg15] : !flamia.global<?x8xi32>
        %9 = arith.subi %doc_end, %doc_start : i32
        %c1_i32 = arith.constant 1 : i32
        %10 = arith.addi %q_tile, %c1_i32 : i32
        %11 = flamia.pipeline.acquire producer %4[%arg13] : !flamia.pipeline<1>
        flamia.pipeline.expect %4[%11] bytes 65536 : !flamia.pipeline<1>
        %c128_i32 = arith.constant 128 : i32
        %12 = arith.muli %q_head, %c128_i32 : i32
        flamia.tma.load %arg0[%q_start, %12] -> %0[%11] on %4 : !flamia.global<?x8x128xbf16>, !flamia.smem<1x128x128xbf16>, !flamia.pipeline<1>
        flamia.tma.load %arg3[%q_start, %12] -> %1[%11] on %4 : !flamia.global<?x8x128xbf16>, !flamia.smem<1x128x128xbf16>, !flamia.pipeline<1>
        %c128_i32_1 = arith.constant 128 : i32
        %13 = arith.muli %kv_head, %c128_i32_1 : i32
        %c1_i32_2 = arith.constant 1 : i32
        %c0_i32_3 = arith.constant 0 : i32
        %14 = scf.for %arg16 = %c0_i32_3 to %10 step %c1_i32_2 iter_args(%arg17 = %arg14) -> (i32)  : i32 {
          %c128_i32_5 = arith.constant 128 : i32
          %16 = arith.muli %arg16, %c128_i32_5 : i32
          %17 = arith.addi %doc_start, %16 : i32
          %18 = flamia.pipeline.acquire producer %5[%arg17] : !flamia.pipeline<2>
          flamia.pipeline.expect %5[%18] bytes 32768 : !flamia.pipeline<2>
          %c1_i32_6 = arith.constant 1 : i32
          %19 = arith.divsi %q_tile, %c1_i32_6 : i32
          %c1_i32_7 = arith.constant 1 : i32
          %20 = arith.divsi %arg16, %c1_i32_7 : i32
          %21 = arith.cmpi eq, %20, %19 : i32
          scf.if %21 {
            flamia.tma.load %arg4[%17, %13] -> %2[%18] on %5 : !flamia.global<?x2x128xbf16>, !flamia.smem<2x128x128xbf16>, !flamia.pipeline<2>
            %23 = flamia.pipeline.acquire producer %6[%arg17] : !flamia.pipeline<2>
            flamia.pipeline.expect %6[%23] bytes 32768 : !flamia.pipeline<2>
            flamia.tma.load %arg5[%17, %13] -> %3[%23] on %6 : !flamia.global<?x2x128xbf16>, !flamia.smem<2x128x128xbf16>, !flamia.pipeline<2>
          } else {
            flamia.tma.load %arg1[%17, %13] -> %2[%18] on %5 : !flamia.global<?x2x128xbf16>, !flamia.smem<2x128x128xbf16>, !flamia.pipeline<2>
            %23 = flamia.pipeline.acquire producer %6[%arg17] : !flamia.pipeline<2>
            flamia.pipeline.expect %6[%23] bytes 32768 : !flamia.pipeline<2>
            flamia.tma.load %arg2[%17, %13] -> %3[%23] on %6 : !flamia.global<?x2x128xbf16>, !flamia.smem<2x128x128xbf16>, !flamia.pipeline<2>
          }
          %c1_i32_8 = arith.constant 1 : i32
          %22 = arith.addi %arg17, %c1_i32_8 : i32
          scf.yield %22 : i32
        }
        %c1_i32_4 = arith.constant 1 : i32
        %15 = arith.addi %arg13, %c1_i32_4 : i32
        scf.yield %15, %14 : i32, i32
      }
    }
    flamia.role "consumer" warpgroups[1, 3) registers 232 {
      %8 = flamia.warpgroup_id
      %c0_i32 = arith.constant 0 : i32
      %c0_i32_0 = arith.constant 0 : i32
      %9:3 = scf.while (%arg13 = %c0_i32_0, %arg14 = %c0_i32) : (i32, i32) -> (i32, i32, i32) {
        %10 = flamia.queue.next receive %7[%arg13]
        %11 = arith.cmpi slt, %10, %arg9 : i32
        scf.condition(%11) %arg13, %arg14, %10 : i32, i32, i32
      } do {
      ^bb0(%arg13: i32, %arg14: i32, %arg15: i32):
        %q_start, %q_rows, %doc_start, %doc_end, %q_head, %kv_head, %doc_block_base, %q_tile = flamia.item.load %arg8[%arg15] : !flamia.global<?x8xi32>
        %10 = arith.subi %doc_end, %doc_start : i32
        %c1_i32 = arith.constant 1 : i32
        %11 = arith.addi %q_tile, %c1_i32 : i32
        %12 = flamia.pipeline.acquire consumer %4[%arg13] : !flamia.pipeline<1>
        %c64_i32 = arith.constant 64 : i32
        %13 = arith.muli %8, %c64_i32 : i32
        %c128_i32 = arith.constant 128 : i32
        %14 = arith.muli %q_tile, %c128_i32 : i32
        %15 = arith.addi %14, %13 : i32
        %c1_i32_1 = arith.constant 1 : i32
        %16 = arith.subi %11, %c1_i32_1 : i32
        %c0_i32_2 = arith.constant 0 : i32
        %17 = flamia.pipeline.acquire consumer %5[%arg14] : !flamia.pipeline<2>
        %c1_i32_3 = arith.constant 1 : i32
        %18 = arith.divsi %q_tile, %c1_i32_3 : i32
        %c1_i32_4 = arith.constant 1 : i32
        %19 = arith.divsi %c0_i32_2, %c1_i32_4 : i32
        %20 = arith.cmpi eq, %19, %18 : i32
        %21 = arith.select %20, %1, %0 : !flamia.smem<1x128x128xbf16>
        %22 = flamia.wg.mma %21[%12], %2[%17] : !flamia.smem<1x128x128xbf16>, !flamia.smem<2x128x128xbf16> -> !flamia.frag<64x128xf32>
        flamia.pipeline.release %5[%17] : !flamia.pipeline<2>
        %23 = arith.cmpi eq, %c0_i32_2, %16 : i32
        scf.if %23 {
          flamia.pipeline.release %4[%12] : !flamia.pipeline<1>
        }
        %24 = flamia.rows.fill 0xFF800000 : !flamia.rows<64 x f32>
        %25 = flamia.rows.fill 0.000000e+00 : !flamia.rows<64 x f32>
        %c128_i32_5 = arith.constant 128 : i32
        %26 = arith.muli %c0_i32_2, %c128_i32_5 : i32
        %c128_i32_6 = arith.constant 128 : i32
        %27 = arith.addi %26, %c128_i32_6 : i32
        %28 = arith.cmpi sgt, %27, %10 : i32
        %29 = arith.cmpi eq, %c0_i32_2, %q_tile : i32
        %30 = arith.ori %28, %29 : i1
        %31 = scf.if %30 -> (!flamia.frag<64x128xf32>) {
          %47 = flamia.frag.mask %22 query %15 key %26 limit %10 {causal} : !flamia.frag<64x128xf32>
          scf.yield %47 : !flamia.frag<64x128xf32>
        } else {
          scf.yield %22 : !flamia.frag<64x128xf32>
        }
        %p, %new_max, %new_sum, %alpha = flamia.softmax.update %31 max %24 sum %25 scale %arg11 : !flamia.frag<64x128xf32>, !flamia.rows<64 x f32>
        %true = arith.constant true
        %c1_i32_7 = arith.constant 1 : i32
        %32 = arith.divsi %q_tile, %c1_i32_7 : i32
        %c1_i32_8 = arith.constant 1 : i32
        %33 = arith.divsi %c0_i32_2, %c1_i32_8 : i32
        %34 = arith.cmpi eq, %33, %32 : i32
        %35 = arith.xori %34, %true : i1
        %36 = flamia.frag.quantize %p quantized %35 {precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>} : !flamia.frag<64x128xf32> -> !flamia.frag<64x128xbf16>
        %37 = flamia.frag.zero : !flamia.frag<64x128xf32>
        %c1_i32_9 = arith.constant 1 : i32
        %38 = arith.addi %arg14, %c1_i32_9 : i32
        %c1_i32_10 = arith.constant 1 : i32
        %c1_i32_11 = arith.constant 1 : i32
        %39:5 = scf.for %arg16 = %c1_i32_11 to %11 step %c1_i32_10 iter_args(%arg17 = %38, %arg18 = %new_max, %arg19 = %new_sum, %arg20 = %37, %arg21 = %36) -> (i32, !flamia.rows<64 x f32>, !flamia.rows<64 x f32>, !flamia.frag<64x128xf32>, !flamia.frag<64x128xbf16>)  : i32 {
          %47 = flamia.pipeline.acquire consumer %5[%arg17] : !flamia.pipeline<2>
          %c1_i32_16 = arith.constant 1 : i32
          %48 = arith.divsi %q_tile, %c1_i32_16 : i32
          %c1_i32_17 = arith.constant 1 : i32
          %49 = arith.divsi %arg16, %c1_i32_17 : i32
          %50 = arith.cmpi eq, %49, %48 : i32
          %51 = arith.select %50, %1, %0 : !flamia.smem<1x128x128xbf16>
          %52 = flamia.wg.mma %51[%12], %2[%47] {async} : !flamia.smem<1x128x128xbf16>, !flamia.smem<2x128x128xbf16> -> !flamia.frag<64x128xf32>
          %c1_i32_18 = arith.constant 1 : i32
          %53 = arith.subi %arg17, %c1_i32_18 : i32
          %54 = flamia.pipeline.acquire consumer %6[%53] : !flamia.pipeline<2>
          %55 = flamia.wg.mma %arg21, %3[%54] acc(%arg20 : !flamia.frag<64x128xf32>) {async, b_transposed} : !flamia.frag<64x128xbf16>, !flamia.smem<2x128x128xbf16> -> !flamia.frag<64x128xf32>
          %56 = flamia.wg.wait %52 pending 1 : !flamia.frag<64x128xf32>
          flamia.pipeline.release %5[%47] : !flamia.pipeline<2>
          %57 = arith.cmpi eq, %arg16, %16 : i32
          scf.if %57 {
            flamia.pipeline.release %4[%12] : !flamia.pipeline<1>
          }
          %c128_i32_19 = arith.constant 128 : i32
          %58 = arith.muli %arg16, %c128_i32_19 : i32
          %c128_i32_20 = arith.constant 128 : i32
          %59 = arith.addi %58, %c128_i32_20 : i32
          %60 = arith.cmpi sgt, %59, %10 : i32
          %61 = arith.cmpi eq, %arg16, %q_tile : i32
          %62 = arith.ori %60, %61 : i1
          %63 = scf.if %62 -> (!flamia.frag<64x128xf32>) {
            %72 = flamia.frag.mask %56 query %15 key %58 limit %10 {causal} : !flamia.frag<64x128xf32>
            scf.yield %72 : !flamia.frag<64x128xf32>
          } else {
            scf.yield %56 : !flamia.frag<64x128xf32>
          }
          %p_21, %new_max_22, %new_sum_23, %alpha_24 = flamia.softmax.update %63 max %arg18 sum %arg19 scale %arg11 : !flamia.frag<64x128xf32>, !flamia.rows<64 x f32>
          %true_25 = arith.constant true
          %c1_i32_26 = arith.constant 1 : i32
          %64 = arith.divsi %q_tile, %c1_i32_26 : i32
          %c1_i32_27 = arith.constant 1 : i32
          %65 = arith.divsi %arg16, %c1_i32_27 : i32
          %66 = arith.cmpi eq, %65, %64 : i32
          %67 = arith.xori %66, %true_25 : i1
          %68 = flamia.frag.quantize %p_21 quantized %67 {precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>} : !flamia.frag<64x128xf32> -> !flamia.frag<64x128xbf16>
          %69 = flamia.wg.wait %55 pending 0 : !flamia.frag<64x128xf32>
          flamia.pipeline.release %6[%54] : !flamia.pipeline<2>
          %70 = flamia.frag.scale_rows %69 by %alpha_24 : !flamia.frag<64x128xf32>, !flamia.rows<64 x f32>
          %c1_i32_28 = arith.constant 1 : i32
          %71 = arith.addi %arg17, %c1_i32_28 : i32
          scf.yield %71, %new_max_22, %new_sum_23, %70, %68 : i32, !flamia.rows<64 x f32>, !flamia.rows<64 x f32>, !flamia.frag<64x128xf32>, !flamia.frag<64x128xbf16>
        }
        %c1_i32_12 = arith.constant 1 : i32
        %40 = arith.subi %39#0, %c1_i32_12 : i32
        %41 = flamia.pipeline.acquire consumer %6[%40] : !flamia.pipeline<2>
        %c128_i32_13 = arith.constant 128 : i32
        %42 = arith.muli %16, %c128_i32_13 : i32
        %43 = arith.subi %10, %42 : i32
        %c128_i32_14 = arith.constant 128 : i32
        %44 = arith.cmpi slt, %43, %c128_i32_14 : i32
        scf.if %44 {
          flamia.smem.zero_rows %3[%41] from %43 : !flamia.smem<2x128x128xbf16>
        }
        %45 = flamia.wg.mma %39#4, %3[%41] acc(%39#3 : !flamia.frag<64x128xf32>) {b_transposed} : !flamia.frag<64x128xbf16>, !flamia.smem<2x128x128xbf16> -> !flamia.frag<64x128xf32>
        flamia.pipeline.release %6[%41] : !flamia.pipeline<2>
        flamia.attn.store %45 max %39#1 sum %39#2 to %arg6, %arg7 rows(%q_start, %13, %q_rows) head %q_head tokens %arg12 {fixed_scale = 8 : i64} : !flamia.frag<64x128xf32>, !flamia.rows<64 x f32>, !flamia.global<?x8x128xbf16>, !flamia.global<8x?xf32>
        %c1_i32_15 = arith.constant 1 : i32
        %46 = arith.addi %arg13, %c1_i32_15 : i32
        scf.yield %46, %39#0 : i32, i32
      }
    }
    flamia.return
  }
  func.func @flamia(%arg0: !flamia.global<?x8x128xbf16> {flamia.buffer = "q", flamia.dims = ["T", "8", "128"]}, %arg1: !flamia.global<?x2x128xbf16> {flamia.buffer = "k", flamia.dims = ["T", "2", "128"]}, %arg2: !flamia.global<?x2x128xbf16> {flamia.buffer = "v", flamia.dims = ["T", "2", "128"]}, %arg3: !flamia.global<?xi32> {flamia.buffer = "cu_seqlens", flamia.dims = ["NUM_DOCS + 1"]}, %arg4: !flamia.global<?x8x128xbf16> {flamia.buffer = "o", flamia.dims = ["T", "8", "128"], flamia.output}, %arg5: !flamia.global<8x?xf32> {flamia.buffer = "lse", flamia.dims = ["8", "T"], flamia.output}) attributes {flamia.causal, flamia.recipe = #flamia.recipe<mxfp8, safe_block = 128>, flamia.target = #flamia.target<sm_90a>} {
    %0 = flamia.workspace workspace "q_pt" dims ["T", "8", "128"] : !flamia.global<?x8x128xf8E4M3FN>
    %1 = flamia.workspace workspace "q_pt_scales" dims ["T", "8", "4"] : !flamia.global<?x8x4xf8E8M0FNU>
    %2 = flamia.workspace workspace "q_tb" dims ["T", "8", "128"] : !flamia.global<?x8x128xf8E4M3FN>
    %3 = flamia.workspace workspace "q_tb_scales" dims ["NB", "8", "4"] : !flamia.global<?x8x4xf8E8M0FNU>
    %4 = flamia.workspace workspace "k_tb" dims ["T", "2", "128"] : !flamia.global<?x2x128xf8E4M3FN>
    %5 = flamia.workspace workspace "k_tb_scales" dims ["NB", "2", "4"] : !flamia.global<?x2x4xf8E8M0FNU>
    %6 = flamia.workspace workspace "v_tb" dims ["T", "2", "128"] : !flamia.global<?x2x128xf8E4M3FN>
    %7 = flamia.workspace workspace "v_tb_scales" dims ["NB", "2", "4"] : !flamia.global<?x2x4xf8E8M0FNU>
    %8 = flamia.workspace workspace "q_deq" dims ["T", "8", "128"] : !flamia.global<?x8x128xbf16>
    %9 = flamia.workspace workspace "k_deq" dims ["T", "2", "128"] : !flamia.global<?x2x128xbf16>
    %10 = flamia.workspace workspace "v_deq" dims ["T", "2", "128"] : !flamia.global<?x2x128xbf16>
    %11 = flamia.workspace schedule "block_info" dims ["NB", "2"] : !flamia.global<?x2xi32>
    %12 = flamia.workspace schedule "items" dims ["NUM_ITEMS", "8"] : !flamia.global<?x8xi32>
    %13 = flamia.workspace schedule "counter" dims ["1"] : !flamia.global<1xi32>
    %14 = flamia.runtime_value "NUM_ITEMS" : i32
    %15 = flamia.runtime_value "softmax_scale_log2" : f32
    %16 = flamia.runtime_value "T" : i32
    flamia.launch @flamia_quantize(%arg0, %arg1, %arg2, %11, %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10) grid ["NB", "Hq", "1"] : (!flamia.global<?x8x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x2xi32>, !flamia.global<?x8x128xf8E4M3FN>, !flamia.global<?x8x4xf8E8M0FNU>, !flamia.global<?x8x128xf8E4M3FN>, !flamia.global<?x8x4xf8E8M0FNU>, !flamia.global<?x2x128xf8E4M3FN>, !flamia.global<?x2x4xf8E8M0FNU>, !flamia.global<?x2x128xf8E4M3FN>, !flamia.global<?x2x4xf8E8M0FNU>, !flamia.global<?x8x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x2x128xbf16>) -> ()
    flamia.launch @flamia_attention_fwd(%8, %9, %10, %arg0, %arg1, %arg2, %arg4, %arg5, %12, %14, %13, %15, %16) grid ["NUM_SMS", "1", "1"] : (!flamia.global<?x8x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x8x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x2x128xbf16>, !flamia.global<?x8x128xbf16>, !flamia.global<8x?xf32>, !flamia.global<?x8xi32>, i32, !flamia.global<1xi32>, f32, i32) -> ()
    return
  }
}
