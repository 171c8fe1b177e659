//===- RecipeLayouts.cpp - The layouts a recipe prescribes ----------------===//
#include "flamia/Transforms/RecipeLayouts.h"

using namespace mlir;
using namespace mlir::flamia;

int64_t mlir::flamia::getContractTokenBlock(Gemm gemm, AttnTensor tensor,
                                            bool strict) {
  switch (gemm) {
  case Gemm::QK:
    // A token-block Q would let a query's later block-mates change its
    // output in every key tile: never. K token blocks are safe with a safe
    // block, except for L3 (dK_j would see K before j).
    return tensor == AttnTensor::Q || strict ? 1 : 32;
  case Gemm::DOV:
    return strict ? 1 : 32;
  case Gemm::PV:
  case Gemm::DSK:
  case Gemm::DSQ:
  case Gemm::PDO:
    return 32; // contracted over tokens: one scale per 32 tokens
  }
  return 32;
}

QTensorType mlir::flamia::getMxfp8Type(RankedTensorType tensor,
                                       int64_t tokenBlock) {
  MLIRContext *ctx = tensor.getContext();
  auto layout = ScaleLayoutAttr::get(ctx, tokenBlock, 32, ScaleAnchor::document);
  return QTensorType::get(ctx, tensor.getShape(), Float8E4M3FNType::get(ctx),
                          Float8E8M0FNUType::get(ctx), layout);
}

Value mlir::flamia::createQuantize(OpBuilder &builder, Location loc,
                                   Value input, Value cuSeqlens,
                                   QTensorType type) {
  Value cu = type.getLayout().isTokenBlock() ? cuSeqlens : Value();
  return QuantizeOp::create(builder, loc, type, input, cu);
}

PrecisionAttr mlir::flamia::getContractPPrecision(MLIRContext *ctx) {
  return PrecisionAttr::get(ctx, Float8E4M3FNType::get(ctx), 8, std::nullopt);
}

PrecisionAttr mlir::flamia::getContractDsPrecision(MLIRContext *ctx) {
  return PrecisionAttr::get(ctx, Float8E4M3FNType::get(ctx), std::nullopt, 32);
}

double mlir::flamia::getBytesPerTokenAndHead(QTensorType type) {
  double payloadBits = type.getElementType().getIntOrFloatBitWidth();
  double payload = type.getHeadDim() * payloadBits / 8.0;
  ScaleLayoutAttr layout = type.getLayout();
  if (layout.isPerTensor())
    return payload;
  double scales = double(type.getHeadDim() / layout.getChannelBlock()) /
                  double(layout.getTokenBlock());
  return payload + scales;
}
