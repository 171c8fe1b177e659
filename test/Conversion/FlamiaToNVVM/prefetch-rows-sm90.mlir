// RUN: flamia-opt %s --convert-flamia-to-nvvm | FileCheck %s
// RUN: flamia-opt %s --convert-flamia-to-nvvm --convert-nvvm-to-llvm --reconcile-unrealized-casts --gpu-module-to-binary=format=isa | FileCheck %s --check-prefix=PTX

// flamia.prefetch_rows: thread t < length asks L2 for row start + t of the
// head, one bulk prefetch of the row's 256 bytes (128 bf16) at a global
// address; [T, H, D] indexing in 64 bits, with the runtime head count.
flamia.kernel @prefetch(%k: !flamia.global<?x?x128xbf16> {flamia.param = "k"}, %info: !flamia.global<?x2xi32> {flamia.param = "block_info"}, %hkv: i32 {flamia.param = "Hkv"}) attributes {flamia.phase = "forward", launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %bx = gpu.block_id x
  %b = arith.index_cast %bx : index to i32
  %by = gpu.block_id y
  %h = arith.index_cast %by : index to i32
  %start, %length = flamia.block_info.load %info[%b] : !flamia.global<?x2xi32>
  flamia.prefetch_rows %k rows(%start, %length) head %h heads %hkv : !flamia.global<?x?x128xbf16>, i32
  flamia.return
}

// CHECK-LABEL: llvm.func @prefetch
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x
// CHECK: llvm.icmp "slt" %[[TID]], %{{.*}}
// CHECK: llvm.cond_br
// CHECK: llvm.zext %{{.*}} : i32 to i64
// CHECK: %[[G:.*]] = llvm.addrspacecast %{{.*}} : !llvm.ptr to !llvm.ptr<1>
// CHECK: %[[SIZE:.*]] = llvm.mlir.constant(256 : i32) : i32
// CHECK: nvvm.cp.async.bulk.prefetch %[[G]], %[[SIZE]] : <1>

// PTX-LABEL: gpu.binary @prefetch_module
// PTX-SAME: mov.b32 {{[^;]*}}256;
// PTX-SAME: cp.async.bulk.prefetch.L2.global [%rd{{[0-9]+}}], %r{{[0-9]+}};
