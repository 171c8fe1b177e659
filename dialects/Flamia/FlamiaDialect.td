//===- FlamiaDialect.td - The flamia dialect ---------------*- tablegen -*-===//
//
// FLAMIA: blocked, microscaled (MXFP8, NVFP4) causal attention over packed
// variable-length documents. See docs/dialect.md for the introduction.
//
//===----------------------------------------------------------------------===//

#ifndef FLAMIA_DIALECT_TD
#define FLAMIA_DIALECT_TD

include "mlir/IR/OpBase.td"

def Flamia_Dialect : Dialect {
  let name = "flamia";
  let cppNamespace = "::mlir::flamia";
  let summary = "Microscaled, causally safe attention over packed documents";
  let description = [{
    The flamia dialect describes causal attention over packed variable-length
    documents whose operands are microscaled (MXFP8, NVFP4). It has a graph
    level with tensor semantics and a block level that spells out the kernel
    program (work loop, tiles, block-scaled MMAs, online softmax).
  }];
}

#endif // FLAMIA_DIALECT_TD
