// RUN: flamia-opt %s -split-input-file --convert-flamia-to-nvvm | FileCheck %s
// RUN: flamia-opt %s -split-input-file --convert-flamia-to-nvvm --convert-nvvm-to-llvm --reconcile-unrealized-casts --gpu-module-to-binary=format=isa | FileCheck %s --check-prefix=PTX

// flamia.smem.mx_round at D = 128: each thread of the warpgroup rounds two
// 32-channel blocks of the warpgroup's 64 rows (4 blocks a row), each read
// with four 16-byte shared loads at its swizzled chunks, rounded through
// E4M3 with the contract's E8M0 scale and written back as bf16 to the same
// chunks of the destination; then the async-proxy fence and the
// warpgroup's named barrier (8 + warpgroup, 128 threads).
flamia.kernel @round_q(%row: i32 {flamia.param = "row"}) attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %qd = flamia.smem.alloc : !flamia.smem<1x128x128xbf16>
  %qs = flamia.smem.alloc : !flamia.smem<1x128x128xbf16>
  flamia.role "consumer" warpgroups [1, 3) registers 232 {
    %c0 = arith.constant 0 : i32
    flamia.smem.mx_round %qs[%c0] to %qd[%c0] rows %row : !flamia.smem<1x128x128xbf16>, !flamia.smem<1x128x128xbf16>
  }
  flamia.return
}

// CHECK-LABEL: llvm.func @round_q
// CHECK-COUNT-4: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// CHECK: llvm.intr.fabs
// CHECK: nvvm.convert.f32x2.to.f8x2 %{{.*}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : vector<2xi8>(f8E4M3FN)
// CHECK: nvvm.convert.f32x2.to.bf16x2
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
// CHECK-COUNT-4: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: %[[WG:.*]] = llvm.udiv %{{.*}}, %{{.*}} : i32
// CHECK: %[[ID:.*]] = llvm.add %{{.*}}, %[[WG]] : i32
// CHECK: nvvm.barrier id = %[[ID]] number_of_threads = %{{.*}}

// PTX-LABEL: gpu.binary @round_q_module
// PTX-SAME: ld.shared.v4.b32
// PTX-SAME: cvt.rn.satfinite.e4m3x2.f32
// PTX-SAME: cvt.rn.bf16x2.f32
// PTX-SAME: st.shared.v4.b32
// PTX-SAME: fence.proxy.async.shared::cta;
// PTX-SAME: bar.sync {{[^;]*}}, 128;

// -----
// At D = 64 (2 blocks a row, one atom): one block a thread, so four loads
// and four stores.
flamia.kernel @round_q64(%row: i32 {flamia.param = "row"}) attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %qd = flamia.smem.alloc : !flamia.smem<1x128x64xbf16>
  %qs = flamia.smem.alloc : !flamia.smem<1x128x64xbf16>
  flamia.role "consumer" warpgroups [1, 3) registers 232 {
    %c0 = arith.constant 0 : i32
    flamia.smem.mx_round %qs[%c0] to %qd[%c0] rows %row : !flamia.smem<1x128x64xbf16>, !flamia.smem<1x128x64xbf16>
  }
  flamia.return
}

// CHECK-LABEL: llvm.func @round_q64
// CHECK-COUNT-4: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// CHECK-NOT: llvm.load %{{.*}} : !llvm.ptr<3> -> vector<4xi32>
// CHECK-COUNT-4: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
// CHECK-NOT: llvm.store %{{.*}} : vector<4xi32>, !llvm.ptr<3>
// CHECK: nvvm.fence.proxy
