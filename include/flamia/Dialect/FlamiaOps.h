//===- FlamiaOps.h - flamia operations --------------------------*- C++ -*-===//
#ifndef FLAMIA_DIALECT_FLAMIAOPS_H
#define FLAMIA_DIALECT_FLAMIAOPS_H

#include "flamia/Dialect/FlamiaAttrs.h"
#include "flamia/Dialect/FlamiaDialect.h"
#include "flamia/Dialect/FlamiaTypes.h"
#include "flamia/Support/MLIR.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/IR/SymbolTable.h"

namespace flamia::OpTrait {
/// Ops that need every thread of a warpgroup (Flamia_WarpgroupWide in
/// FlamiaOps.td): a `single_thread` flamia.role holds none of them.
template <typename ConcreteType>
class WarpgroupWide
    : public ::mlir::OpTrait::TraitBase<ConcreteType, WarpgroupWide> {};
} // namespace flamia::OpTrait

#define GET_OP_CLASSES
#include "Flamia/FlamiaOps.h.inc"

#endif // FLAMIA_DIALECT_FLAMIAOPS_H
