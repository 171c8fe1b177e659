//===- FlamiaTypes.cpp - flamia types ---------------------------*- C++ -*-===//
#include "flamia/Dialect/FlamiaTypes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace flamia;

#define GET_TYPEDEF_CLASSES
#include "Flamia/FlamiaTypes.cpp.inc"

void FlamiaDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "Flamia/FlamiaTypes.cpp.inc"
      >();
}

Type QTensorType::parse(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<int64_t, 3> shape;
  Type elementType, scaleType;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/true,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType) || parser.parseComma() ||
      parser.parseType(scaleType) || parser.parseComma())
    return {};
  ScaleLayoutAttr layout = ScaleLayoutAttr::parseBody(parser);
  if (!layout || parser.parseGreater())
    return {};
  return QTensorType::getChecked([&] { return parser.emitError(loc); },
                                 parser.getContext(), shape, elementType,
                                 scaleType, layout);
}

void QTensorType::print(AsmPrinter &printer) const {
  printer << "<";
  printer.printDimensionList(getShape());
  printer << "x" << getElementType() << ", " << getScaleType() << ", ";
  getLayout().printBody(printer);
  printer << ">";
}

LogicalResult QTensorType::verify(function_ref<InFlightDiagnostic()> emitError,
                                  ArrayRef<int64_t> shape, Type elementType,
                                  Type scaleType, ScaleLayoutAttr layout) {
  if (shape.size() != 3)
    return emitError() << "a qtensor is a packed [T, H, D] tensor (rank 3), "
                          "got rank "
                       << shape.size();
  // H may be a runtime value (kernels for every head count); D is static.
  if (ShapedType::isDynamic(shape[2]))
    return emitError() << "the head dim D of a qtensor must be static";
  if (!isPayloadFormat(elementType))
    return emitError() << "payload format must be f8E4M3FN, f8E5M2 or "
                          "f4E2M1FN, got "
                       << elementType;
  bool e8m0 = isa<Float8E8M0FNUType>(scaleType);
  bool e4m3 = isa<Float8E4M3FNType>(scaleType);
  if (!e8m0 && !e4m3)
    return emitError() << "scale type must be f8E8M0FNU (MX) or f8E4M3FN "
                          "(NVFP4, unsigned), got "
                       << scaleType;
  if (layout.isPerTensor()) {
    if (!e8m0)
      return emitError() << "a per-tensor layout uses an f8E8M0FNU scale";
    return success();
  }
  if (e4m3) {
    if (!isa<Float4E2M1FNType>(elementType))
      return emitError() << "E4M3 scales (NVFP4) need an f4E2M1FN payload, "
                            "got "
                         << elementType;
    if (layout.getChannelBlock() != 16)
      return emitError() << "NVFP4 scales cover 16 channels: the channel "
                            "block must be 16, got "
                         << layout.getChannelBlock();
  } else if (layout.getChannelBlock() != 32) {
    return emitError() << "E8M0 (MX) scales cover 32 channels: the channel "
                          "block must be 32, got "
                       << layout.getChannelBlock();
  }
  if (shape[2] % layout.getChannelBlock() != 0)
    return emitError() << "head dim " << shape[2]
                       << " is not divisible by the channel block "
                       << layout.getChannelBlock();
  return success();
}

RankedTensorType QTensorType::getPayloadType() const {
  return RankedTensorType::get(getShape(), getElementType());
}

RankedTensorType QTensorType::getScalesType() const {
  ScaleLayoutAttr layout = getLayout();
  if (layout.isPerTensor())
    return RankedTensorType::get({1, getNumHeads(), 1}, getScaleType());
  int64_t blocks = layout.isPerToken() ? getNumTokens() : ShapedType::kDynamic;
  return RankedTensorType::get(
      {blocks, getNumHeads(), getHeadDim() / layout.getChannelBlock()},
      getScaleType());
}

//===----------------------------------------------------------------------===//
// Block-level types: `<dims x element>` syntax
//===----------------------------------------------------------------------===//

namespace {
/// Parses `<4x?x128xbf16>`; `allowDynamic` permits `?` dimensions.
LogicalResult parseShapeAndElement(AsmParser &parser, bool allowDynamic,
                                   SmallVectorImpl<int64_t> &shape,
                                   Type &elementType) {
  return failure(parser.parseLess() ||
                 parser.parseDimensionList(shape, allowDynamic,
                                           /*withTrailingX=*/true) ||
                 parser.parseType(elementType) || parser.parseGreater());
}

void printShapeAndElement(AsmPrinter &printer, ArrayRef<int64_t> shape,
                          Type elementType) {
  printer << "<";
  printer.printDimensionList(shape);
  printer << "x" << elementType << ">";
}
} // namespace

