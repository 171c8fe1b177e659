//===- FlamiaAttrs.cpp - flamia attributes ----------------------*- C++ -*-===//
#include "flamia/Dialect/FlamiaAttrs.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace flamia;

#include "Flamia/FlamiaEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "Flamia/FlamiaAttrs.cpp.inc"

void FlamiaDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "Flamia/FlamiaAttrs.cpp.inc"
      >();
}

double flamia::getFormatMax(Type type) {
  if (isa<Float8E4M3FNType>(type))
    return 448.0;
  if (isa<Float8E5M2Type>(type))
    return 57344.0;
  if (isa<Float4E2M1FNType>(type))
    return 6.0;
  return 0.0;
}

bool flamia::isPayloadFormat(Type type) { return getFormatMax(type) > 0; }

//===----------------------------------------------------------------------===//
// ScaleLayoutAttr
//===----------------------------------------------------------------------===//

ScaleLayoutAttr ScaleLayoutAttr::parseBody(AsmParser &parser) {
  MLIRContext *ctx = parser.getContext();
  SMLoc loc = parser.getCurrentLocation();
  if (succeeded(parser.parseOptionalKeyword("tensor")))
    return ScaleLayoutAttr::getChecked(
        [&] { return parser.emitError(loc); }, ctx, 0, 0, ScaleAnchor::document);
  SmallVector<int64_t, 2> dims;
  if (parser.parseDimensionList(dims, /*allowDynamic=*/false,
                                /*withTrailingX=*/false))
    return {};
  if (dims.size() != 2) {
    parser.emitError(loc, "expected a scale block `<token_block>x<channel_block>`"
                          " or `tensor`");
    return {};
  }
  ScaleAnchor anchor = ScaleAnchor::document;
  if (succeeded(parser.parseOptionalComma())) {
    StringRef keyword;
    SMLoc kwLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&keyword))
      return {};
    std::optional<ScaleAnchor> parsed = symbolizeScaleAnchor(keyword);
    if (!parsed) {
      parser.emitError(kwLoc, "expected token-block anchor `document` or "
                              "`packed`, got '")
          << keyword << "'";
      return {};
    }
    anchor = *parsed;
  }
  return ScaleLayoutAttr::getChecked([&] { return parser.emitError(loc); }, ctx,
                                     dims[0], dims[1], anchor);
}

void ScaleLayoutAttr::printBody(AsmPrinter &printer) const {
  if (isPerTensor()) {
    printer << "tensor";
    return;
  }
  printer << getTokenBlock() << "x" << getChannelBlock();
  if (getAnchor() != ScaleAnchor::document)
    printer << ", " << stringifyScaleAnchor(getAnchor());
}

Attribute ScaleLayoutAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  ScaleLayoutAttr attr = parseBody(parser);
  if (!attr || parser.parseGreater())
    return {};
  return attr;
}

void ScaleLayoutAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printBody(printer);
  printer << ">";
}

LogicalResult
ScaleLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        int64_t tokenBlock, int64_t channelBlock,
                        ScaleAnchor anchor) {
  if (tokenBlock == 0 && channelBlock == 0)
    return success(); // per-tensor
  if (channelBlock != 16 && channelBlock != 32)
    return emitError() << "channel block must be 16 (NVFP4) or 32 (MX), got "
                       << channelBlock;
  if (tokenBlock != 1 && (tokenBlock <= 0 || tokenBlock % 16 != 0))
    return emitError() << "token block must be 1 (per token) or a positive "
                          "multiple of 16, got "
                       << tokenBlock;
  // Bounded so that flamia-verify-causality's proof, which scans a few
  // periods lcm(token block, safe block), stays well under a second.
  if (tokenBlock > kMaxTokenBlock)
    return emitError() << "token block must be at most " << kMaxTokenBlock
                       << ", got " << tokenBlock;
  if (tokenBlock == 1 && anchor != ScaleAnchor::document)
    return emitError() << "a per-token layout has no token blocks to anchor";
  return success();
}

//===----------------------------------------------------------------------===//
// RecipeAttr
//===----------------------------------------------------------------------===//

Attribute RecipeAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef kindName;
  if (parser.parseLess() || parser.parseKeyword(&kindName))
    return {};
  std::optional<RecipeKind> kind = symbolizeRecipeKind(kindName);
  if (!kind) {
    parser.emitError(loc, "unknown recipe '")
        << kindName << "' (expected mxfp8 or nvfp4_mixed)";
    return {};
  }
  int64_t safeBlock = 0;
  bool strict = false;
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    SMLoc keyLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&key))
      return {};
    if (key == "strict") {
      strict = true;
    } else if (key == "safe_block") {
      SMLoc valueLoc;
      if (parser.parseEqual())
        return {};
      valueLoc = parser.getCurrentLocation();
      if (parser.parseInteger(safeBlock))
        return {};
      if (safeBlock <= 0) {
        parser.emitError(valueLoc, "safe_block must be a positive multiple of "
                                   "32 (omit it for no safe block), got ")
            << safeBlock;
        return {};
      }
    } else {
      parser.emitError(keyLoc, "unknown recipe parameter '")
          << key << "' (expected safe_block or strict)";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return RecipeAttr::getChecked([&] { return parser.emitError(loc); },
                                parser.getContext(), *kind, safeBlock, strict);
}

void RecipeAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyRecipeKind(getKind());
  if (hasSafeBlock())
    printer << ", safe_block = " << getSafeBlock();
  if (getStrict())
    printer << ", strict";
  printer << ">";
}

LogicalResult RecipeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 RecipeKind, int64_t safeBlock, bool) {
  if (safeBlock < 0 || safeBlock % 32 != 0)
    return emitError() << "safe_block must be a positive multiple of 32, got "
                       << safeBlock;
  if (safeBlock > kMaxSafeBlock)
    return emitError() << "safe_block must be at most " << kMaxSafeBlock
                       << " (2^20 tokens), got " << safeBlock;
  return success();
}

//===----------------------------------------------------------------------===//
// PrecisionAttr
//===----------------------------------------------------------------------===//

Attribute PrecisionAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  Type elementType;
  if (parser.parseLess() || parser.parseType(elementType))
    return {};
  std::optional<int64_t> fixedScale, onlineBlock;
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    SMLoc keyLoc = parser.getCurrentLocation();
    int64_t value;
    if (parser.parseKeyword(&key) || parser.parseEqual() ||
        parser.parseInteger(value))
      return {};
    if (key == "fixed_scale")
      fixedScale = value;
    else if (key == "online")
      onlineBlock = value;
    else {
      parser.emitError(keyLoc, "unknown precision parameter '")
          << key << "' (expected fixed_scale or online)";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return PrecisionAttr::getChecked([&] { return parser.emitError(loc); },
                                   parser.getContext(), elementType,
                                   fixedScale, onlineBlock);
}

void PrecisionAttr::print(AsmPrinter &printer) const {
  printer << "<" << getElementType();
  if (getFixedScale())
    printer << ", fixed_scale = " << *getFixedScale();
  if (getOnlineBlock())
    printer << ", online = " << *getOnlineBlock();
  printer << ">";
}

LogicalResult
PrecisionAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      Type elementType, std::optional<int64_t> fixedScale,
                      std::optional<int64_t> onlineBlock) {
  if (elementType.isBF16()) {
    if (fixedScale || onlineBlock)
      return emitError() << "a bf16 operand has no scale";
    return success();
  }
  double max = getFormatMax(elementType);
  if (max == 0)
    return emitError() << "precision must be bf16, f8E4M3FN, f8E5M2 or "
                          "f4E2M1FN, got "
                       << elementType;
  if (fixedScale.has_value() == onlineBlock.has_value())
    return emitError() << "a quantized operand needs exactly one of "
                          "`fixed_scale` and `online`";
  if (fixedScale) {
    if (*fixedScale < -127 || *fixedScale > 127)
      return emitError() << "fixed_scale must be an E8M0 exponent in "
                            "[-127, 127], got "
                         << *fixedScale;
    if (std::ldexp(1.0, *fixedScale) > max)
      return emitError() << "fixed_scale = " << *fixedScale << " overflows "
                         << elementType << ": values up to 1 scaled by 2^"
                         << *fixedScale << " exceed its maximum " << static_cast<int64_t>(max);
  }
  if (onlineBlock) {
    bool fp4 = isa<Float4E2M1FNType>(elementType);
    if (*onlineBlock != 32 && !(fp4 && *onlineBlock == 16))
      return emitError() << "online block must be 32"
                         << (fp4 ? " or 16" : "") << " for " << elementType
                         << ", got " << *onlineBlock;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// TargetAttr
//===----------------------------------------------------------------------===//

Attribute TargetAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef chipName;
  if (parser.parseLess() || parser.parseKeyword(&chipName))
    return {};
  std::optional<Chip> chip = symbolizeChip(chipName);
  if (!chip) {
    parser.emitError(loc, "unsupported chip '")
        << chipName << "' (expected sm_90a or sm_100a)";
    return {};
  }
  int64_t ctaGroup = 1;
  if (succeeded(parser.parseOptionalComma())) {
    if (parser.parseKeyword("cta_group") || parser.parseEqual() ||
        parser.parseInteger(ctaGroup))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return TargetAttr::getChecked([&] { return parser.emitError(loc); },
                                parser.getContext(), *chip, ctaGroup);
}

void TargetAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyChip(getChip());
  if (getCtaGroup() != 1)
    printer << ", cta_group = " << getCtaGroup();
  printer << ">";
}

LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 Chip chip, int64_t ctaGroup) {
  if (ctaGroup != 1 && ctaGroup != 2)
    return emitError() << "cta_group must be 1 or 2, got " << ctaGroup;
  if (ctaGroup == 2 && chip != Chip::sm_100a)
    return emitError() << "cta_group = 2 (CTA pairs) needs sm_100a";
  return success();
}
