//===- GemmRoles.cpp - Which GEMM each attention operand feeds --*- C++ -*-===//
#include "flamia/Dialect/GemmRoles.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace flamia;

StringRef flamia::getGemmName(Gemm gemm) {
  switch (gemm) {
  case Gemm::QK:
    return "S = Q K^T";
  case Gemm::PV:
    return "O = P V";
  case Gemm::DOV:
    return "dP = dO V^T";
  case Gemm::DSK:
    return "dQ = dS K";
  case Gemm::DSQ:
    return "dK = dS^T Q";
  case Gemm::PDO:
    return "dV = P^T dO";
  }
  return "";
}

StringRef flamia::getTensorName(AttnTensor tensor) {
  switch (tensor) {
  case AttnTensor::Q:
    return "q";
  case AttnTensor::K:
    return "k";
  case AttnTensor::V:
    return "v";
  case AttnTensor::GradO:
    return "grad_o";
  }
  return "";
}

std::string flamia::describeUse(const GemmUse &use) {
  return (getTensorName(use.tensor) + " in " + getGemmName(use.gemm)).str();
}

SmallVector<GemmUse> flamia::getGemmUses(Operation *op) {
  SmallVector<GemmUse> uses;
  if (auto fwd = dyn_cast<AttentionFwdOp>(op)) {
    uses.push_back({Gemm::QK, AttnTensor::Q, Contraction::HeadDim,
                    &fwd.getQMutable()});
    uses.push_back({Gemm::QK, AttnTensor::K, Contraction::HeadDim,
                    &fwd.getKMutable()});
    uses.push_back({Gemm::PV, AttnTensor::V, Contraction::Tokens,
                    &fwd.getVMutable()});
  } else if (auto bwd = dyn_cast<AttentionBwdOp>(op)) {
    uses.push_back({Gemm::QK, AttnTensor::Q, Contraction::HeadDim,
                    &bwd.getQMutable()});
    uses.push_back({Gemm::QK, AttnTensor::K, Contraction::HeadDim,
                    &bwd.getKMutable()});
    uses.push_back({Gemm::DOV, AttnTensor::GradO, Contraction::HeadDim,
                    &bwd.getDovGradOMutable()});
    uses.push_back({Gemm::DOV, AttnTensor::V, Contraction::HeadDim,
                    &bwd.getDovVMutable()});
    uses.push_back({Gemm::DSK, AttnTensor::K, Contraction::Tokens,
                    &bwd.getDskKMutable()});
    uses.push_back({Gemm::DSQ, AttnTensor::Q, Contraction::Tokens,
                    &bwd.getDsqQMutable()});
    uses.push_back({Gemm::PDO, AttnTensor::GradO, Contraction::Tokens,
                    &bwd.getPdoGradOMutable()});
  }
  return uses;
}

SmallVector<std::pair<AttnTensor, OpOperand *>>
flamia::getSafeOperands(Operation *op) {
  SmallVector<std::pair<AttnTensor, OpOperand *>> result;
  std::optional<MutableOperandRange> safe;
  if (auto fwd = dyn_cast<AttentionFwdOp>(op))
    safe = fwd.getSafeMutable();
  else if (auto bwd = dyn_cast<AttentionBwdOp>(op))
    safe = bwd.getSafeMutable();
  if (!safe)
    return result;
  const AttnTensor order[] = {AttnTensor::Q, AttnTensor::K, AttnTensor::V,
                              AttnTensor::GradO};
  for (unsigned i = 0, e = std::min<unsigned>(safe->size(), 4); i < e; ++i)
    result.push_back({order[i], &(*safe)[i]});
  return result;
}

RecipeAttr flamia::getRecipe(Operation *op) {
  return op->getAttrOfType<RecipeAttr>("recipe");
}

bool flamia::isCausal(Operation *op) { return op->hasAttr("causal"); }

Value flamia::getCuSeqlens(Operation *op) {
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case<AttentionOp, AttentionGradOp, AttentionFwdOp, AttentionBwdOp,
            QuantizeOp, DequantizeOp>([](auto o) { return o.getCuSeqlens(); })
      .Default([](Operation *) { return Value(); });
}
