//===- RecipeConfig.cpp - Recipe presets -----------------------------------===//
#include "flamia/Numerics/RecipeConfig.h"

#include <sstream>

namespace flamia::numerics {

const char *operandUseName(OperandUse use) {
  switch (use) {
  case OperandUse::QInQK:
    return "Q in QK^T";
  case OperandUse::KInQK:
    return "K in QK^T";
  case OperandUse::VInPV:
    return "V in PV";
  case OperandUse::DOInDOV:
    return "dO in dO V^T";
  case OperandUse::VInDOV:
    return "V in dO V^T";
  case OperandUse::KInDSK:
    return "K in dS K";
  case OperandUse::QInDSQ:
    return "Q in dS^T Q";
  case OperandUse::DOInPDO:
    return "dO in P^T dO";
  }
  return "?";
}

static const char *elementName(ElementFormat e) {
  switch (e) {
  case ElementFormat::E4M3:
    return "E4M3";
  case ElementFormat::E5M2:
    return "E5M2";
  case ElementFormat::E2M1:
    return "E2M1";
  }
  return "?";
}

bool contractsOverHeadDim(OperandUse use) {
  switch (use) {
  case OperandUse::QInQK:
  case OperandUse::KInQK:
  case OperandUse::DOInDOV:
  case OperandUse::VInDOV:
    return true;
  case OperandUse::VInPV:
  case OperandUse::KInDSK:
  case OperandUse::QInDSQ:
  case OperandUse::DOInPDO:
    return false;
  }
  return false;
}

std::string OperandQuantization::describe() const {
  if (!quantized)
    return "bf16";
  if (scale == ScaleFormat::UE4M3)
    return "NVFP4 " + layout.name();
  return std::string(elementName(element)) + " " + layout.name();
}

std::string DsQuantization::describe() const {
  if (!quantized)
    return "bf16";
  std::string s = elementName(element);
  switch (blocking) {
  case TokenBlocking::PerTensor:
    return s + " per tensor (one scale per head)";
  case TokenBlocking::Packed:
    return s + " blocks of " + std::to_string(block) +
           " along the contraction axis, packed";
  case TokenBlocking::DocumentLocal:
    break;
  }
  return s + " blocks of " + std::to_string(block) +
         " along the contraction axis, document-local";
}

Status RecipeConfig::validate(int64_t headDim) const {
  if (float64Reference)
    return Status::success();
  if (safeBlock < 0 || safeBlock % 32 != 0)
    return Status::error("safe block must be 0 (none) or a positive multiple "
                         "of 32, got " +
                         std::to_string(safeBlock));
  if (tile < 1)
    return Status::error("tile must be positive");
  for (int u = 0; u < kNumOperandUses; ++u) {
    const OperandQuantization &op = operands[u];
    if (!op.quantized)
      continue;
    const std::string useName = operandUseName(static_cast<OperandUse>(u));
    if (Status s = op.layout.validate(headDim); !s)
      return Status::error(useName + ": " + s.message);
    // NVFP4 is defined for E2M1 elements in blocks of 16 channels; a UE4M3
    // scale on anything else is not a format of the contract.
    if (op.scale == ScaleFormat::UE4M3 &&
        (op.element != ElementFormat::E2M1 ||
         op.layout.blocking == TokenBlocking::PerTensor ||
         op.layout.channelBlock != 16))
      return Status::error(useName + ": UE4M3 (NVFP4) scales need E2M1 "
                                     "elements in blocks of 16 channels, got " +
                           op.describe());
  }
  if (dS.quantized && dS.blocking != TokenBlocking::PerTensor && dS.block < 1)
    return Status::error("dS block must be positive");
  return Status::success();
}

std::string RecipeConfig::describe() const {
  std::ostringstream os;
  os << "recipe " << name << "\n";
  if (float64Reference) {
    os << "  exact float64 attention on the bf16-rounded inputs, no "
          "quantization\n";
    return os.str();
  }
  for (int u = 0; u < kNumOperandUses; ++u)
    os << "  " << operandUseName(static_cast<OperandUse>(u)) << ": "
       << operands[u].describe() << "\n";
  os << "  P: " << (quantizeP ? "E4M3, fixed scale 2^8" : "bf16") << "\n";
  os << "  dS: " << dS.describe() << "\n";
  os << "  safe block: "
     << (safeBlock ? std::to_string(safeBlock) + " (document-local, bf16 path)"
                   : std::string("none"))
     << "\n";
  os << "  strict: " << (strict ? "yes" : "no") << "\n";
  return os.str();
}

const std::vector<std::string> &recipeNames() {
  static const std::vector<std::string> names = {
      "mxfp8",          "mxfp8-strict",        "nvfp4-mixed",
      "nvfp4-mixed-strict",                    "none",
      "leaky-token-block-q", "leaky-no-safe-block", "leaky-packed-blocks",
      "plain-mxfp8",    "per-tensor-fp8"};
  return names;
}

void makeStrict(RecipeConfig &recipe) {
  recipe.strict = true;
  for (int i = 0; i < kNumOperandUses; ++i) {
    const OperandUse u = static_cast<OperandUse>(i);
    if (!contractsOverHeadDim(u))
      continue;
    OperandQuantization &op = recipe.operand(u);
    // NVFP4 operands are per token (1x16) already.
    if (op.quantized && op.scale != ScaleFormat::UE4M3)
      op.layout = ScaleLayout::perToken(32);
  }
}

/// The contract's recipe: per-token Q in Q K^T, document-local 32x32 token
/// blocks everywhere else, P with the fixed 2^8 scale, dS in document-local
/// blocks of 32 along the contraction axis, safe block 128.
static RecipeConfig mxfp8Recipe() {
  RecipeConfig r;
  r.name = "mxfp8";
  const ScaleLayout tokenBlock = ScaleLayout::documentLocal(32, 32);
  for (OperandQuantization &op : r.operands)
    op = OperandQuantization::mx(tokenBlock);
  r.operand(OperandUse::QInQK) =
      OperandQuantization::mx(ScaleLayout::perToken(32));
  r.quantizeP = true;
  r.dS = {true, 32, TokenBlocking::DocumentLocal, ElementFormat::E4M3};
  r.safeBlock = 128;
  return r;
}

/// The mixed NVFP4/FP8 recipe (docs/numerics.md, "Recipe nvfp4-mixed"):
/// NVFP4 per token (E2M1, 1x16, UE4M3 scales, global scale 1.0) for the four
/// operands of the head-dim-contracted GEMMs Q K^T and dO V^T, which
/// Blackwell's FP4 MMA reads only K-major; mxfp8's document-local 32x32 E4M3
/// token blocks for the four token-contracted uses; P, dS and the safe block
/// as in mxfp8. Every Q K^T and dO V^T operand is per token, so L3 holds
/// without a strict variant of the layouts.
static RecipeConfig nvfp4MixedRecipe() {
  RecipeConfig r = mxfp8Recipe();
  r.name = "nvfp4-mixed";
  for (int u = 0; u < kNumOperandUses; ++u)
    if (contractsOverHeadDim(static_cast<OperandUse>(u)))
      r.operands[u] = OperandQuantization::nvfp4PerToken();
  return r;
}

Status recipeFromName(const std::string &name, RecipeConfig &out) {
  RecipeConfig r;
  if (name == "mxfp8") {
    r = mxfp8Recipe();
  } else if (name == "mxfp8-strict") {
    r = mxfp8Recipe();
    makeStrict(r);
  } else if (name == "nvfp4-mixed") {
    r = nvfp4MixedRecipe();
  } else if (name == "nvfp4-mixed-strict") {
    // The same numerics, marked strict: makeStrict changes no operand.
    r = nvfp4MixedRecipe();
    makeStrict(r);
  } else if (name == "none") {
    r.float64Reference = true;
    r.quantizeP = false;
    r.safeBlock = 0;
  } else if (name == "leaky-token-block-q") {
    // Token-block Q in Q K^T: a query's later block-mates set its scale.
    r = mxfp8Recipe();
    r.operand(OperandUse::QInQK) =
        OperandQuantization::mx(ScaleLayout::documentLocal(32, 32));
  } else if (name == "leaky-no-safe-block") {
    // Without the safe block, the key block holding query i (and keys > i)
    // is quantized with a scale that sees the future.
    r = mxfp8Recipe();
    r.safeBlock = 0;
  } else if (name == "leaky-packed-blocks") {
    // mxfp8 with token blocks aligned to the packed tensor: blocks straddle
    // documents.
    r = mxfp8Recipe();
    for (OperandQuantization &op : r.operands)
      if (op.layout.tokenBlock > 1)
        op.layout.blocking = TokenBlocking::Packed;
    r.dS.blocking = TokenBlocking::Packed;
  } else if (name == "plain-mxfp8") {
    // Standard MX: 1x32 blocks along each GEMM's contraction axis: per-token
    // along the head dim for Q K^T and dO V^T, 32 consecutive tokens of one
    // channel (aligned to the packed tensor) for the token-contracted GEMMs.
    // No safe block.
    const ScaleLayout alongTokens = ScaleLayout::packed(32, 1);
    const ScaleLayout alongChannels = ScaleLayout::perToken(32);
    r.operand(OperandUse::QInQK) = OperandQuantization::mx(alongChannels);
    r.operand(OperandUse::KInQK) = OperandQuantization::mx(alongChannels);
    r.operand(OperandUse::DOInDOV) = OperandQuantization::mx(alongChannels);
    r.operand(OperandUse::VInDOV) = OperandQuantization::mx(alongChannels);
    r.operand(OperandUse::VInPV) = OperandQuantization::mx(alongTokens);
    r.operand(OperandUse::KInDSK) = OperandQuantization::mx(alongTokens);
    r.operand(OperandUse::QInDSQ) = OperandQuantization::mx(alongTokens);
    r.operand(OperandUse::DOInPDO) = OperandQuantization::mx(alongTokens);
    r.quantizeP = true;
    r.dS = {true, 32, TokenBlocking::Packed, ElementFormat::E4M3};
    r.safeBlock = 0;
  } else if (name == "per-tensor-fp8") {
    // One E4M3 scale (E8M0 power of two, same rule) per head for each of Q,
    // K, V, dO and for dS; P with the fixed 2^8 scale; no safe block.
    for (OperandQuantization &op : r.operands)
      op = OperandQuantization::mx(ScaleLayout::perTensor());
    r.quantizeP = true;
    r.dS = {true, 0, TokenBlocking::PerTensor, ElementFormat::E4M3};
    r.safeBlock = 0;
  } else {
    std::string list;
    for (const std::string &n : recipeNames())
      list += (list.empty() ? "" : ", ") + n;
    return Status::error("unknown recipe '" + name + "' (expected one of: " +
                         list + ")");
  }
  r.name = name;
  out = r;
  return Status::success();
}

} // namespace flamia::numerics
