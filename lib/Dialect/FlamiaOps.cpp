//===- FlamiaOps.cpp - flamia operations ------------------------*- C++ -*-===//
//
// Verifiers. Every message names the operand, the quantity and both values,
// so that a user can fix the IR without reading this file.
//
//===----------------------------------------------------------------------===//
#include "flamia/Dialect/FlamiaOps.h"
#include "flamia/Support/Validation.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>

using namespace mlir;
using namespace flamia;

//===----------------------------------------------------------------------===//
// flamia.quantize_block's copy clauses
//===----------------------------------------------------------------------===//

using OptionalOperand = std::optional<OpAsmParser::UnresolvedOperand>;

/// `KEY(payload, scales)`, `KEY_scales(scales)` (a copy whose payload is
/// not written) or nothing; then `KEY_dequant(values)` or nothing.
static ParseResult parseQuantizedCopy(OpAsmParser &parser, StringRef key,
                                      OptionalOperand &data,
                                      OptionalOperand &scales,
                                      OptionalOperand &dequant) {
  auto parseOne = [&](OptionalOperand &into) -> ParseResult {
    into.emplace();
    return parser.parseOperand(*into);
  };
  if (succeeded(parser.parseOptionalKeyword(key))) {
    if (parser.parseLParen() || parseOne(data) || parser.parseComma() ||
        parseOne(scales) || parser.parseRParen())
      return failure();
  } else if (succeeded(parser.parseOptionalKeyword((key + "_scales").str()))) {
    if (parser.parseLParen() || parseOne(scales) || parser.parseRParen())
      return failure();
  }
  if (succeeded(parser.parseOptionalKeyword((key + "_dequant").str())))
    if (parser.parseLParen() || parseOne(dequant) || parser.parseRParen())
      return failure();
  return success();
}

/// flamia.quantize_block's two copies: per token, then in token blocks.
static ParseResult
parseQuantizedCopies(OpAsmParser &parser, OptionalOperand &ptData,
                     OptionalOperand &ptScales, OptionalOperand &ptDequant,
                     OptionalOperand &tbData, OptionalOperand &tbScales,
                     OptionalOperand &tbDequant) {
  if (parseQuantizedCopy(parser, "per_token", ptData, ptScales, ptDequant))
    return failure();
  return parseQuantizedCopy(parser, "token_block", tbData, tbScales, tbDequant);
}

static void printQuantizedCopies(OpAsmPrinter &p, Operation *, Value ptData,
                                 Value ptScales, Value ptDequant, Value tbData,
                                 Value tbScales, Value tbDequant) {
  SmallVector<std::string> clauses;
  auto clause = [&](StringRef key, ArrayRef<Value> operands) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << key << '(';
    llvm::interleaveComma(operands, os,
                          [&](Value v) { p.printOperand(v, os); });
    os << ')';
    clauses.push_back(text);
  };
  auto copy = [&](StringRef key, Value data, Value scales, Value dequant) {
    if (data && scales)
      clause(key, {data, scales});
    else if (scales)
      clause((key + "_scales").str(), {scales});
    else if (data) // Invalid (the verifier says why), but printable.
      clause(key, {data});
    if (dequant)
      clause((key + "_dequant").str(), {dequant});
  };
  copy("per_token", ptData, ptScales, ptDequant);
  copy("token_block", tbData, tbScales, tbDequant);
  p << llvm::join(clauses, " ");
}

#define GET_OP_CLASSES
#include "Flamia/FlamiaOps.cpp.inc"

