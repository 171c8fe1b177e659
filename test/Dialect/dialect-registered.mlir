// RUN: flamia-opt --show-dialects | FileCheck %s --check-prefix=DIALECTS
// RUN: flamia-opt --help | FileCheck %s --check-prefix=PASSES
// RUN: flamia-opt %s | flamia-opt | FileCheck %s

// flamia-opt knows the flamia dialect and every upstream dialect the
// lowering goes through.
// DIALECTS: Available Dialects:
// DIALECTS-SAME: arith
// DIALECTS-SAME: cf
// DIALECTS-SAME: flamia
// DIALECTS-SAME: func
// DIALECTS-SAME: gpu
// DIALECTS-SAME: llvm
// DIALECTS-SAME: math
// DIALECTS-SAME: memref
// DIALECTS-SAME: nvvm
// DIALECTS-SAME: scf
// DIALECTS-SAME: tensor

// ... and the upstream passes of the PTX pipeline.
// PASSES-DAG: --convert-nvvm-to-llvm
// PASSES-DAG: --convert-scf-to-cf
// PASSES-DAG: --gpu-module-to-binary
// PASSES-DAG: --nvvm-attach-target
// PASSES-DAG: --reconcile-unrealized-casts

// CHECK-LABEL: func.func @empty
func.func @empty() {
  return
}
