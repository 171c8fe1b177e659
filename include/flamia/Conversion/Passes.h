//===- Passes.h - flamia conversions ----------------------------*- C++ -*-===//
#ifndef FLAMIA_CONVERSION_PASSES_H
#define FLAMIA_CONVERSION_PASSES_H

#include "flamia/Dialect/FlamiaOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

namespace flamia {

#define GEN_PASS_DECL
#include "flamia/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "flamia/Conversion/Passes.h.inc"
#include "flamia/Support/MLIR.h"

} // namespace flamia

#endif // FLAMIA_CONVERSION_PASSES_H
