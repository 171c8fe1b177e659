//===- QuantizeAttention.cpp - flamia-quantize-attention ------------------===//
//
// flamia.attention      -> quantize(Q, K, V per the recipe) + attention_fwd
//                          (mxfp8: Q 1x32, K, V 32x32; nvfp4-mixed: Q, K
//                          NVFP4 1x16, V 32x32)
// flamia.attention_grad -> one quantize per GEMM use + attention_bwd
//
// The layouts are exactly the recipe's numerics contract, so the rewritten
// program computes the same function as the original. Nothing is shared
// yet: that is flamia-reuse-scale-layouts' and flamia-fwd-bwd-consistency's
// job.
//
//===----------------------------------------------------------------------===//
#include "flamia/Transforms/Passes.h"
#include "flamia/Transforms/RecipeLayouts.h"

#include "mlir/IR/Builders.h"

namespace flamia {
#define GEN_PASS_DEF_FLAMIAQUANTIZEATTENTION
#include "flamia/Transforms/Passes.h.inc"
} // namespace flamia

using namespace mlir;
using namespace flamia;

namespace {

struct QuantizeAttentionPass
    : public flamia::impl::FlamiaQuantizeAttentionBase<QuantizeAttentionPass> {
  using Base::Base;

  /// Checks the recipe filter, and returns what the recipe quantizes how
  /// (the registry's numerics preset) if this pass can write it.
  FailureOr<numerics::RecipeConfig> contractOf(Operation *op, RecipeAttr recipe,
                                               Value q) {
    StringRef kind = stringifyRecipeKind(recipe.getKind());
    if (!this->recipe.empty() && kind != this->recipe)
      return op->emitOpError() << "uses recipe " << kind
                               << " but flamia-quantize-attention was asked "
                                  "for recipe "
                               << this->recipe;
    FailureOr<numerics::RecipeConfig> contract =
        getContractRecipe(op, recipe);
    if (failed(contract))
      return failure();
    // The blocks must tile the head dim (NVFP4: 16 channels, MX: 32).
    int64_t headDim = cast<RankedTensorType>(q.getType()).getShape().back();
    if (numerics::Status s = contract->validate(headDim); !s)
      return op->emitOpError() << "recipe " << kind << " cannot quantize head "
                               << "dim " << headDim << ": " << s.message;
    for (int u = 0; u < numerics::kNumOperandUses; ++u) {
      const auto &operand = contract->operands[u];
      if (!isContractQTensorLayout(operand))
        return op->emitOpError()
               << "recipe " << kind << " quantizes "
               << numerics::operandUseName(static_cast<numerics::OperandUse>(u))
               << " as " << operand.describe()
               << "; flamia-quantize-attention writes "
               << getContractQTensorLayouts() << ", only";
    }
    return contract;
  }

  /// A quantized copy of `tensor` for `gemm`, with the contract's layout.
  Value quantizeFor(OpBuilder &b, Location loc, Value tensor, Value cu,
                    const numerics::RecipeConfig &contract, Gemm gemm,
                    AttnTensor which) {
    // contractOf checked that every use has a qtensor type.
    QTensorType type =
        getContractQTensorType(cast<RankedTensorType>(tensor.getType()),
                               contract.operand(getOperandUse(gemm, which)));
    return createQuantize(b, loc, tensor, cu, type);
  }

  LogicalResult rewrite(AttentionOp op) {
    RecipeAttr recipe = op.getRecipe();
    auto contract = contractOf(op, recipe, op.getQ());
    if (failed(contract))
      return failure();
    OpBuilder b(op);
    Location loc = op.getLoc();
    Value cu = op.getCuSeqlens();
    Value q = quantizeFor(b, loc, op.getQ(), cu, *contract, Gemm::QK, AttnTensor::Q);
    Value k = quantizeFor(b, loc, op.getK(), cu, *contract, Gemm::QK, AttnTensor::K);
    Value v = quantizeFor(b, loc, op.getV(), cu, *contract, Gemm::PV, AttnTensor::V);
    SmallVector<Value> safe;
    if (recipe.hasSafeBlock())
      safe = {op.getQ(), op.getK(), op.getV()};
    auto fwd = AttentionFwdOp::create(
        b, loc, op.getO().getType(), op.getLse().getType(), q, k, v, safe, cu,
        op.getCausalAttr(), op.getSoftmaxScaleAttr(), recipe,
        getContractPPrecision(op.getContext()));
    op.replaceAllUsesWith(fwd->getResults());
    op.erase();
    return success();
  }

  LogicalResult rewrite(AttentionGradOp op) {
    RecipeAttr recipe = op.getRecipe();
    auto contract = contractOf(op, recipe, op.getQ());
    if (failed(contract))
      return failure();
    OpBuilder b(op);
    Location loc = op.getLoc();
    Value cu = op.getCuSeqlens();
    auto quant = [&](Value t, Gemm gemm, AttnTensor which) {
      return quantizeFor(b, loc, t, cu, *contract, gemm, which);
    };
    // The backward quantizes every GEMM use on its own here.
    Value qkQ = quant(op.getQ(), Gemm::QK, AttnTensor::Q);
    Value qkK = quant(op.getK(), Gemm::QK, AttnTensor::K);
    Value dovDo = quant(op.getGradO(), Gemm::DOV, AttnTensor::GradO);
    Value dovV = quant(op.getV(), Gemm::DOV, AttnTensor::V);
    Value dskK = quant(op.getK(), Gemm::DSK, AttnTensor::K);
    Value dsqQ = quant(op.getQ(), Gemm::DSQ, AttnTensor::Q);
    Value pdoDo = quant(op.getGradO(), Gemm::PDO, AttnTensor::GradO);
    SmallVector<Value> safe;
    if (recipe.hasSafeBlock())
      safe = {op.getQ(), op.getK(), op.getV(), op.getGradO()};
    auto bwd = AttentionBwdOp::create(
        b, loc, op.getGradQ().getType(), op.getGradK().getType(),
        op.getGradV().getType(), qkQ, qkK, dovDo, dovV, dskK, dsqQ, pdoDo,
        safe, op.getO(), op.getLse(), cu, op.getCausalAttr(),
        op.getSoftmaxScaleAttr(), recipe,
        getContractPPrecision(op.getContext()),
        getContractDsPrecision(op.getContext()));
    op.replaceAllUsesWith(bwd->getResults());
    op.erase();
    return success();
  }

  void runOnOperation() override {
    SmallVector<Operation *> worklist;
    getOperation()->walk([&](Operation *op) {
      if (isa<AttentionOp, AttentionGradOp>(op))
        worklist.push_back(op);
    });
    bool failedAny = false;
    for (Operation *op : worklist) {
      LogicalResult result = isa<AttentionOp>(op)
                                 ? rewrite(cast<AttentionOp>(op))
                                 : rewrite(cast<AttentionGradOp>(op));
      failedAny |= failed(result);
    }
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
