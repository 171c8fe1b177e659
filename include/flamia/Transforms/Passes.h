//===- Passes.h - flamia graph-level passes ---------------------*- C++ -*-===//
#ifndef FLAMIA_TRANSFORMS_PASSES_H
#define FLAMIA_TRANSFORMS_PASSES_H

#include "flamia/Dialect/FlamiaOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

#include <memory>
#include <string>

namespace flamia {

#define GEN_PASS_DECL
#include "flamia/Support/MLIR.h"
#include "flamia/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "flamia/Transforms/Passes.h.inc"

/// Options of the named pipeline `flamia-graph-pipeline`.
struct GraphPipelineOptions
    : public PassPipelineOptions<GraphPipelineOptions> {
  PassOptions::Option<std::string> recipe{
      *this, "recipe",
      llvm::cl::desc("Only lower ops of this recipe (mxfp8, nvfp4_mixed); "
                     "empty (the default): every op, by its own recipe"),
      llvm::cl::init("")};
  PassOptions::Option<int64_t> safeBlock{
      *this, "safe-block",
      llvm::cl::desc("Safe block where one is missing or too small"),
      llvm::cl::init(128)};
};

/// quantize-attention, reuse-scale-layouts, causal-safe-scales,
/// fwd-bwd-consistency, cse, verify-causality (docs/passes.md).
void buildGraphPipeline(OpPassManager &pm, const GraphPipelineOptions &options);

/// Registers the flamia passes and the `flamia-graph-pipeline` pipeline.
void registerFlamiaPassesAndPipelines();

} // namespace flamia

#endif // FLAMIA_TRANSFORMS_PASSES_H
