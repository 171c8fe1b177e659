//===- FwdBwdConsistency.cpp - flamia-fwd-bwd-consistency -----------------===//
//
// The backward recomputes S = Q K^T and P = exp2(S log2 e - LSE). P matches
// the forward's bit for bit only if the recompute reads exactly the
// forward's quantized Q and K (and safe-block originals) and the forward's
// LSE. This pass links each attention_bwd to its attention_fwd and rewrites
// the backward to read those values.
//
//===----------------------------------------------------------------------===//
#include "flamia/Dialect/GemmRoles.h"
#include "flamia/Transforms/Passes.h"

namespace flamia {
#define GEN_PASS_DEF_FLAMIAFWDBWDCONSISTENCY
#include "flamia/Transforms/Passes.h.inc"
} // namespace flamia

using namespace mlir;
using namespace flamia;

namespace {

/// The tensor a GEMM operand is a copy of: the input of its quantization, or
/// the operand itself.
Value underlyingTensor(Value v) {
  if (auto q = v.getDefiningOp<QuantizeOp>())
    return q.getInput();
  return v;
}

struct FwdBwdConsistencyPass
    : public flamia::impl::FlamiaFwdBwdConsistencyBase<FwdBwdConsistencyPass> {

  /// The forward whose O and LSE the backward reads, else the forward whose
  /// S = Q K^T operands are copies of the same tensors. O and LSE from two
  /// different forwards are an error: either choice would silently replace
  /// one of them with the other forward's.
  static FailureOr<AttentionFwdOp> findForward(AttentionBwdOp bwd) {
    auto oFwd = bwd.getO().getDefiningOp<AttentionFwdOp>();
    auto lseFwd = bwd.getLse().getDefiningOp<AttentionFwdOp>();
    if (oFwd && lseFwd && oFwd != lseFwd) {
      InFlightDiagnostic diag =
          bwd.emitOpError() << "reads O and LSE from two different forwards; "
                               "the backward must use the O and LSE of the "
                               "forward it differentiates";
      diag.attachNote(oFwd.getLoc()) << "O comes from this forward";
      diag.attachNote(lseFwd.getLoc()) << "LSE comes from this forward";
      return failure();
    }
    if (oFwd || lseFwd)
      return oFwd ? oFwd : lseFwd;
    AttentionFwdOp match;
    Operation *scope = bwd->getParentOp();
    scope->walk([&](AttentionFwdOp fwd) {
      if (!match &&
          underlyingTensor(fwd.getQ()) == underlyingTensor(bwd.getQ()) &&
          underlyingTensor(fwd.getK()) == underlyingTensor(bwd.getK()) &&
          fwd->getBlock() == bwd->getBlock() && fwd->isBeforeInBlock(bwd))
        match = fwd;
    });
    return match;
  }

  LogicalResult makeConsistent(AttentionBwdOp bwd, AttentionFwdOp fwd) {
    auto mismatch = [&](StringRef what, Attribute f, Attribute b) {
      InFlightDiagnostic diag = bwd.emitOpError()
                                << "the backward's " << what << " (" << b
                                << ") disagrees with its forward's (" << f
                                << ")";
      diag.attachNote(fwd.getLoc()) << "the forward is here";
      return diag;
    };
    if (fwd.getRecipe() != bwd.getRecipe())
      return mismatch("recipe", fwd.getRecipe(), bwd.getRecipe());
    if (fwd.getCausal() != bwd.getCausal())
      return mismatch("causal flag", BoolAttr::get(fwd.getContext(), fwd.getCausal()),
                      BoolAttr::get(bwd.getContext(), bwd.getCausal()));
    if (fwd.getSoftmaxScaleAttr() != bwd.getSoftmaxScaleAttr())
      return mismatch("softmax_scale", fwd.getSoftmaxScaleAttr(),
                      bwd.getSoftmaxScaleAttr());
    if (fwd.getCuSeqlens() != bwd.getCuSeqlens()) {
      InFlightDiagnostic diag = bwd.emitOpError()
                                << "the backward reads other cu_seqlens than "
                                   "its forward";
      diag.attachNote(fwd.getLoc()) << "the forward is here";
      return diag;
    }

    // S = Q K^T: exactly the forward's copies.
    for (auto [bwdOperand, fwdValue, name] :
         {std::make_tuple(&bwd.getQMutable(), fwd.getQ(), "q"),
          std::make_tuple(&bwd.getKMutable(), fwd.getK(), "k")}) {
      Value current = bwdOperand->get();
      if (current == fwdValue)
        continue;
      if (underlyingTensor(current) != underlyingTensor(fwdValue)) {
        InFlightDiagnostic diag =
            bwd.emitOpError()
            << "the backward recomputes S = Q K^T from a different " << name
            << " than its forward, so P would not match the forward's";
        diag.attachNote(fwd.getLoc()) << "the forward is here";
        return diag;
      }
      bwdOperand->set(fwdValue); // the backward quantized on its own
    }
    // dP = dO V^T reads the forward's V copy when the backward quantized V
    // the same way on its own.
    if (bwd.getDovV() != fwd.getV() &&
        underlyingTensor(bwd.getDovV()) == underlyingTensor(fwd.getV()) &&
        bwd.getDovV().getType() == fwd.getV().getType())
      bwd.getDovVMutable().set(fwd.getV());
    // The safe-block path recomputes S from the forward's bf16 originals.
    if (!fwd.getSafe().empty() && !bwd.getSafe().empty())
      for (unsigned i = 0; i < 3; ++i)
        bwd.getSafeMutable()[i].set(fwd.getSafe()[i]);
    // P = exp2(S log2 e - LSE) with the forward's LSE; D = rowsum(dO * O)
    // with its O.
    if (bwd.getLse() != fwd.getLse())
      bwd.getLseMutable().set(fwd.getLse());
    if (bwd.getO() != fwd.getO())
      bwd.getOMutable().set(fwd.getO());
    return success();
  }

  void runOnOperation() override {
    SmallVector<AttentionBwdOp> bwds;
    getOperation()->walk([&](AttentionBwdOp bwd) { bwds.push_back(bwd); });
    for (AttentionBwdOp bwd : bwds) {
      FailureOr<AttentionFwdOp> fwd = findForward(bwd);
      if (failed(fwd) || (*fwd && failed(makeConsistent(bwd, *fwd))))
        return signalPassFailure();
    }
  }
};

} // namespace
