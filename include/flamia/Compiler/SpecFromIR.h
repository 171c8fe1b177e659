//===- SpecFromIR.h - Attention specs from graph-level IR ------*- C++ -*-===//
//
// flamia-compile FILE.mlir: the forward attentions a graph-level program
// contains, as AttentionSpecs the compiler driver takes.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_COMPILER_SPECFROMIR_H
#define FLAMIA_COMPILER_SPECFROMIR_H

#include "flamia/Compiler/Compile.h"

#include <string>
#include <vector>

namespace flamia {

struct NamedSpec {
  std::string name; ///< "<function>" or "<function>.<n>" for the n-th (n > 0)
  std::string location; ///< file:line:col of the flamia.attention op
  AttentionSpec spec;
};

/// Parses `path` and returns one spec per graph-level `flamia.attention` op
/// (target and scaleTiles are left at their defaults for the caller to set).
/// A `flamia.attention_grad` of one of them makes its spec a training step
/// (`backward`, the gradients' dtype from its results), unless
/// `forwardOnly`, when it is left out with a note. `notes` gets one line for
/// each op that is not compiled and why (pre-quantized `flamia.attention_fwd`
/// takes operands the kernel set quantizes itself). Returns false with
/// `error` naming the problem when the file does not parse or verify, holds
/// no forward attention to compile, or has a backward that is not the
/// backward of one of its attentions.
bool specsFromFile(const std::string &path, std::vector<NamedSpec> &specs,
                   std::vector<std::string> &notes, std::string &error,
                   bool forwardOnly = false);

} // namespace flamia

#endif // FLAMIA_COMPILER_SPECFROMIR_H
