//===- ArrayFiles.h - Validated .npy inputs and all-or-nothing outputs -*- C++ -*-===//
//
// Shared by the flamia-ref subcommands: every input is read and checked
// (dtype, rank, shape) before anything is written, and outputs are written
// all or nothing (a failed write removes the files already written).
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_TOOLS_FLAMIAREF_ARRAYFILES_H
#define FLAMIA_TOOLS_FLAMIAREF_ARRAYFILES_H

#include "flamia/Schedule/DocumentLayout.h"
#include "flamia/Support/Npy.h"

#include <string>
#include <utility>
#include <vector>

namespace flamia::ref {

/// Reads `path` and checks its dtype and rank, and that the shape's element
/// count fits in int64 and matches the data. `what` names the role in
/// messages ("Q", "input"). On failure sets `error`.
bool loadArray(const std::string &path, const char *what, NpyDType dtype,
               size_t rank, const char *shapeHint, NpyArray &out,
               std::string &error);
/// loadArray's checks on an array already read from `path`.
bool loadArrayChecks(const std::string &path, const char *what,
                     NpyDType dtype, size_t rank, const char *shapeHint,
                     NpyArray &out, std::string &error);
/// A [T, H, D] tensor's T must fit cu_seqlens (int32).
bool checkTokenTensor(const NpyArray &a, const char *what, std::string &error);

/// Reads cu_seqlens (int32 [num_docs + 1]) and validates it against T.
bool loadCuSeqlens(const std::string &path, int64_t numTokens,
                   DocumentLayout &out, std::string &error);

/// Writes every (path, array) all or nothing (temporary files renamed into
/// place; on failure nothing is left behind and existing files are kept).
bool writeAll(const std::vector<std::pair<std::string, NpyArray>> &outputs,
              std::string &error);

/// A float32 array of `shape` holding `values`.
NpyArray floatArray(std::vector<int64_t> shape, const std::vector<float> &values);

/// Strict number parsing for option values.
bool parseInt(const std::string &text, int64_t &out);
bool parseFloat(const std::string &text, float &out);
/// --softmax-scale S: a number that is finite and > 0 as a float32
/// (validation::validateSoftmaxScale). On failure sets `error`.
bool parseSoftmaxScale(const std::string &text, float &out, std::string &error);
/// "300,45,0" -> {300, 45, 0}.
bool parseIntList(const std::string &text, std::vector<int64_t> &out);

/// Largest T x Hq x D of the CPU tools' synthetic inputs (float32 tensors of
/// 4 GiB; the reference needs several of them).
constexpr int64_t kMaxSyntheticElements = int64_t{1} << 30;

/// Largest --head-dim of synthetic inputs.
constexpr int64_t kMaxHeadDim = 1024;
/// Largest total of --doc-lengths / --tokens for synthetic inputs (2^24, as
/// documented in each subcommand's usage).
constexpr int64_t kMaxSyntheticTokens = int64_t{1} << 24;

/// Prints "flamia-ref CMD: error: MESSAGE" to stderr and returns 2.
int badInput(const char *command, const std::string &message);

} // namespace flamia::ref

#endif // FLAMIA_TOOLS_FLAMIAREF_ARRAYFILES_H
