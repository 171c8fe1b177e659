//===- FlamiaAttrs.h - flamia attributes and enums --------------*- C++ -*-===//
#ifndef FLAMIA_DIALECT_FLAMIAATTRS_H
#define FLAMIA_DIALECT_FLAMIAATTRS_H

#include "flamia/Dialect/FlamiaDialect.h"
#include "flamia/Support/MLIR.h"

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"

#include "Flamia/FlamiaEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "Flamia/FlamiaAttrs.h.inc"

namespace flamia {

/// The largest safe block a recipe may ask for (as the runtime's manifest
/// reader) and the largest token block of a scale layout: both keep
/// flamia-verify-causality's proof, which scans a few periods of
/// lcm(token block, safe block) positions, well under a second.
constexpr int64_t kMaxSafeBlock = int64_t(1) << 20;
constexpr int64_t kMaxTokenBlock = 1024;

/// The largest finite value of a payload format (448, 57344, 6), or 0 if
/// `type` is not a payload format FLAMIA supports.
double getFormatMax(Type type);

/// True for the payload formats: f8E4M3FN, f8E5M2, f4E2M1FN.
bool isPayloadFormat(Type type);

} // namespace flamia

#endif // FLAMIA_DIALECT_FLAMIAATTRS_H
