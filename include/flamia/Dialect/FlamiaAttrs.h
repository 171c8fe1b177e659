//===- FlamiaAttrs.h - flamia attributes and enums --------------*- C++ -*-===//
#ifndef FLAMIA_DIALECT_FLAMIAATTRS_H
#define FLAMIA_DIALECT_FLAMIAATTRS_H

#include "flamia/Dialect/FlamiaDialect.h"

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"

#include "Flamia/FlamiaEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "Flamia/FlamiaAttrs.h.inc"

namespace mlir::flamia {

/// The largest finite value of a payload format (448, 57344, 6), or 0 if
/// `type` is not a payload format FLAMIA supports.
double getFormatMax(Type type);

/// True for the payload formats: f8E4M3FN, f8E5M2, f4E2M1FN.
bool isPayloadFormat(Type type);

} // namespace mlir::flamia

#endif // FLAMIA_DIALECT_FLAMIAATTRS_H
