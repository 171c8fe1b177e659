//===- Environment.h - SSA values of a running function ---------*- C++ -*-===//
//
// Private to lib/Interpreter: the value map of one interpretation and the
// helpers the op executors share.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_LIB_INTERPRETER_ENVIRONMENT_H
#define FLAMIA_LIB_INTERPRETER_ENVIRONMENT_H

#include "flamia/Dialect/FlamiaOps.h"
#include "flamia/Interpreter/GraphInterpreter.h"
#include "flamia/Interpreter/HostValues.h"
#include "flamia/Schedule/DocumentLayout.h"
#include "flamia/Numerics/Quantizer.h"
#include "flamia/Numerics/ScaleLayout.h"
#include "flamia/Support/MLIR.h"

#include "llvm/ADT/DenseMap.h"

namespace flamia::interp {

using TensorPtr = std::shared_ptr<const HostTensor>;
using QTensorPtr = std::shared_ptr<const HostQTensor>;

class Environment {
public:
  /// Where attention ops record their scores (null: not traced).
  std::vector<TracedScores> *scores = nullptr;

  void set(Value value, HostValue hostValue) { values_[value] = hostValue; }
  /// The value held by `value`; null if it is not a (q)tensor or not set.
  TensorPtr getTensor(Value value) const;
  QTensorPtr getQTensor(Value value) const;

private:
  llvm::DenseMap<Value, HostValue> values_;
};

/// The document starts given by the optional cu_seqlens operand `cu` of `op`
/// over `numTokens` tokens ([0, T] without one). Emits an error on `op` if
/// cu_seqlens is not valid for T (the message of flamia::DocumentLayout).
FailureOr<std::vector<int64_t>> getDocumentStarts(Operation *op,
                                                  const Environment &env,
                                                  Value cu, int64_t numTokens);

/// Checks that the static sizes of `type` (a ranked tensor type) agree with
/// the computed `shape` of result `index` of `op`.
LogicalResult checkResultShape(Operation *op, unsigned index,
                               ArrayRef<int64_t> shape);

/// A float tensor of `shape` whose element kind is that of `type`'s element
/// type (bf16 or f32); bf16 rounds `values` (RNE).
TensorPtr makeFloatTensor(Type type, ArrayRef<int64_t> shape,
                          std::vector<float> values);

/// The numerics format of a qtensor type (E4M3, E5M2 or E2M1 with E8M0
/// scales; E2M1 with E4M3 scales is NVFP4), or none.
std::optional<numerics::QuantFormat> getQuantFormat(QTensorType type);

/// The numerics layout of a scale layout attribute (per tensor, per token,
/// document-local or packed token blocks).
numerics::ScaleLayout getNumericsLayout(ScaleLayoutAttr layout);

/// The document layout of validated document starts.
DocumentLayout makeDocumentLayout(ArrayRef<int64_t> starts);

/// flamia.attention, attention_grad, attention_fwd, attention_bwd
/// (AttentionOps.cpp).
LogicalResult executeAttentionOp(Operation *op, Environment &env);

} // namespace flamia::interp

#endif // FLAMIA_LIB_INTERPRETER_ENVIRONMENT_H
