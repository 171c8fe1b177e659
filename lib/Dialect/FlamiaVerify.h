//===- FlamiaVerify.h - checks shared by the op verifiers ------*- C++ -*-===//
//
// Private to lib/Dialect: helpers the verifiers of FlamiaKernelOps.cpp and
// FlamiaTcgen05Ops.cpp share.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_LIB_DIALECT_FLAMIAVERIFY_H
#define FLAMIA_LIB_DIALECT_FLAMIAVERIFY_H

#include "flamia/Support/MLIR.h"

#include "mlir/IR/Operation.h"

namespace flamia {

/// Checks a stage index used with a buffer or pipeline of `stages` stages
/// (`what` names it): a constant must be in range, and a stage that
/// flamia.pipeline.acquire returned must come from a pipeline of as many
/// stages (stage `it % S` of another ring would index the wrong tile).
LogicalResult verifyStage(Operation *op, Value stage, int64_t stages,
                          StringRef what);

} // namespace flamia

#endif // FLAMIA_LIB_DIALECT_FLAMIAVERIFY_H
