//===- GraphInterpreter.h - Run graph-level flamia IR on the CPU -*- C++
//-*-===//
//
// Executes a function of graph-level flamia IR with the CPU reference of the
// numerics contract (lib/Numerics), so that a pass can be checked for
// semantic preservation by running the same inputs before and after it
// (docs/passes.md, "Checking that a pass preserves the numbers").
//
// Each attention op is mapped onto one call of the reference with a
// numerics::RecipeConfig built from its attributes and its operands' types:
//
//   flamia.attention / attention_grad   the contract's recipe: preset
//        `mxfp8` with the op's safe_block (absent: none) and strict flag;
//   flamia.attention_fwd / attention_bwd   each GEMM use reads the copy its
//        operand names: a bf16 tensor, or a flamia.quantize result whose
//        type gives the element format and scale layout; `p` and `ds` give
//        P's and dS's precision; the recipe gives the safe block.
//
// Anything the reference cannot express (an op it does not know, NVFP4
// scales, operands quantized outside the program, copies of different
// tensors standing for one operand, ...) is reported as an error on the op;
// nothing is approximated.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_INTERPRETER_GRAPHINTERPRETER_H
#define FLAMIA_INTERPRETER_GRAPHINTERPRETER_H

#include "flamia/Interpreter/HostValues.h"
#include "flamia/Support/MLIR.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

namespace flamia {

/// The log2-domain scores t_ij = fl32(S_ij * softmax_scale * log2 e) one
/// attention op computed (numerics::ScoreTrace): a forward's, or a
/// backward's recomputed rows then columns. P and dS are rounded to E4M3
/// before they reach dQ, dK and dV, so a change in the backward's copies of
/// Q and K for S = Q K^T rarely shows in the gradients; it always shows here.
struct TracedScores {
  std::string opName;
  std::vector<float> values;
};

struct InterpreterOptions {
  /// Record every attention op's scores.
  bool traceScores = false;
};

struct Interpretation {
  SmallVector<std::shared_ptr<const HostTensor>> results;
  std::vector<TracedScores> scores; // in op order, with traceScores
};

/// Runs `func` on `arguments` (one per function argument, shaped like its
/// type with the dynamic sizes filled in) and returns the returned values.
/// Emits an error on the offending op (or the function) and returns failure
/// if some op cannot be executed exactly.
FailureOr<Interpretation>
interpretFunction(func::FuncOp func,
                  ArrayRef<std::shared_ptr<const HostTensor>> arguments,
                  const InterpreterOptions &options = {});

} // namespace flamia

#endif // FLAMIA_INTERPRETER_GRAPHINTERPRETER_H
