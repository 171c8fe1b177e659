//===- RecipeConfig.h - How each attention GEMM operand is quantized -*- C++ -*-===//
//
// A recipe says, for each of the eight operand uses of attention's GEMMs,
// which copy of the tensor it reads (bf16, or quantized with a scale layout
// and element format); how P and dS are quantized; the safe block; strict.
// The presets are the contract's `mxfp8` and the baselines it is measured
// against (docs/numerics.md, "Recipes").
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_NUMERICS_RECIPECONFIG_H
#define FLAMIA_NUMERICS_RECIPECONFIG_H

#include "flamia/Numerics/Quantizer.h"
#include "flamia/Numerics/ScaleLayout.h"
#include "flamia/Numerics/Status.h"

#include <string>
#include <vector>

namespace flamia::numerics {

/// The eight operand uses: tensor "in" GEMM.
enum class OperandUse {
  QInQK,   // Q in S = Q K^T (forward and backward recompute)
  KInQK,   // K in S = Q K^T
  VInPV,   // V in O = P V
  DOInDOV, // dO in dP = dO V^T
  VInDOV,  // V in dP = dO V^T
  KInDSK,  // K in dQ = dS K
  QInDSQ,  // Q in dK = dS^T Q
  DOInPDO, // dO in dV = P^T dO
};
constexpr int kNumOperandUses = 8;
/// "Q in QK^T", ...
const char *operandUseName(OperandUse use);

struct OperandQuantization {
  bool quantized = false; // false: the original bf16 operand
  ScaleLayout layout;
  ElementFormat element = ElementFormat::E4M3;
  /// E8M0 (MX) or UE4M3 (NVFP4: E2M1 elements, blocks of 16 channels).
  ScaleFormat scale = ScaleFormat::E8M0;

  static OperandQuantization bf16() { return {}; }
  static OperandQuantization mx(ScaleLayout layout,
                                ElementFormat element = ElementFormat::E4M3) {
    return {true, layout, element, ScaleFormat::E8M0};
  }
  /// NVFP4 per token: E2M1 in blocks of 1x16 with UE4M3 scales, global
  /// scale 1.0.
  static OperandQuantization nvfp4PerToken() {
    return {true, ScaleLayout::perToken(16), ElementFormat::E2M1,
            ScaleFormat::UE4M3};
  }
  QuantFormat format() const { return {element, scale}; }
  /// "bf16", "E4M3 1x32", "E4M3 32x32", "E4M3 32x1 packed", "E4M3 tensor",
  /// "NVFP4 1x16".
  std::string describe() const;
};

/// Whether `use` contracts over the head dim (Q K^T, dO V^T: the operand is
/// read K-major) rather than over tokens (P V, dS K, dS^T Q, P^T dO: the
/// operand is read MN-major, i.e. transposed).
bool contractsOverHeadDim(OperandUse use);

/// dS is quantized online (E8M0 scales, per the scale rule) in blocks along
/// the contraction axis of each use: along keys (row i) for dQ = dS K, along
/// queries (column j) for dK = dS^T Q. Masked entries, and entries on the
/// bf16 safe-block path, count as zero for the block amax.
struct DsQuantization {
  bool quantized = false; // false: dS in bf16
  int64_t block = 32;
  TokenBlocking blocking = TokenBlocking::DocumentLocal; // PerTensor: one
                                                         // scale per head
  ElementFormat element = ElementFormat::E4M3;
  std::string describe() const;
};

struct RecipeConfig {
  std::string name;
  /// Recipe `none`: the exact float64 reference, no quantization at all.
  bool float64Reference = false;
  OperandQuantization operands[kNumOperandUses];
  /// P in P V and P^T dO: E4M3 with the fixed scale 2^8 (else bf16).
  bool quantizeP = true;
  DsQuantization dS;
  /// 0: no safe block. Else a multiple of 32: keys in query i's
  /// document-local block of safeBlock tokens take the bf16 path.
  int64_t safeBlock = 128;
  /// L3: head-dim-contracted GEMMs (Q K^T, dO V^T) use per-token operands.
  bool strict = false;
  /// Document-local key (and query) tiles of the online softmax and of the
  /// fp32 accumulation.
  int64_t tile = 128;

  OperandQuantization &operand(OperandUse u) {
    return operands[static_cast<int>(u)];
  }
  const OperandQuantization &operand(OperandUse u) const {
    return operands[static_cast<int>(u)];
  }
  /// Checks block sizes against the head dim and the safe block / tile.
  Status validate(int64_t headDim) const;
  /// One line per setting, for tools and docs.
  std::string describe() const;
};

/// The presets: mxfp8, mxfp8-strict, nvfp4-mixed, nvfp4-mixed-strict, none,
/// leaky-token-block-q, leaky-no-safe-block, leaky-packed-blocks,
/// plain-mxfp8, per-tensor-fp8.
const std::vector<std::string> &recipeNames();
/// A preset by name; the error lists the valid names.
Status recipeFromName(const std::string &name, RecipeConfig &out);
/// Strict mode (L3): Q, K in Q K^T and dO, V in dO V^T become per-token
/// (1x32, or 1x16 for NVFP4 operands, which already are).
void makeStrict(RecipeConfig &recipe);

} // namespace flamia::numerics

#endif // FLAMIA_NUMERICS_RECIPECONFIG_H
