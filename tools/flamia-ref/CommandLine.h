//===- CommandLine.h - Option parsing for flamia-ref subcommands -*- C++ -*-===//
//
// flamia-ref's subcommands declare and parse their options with the plain
// tools' shared parser (include/flamia/Support/CommandLine.h).
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_TOOLS_FLAMIAREF_COMMANDLINE_H
#define FLAMIA_TOOLS_FLAMIAREF_COMMANDLINE_H

#include "flamia/Support/CommandLine.h"

namespace flamia::ref {

/// Exit code for bad input (usage errors, unreadable or malformed files).
constexpr int kExitBadInput = 2;

using CommandLine = flamia::cli::CommandLine;

} // namespace flamia::ref

#endif // FLAMIA_TOOLS_FLAMIAREF_COMMANDLINE_H
