//===- GraphInterpreter.cpp - Run graph-level flamia IR on the CPU --------===//
//
// The driver: binds the arguments, executes the ops of the function's single
// block in order and returns what func.return returns. Constants, the float
// conversions the graph passes insert (arith.truncf / arith.extf on tensors)
// and flamia.quantize / flamia.dequantize are executed here; the attention
// ops in AttentionOps.cpp.
//
//===----------------------------------------------------------------------===//
#include "flamia/Interpreter/GraphInterpreter.h"

#include "Environment.h"

#include "flamia/Numerics/Formats.h"
#include "flamia/Numerics/Quantizer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace flamia;
using namespace flamia::interp;
namespace num = ::flamia::numerics;

//===----------------------------------------------------------------------===//
// Environment helpers
//===----------------------------------------------------------------------===//

TensorPtr Environment::getTensor(Value value) const {
  auto it = values_.find(value);
  if (it == values_.end())
    return nullptr;
  if (auto *t = std::get_if<TensorPtr>(&it->second))
    return *t;
  return nullptr;
}

QTensorPtr Environment::getQTensor(Value value) const {
  auto it = values_.find(value);
  if (it == values_.end())
    return nullptr;
  if (auto *t = std::get_if<QTensorPtr>(&it->second))
    return *t;
  return nullptr;
}

FailureOr<std::vector<int64_t>>
interp::getDocumentStarts(Operation *op, const Environment &env, Value cu,
                          int64_t numTokens) {
  if (!cu)
    return std::vector<int64_t>{0, numTokens};
  TensorPtr t = env.getTensor(cu);
  if (!t || t->element != HostElement::I32 || t->shape.size() != 1)
    return op->emitOpError() << "cannot be interpreted: cu_seqlens is not a "
                                "rank-1 i32 tensor";
  DocumentLayout docs;
  if (num::Status s =
          DocumentLayout::fromCuSeqlens(t->ints, numTokens, docs);
      !s)
    return op->emitOpError() << "cannot be interpreted: cu_seqlens is not "
                                "valid for "
                             << numTokens << " tokens: " << s.message;
  return std::vector<int64_t>(docs.cuSeqlens().begin(),
                              docs.cuSeqlens().end());
}

LogicalResult interp::checkResultShape(Operation *op, unsigned index,
                                       ArrayRef<int64_t> shape) {
  auto type = dyn_cast<RankedTensorType>(op->getResult(index).getType());
  if (!type || type.getRank() != static_cast<int64_t>(shape.size()))
    return op->emitOpError()
           << "cannot be interpreted: result #" << index
           << " is not a ranked tensor of rank " << shape.size();
  for (auto [i, size] : llvm::enumerate(type.getShape()))
    if (!ShapedType::isDynamic(size) && size != shape[i])
      return op->emitOpError() << "result #" << index << " has type " << type
                               << " but the computed result has size "
                               << shape[i] << " in dimension " << i;
  return success();
}

TensorPtr interp::makeFloatTensor(Type type, ArrayRef<int64_t> shape,
                                  std::vector<float> values) {
  auto t = std::make_shared<HostTensor>();
  Type element = cast<ShapedType>(type).getElementType();
  t->element = element.isBF16() ? HostElement::BF16 : HostElement::F32;
  t->shape.assign(shape.begin(), shape.end());
  if (t->element == HostElement::BF16)
    for (float &x : values)
      x = num::roundToBf16(x);
  t->values = std::move(values);
  return t;
}

std::optional<num::QuantFormat> interp::getQuantFormat(QTensorType type) {
  Type element = type.getElementType(), scale = type.getScaleType();
  num::QuantFormat format;
  if (isa<Float8E4M3FNType>(element))
    format.element = num::ElementFormat::E4M3;
  else if (isa<Float8E5M2Type>(element))
    format.element = num::ElementFormat::E5M2;
  else if (isa<Float4E2M1FNType>(element))
    format.element = num::ElementFormat::E2M1;
  else
    return std::nullopt;
  if (isa<Float8E8M0FNUType>(scale))
    format.scale = num::ScaleFormat::E8M0;
  else if (isa<Float8E4M3FNType>(scale) &&
           format.element == num::ElementFormat::E2M1)
    format.scale = num::ScaleFormat::UE4M3;
  else
    return std::nullopt;
  return format;
}

