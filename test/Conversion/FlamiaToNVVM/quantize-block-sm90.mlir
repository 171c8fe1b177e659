// RUN: flamia-opt %s -split-input-file --convert-flamia-to-nvvm | FileCheck %s

// sm_90a's default copies of Q at D = 128 (a training step): per token and
// in 32x32 blocks, scales and bf16 dequantized values but no E4M3 payloads,
// which no sm_90a kernel reads. Each copy is 4 whole-sector 16-byte stores
// of dequantized values (after the row's 4 x 4 chunk transpose, 16
// shuffles) and one scale byte; nothing else is written to global memory.
flamia.kernel @dequantize_only(%x: !flamia.global<?x4x128xbf16> {flamia.param = "q"}, %info: !flamia.global<?x2xi32> {flamia.param = "block_info"}, %pts: !flamia.global<?x4x4xf8E8M0FNU> {flamia.param = "q_pt_scales"}, %ptd: !flamia.global<?x4x128xbf16> {flamia.param = "q_deq"}, %tbs: !flamia.global<?x4x4xf8E8M0FNU> {flamia.param = "q_tb_scales"}, %tbd: !flamia.global<?x4x128xbf16> {flamia.param = "q_tb_deq"}) attributes {flamia.phase = "forward", launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %bx = gpu.block_id x
  %b = arith.index_cast %bx : index to i32
  %by = gpu.block_id y
  %h = arith.index_cast %by : index to i32
  %start, %length = flamia.block_info.load %info[%b] : !flamia.global<?x2xi32>
  flamia.quantize_block %x rows(%start, %length) block %b head %h per_token_scales(%pts) per_token_dequant(%ptd) token_block_scales(%tbs) token_block_dequant(%tbd) : (!flamia.global<?x4x128xbf16>, i32, i32, i32, i32, !flamia.global<?x4x4xf8E8M0FNU>, !flamia.global<?x4x128xbf16>, !flamia.global<?x4x4xf8E8M0FNU>, !flamia.global<?x4x128xbf16>) -> ()
  flamia.return
}

// CHECK-LABEL: llvm.func @dequantize_only(
// The per-token copy: E4M3 codes (cvt), back to f32, times 2^e, to bf16.
// CHECK: nvvm.convert.f32x2.to.f8x2
// CHECK-COUNT-16: nvvm.shfl.sync idx
// CHECK-NOT: nvvm.shfl.sync idx
// CHECK-COUNT-4: llvm.store {{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr
// CHECK-NEXT: llvm.br
// CHECK: llvm.store {{.*}} {alignment = 1 : i64} : i8, !llvm.ptr
// The token-block copy: the block amax across warps, then the same stores.
// CHECK: nvvm.barrier0
// CHECK: nvvm.barrier0
// CHECK-COUNT-16: nvvm.shfl.sync idx
// CHECK-NOT: nvvm.shfl.sync idx
// CHECK-COUNT-4: llvm.store {{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr
// CHECK-NOT: {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr
// CHECK: llvm.store {{.*}} {alignment = 1 : i64} : i8, !llvm.ptr
// CHECK-NEXT: llvm.br
// CHECK-NOT: llvm.store
// CHECK: llvm.return

// -----

// With its payload (sm_100a, or sm_90a with payloads=true): two more
// 16-byte stores of E4M3 codes per copy, after their own 16 shuffles.
flamia.kernel @with_payload(%x: !flamia.global<?x4x128xbf16> {flamia.param = "q"}, %info: !flamia.global<?x2xi32> {flamia.param = "block_info"}, %pt: !flamia.global<?x4x128xf8E4M3FN> {flamia.param = "q_pt"}, %pts: !flamia.global<?x4x4xf8E8M0FNU> {flamia.param = "q_pt_scales"}, %ptd: !flamia.global<?x4x128xbf16> {flamia.param = "q_deq"}) attributes {flamia.phase = "forward", launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %bx = gpu.block_id x
  %b = arith.index_cast %bx : index to i32
  %by = gpu.block_id y
  %h = arith.index_cast %by : index to i32
  %start, %length = flamia.block_info.load %info[%b] : !flamia.global<?x2xi32>
  flamia.quantize_block %x rows(%start, %length) block %b head %h per_token(%pt, %pts) per_token_dequant(%ptd) : (!flamia.global<?x4x128xbf16>, i32, i32, i32, i32, !flamia.global<?x4x128xf8E4M3FN>, !flamia.global<?x4x4xf8E8M0FNU>, !flamia.global<?x4x128xbf16>) -> ()
  flamia.return
}

