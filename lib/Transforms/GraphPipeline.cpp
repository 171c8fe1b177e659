//===- GraphPipeline.cpp - flamia-graph-pipeline --------------------------===//
#include "flamia/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace flamia;

void flamia::buildGraphPipeline(OpPassManager &pm,
                                const GraphPipelineOptions &options) {
  pm.addPass(createFlamiaQuantizeAttention(
      FlamiaQuantizeAttentionOptions{options.recipe}));
  pm.addPass(createFlamiaReuseScaleLayouts());
  pm.addPass(createFlamiaCausalSafeScales(
      FlamiaCausalSafeScalesOptions{options.safeBlock}));
  pm.addPass(createFlamiaFwdBwdConsistency());
  // Repairs and links can leave duplicate or dead quantizations behind.
  pm.addPass(createCSEPass());
  pm.addPass(createFlamiaVerifyCausality());
}

void flamia::registerFlamiaPassesAndPipelines() {
  registerFlamiaPasses();
  PassPipelineRegistration<GraphPipelineOptions>(
      "flamia-graph-pipeline",
      "The graph-level passes in order: quantize-attention, "
      "reuse-scale-layouts, causal-safe-scales, fwd-bwd-consistency, cse, "
      "verify-causality",
      buildGraphPipeline);
}
