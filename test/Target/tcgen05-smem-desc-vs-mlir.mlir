// Independent cross-check of the tcgen05 shared-memory descriptor encoder:
// MLIR 22's own lowering of nvvm.tcgen05.mma_smem_desc (which takes the
// already >> 4 encoded fields) folds to the same 64-bit constants that
// FLAMIA's encoder (flamia-desc smem-desc) computes from byte addresses and
// tile shapes (PTX ISA 9.0, 9.7.16.4.1 Table 40).
// RUN: mlir-translate --mlir-to-llvmir %s -o %t.ll
// RUN: flamia-desc smem-desc major=k swizzle=128 bits=8 mn=128 k=128 offset=0x400 > %t.1
// RUN: flamia-desc smem-desc major=mn swizzle=128 bits=16 mn=64 k=64 k0=16 offset=0xC400 > %t.2
// RUN: flamia-desc smem-desc major=k swizzle=64 bits=8 mn=128 k=64 k0=32 offset=0x1200 > %t.3
// RUN: flamia-desc smem-desc major=k swizzle=32 bits=16 mn=64 k=32 k0=16 offset=0x3300 > %t.4
// RUN: cat %t.ll %t.1 %t.2 %t.3 %t.4 | FileCheck %s

// CHECK-LABEL: define i64 @q_e4m3_128B()
// CHECK-NEXT: ret i64 [[#%u,D1:]]
// Q/K tile, e4m3 128 x 128, K-major 128B at 0x400: start 0x40, LBO 1, SBO 64.
llvm.func @q_e4m3_128B() -> i64 {
  %start = llvm.mlir.constant(64 : i32) : i32
  %lbo = llvm.mlir.constant(1 : i32) : i32
  %sbo = llvm.mlir.constant(64 : i32) : i32
  %base = llvm.mlir.constant(0 : i8) : i8
  %mode = llvm.mlir.constant(false) : i1
  %sw = llvm.mlir.constant(2 : i8) : i8
  %d = nvvm.tcgen05.mma_smem_desc (%start, %lbo, %sbo, %base, %mode, %sw) : (i32, i32, i32, i8, i1, i8) -> i64
  llvm.return %d : i64
}

// CHECK-LABEL: define i64 @v_bf16_mn_128B_step1()
// CHECK-NEXT: ret i64 [[#%u,D2:]]
// V tile, bf16 64 keys x 64 channels, MN-major 128B at 0xC400, second K=16
// step (+2048 bytes): start 0xCC0, LBO 8192 >> 4 = 512, SBO 64.
llvm.func @v_bf16_mn_128B_step1() -> i64 {
  %start = llvm.mlir.constant(3264 : i32) : i32
  %lbo = llvm.mlir.constant(512 : i32) : i32
  %sbo = llvm.mlir.constant(64 : i32) : i32
  %base = llvm.mlir.constant(0 : i8) : i8
  %mode = llvm.mlir.constant(false) : i1
  %sw = llvm.mlir.constant(2 : i8) : i8
  %d = nvvm.tcgen05.mma_smem_desc (%start, %lbo, %sbo, %base, %mode, %sw) : (i32, i32, i32, i8, i1, i8) -> i64
  llvm.return %d : i64
}

// CHECK-LABEL: define i64 @k_e4m3_64B_step1()
// CHECK-NEXT: ret i64 [[#%d,D3:]]
// e4m3 128 x 64, K-major 64B at 0x1200, K step 32 (+32 bytes): start 0x122,
// LBO 1, SBO 512 >> 4 = 32, swizzle 4.
llvm.func @k_e4m3_64B_step1() -> i64 {
  %start = llvm.mlir.constant(290 : i32) : i32
  %lbo = llvm.mlir.constant(1 : i32) : i32
  %sbo = llvm.mlir.constant(32 : i32) : i32
  %base = llvm.mlir.constant(0 : i8) : i8
  %mode = llvm.mlir.constant(false) : i1
  %sw = llvm.mlir.constant(4 : i8) : i8
  %d = nvvm.tcgen05.mma_smem_desc (%start, %lbo, %sbo, %base, %mode, %sw) : (i32, i32, i32, i8, i1, i8) -> i64
  llvm.return %d : i64
}

// CHECK-LABEL: define i64 @bf16_32B_second_atom()
// CHECK-NEXT: ret i64 [[#%d,D4:]]
// bf16 64 x 32, K-major 32B at 0x3300; K = 16 starts the second 32-byte atom
// column, 64 rows x 32 bytes = 2048 further: start 0x3B0, LBO 1, SBO 16,
// swizzle 6.
llvm.func @bf16_32B_second_atom() -> i64 {
  %start = llvm.mlir.constant(944 : i32) : i32
  %lbo = llvm.mlir.constant(1 : i32) : i32
  %sbo = llvm.mlir.constant(16 : i32) : i32
  %base = llvm.mlir.constant(0 : i8) : i8
  %mode = llvm.mlir.constant(false) : i1
  %sw = llvm.mlir.constant(6 : i8) : i8
  %d = nvvm.tcgen05.mma_smem_desc (%start, %lbo, %sbo, %base, %mode, %sw) : (i32, i32, i32, i8, i1, i8) -> i64
  llvm.return %d : i64
}

// FLAMIA's values, in the same order. LLVM prints i64 signed: the 64B (4)
// and 32B (6) swizzle values set bit 63, so add 2^64 to compare as unsigned.
// CHECK: [[#%#x,D1]]
// CHECK-NEXT: [[#%#x,D2]]
// CHECK-NEXT: [[#%#x,D3+18446744073709551616]]
// CHECK-NEXT: [[#%#x,D4+18446744073709551616]]
