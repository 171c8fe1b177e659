//===- RecipeLayouts.h - The layouts a recipe prescribes --------*- C++ -*-===//
//
// The numerics contract (docs/numerics.md) in IR terms: which scale layout
// each GEMM use of each tensor gets under a recipe, read from the recipe
// registry's numerics preset and shared by the passes that create, reuse and
// repair quantizations.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_TRANSFORMS_RECIPELAYOUTS_H
#define FLAMIA_TRANSFORMS_RECIPELAYOUTS_H

#include "flamia/Dialect/GemmRoles.h"
#include "flamia/Numerics/RecipeConfig.h"
#include "flamia/Numerics/RecipeRegistry.h"
#include "flamia/Support/MLIR.h"

namespace flamia {

/// The numerics library's operand use of `tensor` in `gemm`.
numerics::OperandUse getOperandUse(Gemm gemm, AttnTensor tensor);

/// The recipe registry's entry of `recipe`'s kind; fails with an error on
/// `op` when the registry has none.
FailureOr<const numerics::RecipeKind *> getRecipeKind(Operation *op,
                                                      RecipeAttr recipe);

/// What `recipe` (its kind, strict flag and safe block) quantizes how: the
/// kind's numerics preset from the recipe registry
/// (flamia/Numerics/RecipeRegistry.h). Fails with an error on `op` naming
/// the kind when the numerics library does not implement it.
FailureOr<numerics::RecipeConfig>
getContractRecipe(Operation *op, RecipeAttr recipe);

/// The token block (1 = per token, 32 = 32x32 token blocks) `contract`
/// prescribes for `tensor` in `gemm` (for mxfp8: Q per token in S = Q K^T,
/// everything else in 32x32 document-local token blocks, and in strict mode
/// per token for every head-dim-contracted GEMM).
int64_t getContractTokenBlock(const numerics::RecipeConfig &contract,
                              Gemm gemm, AttnTensor tensor);

/// The MXFP8 (E4M3 payload, E8M0 scales, 32 channels) qtensor type of a
/// [T, H, D] tensor with the given token block (document-local).
QTensorType getMxfp8Type(RankedTensorType tensor, int64_t tokenBlock);
/// The NVFP4 per-token qtensor type of a [T, H, D] tensor: f4E2M1FN payload,
/// f8E4M3FN (unsigned) scales over 16 channels, global scale 1.0.
QTensorType getNvfp4PerTokenType(RankedTensorType tensor);
/// Whether the dialect spells `quant` as a qtensor type: MXFP8 (E4M3, E8M0,
/// 32 channels) with a document-local token block, or NVFP4 per token.
bool isContractQTensorLayout(const numerics::OperandQuantization &quant);
/// What isContractQTensorLayout accepts, for messages.
const char *getContractQTensorLayouts();
/// The qtensor type `quant` (isContractQTensorLayout) prescribes for
/// `tensor`.
QTensorType getContractQTensorType(RankedTensorType tensor,
                                   const numerics::OperandQuantization &quant);
/// Creates `flamia.quantize` of `input` to `type` (cu_seqlens only when the
/// layout has token blocks; per-token scales do not depend on documents).
Value createQuantize(OpBuilder &builder, Location loc, Value input,
                     Value cuSeqlens, QTensorType type);

/// P's precision in P V and P^T dO: E4M3 of P * 2^8.
PrecisionAttr getContractPPrecision(MLIRContext *ctx);
/// dS's precision: E4M3 with an E8M0 scale per 32 along the contraction.
PrecisionAttr getContractDsPrecision(MLIRContext *ctx);

/// Bytes written per token and head when quantizing to `type` (payload plus
/// the token's share of its scale block).
double getBytesPerTokenAndHead(QTensorType type);

} // namespace flamia

#endif // FLAMIA_TRANSFORMS_RECIPELAYOUTS_H
