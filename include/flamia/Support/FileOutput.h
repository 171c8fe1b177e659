//===- FileOutput.h - All-or-nothing output files ---------------*- C++ -*-===//
//
// Every output file of FLAMIA's plain tools is written here: into a temporary
// file in the same directory (so the final rename stays on one file system),
// every write, the flush and the close checked, then renamed over the
// destination. A failure leaves nothing behind: no temporary, no truncated
// output, and an existing destination untouched.
//
// Plain C++17 (POSIX), no exceptions.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_SUPPORT_FILEOUTPUT_H
#define FLAMIA_SUPPORT_FILEOUTPUT_H

#include "flamia/Support/Npy.h"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace flamia {

/// Writes `size` bytes to `path` atomically. On failure returns false and
/// sets `error` to "PATH: cannot ...: REASON".
bool writeFileAtomically(const std::string &path, const void *data,
                         size_t size, std::string &error);

/// Writes every (path, array) as .npy, all or nothing: every file is written
/// and checked as a temporary first, and only then are they renamed into
/// place. On failure no temporary remains and no destination has changed
/// (except when a rename itself fails midway, which the error says).
bool writeNpyFilesAtomically(
    const std::vector<std::pair<std::string, NpyArray>> &files,
    std::string &error);

} // namespace flamia

#endif // FLAMIA_SUPPORT_FILEOUTPUT_H
