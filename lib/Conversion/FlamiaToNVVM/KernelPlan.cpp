//===- KernelPlan.cpp - Shared memory and parameters of a kernel ----------===//
#include "KernelPlan.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace flamia;

static int64_t alignTo(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

FailureOr<KernelPlan> KernelPlan::build(KernelOp kernel, int64_t smemLimit) {
  KernelPlan plan;
  Builder b(kernel.getContext());
  Block &body = kernel.getBody().front();
  int64_t offset = 0;
  // Swizzled tiles first: 128-byte swizzling repeats every 1024 bytes, and
  // descriptors assume tiles start on such a boundary.
  for (auto alloc : body.getOps<SmemAllocOp>()) {
    offset = alignTo(offset, 1024);
    alloc->setAttr(kSmemOffsetAttr, b.getI64IntegerAttr(offset));
    SmemType t = alloc.getBuffer().getType();
    offset += t.getStages() * t.getTileBytes();
  }
  offset = alignTo(offset, 16);
  for (auto p : body.getOps<PipelineCreateOp>()) {
    p->setAttr(kSmemOffsetAttr, b.getI64IntegerAttr(offset));
    offset += 16 * p.getPipeline().getType().getStages();
  }
  for (auto q : body.getOps<QueueCreateOp>()) {
    q->setAttr(kSmemOffsetAttr, b.getI64IntegerAttr(offset));
    offset += kQueueBytes;
  }
  // The address tcgen05.alloc writes.
  for (auto alloc : body.getOps<TmemAllocOp>()) {
    offset = alignTo(offset, 16);
    alloc->setAttr(kSmemOffsetAttr, b.getI64IntegerAttr(offset));
    offset += 16;
  }
  bool quantizes = false;
  kernel.walk([&](QuantizeBlockOp op) {
    quantizes = true;
    op->setAttr(kSmemOffsetAttr, b.getI64IntegerAttr(alignTo(offset, 16)));
  });
  if (quantizes)
    offset = alignTo(offset, 16) + kQuantizeScratchBytes;
  plan.smemBytes = alignTo(offset, 128);
  if (plan.smemBytes > smemLimit)
    return kernel.emitOpError()
           << "needs " << plan.smemBytes
           << " bytes of shared memory, more than the target's " << smemLimit;

  // Parameters read through TMA become tensor maps: box = the destination
  // tile's rows x one 128-byte swizzle atom of columns.
  DenseSet<unsigned> pointerUse;
  for (BlockArgument arg : body.getArguments()) {
    if (!isa<GlobalType>(arg.getType()))
      continue;
    for (OpOperand &use : arg.getUses()) {
      auto tma = dyn_cast<TmaLoadOp>(use.getOwner());
      if (!tma || use.getOperandNumber() != 0) {
        pointerUse.insert(arg.getArgNumber());
        continue;
      }
      TensorMapView view = TensorMapView::of(tma.getDest().getType());
      auto [it, inserted] = plan.tensorMaps.try_emplace(arg.getArgNumber(), view);
      if (!inserted && (it->second.boxRows != view.boxRows ||
                        it->second.boxCols != view.boxCols ||
                        it->second.swizzleBytes != view.swizzleBytes))
        return tma.emitOpError() << "parameter " << arg.getArgNumber()
                                 << " is read through TMA with two box shapes";
    }
  }
  for (auto &[index, view] : plan.tensorMaps)
    if (pointerUse.contains(index))
      return kernel.emitOpError()
             << "parameter " << index
             << " is read both through TMA and through pointers";
  return plan;
}
