//===- Passes.td - flamia conversions ----------------------*- tablegen -*-===//

#ifndef FLAMIA_CONVERSION_PASSES_TD
#define FLAMIA_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertFlamiaToNVVM : Pass<"convert-flamia-to-nvvm", "::mlir::ModuleOp"> {
  let summary = "Lower block-level flamia kernels to NVVM in a gpu.module";
  let description = [{
    Every `flamia.kernel` becomes an `llvm.func` kernel (`nvvm.kernel`) in a
    `gpu.module` with `#nvvm.target<chip = ...>`: shared memory is planned
    (swizzled tiles 1024-byte aligned, then mbarriers and queue slots),
    global tensors read through `flamia.tma.load` become `CUtensorMap`
    parameters (byval, 64-byte aligned, grid-constant), the others global
    pointers; roles become warpgroup branches with `setmaxnreg`; pipelines
    and the work queue become mbarrier protocols; fragments become the
    registers of the target's matrix instructions (sm_90a: wgmma
    accumulator and A-operand layouts; sm_100a: one tensor-memory row per
    thread). The host launch plan is left in place; the module attribute
    `flamia.kernel_infos` lists each kernel's parameters and resources for
    the manifest.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::cf::ControlFlowDialect",
                           "::mlir::arith::ArithDialect"];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"\"",
           "If set, the chip every kernel must target (sm_90a, sm_100a)">
  ];
}

#endif // FLAMIA_CONVERSION_PASSES_TD
