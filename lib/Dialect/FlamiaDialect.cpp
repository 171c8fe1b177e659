//===- FlamiaDialect.cpp - The flamia dialect -------------------*- C++ -*-===//
#include "flamia/Dialect/FlamiaDialect.h"

using namespace mlir;
using namespace mlir::flamia;

#include "Flamia/FlamiaDialect.cpp.inc"

void FlamiaDialect::initialize() {}
