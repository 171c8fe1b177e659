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

QTensorType flamia::getNvfp4PerTokenType(RankedTensorType tensor) {
  MLIRContext *ctx = tensor.getContext();
  auto layout = ScaleLayoutAttr::get(ctx, 1, 16, ScaleAnchor::document);
  return QTensorType::get(ctx, tensor.getShape(), Float4E2M1FNType::get(ctx),
                          Float8E4M3FNType::get(ctx), layout);
}

static bool isMxfp8DocumentLocal(const num::OperandQuantization &quant) {
  return quant.quantized && quant.scale == num::ScaleFormat::E8M0 &&
         quant.element == num::ElementFormat::E4M3 &&
         quant.layout.channelBlock == 32 &&
         quant.layout.blocking == num::TokenBlocking::DocumentLocal;
}

static bool isNvfp4PerToken(const num::OperandQuantization &quant) {
  return quant.quantized && quant.scale == num::ScaleFormat::UE4M3 &&
         quant.element == num::ElementFormat::E2M1 &&
         quant.layout == num::ScaleLayout::perToken(16);
}

bool flamia::isContractQTensorLayout(const num::OperandQuantization &quant) {
  return isMxfp8DocumentLocal(quant) || isNvfp4PerToken(quant);
}

const char *flamia::getContractQTensorLayouts() {
  return "E4M3 with E8M0 scales over 32 channels (document-local) or NVFP4 "
         "per token (1x16)";
}

QTensorType
flamia::getContractQTensorType(RankedTensorType tensor,
                               const num::OperandQuantization &quant) {
  assert(isContractQTensorLayout(quant) && "not a qtensor layout");
  return isNvfp4PerToken(quant) ? getNvfp4PerTokenType(tensor)
                                : getMxfp8Type(tensor, quant.layout.tokenBlock);
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
