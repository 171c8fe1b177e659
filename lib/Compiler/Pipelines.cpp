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

void buildGraphToKernelsPipeline(OpPassManager &pm,
                                 const PipelineOptions &options) {
  GraphPipelineOptions graph;
  buildGraphPipeline(pm, graph);
  FlamiaVarlenScheduleOptions schedule;
  schedule.target = options.target;
  schedule.scaleTiles = options.scaleTiles;
  schedule.debugScores = options.debugScores;
  schedule.prefetchKv = options.prefetchKv;
  schedule.roundQ = options.roundQ;
  schedule.payloads = options.payloads;
  pm.addPass(createFlamiaVarlenSchedule(schedule));
}

void buildTilePipeline(OpPassManager &pm, const PipelineOptions &options) {
  FlamiaTileOptions tile;
  tile.overlapSoftmax = options.overlapSoftmax;
  tile.pInSmem = options.pInSmem;
  pm.addPass(createFlamiaTile(tile));
}

void buildKernelsToPtxPipeline(OpPassManager &pm) {
  pm.addPass(createConvertFlamiaToNVVM());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void buildFlamiaToPtxPipeline(OpPassManager &pm, const PipelineOptions &options) {
  buildGraphToKernelsPipeline(pm, options);
  buildTilePipeline(pm, options);
  buildKernelsToPtxPipeline(pm);
}

namespace {
/// PipelineOptions as textual pipeline options.
struct ToPtxOptions : public PassPipelineOptions<ToPtxOptions> {
  Option<std::string> target{*this, "target",
                             llvm::cl::desc("sm_90a or sm_100a"),
                             llvm::cl::init(PipelineOptions().target)};
  Option<bool> scaleTiles{
      *this, "scale-tiles",
      llvm::cl::desc("sm_90a: also write sm_100a's scale-factor tiles"),
      llvm::cl::init(PipelineOptions().scaleTiles)};
  Option<bool> debugScores{
      *this, "debug-scores",
      llvm::cl::desc("a training step's S of the first key tile from the "
                     "forward and the dQ kernel (a debug build)"),
      llvm::cl::init(PipelineOptions().debugScores)};
  Option<bool> overlapSoftmax{
      *this, "overlap-softmax",
      llvm::cl::desc("sm_90a, D = 128: overlap the softmax with the MMAs"),
      llvm::cl::init(PipelineOptions().overlapSoftmax)};
  Option<bool> pInSmem{
      *this, "p-in-smem",
      llvm::cl::desc("sm_100a forward: P V reads P from shared memory"),
      llvm::cl::init(PipelineOptions().pInSmem)};
  Option<bool> prefetchKv{
      *this, "prefetch-kv",
      llvm::cl::desc("the quantization kernel prefetches K and V into L2 "
                     "before quantizing Q"),
      llvm::cl::init(PipelineOptions().prefetchKv)};
  Option<bool> roundQ{
      *this, "round-q",
      llvm::cl::desc("sm_90a, forward-only MXFP8 sets: the forward rounds Q "
                     "itself; the quantizer writes no copy of Q"),
      llvm::cl::init(PipelineOptions().roundQ)};
  Option<bool> payloads{
      *this, "payloads",
      llvm::cl::desc("sm_90a: also write the E4M3/E2M1 payloads, which no "
                     "sm_90a kernel reads"),
      llvm::cl::init(PipelineOptions().payloads)};

  PipelineOptions get() const {
    PipelineOptions options;
    options.target = target;
    options.scaleTiles = scaleTiles;
    options.debugScores = debugScores;
    options.overlapSoftmax = overlapSoftmax;
    options.pInSmem = pInSmem;
    options.prefetchKv = prefetchKv;
    options.roundQ = roundQ;
    options.payloads = payloads;
    return options;
  }
};
} // namespace

void registerFlamiaPipelines() {
  PassPipelineRegistration<ToPtxOptions>(
      "flamia-to-ptx",
      "Graph-level attention to PTX: flamia-graph-pipeline, "
      "flamia-varlen-schedule{target, scale-tiles, debug-scores, prefetch-kv, "
      "payloads}, "
      "flamia-tile{overlap-softmax, p-in-smem}, convert-flamia-to-nvvm, "
      "convert-nvvm-to-llvm, gpu-module-to-binary{format=isa}",
      [](OpPassManager &pm, const ToPtxOptions &options) {
        buildFlamiaToPtxPipeline(pm, options.get());
      });
}

} // namespace flamia