num::ScaleLayout interp::getNumericsLayout(ScaleLayoutAttr layout) {
  if (layout.isPerTensor())
    return num::ScaleLayout::perTensor();
  if (layout.isPerToken())
    return num::ScaleLayout::perToken(layout.getChannelBlock());
  if (layout.isDocumentLocal())
    return num::ScaleLayout::documentLocal(layout.getTokenBlock(),
                                           layout.getChannelBlock());
  return num::ScaleLayout::packed(layout.getTokenBlock(),
                                  layout.getChannelBlock());
}

DocumentLayout interp::makeDocumentLayout(ArrayRef<int64_t> starts) {
  std::vector<int32_t> cu(starts.begin(), starts.end());
  DocumentLayout docs;
  // The starts were validated when they were made.
  (void)DocumentLayout::fromCuSeqlens(cu, starts.back(), docs);
  return docs;
}

//===----------------------------------------------------------------------===//
// Ops other than attention
//===----------------------------------------------------------------------===//

namespace {

LogicalResult executeConstant(arith::ConstantOp op, Environment &env) {
  auto attr = dyn_cast<DenseElementsAttr>(op.getValue());
  auto type = dyn_cast<RankedTensorType>(op.getType());
  std::optional<HostElement> element =
      type ? getHostElement(type.getElementType()) : std::nullopt;
  if (!attr || !type || !type.hasStaticShape() || !element)
    return op.emitOpError() << "cannot be interpreted: flamia-interp holds "
                               "only bf16, f32 and i32 tensors, got "
                            << op.getType();
  auto t = std::make_shared<HostTensor>();
  t->element = *element;
  t->shape.assign(type.getShape().begin(), type.getShape().end());
  if (*element == HostElement::I32) {
    for (const APInt &v : attr.getValues<APInt>())
      t->ints.push_back(static_cast<int32_t>(v.getSExtValue()));
  } else {
    for (const APFloat &v : attr.getValues<APFloat>())
      t->values.push_back(v.convertToFloat());
  }
  env.set(op.getResult(), TensorPtr(std::move(t)));
  return success();
}

/// arith.truncf f32 -> bf16 and arith.extf bf16 -> f32 on tensors (the
/// graph passes truncate f32 originals for the safe-block path).
template <typename OpTy>
LogicalResult executeFloatCast(OpTy op, Environment &env) {
  TensorPtr in = env.getTensor(op.getIn());
  auto type = dyn_cast<RankedTensorType>(op.getType());
  if (!in || !in->isFloat() || !type ||
      !getHostElement(type.getElementType()) ||
      type.getElementType().isSignlessInteger())
    return op.emitOpError() << "cannot be interpreted: only bf16 and f32 "
                               "tensors are supported";
  if constexpr (std::is_same_v<OpTy, arith::TruncFOp>) {
    if (op.getRoundingmodeAttr() &&
        *op.getRoundingmode() != arith::RoundingMode::to_nearest_even)
      return op.emitOpError() << "cannot be interpreted: only the default "
                                 "rounding (to nearest even) is supported";
  }
  if (failed(checkResultShape(op, 0, in->shape)))
    return failure();
  env.set(op.getResult(), makeFloatTensor(type, in->shape, in->values));
  return success();
}

LogicalResult executeQuantize(QuantizeOp op, Environment &env) {
  TensorPtr in = env.getTensor(op.getInput());
  QTensorType type = op.getResult().getType();
  if (!in || !in->isFloat() || in->shape.size() != 3)
    return op.emitOpError() << "cannot be interpreted: the input is not a "
                               "[T, H, D] float tensor";
  if (!getQuantFormat(type))
    return op.emitOpError()
           << "cannot be interpreted: the numerics library has no "
           << type.getElementType() << " format with " << type.getScaleType()
           << " scales";
  if (op.getGlobalScale() == GlobalScale::amax)
    return op.emitOpError()
           << "cannot be interpreted: global_scale = amax (a data-dependent "
              "per-tensor scale) is not in the numerics contract (NVFP4's "
              "global scale is fixed at 1.0)";
  if (!ShapedType::isDynamic(type.getNumTokens()) &&
      type.getNumTokens() != in->shape[0])
    return op.emitOpError() << "result type " << type << " does not match "
                            << "the input's " << in->shape[0] << " tokens";
  if (num::Status s =
          getNumericsLayout(type.getLayout()).validate(in->shape[2]);
      !s)
    return op.emitOpError() << "cannot be interpreted: " << s.message;
  FailureOr<std::vector<int64_t>> starts =
      getDocumentStarts(op, env, op.getCuSeqlens(), in->shape[0]);
  if (failed(starts))
    return failure();
  auto q = std::make_shared<HostQTensor>();
  q->type = type;
  q->source = in;
  q->documentStarts = std::move(*starts);
  q->producer = op;
  env.set(op.getResult(), QTensorPtr(std::move(q)));
  return success();
}

LogicalResult executeDequantize(DequantizeOp op, Environment &env) {
  QTensorPtr q = env.getQTensor(op.getInput());
  if (!q)
    return op.emitOpError() << "cannot be interpreted: its input is not made "
                               "by flamia.quantize in this function";
  const HostTensor &src = *q->source;
  const int64_t T = src.shape[0], H = src.shape[1], D = src.shape[2];
  ScaleLayoutAttr layout = q->type.getLayout();
  if (layout.isTokenBlock() && layout.isDocumentLocal() && op.getCuSeqlens()) {
    FailureOr<std::vector<int64_t>> starts =
        getDocumentStarts(op, env, op.getCuSeqlens(), T);
    if (failed(starts))
      return failure();
    if (*starts != q->documentStarts)
      return op.emitOpError()
             << "cannot be interpreted: its cu_seqlens differ from those the "
                "tensor was quantized with";
  }
  num::QuantizedTensor qt;
  if (num::Status s = num::quantize(
          src.values.data(), T, H, D, makeDocumentLayout(q->documentStarts),
          getNumericsLayout(layout), *getQuantFormat(q->type), qt);
      !s)
    return op.emitOpError() << "cannot be interpreted: " << s.message;
  std::vector<double> exact = qt.dequantizeAll();
  std::vector<float> values(exact.begin(), exact.end());
  if (failed(checkResultShape(op, 0, src.shape)))
    return failure();
  env.set(op.getResult(),
          makeFloatTensor(op.getType(), src.shape, std::move(values)));
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// The driver
//===----------------------------------------------------------------------===//

FailureOr<Interpretation>
flamia::interpretFunction(func::FuncOp func,
                          ArrayRef<TensorPtr> arguments,
                          const InterpreterOptions &options) {
  if (func.isExternal())
    return func.emitOpError() << "cannot be interpreted: it has no body";
  if (!func.getBody().hasOneBlock())
    return func.emitOpError() << "cannot be interpreted: flamia-interp runs "
                                 "functions of a single block";
  Block &body = func.getBody().front();
  if (arguments.size() != body.getNumArguments())
    return func.emitOpError() << "expects " << body.getNumArguments()
                              << " arguments, got " << arguments.size();
  Interpretation out;
  Environment env;
  if (options.traceScores)
    env.scores = &out.scores;
  for (auto [arg, value] : llvm::zip_equal(body.getArguments(), arguments))
    env.set(arg, value);

  SmallVector<TensorPtr> &results = out.results;
  for (Operation &op : body) {
    LogicalResult result =
        llvm::TypeSwitch<Operation *, LogicalResult>(&op)
            .Case([&](arith::ConstantOp c) { return executeConstant(c, env); })
            .Case([&](arith::TruncFOp c) { return executeFloatCast(c, env); })
            .Case([&](arith::ExtFOp c) { return executeFloatCast(c, env); })
            .Case([&](QuantizeOp q) { return executeQuantize(q, env); })
            .Case([&](DequantizeOp d) { return executeDequantize(d, env); })
            .Case<AttentionOp, AttentionGradOp, AttentionFwdOp, AttentionBwdOp>(
                [&](Operation *a) { return executeAttentionOp(a, env); })
            .Case([&](func::ReturnOp r) -> LogicalResult {
              for (auto [i, v] : llvm::enumerate(r.getOperands())) {
                TensorPtr t = env.getTensor(v);
                if (!t)
                  return r.emitOpError()
                         << "cannot be interpreted: operand #" << i
                         << " is not a bf16, f32 or i32 tensor (flamia-interp "
                            "returns tensors only)";
                results.push_back(t);
              }
              return success();
            })
            .Case<QTensorCreateOp, QTensorPayloadOp, QTensorScalesOp>(
                [&](Operation *q) {
                  return q->emitOpError()
                         << "cannot be interpreted: the CPU reference "
                            "quantizes bf16 tensors itself, so operands "
                            "assembled from payloads and scales (or taken "
                            "apart into them) have no meaning to it";
                })
            .Default([&](Operation *other) {
              return other->emitOpError()
                     << "cannot be interpreted: flamia-interp executes "
                        "graph-level flamia ops (attention, attention_grad, "
                        "quantize, dequantize, attention_fwd, attention_bwd), "
                        "arith.constant, arith.truncf, arith.extf and "
                        "func.return";
            });
    if (failed(result))
      return failure();
  }
  return out;
}
