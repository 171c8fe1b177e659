//===- ArrayFiles.h - Validated .npy inputs and all-or-nothing outputs -*- C++ -*-===//
//
// Shared by the flamia-ref subcommands: every input is read and checked
// (dtype, rank, shape) before anything is written, and outputs are written
// all or nothing (a failed write removes the files already written).
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_TOOLS_FLAMIAREF_ARRAYFILES_H
#define FLAMIA_TOOLS_FLAMIAREF_ARRAYFILES_H

#include "flamia/Numerics/DocumentLayout.h"
#include "flamia/Support/Npy.h"

#include <string>
#include <utility>
#include <vector>

namespace flamia::ref {

/// Reads `path` and checks its dtype and rank. `what` names the role in
/// messages ("Q", "input"). On failure sets `error`.
bool loadArray(const std::string &path, const char *what, NpyDType dtype,
               size_t rank, const char *shapeHint, NpyArray &out,
               std::string &error);

/// Reads cu_seqlens (int32 [num_docs + 1]) and validates it against T.
bool loadCuSeqlens(const std::string &path, int64_t numTokens,
                   numerics::DocumentLayout &out, std::string &error);

/// Writes every (path, array); on any failure removes the files it wrote.
bool writeAll(const std::vector<std::pair<std::string, NpyArray>> &outputs,
              std::string &error);

/// A float32 array of `shape` holding `values`.
NpyArray floatArray(std::vector<int64_t> shape, const std::vector<float> &values);

/// Strict number parsing for option values.
bool parseInt(const std::string &text, int64_t &out);
bool parseFloat(const std::string &text, float &out);
/// "300,45,0" -> {300, 45, 0}.
bool parseIntList(const std::string &text, std::vector<int64_t> &out);

/// Prints "flamia-ref CMD: error: MESSAGE" to stderr and returns 2.
int badInput(const char *command, const std::string &message);

} // namespace flamia::ref

#endif // FLAMIA_TOOLS_FLAMIAREF_ARRAYFILES_H
