// RUN: flamia-opt %s -split-input-file --convert-flamia-to-nvvm | FileCheck %s
// RUN: flamia-opt %s -split-input-file --convert-flamia-to-nvvm --convert-nvvm-to-llvm --reconcile-unrealized-casts --gpu-module-to-binary=format=isa | FileCheck %s --check-prefix=PTX

// flamia.prefetch_query_values, span 64: at most 3 lines of each tensor, so
// threads 0-5 of each warpgroup (tid mod 128 < 6) with a non-empty span;
// thread t takes LSE for t < 3, else D, at query
// min(base + 32 (t mod 3), limit - 1), head-major [H, T] in 64 bits, and
// asks L1 for its line at a global address.
flamia.kernel @prefetch_values(%lse: !flamia.global<?x?xf32> {flamia.param = "lse"}, %d: !flamia.global<?x?xf32> {flamia.param = "delta"}, %t: i32 {flamia.param = "T"}, %h: i32 {flamia.param = "h"}, %start: i32 {flamia.param = "start"}, %base: i32 {flamia.param = "base"}, %len: i32 {flamia.param = "len"}) attributes {flamia.phase = "backward", launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 256 : i64} {
  flamia.prefetch_query_values lse %lse delta %d head %h queries(%start, %base, %len) tokens %t span 64 : !flamia.global<?x?xf32>
  flamia.return
}

// CHECK-LABEL: llvm.func @prefetch_values
// CHECK-SAME: %[[LSE:[a-z0-9]+]]: !llvm.ptr<1>, %[[D:[a-z0-9]+]]: !llvm.ptr<1>, %[[NT:[a-z0-9]+]]: i32, %[[H:[a-z0-9]+]]: i32, %[[START:[a-z0-9]+]]: i32, %[[BASE:[a-z0-9]+]]: i32, %[[LEN:[a-z0-9]+]]: i32
// CHECK: %[[LSEG:.*]] = llvm.addrspacecast %[[LSE]] : !llvm.ptr<1> to !llvm.ptr
// CHECK: %[[DG:.*]] = llvm.addrspacecast %[[D]] : !llvm.ptr<1> to !llvm.ptr
// CHECK: %[[C128:.*]] = llvm.mlir.constant(128 : i32) : i32
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x
// CHECK: %[[T:.*]] = llvm.urem %[[TID]], %[[C128]]
// CHECK: %[[NONEMPTY:.*]] = llvm.icmp "slt" %[[BASE]], %[[LEN]]
// CHECK: %[[C6:.*]] = llvm.mlir.constant(6 : i32) : i32
// CHECK: %[[FEW:.*]] = llvm.icmp "ult" %[[T]], %[[C6]]
// CHECK: %[[ACTIVE:.*]] = llvm.and %[[FEW]], %[[NONEMPTY]]
// CHECK: llvm.cond_br %[[ACTIVE]]
// CHECK: %[[C3:.*]] = llvm.mlir.constant(3 : i32) : i32
// CHECK: %[[ISLSE:.*]] = llvm.icmp "ult" %[[T]], %[[C3]]
// CHECK: %[[LINE:.*]] = llvm.urem %[[T]], %{{.*}}
// CHECK: %[[C32:.*]] = llvm.mlir.constant(32 : i32) : i32
// CHECK: %[[OFF:.*]] = llvm.mul %[[LINE]], %[[C32]]
// CHECK: %[[Q:.*]] = llvm.add %[[BASE]], %[[OFF]]
// CHECK: %[[LAST:.*]] = llvm.sub %[[LEN]], %{{.*}}
// CHECK: %[[LT:.*]] = llvm.icmp "slt" %[[Q]], %[[LAST]]
// CHECK: %[[QC:.*]] = llvm.select %[[LT]], %[[Q]], %[[LAST]]
// CHECK: %[[TOK:.*]] = llvm.add %[[START]], %[[QC]]
// CHECK: %[[TOK64:.*]] = llvm.zext %[[TOK]] : i32 to i64
// CHECK: %[[NT64:.*]] = llvm.zext %[[NT]] : i32 to i64
// CHECK: %[[H64:.*]] = llvm.zext %[[H]] : i32 to i64
// CHECK: %[[ROW:.*]] = llvm.mul %[[H64]], %[[NT64]]
// CHECK: %[[IDX:.*]] = llvm.add %[[ROW]], %[[TOK64]]
// CHECK: %[[ARR:.*]] = llvm.select %[[ISLSE]], %[[LSEG]], %[[DG]] : i1, !llvm.ptr
// CHECK: %[[BYTES:.*]] = llvm.mul %[[IDX]], %{{.*}} : i64
// CHECK: %[[P:.*]] = llvm.getelementptr %[[ARR]][%[[BYTES]]]
// CHECK: %[[G:.*]] = llvm.addrspacecast %[[P]] : !llvm.ptr to !llvm.ptr<1>
// CHECK: nvvm.prefetch level = {{ *}}L1, %[[G]] : !llvm.ptr<1>
// CHECK-NOT: nvvm.prefetch
// CHECK: llvm.return

// PTX-LABEL: gpu.binary @prefetch_values_module
// PTX-SAME: prefetch.global.L1 {{(\\09)?}}[%rd{{[0-9]+}}];
