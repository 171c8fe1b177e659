//===- TargetInfo.cpp - sm_90a and sm_100a ---------------------------------===//
#include "TargetInfo.h"

#include "flamia/Dialect/FlamiaOps.h"

using namespace mlir;
using namespace flamia;

const TargetInfo &TargetInfo::get(Chip chip) {
  // Both chips opt in to 227 KiB of dynamic shared memory per block (CUDA
  // programming guide, "Compute capabilities": 9.0 and 10.0). PTX 8.0 is the
  // first with wgmma and setmaxnreg; 8.8 the one whose tcgen05 forms MLIR
  // 22's NVVM dialect prints.
  static const TargetInfo sm90(Chip::sm_90a, "sm_90a", "+ptx80", 227 * 1024,
                               getSm90AccumulatorLayout(),
                               /*tensorMemory=*/false);
  static const TargetInfo sm100(Chip::sm_100a, "sm_100a", "+ptx88", 227 * 1024,
                                getSm100RowPerThreadLayout(),
                                /*tensorMemory=*/true);
  return chip == Chip::sm_90a ? sm90 : sm100;
}

LogicalResult TargetInfo::checkLowers(Operation *op) const {
  bool tcgen05 = isa<TmemAllocOp, TmemDeallocOp, TmemLoadOp, TmemStoreOp,
                     TmemFillOp, UmmaScalesOp, UmmaOp, UmmaCommitOp,
                     FragMxQuantizeOp>(op);
  bool wgmma = isa<WarpgroupMmaOp, WarpgroupWaitOp>(op);
  if (tcgen05 && !tensorMemory)
    return op->emitOpError() << "is a tensor-memory (tcgen05) op, which "
                             << name << " does not have";
  if (isa<SmemStoreOp>(op) && !tensorMemory)
    return op->emitOpError() << "stores a fragment in sm_100a's row-per-thread "
                                "layout, which the "
                             << name << " lowering does not implement";
  if (wgmma && tensorMemory)
    return op->emitOpError() << "is a wgmma op, which the " << name
                             << " lowering does not implement (its MMAs are "
                                "tcgen05: flamia.umma)";
  return success();
}
