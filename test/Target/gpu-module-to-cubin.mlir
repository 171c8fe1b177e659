// REQUIRES: ptxas
// With CUDA's ptxas, the same flow produces a cubin (an ELF object) for both
// targets FLAMIA supports.
// RUN: env PATH=%{ptxas_dir}:$PATH flamia-opt %s --convert-nvvm-to-llvm --gpu-module-to-binary=format=bin | FileCheck %s

module attributes {gpu.container_module} {
  gpu.module @hopper [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
    llvm.func @k(%out: !llvm.ptr<1>) attributes {nvvm.kernel} {
      %tid = nvvm.read.ptx.sreg.tid.x : i32
      llvm.store %tid, %out : i32, !llvm.ptr<1>
      llvm.return
    }
  }
  gpu.module @blackwell [#nvvm.target<chip = "sm_100a", features = "+ptx88">] {
    llvm.func @k(%out: !llvm.ptr<1>) attributes {nvvm.kernel} {
      %tid = nvvm.read.ptx.sreg.tid.x : i32
      llvm.store %tid, %out : i32, !llvm.ptr<1>
      llvm.return
    }
  }
}

// CHECK: gpu.binary @hopper [#gpu.object<#nvvm.target<chip = "sm_90a"{{.*}}bin = "\7FELF
// CHECK: gpu.binary @blackwell [#gpu.object<#nvvm.target<chip = "sm_100a"{{.*}}bin = "\7FELF
