//===- ReuseScaleLayouts.cpp - flamia-reuse-scale-layouts -----------------===//
//
// One quantized copy per tensor across GEMM orientations.
//
// A 32x32 token-block copy serves a token-contracted GEMM (one scale per 32
// tokens along the contraction) and, thanks to the safe block, a
// head-dim-contracted one too: off the diagonal every key block lies wholly
// in the query's past. So where the recipe allows it, uses of a per-token
// copy are redirected to the token-block copy of the same tensor; then
// identical quantizations (per GEMM use, forward and backward) are merged.
//
//===----------------------------------------------------------------------===//
#include "flamia/Analysis/BlockLeaks.h"
#include "flamia/Transforms/Passes.h"
#include "flamia/Transforms/RecipeLayouts.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/MapVector.h"

#include <iomanip>
#include <sstream>

namespace flamia {
#define GEN_PASS_DEF_FLAMIAREUSESCALELAYOUTS
#include "flamia/Transforms/Passes.h.inc"
} // namespace flamia

using namespace mlir;
using namespace flamia;

namespace {

/// Quantizations of the same tensor to the same format that differ at most in
/// their layout.
struct CopyGroupKey {
  Value input;
  Type elementType, scaleType;
  GlobalScale globalScale;
  bool operator<(const CopyGroupKey &o) const {
    return std::make_tuple(input.getAsOpaquePointer(),
                           elementType.getAsOpaquePointer(),
                           scaleType.getAsOpaquePointer(), globalScale) <
           std::make_tuple(o.input.getAsOpaquePointer(),
                           o.elementType.getAsOpaquePointer(),
                           o.scaleType.getAsOpaquePointer(), o.globalScale);
  }
};

/// Can `use` (an operand of attention op `user`) read a copy with this
/// token-block layout instead, without leaving the recipe's guarantees?
bool admitsTokenBlocks(Operation *user, const GemmUse &use,
                       ScaleLayoutAttr layout, Value copyCuSeqlens) {
  RecipeAttr recipe = getRecipe(user);
  if (!recipe || recipe.getStrict())
    return false; // strict: head-dim-contracted GEMMs stay per token (L3)
  if (!layout.isDocumentLocal() || copyCuSeqlens != getCuSeqlens(user))
    return false; // blocks must follow this op's documents
  if (use.contraction == Contraction::Tokens)
    return true;
  if (use.gemm == Gemm::QK && use.tensor == AttnTensor::Q)
    return false; // a query's later block-mates would reach its output
  if (use.gemm == Gemm::QK && isCausal(user))
    return !findBlockLeak(layout.getTokenBlock(), recipe.getSafeBlock(),
                          LeakDirection::Future, IndexedBy::Partner);
  return true;
}

struct ReuseScaleLayoutsPass
    : public flamia::impl::FlamiaReuseScaleLayoutsBase<ReuseScaleLayoutsPass> {
  int layoutRedirects = 0;

  /// Redirects uses of non-token-block copies to a token-block copy of the
  /// same tensor where the recipe allows it.
  void unifyLayouts(ArrayRef<QuantizeOp> group) {
    QuantizeOp tokenBlockCopy;
    for (QuantizeOp op : group) {
      ScaleLayoutAttr layout = op.getResult().getType().getLayout();
      if (layout.isTokenBlock() && layout.isDocumentLocal() &&
          (!tokenBlockCopy ||
           layout.getTokenBlock() < tokenBlockCopy.getResult()
                                        .getType()
                                        .getLayout()
                                        .getTokenBlock()))
        tokenBlockCopy = op;
    }
    if (!tokenBlockCopy)
      return;
    ScaleLayoutAttr layout = tokenBlockCopy.getResult().getType().getLayout();
    Operation *earliest = group.front();
    for (QuantizeOp op : group) {
      if (op.getResult().getType() == tokenBlockCopy.getResult().getType())
        continue; // a duplicate: merged below
      for (OpOperand &operand : llvm::make_early_inc_range(op->getUses())) {
        Operation *user = operand.getOwner();
        for (const GemmUse &use : getGemmUses(user)) {
          if (use.operand != &operand ||
              !admitsTokenBlocks(user, use, layout,
                                 tokenBlockCopy.getCuSeqlens()))
            continue;
          // The shared copy must dominate every use: hoist it to the
          // earliest quantization of this tensor (its operands dominate that
          // point when cu_seqlens does).
          if (!tokenBlockCopy->isBeforeInBlock(earliest) &&
              tokenBlockCopy != earliest) {
            Value cu = tokenBlockCopy.getCuSeqlens();
            Operation *cuDef = cu ? cu.getDefiningOp() : nullptr;
            if (cuDef && cuDef->getBlock() == earliest->getBlock() &&
                !cuDef->isBeforeInBlock(earliest))
              continue;
            tokenBlockCopy->moveBefore(earliest);
            earliest = tokenBlockCopy;
          }
          operand.set(tokenBlockCopy.getResult());
          ++layoutRedirects;
        }
      }
    }
  }

  /// Shares the quantizations of one block. Returns (before, after, bytes
  /// saved per token and head).
  std::tuple<int, int, double> shareInBlock(ArrayRef<QuantizeOp> ops) {
    std::map<CopyGroupKey, SmallVector<QuantizeOp>> groups;
    for (QuantizeOp op : ops) {
      QTensorType t = op.getResult().getType();
      groups[{op.getInput(), t.getElementType(), t.getScaleType(),
              op.getGlobalScale()}]
          .push_back(op);
    }
    for (auto &[key, group] : groups)
      unifyLayouts(group);

    // Merge identical quantizations: keep the first in block order, which
    // dominates the uses of the later ones.
    double bytesSaved = 0;
    SmallVector<QuantizeOp> kept;
    for (QuantizeOp op : ops) {
      auto same = llvm::find_if(kept, [&](QuantizeOp k) {
        return k.getInput() == op.getInput() &&
               k.getCuSeqlens() == op.getCuSeqlens() &&
               k.getResult().getType() == op.getResult().getType() &&
               k.getGlobalScale() == op.getGlobalScale();
      });
      if (op->use_empty() || same != kept.end()) {
        if (same != kept.end())
          op.getResult().replaceAllUsesWith(same->getResult());
        bytesSaved += getBytesPerTokenAndHead(op.getResult().getType());
        op->erase();
        continue;
      }
      kept.push_back(op);
    }
    return {static_cast<int>(ops.size()), static_cast<int>(kept.size()),
            bytesSaved};
  }

  void runOnOperation() override {
    // Quantize ops per block, in block order, and the blocks per function
    // (or the pass root when it is not inside a function).
    llvm::MapVector<Operation *, llvm::MapVector<Block *, SmallVector<QuantizeOp>>>
        perFunction;
    getOperation()->walk([&](QuantizeOp op) {
      Operation *func = op->getParentOfType<FunctionOpInterface>();
      perFunction[func ? func : getOperation()][op->getBlock()].push_back(op);
    });
    for (auto &[func, blocks] : perFunction) {
      layoutRedirects = 0;
      int before = 0, after = 0;
      double bytesSaved = 0;
      for (auto &[block, ops] : blocks) {
        auto [b, a, bytes] = shareInBlock(ops);
        before += b;
        after += a;
        bytesSaved += bytes;
      }
      std::ostringstream bytes;
      bytes << std::setprecision(6) << bytesSaved;
      emitRemark(func->getLoc())
          << "flamia-reuse-scale-layouts: " << before << " quantizations -> "
          << after << " (" << layoutRedirects
          << " uses moved to a shared token-block copy; saved "
          << (before - after) << " quantizations, " << bytes.str()
          << " bytes per token and head)";
    }
  }
};

} // namespace
