//===- flamia-opt.cpp - The FLAMIA optimizer driver -------------*- C++ -*-===//
//
// mlir-opt for FLAMIA: the flamia dialect and passes plus exactly the upstream
// dialects, passes and translations the flamia pipelines lower through.
//
//===----------------------------------------------------------------------===//

#include "flamia/Dialect/FlamiaDialect.h"
#include "flamia/Compiler/Pipelines.h"
#include "flamia/Conversion/Passes.h"
#include "flamia/Transforms/Passes.h"
#include "flamia/Support/Version.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<flamia::FlamiaDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::math::MathDialect,
                  mlir::scf::SCFDialect, mlir::cf::ControlFlowDialect,
                  mlir::tensor::TensorDialect, mlir::memref::MemRefDialect,
                  mlir::gpu::GPUDialect, mlir::NVVM::NVVMDialect,
                  mlir::LLVM::LLVMDialect>();

  // Lowering to PTX/cubin: `#nvvm.target` serialization, the LLVM IR
  // translations gpu-module-to-binary needs, and nvvm ops lowered through the
  // PTX builder interface by convert-nvvm-to-llvm.
  mlir::func::registerInlinerExtension(registry);
  mlir::NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  mlir::registerConvertNVVMToLLVMInterface(registry);
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  mlir::registerNVVMDialectTranslation(registry);
  mlir::registerGPUDialectTranslation(registry);

  // Upstream passes: canonicalize/cse/..., every conversion pass (the
  // *-to-llvm and *-to-nvvm ones among them), and the GPU passes including
  // gpu-module-to-binary and nvvm-attach-target.
  mlir::registerTransformsPasses();
  mlir::registerConversionPasses();
  mlir::registerGPUPasses();
  flamia::registerFlamiaPassesAndPipelines();
  flamia::registerFlamiaConversionPasses();
  flamia::registerFlamiaPipelines();

  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "flamia-opt " << flamia::versionBanner() << "\n";
  });
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "FLAMIA optimizer driver\n", registry));
}
