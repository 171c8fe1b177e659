//===- CausalSafeScales.cpp - flamia-causal-safe-scales -------------------===//
//
// Repairs scale layouts that would leak (docs/passes.md):
//  - token blocks aligned to the packed tensor become document-local when
//    the op has cu_seqlens (a packed block can straddle two documents);
//  - per-tensor scales and NVFP4's data-dependent global scale become the
//    recipe's block layout (one amax over every token leaks everywhere);
//  - Q in S = Q K^T gets per-token scales (a token-block Q lets a query's
//    later block-mates change its output in every key tile), and so does
//    every head-dim-contracted operand in strict mode (L3);
//  - a recipe without a safe block, or with one that does not cover whole
//    token blocks, gets one, plus the bf16 originals as safe(...) operands.
//
//===----------------------------------------------------------------------===//
#include "flamia/Transforms/Passes.h"
#include "flamia/Transforms/RecipeLayouts.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

#include <numeric>

namespace flamia {
#define GEN_PASS_DEF_FLAMIACAUSALSAFESCALES
#include "flamia/Transforms/Passes.h.inc"
} // namespace flamia

using namespace mlir;
using namespace flamia;

namespace {

std::string describeValue(Value v) {
  if (Operation *def = v.getDefiningOp())
    return ("'" + def->getName().getStringRef() + "'").str();
  return "a block argument";
}

struct CausalSafeScalesPass
    : public flamia::impl::FlamiaCausalSafeScalesBase<CausalSafeScalesPass> {
  using Base::Base;

  /// The token block this use must get instead of its current layout, or -1
  /// if the current one is safe.
  int64_t repairedTokenBlock(Operation *op, const GemmUse &use,
                             QTensorType type, QuantizeOp producer,
                             const numerics::RecipeConfig &contractRecipe) {
    bool strict = getRecipe(op).getStrict();
    ScaleLayoutAttr layout = type.getLayout();
    int64_t contract = getContractTokenBlock(contractRecipe, use.gemm, use.tensor);
    if (layout.isPerTensor() ||
        (producer && producer.getGlobalScale() == GlobalScale::amax))
      return contract;
    if (!layout.isTokenBlock())
      return -1;
    if (use.gemm == Gemm::QK && use.tensor == AttnTensor::Q)
      return 1;
    if (strict && use.contraction == Contraction::HeadDim)
      return 1;
    if (getCuSeqlens(op) && !layout.isDocumentLocal())
      return layout.getTokenBlock();
    return -1;
  }

  LogicalResult repairLayouts(Operation *op) {
    // What the op's recipe prescribes (the recipe registry's preset).
    auto contractRecipe = getContractRecipe(op, getRecipe(op));
    if (failed(contractRecipe))
      return failure();
    for (const GemmUse &use : getGemmUses(op)) {
      Value value = use.operand->get();
      auto type = dyn_cast<QTensorType>(value.getType());
      if (!type)
        continue;
      auto producer = value.getDefiningOp<QuantizeOp>();
      int64_t tokenBlock =
          repairedTokenBlock(op, use, type, producer, *contractRecipe);
      if (tokenBlock < 0)
        continue;
      if (!producer)
        return op->emitOpError()
               << "cannot make " << describeUse(use)
               << " causally safe: its quantization is not a flamia.quantize "
                  "op (it is "
               << describeValue(value) << ")";
      ScaleLayoutAttr layout = type.getLayout();
      // A per-tensor scale becomes blocks of its format's width: 16 channels
      // for NVFP4 (E4M3 scales), 32 for MX (E8M0).
      int64_t channelBlock =
          !layout.isPerTensor()                        ? layout.getChannelBlock()
          : isa<Float8E4M3FNType>(type.getScaleType()) ? 16
                                                       : 32;
      auto newLayout = ScaleLayoutAttr::get(op->getContext(), tokenBlock,
                                            channelBlock, ScaleAnchor::document);
      auto newType =
          QTensorType::get(op->getContext(), type.getShape(),
                           type.getElementType(), type.getScaleType(), newLayout);
      OpBuilder b(op);
      use.operand->set(createQuantize(b, producer.getLoc(), producer.getInput(),
                                      getCuSeqlens(op), newType));
      if (producer->use_empty())
        producer->erase();
    }
    return success();
  }

  /// The bf16 original of `tensor`: the input of a quantization feeding one
  /// of the op's GEMMs (truncated to bf16 if it is f32), or an unquantized
  /// bf16 operand.
  Value findOriginal(Operation *op, AttnTensor tensor) {
    for (const GemmUse &use : getGemmUses(op)) {
      if (use.tensor != tensor)
        continue;
      Value value = use.operand->get();
      if (auto t = dyn_cast<RankedTensorType>(value.getType());
          t && t.getElementType().isBF16())
        return value;
      auto producer = value.getDefiningOp<QuantizeOp>();
      if (!producer)
        continue;
      Value input = producer.getInput();
      auto inputType = cast<RankedTensorType>(input.getType());
      if (inputType.getElementType().isBF16())
        return input;
      OpBuilder b(op);
      return arith::TruncFOp::create(
          b, producer.getLoc(), inputType.clone(b.getBF16Type()), input);
    }
    return {};
  }

  LogicalResult ensureSafeBlock(Operation *op) {
    // Every token block of a quantized operand must lie inside one safe
    // block: the safe block is a multiple of each token block.
    int64_t blocks = 1;
    bool any = false;
    for (const GemmUse &use : getGemmUses(op))
      if (auto type = dyn_cast<QTensorType>(use.operand->get().getType()))
        if (type.getLayout().isTokenBlock()) {
          blocks = std::lcm(blocks, type.getLayout().getTokenBlock());
          any = true;
        }
    RecipeAttr recipe = getRecipe(op);
    if (!any || (recipe.hasSafeBlock() && recipe.getSafeBlock() % blocks == 0))
      return success();
    int64_t unit = std::lcm(blocks, int64_t(32));
    if (safeBlock <= 0 || safeBlock % 32 != 0)
      return op->emitOpError() << "flamia-causal-safe-scales: safe-block must "
                                  "be a positive multiple of 32, got "
                               << static_cast<int64_t>(safeBlock);
    int64_t newSafeBlock = (safeBlock + unit - 1) / unit * unit;
    auto newRecipe = RecipeAttr::get(op->getContext(), recipe.getKind(),
                                     newSafeBlock, recipe.getStrict());

    SmallVector<Value> safe;
    if (!recipe.hasSafeBlock()) {
      SmallVector<AttnTensor> tensors = {AttnTensor::Q, AttnTensor::K,
                                         AttnTensor::V};
      if (isa<AttentionBwdOp>(op))
        tensors.push_back(AttnTensor::GradO);
      for (AttnTensor t : tensors) {
        Value original = findOriginal(op, t);
        if (!original)
          return op->emitOpError()
                 << "cannot add a safe block: the bf16 original of "
                 << getTensorName(t)
                 << " is unknown (none of its quantized copies is produced by "
                    "flamia.quantize)";
        safe.push_back(original);
      }
    }
    if (auto fwd = dyn_cast<AttentionFwdOp>(op)) {
      fwd.setRecipeAttr(newRecipe);
      if (!safe.empty())
        fwd.getSafeMutable().assign(safe);
    } else {
      auto bwd = cast<AttentionBwdOp>(op);
      bwd.setRecipeAttr(newRecipe);
      if (!safe.empty())
        bwd.getSafeMutable().assign(safe);
    }
    return success();
  }

  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<AttentionFwdOp, AttentionBwdOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops)
      if (failed(repairLayouts(op)) || failed(ensureSafeBlock(op)))
        return signalPassFailure();
  }
};

} // namespace
