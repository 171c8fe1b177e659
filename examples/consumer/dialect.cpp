//===- dialect.cpp - The installed dialect headers, from outside ----------===//
//
// Includes flamia/Dialect/FlamiaOps.h (and through it the generated
// Flamia/*.h.inc the package installs, and MLIR's headers) and loads the
// dialect into a context: what an MLIR tool built on FLAMIA starts with.
//
//===----------------------------------------------------------------------===//
#include "flamia/Dialect/FlamiaDialect.h"
#include "flamia/Dialect/FlamiaOps.h"

#include "mlir/IR/MLIRContext.h"

#include <cstdio>

int main() {
  mlir::MLIRContext ctx;
  ctx.loadDialect<flamia::FlamiaDialect>();
  int ops = 0;
  for (mlir::RegisteredOperationName op : ctx.getRegisteredOperations())
    ops += op.getDialectNamespace() == "flamia";
  std::printf("dialect: %s with %d ops\n",
              flamia::FlamiaDialect::getDialectNamespace().str().c_str(), ops);
  return ops > 0 ? 0 : 1;
}
