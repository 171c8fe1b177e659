//===- Pipelines.h - FLAMIA's pass pipelines --------------------*- C++ -*-===//
#ifndef FLAMIA_COMPILER_PIPELINES_H
#define FLAMIA_COMPILER_PIPELINES_H

#include <string>

namespace mlir {
class DialectRegistry;
class OpPassManager;
} // namespace mlir

namespace flamia {

/// The choices of the lowering from graph-level attention to PTX, the same
/// for `flamia-opt --flamia-to-ptx{...}` (its options are these fields) and
/// for flamia-compile (which fills them from its spec), so that the two give
/// the same PTX for the same input.
struct PipelineOptions {
  /// sm_90a or sm_100a (flamia-varlen-schedule, flamia-tile,
  /// convert-flamia-to-nvvm).
  std::string target = "sm_100a";
  /// sm_90a: also write sm_100a's scale-factor tiles
  /// (flamia-varlen-schedule{scale-tiles}).
  bool scaleTiles = false;
  /// A debug build: S of the first key tile from the forward and the dQ
  /// kernel (flamia-varlen-schedule{debug-scores}).
  bool debugScores = false;
  /// sm_90a, D = 128: the overlapped softmax consumer
  /// (flamia-tile{overlap-softmax}).
  bool overlapSoftmax = true;
  /// sm_100a forward: P staged in shared memory (flamia-tile{p-in-smem}).
  bool pInSmem = false;
  /// flamia-varlen-schedule{prefetch-kv}.
  bool prefetchKv = true;
  /// flamia-varlen-schedule{round-q}.
  bool roundQ = true;
  /// sm_90a: also write the payloads no sm_90a kernel reads
  /// (flamia-varlen-schedule{payloads}).
  bool payloads = false;
};

/// flamia-graph-pipeline, then flamia-varlen-schedule{target, scale-tiles}:
/// the graph to kernels of block-level ops (not yet tiled).
void buildGraphToKernelsPipeline(mlir::OpPassManager &pm,
                                 const PipelineOptions &options);

/// flamia-tile{overlap-softmax}: attention tiles to per-target programs.
void buildTilePipeline(mlir::OpPassManager &pm, const PipelineOptions &options);

/// convert-flamia-to-nvvm, convert-nvvm-to-llvm, reconcile-unrealized-casts,
/// gpu-module-to-binary{format=isa}: one PTX object per kernel.
void buildKernelsToPtxPipeline(mlir::OpPassManager &pm);

/// The three above in order: the whole lowering (`flamia-to-ptx`).
void buildFlamiaToPtxPipeline(mlir::OpPassManager &pm,
                              const PipelineOptions &options);

/// Registers `flamia-to-ptx{target=... scale-tiles=... overlap-softmax=...}`:
/// the whole lowering from graph-level attention to PTX.
void registerFlamiaPipelines();

/// The dialects and translations the compiler uses.
void registerCompilerDialects(mlir::DialectRegistry &registry);

} // namespace flamia

#endif // FLAMIA_COMPILER_PIPELINES_H
