//===- FlamiaOps.h - flamia operations --------------------------*- C++ -*-===//
#ifndef FLAMIA_DIALECT_FLAMIAOPS_H
#define FLAMIA_DIALECT_FLAMIAOPS_H

#include "flamia/Dialect/FlamiaAttrs.h"
#include "flamia/Dialect/FlamiaDialect.h"
#include "flamia/Dialect/FlamiaTypes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/IR/SymbolTable.h"

#define GET_OP_CLASSES
#include "Flamia/FlamiaOps.h.inc"

#endif // FLAMIA_DIALECT_FLAMIAOPS_H
