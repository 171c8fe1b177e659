//===- FlamiaDialect.cpp - The flamia dialect -------------------*- C++ -*-===//
#include "flamia/Dialect/FlamiaDialect.h"
#include "flamia/Dialect/FlamiaOps.h"

using namespace mlir;
using namespace flamia;

#include "Flamia/FlamiaDialect.cpp.inc"

void FlamiaDialect::initialize() {
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "Flamia/FlamiaOps.cpp.inc"
      >();
}
