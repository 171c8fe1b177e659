//===- Pipelines.h - FLAMIA's pass pipelines --------------------*- C++ -*-===//
#ifndef FLAMIA_COMPILER_PIPELINES_H
#define FLAMIA_COMPILER_PIPELINES_H

#include <string>

namespace mlir {
class DialectRegistry;
class OpPassManager;
} // namespace mlir

namespace flamia {

/// flamia-graph-pipeline, then flamia-varlen-schedule{target, scale-tiles},
/// then (if `tile`) flamia-tile.
void buildGraphToKernelsPipeline(mlir::OpPassManager &pm,
                                 const std::string &target, bool tile,
                                 bool scaleTiles = false);

/// convert-flamia-to-nvvm, convert-nvvm-to-llvm, reconcile-unrealized-casts,
/// gpu-module-to-binary{format=isa}: one PTX object per kernel.
void buildKernelsToPtxPipeline(mlir::OpPassManager &pm);

/// Registers `flamia-to-ptx{target=...}`: the whole lowering from graph-level
/// attention to PTX.
void registerFlamiaPipelines();

/// The dialects and translations the compiler uses.
void registerCompilerDialects(mlir::DialectRegistry &registry);

} // namespace flamia

#endif // FLAMIA_COMPILER_PIPELINES_H
