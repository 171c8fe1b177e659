// The upstream half of the PTX pipeline works from flamia-opt: an NVVM kernel
// in a gpu.module becomes PTX (format=isa needs only LLVM's NVPTX backend).
// RUN: flamia-opt %s --convert-nvvm-to-llvm --gpu-module-to-binary=format=isa | FileCheck %s

module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a", features = "+ptx80", O = 3>] {
    llvm.func @write_tid(%out: !llvm.ptr<1>) attributes {nvvm.kernel} {
      %tid = nvvm.read.ptx.sreg.tid.x : i32
      %p = llvm.getelementptr %out[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      llvm.store %tid, %p : i32, !llvm.ptr<1>
      llvm.return
    }
  }
}

// CHECK: gpu.binary @kernels
// CHECK-SAME: .target sm_90a
// CHECK-SAME: .visible .entry write_tid(
// CHECK-SAME: mov.u32 {{.*}}%tid.x;
// CHECK-SAME: st.global.b32
