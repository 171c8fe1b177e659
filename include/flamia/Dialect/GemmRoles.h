//===- GemmRoles.h - Which GEMM each attention operand feeds ----*- C++ -*-===//
//
// flamia.attention_fwd and flamia.attention_bwd name every operand by the
// GEMM it feeds. This header enumerates those uses so that passes can reason
// about orientations (head-dim- or token-contracted) uniformly.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_DIALECT_GEMMROLES_H
#define FLAMIA_DIALECT_GEMMROLES_H

#include "flamia/Dialect/FlamiaOps.h"
#include "flamia/Support/MLIR.h"

#include "llvm/ADT/SmallVector.h"

namespace flamia {

/// The six GEMMs of attention (FlashAttention-2 style backward).
enum class Gemm {
  QK,  ///< S = Q K^T          (forward and the backward's recompute)
  PV,  ///< O = P V            (forward)
  DOV, ///< dP = dO V^T        (backward)
  DSK, ///< dQ = dS K          (backward)
  DSQ, ///< dK = dS^T Q        (backward)
  PDO, ///< dV = P^T dO        (backward)
};

/// The packed tensor an operand is a copy of.
enum class AttnTensor { Q, K, V, GradO };

/// Over which axis a GEMM contracts the operand.
enum class Contraction {
  HeadDim, ///< the operand is K-major in a packed [T, H, D] tensor
  Tokens,  ///< the operand is MN-major: one scale per 32 tokens is needed
};

struct GemmUse {
  Gemm gemm;
  AttnTensor tensor;
  Contraction contraction;
  OpOperand *operand;
};

/// "S = Q K^T", ...
StringRef getGemmName(Gemm gemm);
/// "q", "k", "v", "grad_o".
StringRef getTensorName(AttnTensor tensor);
/// "k in S = Q K^T".
std::string describeUse(const GemmUse &use);

/// The GEMM uses of an attention_fwd or attention_bwd op, in operand order
/// (empty for any other op).
SmallVector<GemmUse> getGemmUses(Operation *op);

/// The safe-block operands of an attention_fwd (q, k, v) or attention_bwd
/// (q, k, v, grad_o) op with the tensor each stands for.
SmallVector<std::pair<AttnTensor, OpOperand *>> getSafeOperands(Operation *op);

/// The attention attributes shared by attention_fwd and attention_bwd.
RecipeAttr getRecipe(Operation *attentionOp);
bool isCausal(Operation *attentionOp);
Value getCuSeqlens(Operation *attentionOp);

} // namespace flamia

#endif // FLAMIA_DIALECT_GEMMROLES_H
