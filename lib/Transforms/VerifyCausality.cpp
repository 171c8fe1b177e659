//===- VerifyCausality.cpp - flamia-verify-causality ----------------------===//
//
// Proves, for every attention op, that no scale block carries information
// where the contract forbids it:
//   L1  O_i, LSE_i independent of positions > i          (causal forward)
//   L2  no output of a document depends on another one   (with cu_seqlens)
//   L3  dQ_i only on positions <= i, dK_j/dV_j only on positions >= j
//       (strict recipes, causal backward)
// or emits an error naming the operand, the GEMM, the block shape and a
// concrete pair of positions. The per-operand reasoning is in BlockLeaks.h.
//
//===----------------------------------------------------------------------===//
#include "flamia/Analysis/BlockLeaks.h"
#include "flamia/Dialect/GemmRoles.h"
#include "flamia/Transforms/Passes.h"

#include "llvm/Support/raw_ostream.h"

namespace flamia {
#define GEN_PASS_DEF_FLAMIAVERIFYCAUSALITY
#include "flamia/Transforms/Passes.h.inc"
} // namespace flamia

using namespace mlir;
using namespace flamia;

namespace {

std::string blockShape(ScaleLayoutAttr layout) {
  if (layout.isPerTensor())
    return "a per-tensor scale";
  std::string s = std::to_string(layout.getTokenBlock()) + "x" +
                  std::to_string(layout.getChannelBlock()) + " token blocks";
  if (!layout.isDocumentLocal())
    s += " aligned to the packed tensor";
  return s;
}

std::string safeBlockText(RecipeAttr recipe) {
  return recipe.hasSafeBlock()
             ? "safe_block = " + std::to_string(recipe.getSafeBlock())
             : std::string("no safe block");
}

/// One output property to check against one operand use.
struct Obligation {
  const char *property;   // "L1", "L3"
  const char *outputName; // "O and LSE", "dQ", "dK and dV"
  LeakDirection direction;
  IndexedBy indexedBy;
};

struct VerifyCausalityPass
    : public flamia::impl::FlamiaVerifyCausalityBase<VerifyCausalityPass> {
  using Base::Base;

  /// The obligations a GEMM use carries: which outputs read it, indexed how.
  static SmallVector<Obligation> obligations(Operation *op, const GemmUse &use,
                                             bool strict) {
    SmallVector<Obligation> result;
    bool fwd = isa<AttentionFwdOp>(op);
    if (fwd) {
      // O_i reads Q_i (its own row) and K_j, V_j for keys j <= i.
      bool own = use.gemm == Gemm::QK && use.tensor == AttnTensor::Q;
      result.push_back({"L1", "O and LSE", LeakDirection::Future,
                        own ? IndexedBy::Output : IndexedBy::Partner});
      return result;
    }
    if (!strict)
      return result;
    // dQ_i = sum_j dS_ij K_j: reads the query rows of Q (qk) and dO (dov) and
    // the key rows of K (qk, dsk) and V (dov).
    bool queryRow = use.tensor == AttnTensor::Q || use.tensor == AttnTensor::GradO;
    if (use.gemm == Gemm::QK || use.gemm == Gemm::DOV || use.gemm == Gemm::DSK)
      result.push_back({"L3", "dQ", LeakDirection::Future,
                        queryRow ? IndexedBy::Output : IndexedBy::Partner});
    // dK_j, dV_j read the key rows of K, V (their own) and the query rows of
    // Q, dO for queries i >= j (qk, dov, dsq, pdo).
    if (use.gemm != Gemm::DSK)
      result.push_back({"L3", "dK and dV", LeakDirection::Past,
                        queryRow ? IndexedBy::Partner : IndexedBy::Output});
    return result;
  }

  LogicalResult verifyOp(Operation *op) {
    RecipeAttr recipe = getRecipe(op);
    bool causal = isCausal(op);
    bool strict = recipe.getStrict();
    Value cu = getCuSeqlens(op);
    const char *outputs = isa<AttentionFwdOp>(op) ? "O" : "dQ, dK, dV";
    for (const GemmUse &use : getGemmUses(op)) {
      auto type = dyn_cast<QTensorType>(use.operand->get().getType());
      if (!type)
        continue; // bf16: no scales
      ScaleLayoutAttr layout = type.getLayout();
      std::string operand = describeUse(use);
      auto producer = use.operand->get().getDefiningOp<QuantizeOp>();

      // A data-dependent global scale couples every position of every
      // document.
      if (layout.isPerTensor() ||
          (producer && producer.getGlobalScale() == GlobalScale::amax)) {
        std::string what = layout.isPerTensor()
                               ? "a per-tensor scale (one amax over all T "
                                 "tokens of a head)"
                               : "a data-dependent global scale "
                                 "(global_scale = amax over the tensor)";
        return op->emitOpError()
               << "causality violation (" << (cu ? "L2" : "L1") << "): "
               << operand << " is quantized with " << what << ": " << outputs
               << " at position i = 0 depends on " << getTensorName(use.tensor)
               << " at the last position j = T-1"
               << (cu ? ", even across documents" : "");
      }
      if (!layout.isTokenBlock())
        continue; // per token: no positions mixed

      int64_t tb = layout.getTokenBlock();
      if (cu && !layout.isDocumentLocal())
        return op->emitOpError()
               << "causality violation (L2): " << operand << " has "
               << blockShape(layout) << ", not to documents: with a document "
               << "boundary at position " << tb + 1 << " (cu_seqlens = [0, "
               << tb + 1 << ", ...]), positions i = " << tb
               << " (document 0) and j = " << tb + 1
               << " (document 1) share the scale block [" << tb << ", "
               << 2 * tb << "), so " << outputs << " of document 0 depends on "
               << getTensorName(use.tensor) << " of document 1";
      if (!causal)
        continue;

      for (const Obligation &ob : obligations(op, use, strict)) {
        std::optional<LeakWitness> w = findBlockLeak(
            tb, recipe.getSafeBlock(), ob.direction, ob.indexedBy);
        if (!w)
          continue;
        bool future = ob.direction == LeakDirection::Future;
        std::string text;
        llvm::raw_string_ostream msg(text);
        msg << "causality violation (" << ob.property << "): " << operand
            << " has " << blockShape(layout) << " and "
            << safeBlockText(recipe) << ": ";
        const char *outIdx = future ? "i" : "j";
        const char *partIdx = future ? "j" : "i";
        const char *partName = future ? "key" : "query";
        msg << (future ? "query " : "key ") << outIdx << " = " << w->output
            << " reads " << getTensorName(use.tensor) << " at position "
            << w->reader << " on the quantized path (pair with " << partName
            << " " << partIdx << " = " << w->partner
            << "), and that scale block [" << w->blockBegin << ", "
            << w->blockEnd << ") also covers position " << w->source
            << (future ? " > " : " < ") << w->output << ", so " << ob.outputName
            << " at " << w->output << " depends on "
            << getTensorName(use.tensor) << " at position " << w->source;
        return op->emitOpError() << text;
      }
    }
    if (report) {
      std::string proven = causal ? (isa<AttentionFwdOp>(op)
                                         ? "L1 (forward causality)"
                                         : "no forward outputs (L1 n/a)")
                                  : "non-causal (L1 n/a)";
      op->emitRemark() << "causality verified: " << proven << "; "
                       << (cu ? "L2 (document-local blocks)"
                              : "L2 n/a (one document)")
                       << "; "
                       << (strict && causal && isa<AttentionBwdOp>(op)
                               ? "L3 (strict backward causality)"
                               : "L3 not requested");
    }
    return success();
  }

  void runOnOperation() override {
    bool failedAny = false;
    getOperation()->walk([&](Operation *op) {
      if (isa<AttentionFwdOp, AttentionBwdOp>(op))
        failedAny |= failed(verifyOp(op));
    });
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
