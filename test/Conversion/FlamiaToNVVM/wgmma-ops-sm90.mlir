// RUN: flamia-opt %s -split-input-file --convert-flamia-to-nvvm | FileCheck %s
// Per-op lowering of flamia.wg.mma and flamia.wg.wait on sm_90a: S = Q K^T
// with A and B in shared memory (nvvm.wgmma.mma_async), O += P V with P in
// registers (inline-asm wgmma), and async MMAs with their waits.

// A 64-column K is four k16 steps: the first overwrites D (no acc), the
// others accumulate. A is this warpgroup's 64 rows of Q: the warpgroup index
// within the role (tid / 128 - 1, broadcast from lane 0 so that ptxas keeps
// it and the descriptors in uniform registers) times 64 rows x 128 bytes.
// CHECK-LABEL: llvm.func @sm_90a_wg_mma_smem(
// CHECK: nvvm.setmaxregister  increase 232
// CHECK: %[[C1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[KTILE:.*]] = llvm.mlir.constant(2048 : i32) : i32
// CHECK-NEXT: %[[KOFF:.*]] = llvm.mul %[[C1]], %[[KTILE]] : i32
// CHECK-NEXT: %[[KADDR:.*]] = llvm.ptrtoint %{{.*}} : !llvm.ptr<3> to i32
// CHECK-NEXT: %[[B:.*]] = llvm.add %[[KADDR]], %[[KOFF]] : i32
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-NEXT: %[[LANE0:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %[[FIRST:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[C128:.*]] = llvm.mlir.constant(128 : i32) : i32
// CHECK-NEXT: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK-NEXT: %[[WGABS:.*]] = llvm.udiv %[[TID]], %[[C128]] : i32
// CHECK-NEXT: %[[WGT:.*]] = llvm.sub %[[WGABS]], %[[FIRST]] : i32
// CHECK: %[[WG:.*]] = nvvm.shfl.sync  idx %{{.*}}, %[[WGT]], %[[LANE0]], %{{.*}} : i32 -> i32
// CHECK: %[[QADDR:.*]] = llvm.add
// CHECK-NEXT: %[[ROWS:.*]] = llvm.mlir.constant(8192 : i32) : i32
// CHECK-NEXT: %[[WGOFF:.*]] = llvm.mul %[[WG]], %[[ROWS]] : i32
// CHECK-NEXT: %[[A:.*]] = llvm.add %[[QADDR]], %[[WGOFF]] : i32
// Descriptors: a compile-time template plus address >> 4.
// CHECK: llvm.lshr %[[B]], %{{.*}} : i32
// CHECK: %[[BDESC0:.*]] = llvm.add
// CHECK: llvm.lshr %[[A]], %{{.*}} : i32
// CHECK: %[[ADESC0:.*]] = llvm.add
// CHECK-NEXT: %[[D0:.*]] = nvvm.wgmma.mma_async %[[ADESC0]], %[[BDESC0]], %{{.*}}, <m = 64, n = 16, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
// CHECK: %[[D1:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[D0]], <m = 64, n = 16, k = 16>, D[<f32>, <one>]
// CHECK: %[[D2:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[D1]], <m = 64, n = 16, k = 16>, D[<f32>, <one>]
// CHECK: nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[D2]], <m = 64, n = 16, k = 16>, D[<f32>, <one>]
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: nvvm.wgmma
// CHECK: llvm.return
flamia.kernel @sm_90a_wg_mma_smem() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 256 : i64} {
  %q = flamia.smem.alloc : !flamia.smem<1x128x64xbf16>
  %k = flamia.smem.alloc : !flamia.smem<2x16x64xbf16>
  flamia.role "consumer" warpgroups[1, 2) registers 232 {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %s = flamia.wg.mma %q[%c0], %k[%c1] : !flamia.smem<1x128x64xbf16>, !flamia.smem<2x16x64xbf16> -> !flamia.frag<64x16xf32>
  }
  flamia.return
}

// -----

// With `acc` every k step accumulates into it.
// CHECK-LABEL: llvm.func @sm_90a_wg_mma_smem_acc(
// CHECK: %[[ACC:.*]] = llvm.insertvalue %{{.*}}[7] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-NOT: D[<f32>, <zero>]
// CHECK: nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[ACC]], <m = 64, n = 16, k = 16>, D[<f32>, <one>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}} D[<f32>, <one>]
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
flamia.kernel @sm_90a_wg_mma_smem_acc() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %q = flamia.smem.alloc : !flamia.smem<1x64x64xbf16>
  %k = flamia.smem.alloc : !flamia.smem<1x16x64xbf16>
  flamia.role "consumer" warpgroups[0, 1) registers 232 {
    %c0 = arith.constant 0 : i32
    %acc = flamia.frag.zero : !flamia.frag<64x16xf32>
    %s = flamia.wg.mma %q[%c0], %k[%c0] acc(%acc : !flamia.frag<64x16xf32>) : !flamia.smem<1x64x64xbf16>, !flamia.smem<1x16x64xbf16> -> !flamia.frag<64x16xf32>
  }
  flamia.return
}

// -----

// O += P V: P's four bf16x2 registers are the A operand of an inline-asm
// wgmma (NVVM's op has no register-A form); V is read transposed
// (imm-trans-b = 1); the accumulator is tied in and out; scale-d is the
// last operand (1: accumulate into `acc`).
// CHECK-LABEL: llvm.func @sm_90a_wg_mma_regs(
// CHECK: ^bb{{[0-9]+}}(%[[P:.*]]: !llvm.struct<(i32, i32, i32, i32)>):
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: %[[P0:.*]] = llvm.extractvalue %[[P]][0] : !llvm.struct<(i32, i32, i32, i32)>
// CHECK-NEXT: %[[P1:.*]] = llvm.extractvalue %[[P]][1]
// CHECK-NEXT: %[[P2:.*]] = llvm.extractvalue %[[P]][2]
// CHECK-NEXT: %[[P3:.*]] = llvm.extractvalue %[[P]][3]
// CHECK: %[[BDESC:.*]] = llvm.add %{{.*}}, %{{.*}} : i64
// CHECK: %[[SCALED:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $69, 0;\0Awgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31}, {$64, $65, $66, $67}, $68, p, 1, 1, 1;\0A}", "{{(=f,){32}0}},1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,r,r,r,r,l,r" {{(%[0-9]+, ){32}%}}[[P0]], %[[P1]], %[[P2]], %[[P3]], %[[BDESC]], %[[SCALED]] : ({{(f32, ){32}i}}32, i32, i32, i32, i64, i32) -> !llvm.struct<({{(f32, ){31}f}}32)>
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: llvm.return
flamia.kernel @sm_90a_wg_mma_regs() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %v = flamia.smem.alloc : !flamia.smem<1x16x64xbf16>
  flamia.role "consumer" warpgroups[0, 1) registers 232 {
    %c0 = arith.constant 0 : i32
    %true = arith.constant true
    %z = flamia.frag.zero : !flamia.frag<64x16xf32>
    %p = flamia.frag.quantize %z quantized %true {precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>} : !flamia.frag<64x16xf32> -> !flamia.frag<64x16xbf16>
    %acc = flamia.frag.zero : !flamia.frag<64x64xf32>
    %o = flamia.wg.mma %p, %v[%c0] acc(%acc : !flamia.frag<64x64xf32>) {b_transposed} : !flamia.frag<64x16xbf16>, !flamia.smem<1x16x64xbf16> -> !flamia.frag<64x64xf32>
  }
  flamia.return
}

