//===- RecipeLayouts.cpp - The layouts a recipe prescribes ----------------===//
#include "flamia/Transforms/RecipeLayouts.h"

#include "flamia/Numerics/RecipeRegistry.h"

using namespace mlir;
using namespace flamia;

namespace num = ::flamia::numerics;

num::OperandUse flamia::getOperandUse(Gemm gemm, AttnTensor tensor) {
  switch (gemm) {
  case Gemm::QK:
    return tensor == AttnTensor::Q ? num::OperandUse::QInQK
                                   : num::OperandUse::KInQK;
  case Gemm::PV:
    return num::OperandUse::VInPV;
  case Gemm::DOV:
    return tensor == AttnTensor::GradO ? num::OperandUse::DOInDOV
                                       : num::OperandUse::VInDOV;
  case Gemm::DSK:
    return num::OperandUse::KInDSK;
  case Gemm::DSQ:
    return num::OperandUse::QInDSQ;
  case Gemm::PDO:
    return num::OperandUse::DOInPDO;
  }
  return num::OperandUse::QInQK;
}

FailureOr<const num::RecipeKind *>
flamia::getRecipeKind(Operation *op, RecipeAttr recipe) {
  const num::RecipeKind *kind = nullptr;
  if (num::Status s = num::lookupRecipeKindByDialectName(
          stringifyRecipeKind(recipe.getKind()).str(), kind);
      !s)
    return op->emitOpError() << s.message;
  return kind;
}

FailureOr<num::RecipeConfig> flamia::getContractRecipe(Operation *op,
                                                       RecipeAttr recipe) {
  FailureOr<const num::RecipeKind *> kind = getRecipeKind(op, recipe);
  if (failed(kind))
    return failure();
  num::RecipeConfig contract;
  if (num::Status s = num::contractRecipe(**kind, recipe.getStrict(),
                                          recipe.getSafeBlock(), contract);
      !s)
    return op->emitOpError() << s.message;
  return contract;
}

int64_t flamia::getContractTokenBlock(const num::RecipeConfig &contract,
                                      Gemm gemm, AttnTensor tensor) {
  return contract.operand(getOperandUse(gemm, tensor)).layout.tokenBlock;
}

QTensorType flamia::getMxfp8Type(RankedTensorType tensor,
                                 int64_t tokenBlock) {
  MLIRContext *ctx = tensor.getContext();
  auto layout = ScaleLayoutAttr::get(ctx, tokenBlock, 32, ScaleAnchor::document);
  return QTensorType::get(ctx, tensor.getShape(), Float8E4M3FNType::get(ctx),
                          Float8E8M0FNUType::get(ctx), layout);
}

Value flamia::createQuantize(OpBuilder &builder, Location loc,
                             Value input, Value cuSeqlens,
                             QTensorType type) {
  Value cu = type.getLayout().isTokenBlock() ? cuSeqlens : Value();
  return QuantizeOp::create(builder, loc, type, input, cu);
}

PrecisionAttr flamia::getContractPPrecision(MLIRContext *ctx) {
  return PrecisionAttr::get(ctx, Float8E4M3FNType::get(ctx), 8, std::nullopt);
}

PrecisionAttr flamia::getContractDsPrecision(MLIRContext *ctx) {
  return PrecisionAttr::get(ctx, Float8E4M3FNType::get(ctx), std::nullopt, 32);
}

double flamia::getBytesPerTokenAndHead(QTensorType type) {
  double payloadBits = type.getElementType().getIntOrFloatBitWidth();
  double payload = type.getHeadDim() * payloadBits / 8.0;
  ScaleLayoutAttr layout = type.getLayout();
  if (layout.isPerTensor())
    return payload;
  double scales = double(type.getHeadDim() / layout.getChannelBlock()) /
                  double(layout.getTokenBlock());
  return payload + scales;
}
