//===- PassOrder.h - Refusing IR that an earlier pass must lower -*- C++ -*-===//
//
// The flamia lowering runs in stages: graph ops (flamia.attention,
// flamia.attention_grad) -> quantized ops (flamia.attention_fwd/_bwd, by
// flamia-graph-pipeline) -> kernels holding flamia.attention_tile (by
// flamia-varlen-schedule) -> block programs (by flamia-tile) -> NVVM (by
// convert-flamia-to-nvvm). A pass run on IR that is still at an earlier
// stage would find nothing it matches and leave the IR as it was, exit 0;
// instead it names the op and the pass to run first.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_TRANSFORMS_PASSORDER_H
#define FLAMIA_TRANSFORMS_PASSORDER_H

#include "flamia/Dialect/FlamiaOps.h"
#include "flamia/Support/MLIR.h"

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

#include <optional>

namespace flamia {

/// The stage a pass takes as input, in pipeline order.
enum class LoweringStage {
  Graph,     ///< flamia-graph-pipeline: graph ops
  Quantized, ///< flamia-varlen-schedule: quantized ops, no graph ops left
  Scheduled, ///< flamia-tile: kernels, no graph or quantized attention left
  Tiled,     ///< convert-flamia-to-nvvm: block programs, no attention_tile
};

/// Emits an error on the first op under `root` that `pass` (taking `stage`)
/// cannot lower because an earlier pass has not run, naming the passes to
/// run first, and fails; succeeds when there is none.
inline LogicalResult requireLoweredTo(Operation *root, StringRef pass,
                                      LoweringStage stage) {
  // The pass that takes IR from stage i to stage i + 1.
  static constexpr const char *kNextPass[] = {
      "flamia-graph-pipeline", "flamia-varlen-schedule", "flamia-tile"};
  auto stageOf = [](Operation *op) -> std::optional<LoweringStage> {
    if (isa<AttentionOp, AttentionGradOp>(op))
      return LoweringStage::Graph;
    if (isa<AttentionFwdOp, AttentionBwdOp>(op))
      return LoweringStage::Quantized;
    if (isa<AttentionTileOp>(op))
      return LoweringStage::Scheduled;
    return std::nullopt;
  };
  Operation *found = nullptr;
  LoweringStage foundStage = stage;
  root->walk([&](Operation *op) {
    std::optional<LoweringStage> s = stageOf(op);
    if (!s || *s >= stage)
      return WalkResult::advance();
    found = op;
    foundStage = *s;
    return WalkResult::interrupt();
  });
  if (!found)
    return success();
  InFlightDiagnostic diag = found->emitOpError()
                            << "is not lowered far enough for " << pass
                            << ": run ";
  for (int i = static_cast<int>(foundStage); i < static_cast<int>(stage); ++i)
    diag << (i == static_cast<int>(foundStage) ? "" : ", then ") << kNextPass[i];
  diag << " first";
  return diag;
}

} // namespace flamia

#endif // FLAMIA_TRANSFORMS_PASSORDER_H