namespace {

/// The [T, H, D] shape of a packed operand (a qtensor or a ranked tensor).
struct PackedShape {
  int64_t tokens, heads, headDim;
};

bool compatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

std::string dimString(int64_t d) {
  return ShapedType::isDynamic(d) ? "?" : std::to_string(d);
}

ArrayRef<int64_t> shapeOf(Type type) {
  if (auto q = dyn_cast<QTensorType>(type))
    return q.getShape();
  return cast<RankedTensorType>(type).getShape();
}

FailureOr<PackedShape> getPackedShape(Operation *op, Value value,
                                      StringRef name) {
  ArrayRef<int64_t> shape = shapeOf(value.getType());
  if (shape.size() != 3)
    return op->emitOpError() << "operand '" << name
                             << "' must be a packed [T, H, D] tensor (rank "
                                "3), got "
                             << value.getType();
  // H may be a runtime value (one kernel set for every head count); the
  // head dim decides the kernels' tiles and is static.
  if (ShapedType::isDynamic(shape[2]))
    return op->emitOpError() << "operand '" << name
                             << "' must have a static head dim, got "
                             << value.getType();
  return PackedShape{shape[0], shape[1], shape[2]};
}

/// Checks that `value` has the [T, H, D] shape `expected` (T may be dynamic
/// on either side).
LogicalResult verifySameShape(Operation *op, Value value, StringRef name,
                              const PackedShape &expected,
                              StringRef expectedName) {
  FailureOr<PackedShape> shape = getPackedShape(op, value, name);
  if (failed(shape))
    return failure();
  if (shape->heads != expected.heads || shape->headDim != expected.headDim ||
      !compatible(shape->tokens, expected.tokens))
    return op->emitOpError()
           << "operand '" << name << "' must have the shape of '"
           << expectedName << "' [" << dimString(expected.tokens) << ", "
           << dimString(expected.heads) << ", " << expected.headDim << "], got "
           << value.getType();
  return success();
}

struct AttentionDims {
  int64_t tokens, queryHeads, kvHeads, headDim;
};

/// Q, K, V shapes: one token axis (packed self-attention), equal head dims,
/// K and V alike, query heads a multiple of key/value heads (GQA).
FailureOr<AttentionDims> verifyQKV(Operation *op, Value q, Value k, Value v,
                                   StringRef qName, StringRef kName,
                                   StringRef vName) {
  FailureOr<PackedShape> qs = getPackedShape(op, q, qName);
  FailureOr<PackedShape> ks = getPackedShape(op, k, kName);
  FailureOr<PackedShape> vs = getPackedShape(op, v, vName);
  if (failed(qs) || failed(ks) || failed(vs))
    return failure();
  if (qs->headDim != ks->headDim)
    return op->emitOpError() << "head dim mismatch: '" << qName << "' has D = "
                             << qs->headDim << " but '" << kName
                             << "' has D = " << ks->headDim;
  if (vs->headDim != ks->headDim)
    return op->emitOpError()
           << "head dim mismatch: '" << vName << "' has D = " << vs->headDim
           << " but '" << kName << "' has D = " << ks->headDim
           << " (value and key head dims must be equal)";
  if (vs->heads != ks->heads)
    return op->emitOpError() << "'" << kName << "' and '" << vName
                             << "' must have the same head count, got "
                             << dimString(ks->heads) << " and "
                             << dimString(vs->heads);
  bool runtimeHeads = ShapedType::isDynamic(qs->heads);
  if (runtimeHeads != ShapedType::isDynamic(ks->heads))
    return op->emitOpError()
           << "query heads (" << dimString(qs->heads)
           << ") and key/value heads (" << dimString(ks->heads)
           << ") must both be static or both runtime values ('?')";
  // With runtime head counts the GQA ratio is checked at run time.
  if (!runtimeHeads && (ks->heads <= 0 || qs->heads % ks->heads != 0))
    return op->emitOpError() << "query heads (" << qs->heads
                             << ") must be a multiple of key/value heads ("
                             << ks->heads << ") (GQA)";
  if (!compatible(qs->tokens, ks->tokens) ||
      !compatible(ks->tokens, vs->tokens))
    return op->emitOpError()
           << "token count mismatch: '" << qName << "' has T = "
           << dimString(qs->tokens) << ", '" << kName
           << "' has T = " << dimString(ks->tokens) << ", '" << vName
           << "' has T = " << dimString(vs->tokens)
           << " (packed self-attention has one token axis)";
  if (qs->headDim < 16 || qs->headDim > 256 || qs->headDim % 16 != 0)
    return op->emitOpError() << "head dim " << qs->headDim
                             << " is not supported: it must be a multiple of "
                                "16 between 16 and 256";
  int64_t tokens =
      ShapedType::isDynamic(qs->tokens) ? ks->tokens : qs->tokens;
  return AttentionDims{tokens, qs->heads, ks->heads, qs->headDim};
}

LogicalResult verifyAttentionAttrs(Operation *op,
                                   std::optional<APFloat> softmaxScale,
                                   Value cuSeqlens) {
  // The rule (finite and > 0) and its wording are every tool's and the
  // runtime's (flamia::validation).
  if (softmaxScale) {
    std::string error;
    if (!validation::validateSoftmaxScale(
            softmaxScale->convertToDouble(), error))
      return op->emitOpError() << error;
  }
  if (cuSeqlens) {
    auto type = cast<RankedTensorType>(cuSeqlens.getType());
    if (type.getRank() != 1)
      return op->emitOpError() << "cu_seqlens must be a rank-1 i32 tensor "
                                  "[num_docs + 1], got "
                               << type;
    if (!type.isDynamicDim(0) && type.getDimSize(0) < 2)
      return op->emitOpError() << "cu_seqlens must have at least 2 entries "
                                  "(one document), got "
                               << type;
  }
  return success();
}

/// Checks that `lse` is [Hq, T] f32.
LogicalResult verifyLse(Operation *op, Type lse, const AttentionDims &dims) {
  auto type = cast<RankedTensorType>(lse);
  if (type.getRank() != 2 || type.getDimSize(0) != dims.queryHeads ||
      !compatible(type.getDimSize(1), dims.tokens))
    return op->emitOpError() << "lse must be [Hq, T] = ["
                             << dimString(dims.queryHeads)
                             << ", " << dimString(dims.tokens)
                             << "] f32, got " << type;
  return success();
}

/// How a GEMM contracts an operand: over the head dim (the operand is
/// K-major in a packed [T, H, D] tensor) or over tokens (MN-major).
enum class Contraction { HeadDim, Tokens };

bool isQuantized(Value v) { return isa<QTensorType>(v.getType()); }

/// Checks that a quantized operand can feed a GEMM in the given orientation.
LogicalResult verifyGemmOperand(Operation *op, Value value, StringRef role,
                                Contraction contraction) {
  auto qtype = dyn_cast<QTensorType>(value.getType());
  if (!qtype || contraction == Contraction::HeadDim)
    return success(); // head-dim blocks are what the type already checks
  ScaleLayoutAttr layout = qtype.getLayout();
  if (isa<Float4E2M1FNType>(qtype.getElementType()))
    return op->emitOpError()
           << role << " is contracted over tokens (an MN-major operand), "
           << "but FP4 (f4E2M1FN) payloads can only be K-major: use an FP8 "
              "copy for token-contracted GEMMs";
  if (layout.isPerToken())
    return op->emitOpError()
           << role << " is contracted over tokens, but its per-token ("
           << layout.getTokenBlock() << "x" << layout.getChannelBlock()
           << ") scales change with every token: a block-scaled MMA applies "
              "one scale per 32 contraction elements, so use token blocks "
              "(e.g. 32x32)";
  if (layout.isTokenBlock() && layout.getTokenBlock() % 32 != 0)
    return op->emitOpError()
           << role << " is contracted over tokens, but its token block "
           << layout.getTokenBlock()
           << " does not cover whole 32-element MMA scale vectors";
  return success();
}

/// The operands of one GEMM are both quantized or both bf16: there is no
/// mixed bf16 x FP8 MMA.
LogicalResult verifyGemmPair(Operation *op, StringRef gemm, StringRef aName,
                             bool aQuantized, StringRef bName,
                             bool bQuantized) {
  if (aQuantized != bQuantized)
    return op->emitOpError()
           << "the operands of " << gemm << " must both be quantized or both "
           << "bf16, but " << aName << " is "
           << (aQuantized ? "quantized" : "bf16") << " and " << bName << " is "
           << (bQuantized ? "quantized" : "bf16");
  return success();
}

/// Safe-block operands: present (with `count` bf16 tensors shaped like
/// `like`) exactly when the recipe has a safe block.
LogicalResult verifySafeOperands(Operation *op, RecipeAttr recipe,
                                 OperandRange safe, ArrayRef<Value> like,
                                 ArrayRef<StringRef> names) {
  if (recipe.hasSafeBlock() && safe.empty())
    return op->emitOpError()
           << "the recipe has safe_block = " << recipe.getSafeBlock()
           << ", so the safe-block path needs the bf16 originals: add safe("
           << llvm::join(names, ", ") << ")";
  if (!recipe.hasSafeBlock() && !safe.empty())
    return op->emitOpError() << "safe-block operands given, but the recipe "
                                "has no safe_block";
  if (safe.empty())
    return success();
  if (safe.size() != like.size())
    return op->emitOpError() << "safe(...) takes " << like.size()
                             << " bf16 tensors (" << llvm::join(names, ", ")
                             << "), got " << safe.size();
  for (auto [i, value] : llvm::enumerate(safe)) {
    FailureOr<PackedShape> expected =
        getPackedShape(op, like[i], names[i]);
    if (failed(expected) ||
        failed(verifySameShape(op, value, ("safe " + names[i]).str(),
                               *expected, names[i])))
      return failure();
  }
  return success();
}

LogicalResult verifyGradient(Operation *op, Value grad, StringRef name,
                             Value like, StringRef likeName) {
  FailureOr<PackedShape> expected = getPackedShape(op, like, likeName);
  if (failed(expected))
    return failure();
  return verifySameShape(op, grad, name, *expected, likeName);
}

} // namespace