// CHECK-LABEL: llvm.func @with_payload(
// CHECK-COUNT-32: nvvm.shfl.sync idx
// CHECK-NOT: nvvm.shfl.sync idx
// CHECK-COUNT-6: llvm.store {{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr
// CHECK-NOT: {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr
// CHECK: llvm.store {{.*}} {alignment = 1 : i64} : i8, !llvm.ptr
// CHECK-NOT: llvm.store
// CHECK: llvm.return

// -----

// D = 64 without a payload (sm_90a's default K and V copies): the row's two
// threads swap half of their dequantized chunks (8 butterfly shuffles) so
// that each of the 4 stores writes whole 32-byte sectors: thread cb's store
// q goes to row chunk 2 q + cb, 16 q + 16 cb bytes from the row's start.
flamia.kernel @pairs_d64(%x: !flamia.global<?x4x64xbf16> {flamia.param = "k"}, %info: !flamia.global<?x2xi32> {flamia.param = "block_info"}, %tbs: !flamia.global<?x4x2xf8E8M0FNU> {flamia.param = "k_tb_scales"}, %tbd: !flamia.global<?x4x64xbf16> {flamia.param = "k_deq"}) attributes {flamia.phase = "forward", launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %bx = gpu.block_id x
  %b = arith.index_cast %bx : index to i32
  %by = gpu.block_id y
  %h = arith.index_cast %by : index to i32
  %start, %length = flamia.block_info.load %info[%b] : !flamia.global<?x2xi32>
  flamia.quantize_block %x rows(%start, %length) block %b head %h token_block_scales(%tbs) token_block_dequant(%tbd) : (!flamia.global<?x4x64xbf16>, i32, i32, i32, i32, !flamia.global<?x4x2xf8E8M0FNU>, !flamia.global<?x4x64xbf16>) -> ()
  flamia.return
}

// CHECK-LABEL: llvm.func @pairs_d64(
// CHECK: nvvm.barrier0
// CHECK-COUNT-8: nvvm.shfl.sync bfly {{.*}} : i32 -> i32
// CHECK-NOT: nvvm.shfl.sync
// CHECK-COUNT-4: llvm.store {{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr
// CHECK-NOT: {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr
// CHECK: llvm.store {{.*}} {alignment = 1 : i64} : i8, !llvm.ptr
// CHECK-NOT: llvm.store
// CHECK: llvm.return

// -----

// D = 64 with its payload (sm_100a): no exchange; each thread stores its own
// chunks (2 of payload, 4 dequantized) where they lie.
flamia.kernel @payload_d64(%x: !flamia.global<?x4x64xbf16> {flamia.param = "k"}, %info: !flamia.global<?x2xi32> {flamia.param = "block_info"}, %tb: !flamia.global<?x4x64xf8E4M3FN> {flamia.param = "k_tb"}, %tbs: !flamia.global<?x4x2xf8E8M0FNU> {flamia.param = "k_tb_scales"}, %tbd: !flamia.global<?x4x64xbf16> {flamia.param = "k_deq"}) attributes {flamia.phase = "forward", launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %bx = gpu.block_id x
  %b = arith.index_cast %bx : index to i32
  %by = gpu.block_id y
  %h = arith.index_cast %by : index to i32
  %start, %length = flamia.block_info.load %info[%b] : !flamia.global<?x2xi32>
  flamia.quantize_block %x rows(%start, %length) block %b head %h token_block(%tb, %tbs) token_block_dequant(%tbd) : (!flamia.global<?x4x64xbf16>, i32, i32, i32, i32, !flamia.global<?x4x64xf8E4M3FN>, !flamia.global<?x4x2xf8E8M0FNU>, !flamia.global<?x4x64xbf16>) -> ()
  flamia.return
}

// CHECK-LABEL: llvm.func @payload_d64(
// CHECK: nvvm.barrier0
// CHECK-NOT: nvvm.shfl.sync {{.*}}idx
// CHECK-NOT: nvvm.shfl.sync bfly {{.*}} : i32 -> i32
// CHECK-COUNT-6: llvm.store {{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr
// CHECK-NOT: {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr
// CHECK: llvm.return
