//===- TestArtifacts.h - Artifact directories for runtime tests -*- C++ -*-===//
//
// A manifest shaped like docs/runtime-abi.md's (a quantize kernel and a
// persistent forward kernel with a tensor map, the schedule buffers, a
// counter) and fake cubins for the fake driver (FakeCuda.h), written into a
// fresh temporary directory.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_UNITTESTS_RUNTIME_TESTARTIFACTS_H
#define FLAMIA_UNITTESTS_RUNTIME_TESTARTIFACTS_H

#include <string>

namespace flamia::runtime::test {

/// The text of the standard test manifest (head_dim 128, sm_90a).
std::string standardManifest();

/// The fake cubins matching standardManifest(): parameter sizes of
/// flamia_quantize and flamia_attention_fwd.
std::string quantizeCubin();
std::string forwardCubin();

/// A new empty directory under the system's temporary directory.
std::string makeTempDir();

/// Writes `text` to DIR/NAME.
void writeFile(const std::string &dir, const std::string &name,
               const std::string &text);

/// A directory with the standard manifest (or `manifest`) and both cubins.
std::string makeArtifactDir(const std::string &manifest = standardManifest());

/// Replaces the first occurrence of `from` in `text` by `to` (the test fails
/// at the call site if `from` is absent: returns the text unchanged and sets
/// `found` false).
std::string replaceOnce(const std::string &text, const std::string &from,
                        const std::string &to, bool *found = nullptr);

} // namespace flamia::runtime::test

#endif // FLAMIA_UNITTESTS_RUNTIME_TESTARTIFACTS_H