Type GlobalType::parse(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<int64_t> shape;
  Type element;
  if (failed(parseShapeAndElement(parser, /*allowDynamic=*/true, shape, element)))
    return {};
  return GlobalType::getChecked([&] { return parser.emitError(loc); },
                                parser.getContext(), shape, element);
}
void GlobalType::print(AsmPrinter &printer) const {
  printShapeAndElement(printer, getShape(), getElementType());
}

LogicalResult GlobalType::verify(function_ref<InFlightDiagnostic()> emitError,
                                 ArrayRef<int64_t> shape, Type elementType) {
  if (shape.empty())
    return emitError() << "a global buffer has rank 1 or more; a scalar "
                          "parameter is a plain i32 or f32";
  if (!elementType.isIntOrFloat())
    return emitError() << "global buffers hold integers or floats, got "
                       << elementType;
  return success();
}

Type SmemType::parse(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<int64_t> shape;
  Type element;
  if (failed(parseShapeAndElement(parser, /*allowDynamic=*/false, shape, element)))
    return {};
  return SmemType::getChecked([&] { return parser.emitError(loc); },
                              parser.getContext(), shape, element);
}
void SmemType::print(AsmPrinter &printer) const {
  printShapeAndElement(printer, getShape(), getElementType());
}

LogicalResult SmemType::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> shape, Type elementType) {
  if (shape.size() != 3)
    return emitError() << "a shared-memory buffer is stages x rows x cols, got "
                          "rank "
                       << shape.size();
  if (!elementType.isIntOrFloat())
    return emitError() << "shared-memory buffers hold scalars, got "
                       << elementType;
  int64_t bits = elementType.getIntOrFloatBitWidth();
  if (shape[0] < 1)
    return emitError() << "a shared-memory buffer has at least one stage, got "
                       << shape[0];
  // Rows of 32, 64 or a multiple of 128 bytes: one swizzle atom wide (32B,
  // 64B, 128B swizzling) or several 128-byte atoms.
  int64_t rowBits = shape[2] * bits;
  bool rowOk = rowBits == 32 * 8 || rowBits == 64 * 8 ||
               (rowBits > 0 && rowBits % (128 * 8) == 0);
  if (shape[1] < 1 || shape[2] < 1 || shape[1] % 8 != 0 || !rowOk)
    return emitError() << "a swizzled tile needs a multiple of 8 rows and "
                          "rows of 32, 64 or a multiple of 128 bytes, got "
                       << shape[1] << " x " << shape[2] << " x " << elementType;
  return success();
}

int64_t SmemType::getRowBytes() const {
  return getCols() * getElementType().getIntOrFloatBitWidth() / 8;
}

int64_t SmemType::getTileBytes() const { return getRows() * getRowBytes(); }

Type FragmentType::parse(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<int64_t> shape;
  Type element;
  if (failed(parseShapeAndElement(parser, /*allowDynamic=*/false, shape, element)))
    return {};
  return FragmentType::getChecked([&] { return parser.emitError(loc); },
                                  parser.getContext(), shape, element);
}
void FragmentType::print(AsmPrinter &printer) const {
  printShapeAndElement(printer, getShape(), getElementType());
}

LogicalResult FragmentType::verify(function_ref<InFlightDiagnostic()> emitError,
                                   ArrayRef<int64_t> shape, Type elementType) {
  if (shape.size() != 2)
    return emitError() << "a fragment is a rows x cols tile, got rank "
                       << shape.size();
  if (shape[0] < 64 || shape[0] % 64 != 0)
    return emitError() << "fragment rows must be a positive multiple of 64 "
                          "(a warpgroup's MMA rows), got "
                       << shape[0];
  if (shape[1] < 8 || shape[1] % 8 != 0)
    return emitError() << "fragment columns must be a positive multiple of 8, "
                          "got "
                       << shape[1];
  if (!elementType.isF32() && !elementType.isBF16() &&
      !isa<Float8E4M3FNType>(elementType))
    return emitError() << "fragments hold f32 (accumulators), bf16 (MMA A "
                          "operands) or f8E4M3FN (P for a block-scaled MMA), "
                          "got "
                       << elementType;
  return success();
}

//===----------------------------------------------------------------------===//
// Pipelines and per-row values
//===----------------------------------------------------------------------===//

LogicalResult PipelineType::verify(function_ref<InFlightDiagnostic()> emitError,
                                   int64_t stages) {
  if (stages < 1)
    return emitError() << "a pipeline has at least one stage, got " << stages;
  return success();
}

LogicalResult RowsType::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t rows, Type elementType) {
  if (rows < 64 || rows % 64 != 0)
    return emitError() << "rows must be a positive multiple of 64 (the rows "
                          "of a fragment), got "
                       << rows;
  if (!elementType.isF32())
    return emitError() << "per-row values are f32, got " << elementType;
  return success();
}
