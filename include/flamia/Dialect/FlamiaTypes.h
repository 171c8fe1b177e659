//===- FlamiaTypes.h - flamia types -----------------------------*- C++ -*-===//
#ifndef FLAMIA_DIALECT_FLAMIATYPES_H
#define FLAMIA_DIALECT_FLAMIATYPES_H

#include "flamia/Dialect/FlamiaAttrs.h"
#include "flamia/Support/MLIR.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Types.h"

#define GET_TYPEDEF_CLASSES
#include "Flamia/FlamiaTypes.h.inc"

#endif // FLAMIA_DIALECT_FLAMIATYPES_H
