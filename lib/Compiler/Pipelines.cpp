//===- Pipelines.cpp - FLAMIA's pass pipelines ----------------------------===//
#include "flamia/Compiler/Pipelines.h"

#include "flamia/Conversion/Passes.h"
#include "flamia/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace flamia {

void buildGraphToKernelsPipeline(OpPassManager &pm, const std::string &target,
                                 bool tile, bool scaleTiles) {
  mlir::flamia::GraphPipelineOptions graph;
  mlir::flamia::buildGraphPipeline(pm, graph);
  mlir::flamia::FlamiaVarlenScheduleOptions schedule;
  schedule.target = target;
  schedule.scaleTiles = scaleTiles;
  pm.addPass(mlir::flamia::createFlamiaVarlenSchedule(schedule));
  if (tile)
    pm.addPass(mlir::flamia::createFlamiaTile());
}

void buildKernelsToPtxPipeline(OpPassManager &pm) {
  pm.addPass(mlir::flamia::createConvertFlamiaToNVVM());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

namespace {
struct ToPtxOptions : public PassPipelineOptions<ToPtxOptions> {
  Option<std::string> target{*this, "target",
                             llvm::cl::desc("sm_90a or sm_100a"),
                             llvm::cl::init("sm_100a")};
};
} // namespace

void registerFlamiaPipelines() {
  PassPipelineRegistration<ToPtxOptions>(
      "flamia-to-ptx",
      "Graph-level attention to PTX: flamia-graph-pipeline, "
      "flamia-varlen-schedule, flamia-tile, convert-flamia-to-nvvm, "
      "convert-nvvm-to-llvm, gpu-module-to-binary{format=isa}",
      [](OpPassManager &pm, const ToPtxOptions &options) {
        buildGraphToKernelsPipeline(pm, options.target, /*tile=*/true);
        buildKernelsToPtxPipeline(pm);
      });
}

} // namespace flamia