//===----------------------------------------------------------------------===//
// flamia.attention / flamia.attention_grad
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::verify() {
  FailureOr<AttentionDims> dims =
      verifyQKV(*this, getQ(), getK(), getV(), "q", "k", "v");
  if (failed(dims) ||
      failed(verifyAttentionAttrs(*this, getSoftmaxScale(), getCuSeqlens())))
    return failure();
  if (failed(verifyGradient(*this, getO(), "o", getQ(), "q")))
    return failure();
  return verifyLse(*this, getLse().getType(), *dims);
}

LogicalResult AttentionGradOp::verify() {
  FailureOr<AttentionDims> dims =
      verifyQKV(*this, getQ(), getK(), getV(), "q", "k", "v");
  if (failed(dims) ||
      failed(verifyAttentionAttrs(*this, getSoftmaxScale(), getCuSeqlens())))
    return failure();
  if (failed(verifyGradient(*this, getO(), "o", getQ(), "q")) ||
      failed(verifyGradient(*this, getGradO(), "grad_o", getQ(), "q")) ||
      failed(verifyLse(*this, getLse().getType(), *dims)) ||
      failed(verifyGradient(*this, getGradQ(), "grad_q", getQ(), "q")) ||
      failed(verifyGradient(*this, getGradK(), "grad_k", getK(), "k")) ||
      failed(verifyGradient(*this, getGradV(), "grad_v", getV(), "v")))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Quantization ops
//===----------------------------------------------------------------------===//

LogicalResult QuantizeOp::verify() {
  auto result = getResult().getType();
  auto input = cast<RankedTensorType>(getInput().getType());
  if (input.getRank() != 3 || input.getDimSize(1) != result.getNumHeads() ||
      input.getDimSize(2) != result.getHeadDim() ||
      !compatible(input.getDimSize(0), result.getNumTokens()))
    return emitOpError() << "result shape [" << dimString(result.getNumTokens())
                         << ", " << dimString(result.getNumHeads()) << ", "
                         << result.getHeadDim()
                         << "] does not match the input " << input;
  if (getGlobalScale() == GlobalScale::amax &&
      !isa<Float4E2M1FNType>(result.getElementType()))
    return emitOpError() << "global_scale = amax is NVFP4's second-level "
                            "scale; it needs an f4E2M1FN result";
  return verifyAttentionAttrs(*this, std::nullopt, getCuSeqlens());
}

LogicalResult DequantizeOp::verify() {
  auto input = getInput().getType();
  auto result = cast<RankedTensorType>(getResult().getType());
  if (result.getRank() != 3 || result.getDimSize(1) != input.getNumHeads() ||
      result.getDimSize(2) != input.getHeadDim() ||
      !compatible(result.getDimSize(0), input.getNumTokens()))
    return emitOpError() << "result " << result
                         << " does not have the input's shape ["
                         << dimString(input.getNumTokens()) << ", "
                         << dimString(input.getNumHeads()) << ", " << input.getHeadDim()
                         << "]";
  return verifyAttentionAttrs(*this, std::nullopt, getCuSeqlens());
}

LogicalResult QTensorCreateOp::verify() {
  QTensorType result = getResult().getType();
  auto payload = cast<RankedTensorType>(getPayload().getType());
  auto scales = cast<RankedTensorType>(getScales().getType());
  if (payload.getElementType() != result.getElementType())
    return emitOpError() << "payload element type "
                         << payload.getElementType()
                         << " does not match the qtensor format "
                         << result.getElementType();
  if (payload.getRank() != 3 ||
      payload.getDimSize(1) != result.getNumHeads() ||
      payload.getDimSize(2) != result.getHeadDim() ||
      !compatible(payload.getDimSize(0), result.getNumTokens()))
    return emitOpError() << "payload " << payload
                         << " does not have the qtensor's shape ["
                         << dimString(result.getNumTokens()) << ", "
                         << dimString(result.getNumHeads()) << ", " << result.getHeadDim()
                         << "]";
  if (scales.getElementType() != result.getScaleType())
    return emitOpError() << "scale element type " << scales.getElementType()
                         << " does not match the qtensor's scale type "
                         << result.getScaleType();
  RankedTensorType expected = result.getScalesType();
  ScaleLayoutAttr layout = result.getLayout();
  if (scales.getRank() != 3 ||
      scales.getDimSize(1) != expected.getDimSize(1) ||
      scales.getDimSize(2) != expected.getDimSize(2) ||
      !compatible(scales.getDimSize(0), expected.getDimSize(0)))
    return emitOpError() << "scales " << scales << " do not match layout "
                         << layout << ": expected [NB, "
                         << dimString(expected.getDimSize(1)) << ", "
                         << expected.getDimSize(2) << "] (NB = "
                         << (layout.isPerTensor()   ? "1"
                             : layout.isPerToken() ? "T"
                                                   : "number of token blocks")
                         << ")";
  int64_t tokens = payload.getDimSize(0), blocks = scales.getDimSize(0);
  if (layout.isTokenBlock() && !ShapedType::isDynamic(tokens) &&
      !ShapedType::isDynamic(blocks)) {
    int64_t tb = layout.getTokenBlock();
    int64_t fewest = (tokens + tb - 1) / tb;
    if (blocks < fewest || blocks > tokens)
      return emitOpError() << tokens << " tokens in document-local blocks of "
                           << tb << " need between " << fewest << " and "
                           << tokens << " scale blocks, got " << blocks;
  }
  return success();
}

LogicalResult QTensorPayloadOp::verify() {
  auto expected = getInput().getType().getPayloadType();
  auto result = cast<RankedTensorType>(getResult().getType());
  if (result.getElementType() != expected.getElementType() ||
      failed(verifyCompatibleShape(result.getShape(), expected.getShape())))
    return emitOpError() << "result must be " << expected << ", got "
                         << result;
  return success();
}

LogicalResult QTensorScalesOp::verify() {
  auto expected = getInput().getType().getScalesType();
  auto result = cast<RankedTensorType>(getResult().getType());
  if (result.getElementType() != expected.getElementType() ||
      failed(verifyCompatibleShape(result.getShape(), expected.getShape())))
    return emitOpError() << "result must be " << expected << ", got "
                         << result;
  return success();
}

//===----------------------------------------------------------------------===//
// flamia.attention_fwd / flamia.attention_bwd
//===----------------------------------------------------------------------===//

LogicalResult AttentionFwdOp::verify() {
  FailureOr<AttentionDims> dims =
      verifyQKV(*this, getQ(), getK(), getV(), "q", "k", "v");
  if (failed(dims) ||
      failed(verifyAttentionAttrs(*this, getSoftmaxScale(), getCuSeqlens())))
    return failure();
  if (failed(verifyGemmPair(*this, "S = Q K^T", "q", isQuantized(getQ()), "k",
                            isQuantized(getK()))) ||
      failed(verifyGemmPair(*this, "O = P V", "p", getP().isQuantized(), "v",
                            isQuantized(getV()))) ||
      failed(verifyGemmOperand(*this, getQ(), "q in S = Q K^T",
                               Contraction::HeadDim)) ||
      failed(verifyGemmOperand(*this, getK(), "k in S = Q K^T",
                               Contraction::HeadDim)) ||
      failed(verifyGemmOperand(*this, getV(), "v in O = P V",
                               Contraction::Tokens)))
    return failure();
  if (failed(verifySafeOperands(*this, getRecipe(), getSafe(),
                                {getQ(), getK(), getV()}, {"q", "k", "v"})))
    return failure();
  if (failed(verifyGradient(*this, getO(), "o", getQ(), "q")))
    return failure();
  return verifyLse(*this, getLse().getType(), *dims);
}

LogicalResult AttentionBwdOp::verify() {
  FailureOr<AttentionDims> dims =
      verifyQKV(*this, getQ(), getK(), getDovV(), "q", "k", "dov v");
  if (failed(dims) ||
      failed(verifyAttentionAttrs(*this, getSoftmaxScale(), getCuSeqlens())))
    return failure();
  FailureOr<PackedShape> qShape = getPackedShape(*this, getQ(), "q");
  FailureOr<PackedShape> kShape = getPackedShape(*this, getK(), "k");
  if (failed(qShape) || failed(kShape))
    return failure();
  if (failed(verifySameShape(*this, getDovGradO(), "dov grad_o", *qShape,
                             "q")) ||
      failed(verifySameShape(*this, getDskK(), "dsk k", *kShape, "k")) ||
      failed(verifySameShape(*this, getDsqQ(), "dsq q", *qShape, "q")) ||
      failed(verifySameShape(*this, getPdoGradO(), "pdo grad_o", *qShape,
                             "q")) ||
      failed(verifySameShape(*this, getO(), "o", *qShape, "q")))
    return failure();

  bool dsQuantized = getDs().isQuantized();
  if (dsQuantized && getDs().getFixedScale())
    return emitOpError() << "ds is not bounded by 1, so a fixed scale cannot "
                            "represent it: use an online scale (e.g. "
                            "#flamia.precision<f8E4M3FN, online = 32>)";
  if (failed(verifyGemmPair(*this, "S = Q K^T", "q", isQuantized(getQ()), "k",
                            isQuantized(getK()))) ||
      failed(verifyGemmPair(*this, "dP = dO V^T", "dov grad_o",
                            isQuantized(getDovGradO()), "dov v",
                            isQuantized(getDovV()))) ||
      failed(verifyGemmPair(*this, "dQ = dS K", "ds", dsQuantized, "dsk k",
                            isQuantized(getDskK()))) ||
      failed(verifyGemmPair(*this, "dK = dS^T Q", "ds", dsQuantized, "dsq q",
                            isQuantized(getDsqQ()))) ||
      failed(verifyGemmPair(*this, "dV = P^T dO", "p", getP().isQuantized(),
                            "pdo grad_o", isQuantized(getPdoGradO()))))
    return failure();
  if (failed(verifyGemmOperand(*this, getDskK(), "k in dQ = dS K",
                               Contraction::Tokens)) ||
      failed(verifyGemmOperand(*this, getDsqQ(), "q in dK = dS^T Q",
                               Contraction::Tokens)) ||
      failed(verifyGemmOperand(*this, getPdoGradO(), "grad_o in dV = P^T dO",
                               Contraction::Tokens)))
    return failure();
  if (failed(verifySafeOperands(
          *this, getRecipe(), getSafe(),
          {getQ(), getK(), getDovV(), getDovGradO()},
          {"q", "k", "v", "grad_o"})))
    return failure();
  if (failed(verifyLse(*this, getLse().getType(), *dims)) ||
      failed(verifyGradient(*this, getGradQ(), "grad_q", getQ(), "q")) ||
      failed(verifyGradient(*this, getGradK(), "grad_k", getK(), "k")) ||
      failed(verifyGradient(*this, getGradV(), "grad_v", getDovV(), "dov v")))
    return failure();
  return success();
}