// -----

// Async MMAs end at their commit (no wait); flamia.wg.wait waits for the
// group count and pins each fragment with an empty side-effecting asm
// (accumulators tied in and out), the register A operand (P) of the waited
// MMA as extra inputs.
// CHECK-LABEL: llvm.func @sm_90a_wg_mma_async(
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.wait.group.sync.aligned
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;{{.*}}wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// S: at most one group (P V) still pending.
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK-NOT: nvvm.wgmma
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "", "=f,=f,=f,=f,=f,=f,=f,=f,0,1,2,3,4,5,6,7" {{(%[0-9]+, ){7}%[0-9]+}} : ({{(f32, ){7}f}}32) -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
// O: all done; P's four registers stay inputs until here.
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: nvvm.wgmma
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "", "{{(=f,){32}0}},1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,r,r,r,r" {{.*}} : ({{(f32, ){32}i}}32, i32, i32, i32) -> !llvm.struct<({{(f32, ){31}f}}32)>
// CHECK-NOT: nvvm.wgmma
// CHECK: llvm.return
flamia.kernel @sm_90a_wg_mma_async() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %q = flamia.smem.alloc : !flamia.smem<1x64x64xbf16>
  %k = flamia.smem.alloc : !flamia.smem<1x16x64xbf16>
  %v = flamia.smem.alloc : !flamia.smem<1x16x64xbf16>
  flamia.role "consumer" warpgroups[0, 1) registers 232 {
    %c0 = arith.constant 0 : i32
    %true = arith.constant true
    %z = flamia.frag.zero : !flamia.frag<64x16xf32>
    %p = flamia.frag.quantize %z quantized %true {precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>} : !flamia.frag<64x16xf32> -> !flamia.frag<64x16xbf16>
    %z2 = flamia.frag.zero : !flamia.frag<64x64xf32>
    %s = flamia.wg.mma %q[%c0], %k[%c0] {async} : !flamia.smem<1x64x64xbf16>, !flamia.smem<1x16x64xbf16> -> !flamia.frag<64x16xf32>
    %o = flamia.wg.mma %p, %v[%c0] acc(%z2 : !flamia.frag<64x64xf32>) {async, b_transposed} : !flamia.frag<64x16xbf16>, !flamia.smem<1x16x64xbf16> -> !flamia.frag<64x64xf32>
    %s1 = flamia.wg.wait %s pending 1 : !flamia.frag<64x16xf32>
    %o1 = flamia.wg.wait %o pending 0 : !flamia.frag<64x64xf32>
  }
  flamia.return
}
