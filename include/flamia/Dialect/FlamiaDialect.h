//===- FlamiaDialect.h - The flamia dialect ---------------------*- C++ -*-===//
#ifndef FLAMIA_DIALECT_FLAMIADIALECT_H
#define FLAMIA_DIALECT_FLAMIADIALECT_H

#include "flamia/Support/MLIR.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Dialect.h"

#include "Flamia/FlamiaDialect.h.inc"

#endif // FLAMIA_DIALECT_FLAMIADIALECT_H
