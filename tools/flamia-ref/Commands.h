//===- Commands.h - flamia-ref subcommands ----------------------*- C++ -*-===//
//
// Each subcommand lives in its own file and has the signature
//   int runXCommand(int argc, char **argv);
// where argv[0] is the subcommand's name. It returns 0 on success, 2
// (kExitBadInput) on bad input, 1 when a check it runs fails.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_TOOLS_FLAMIAREF_COMMANDS_H
#define FLAMIA_TOOLS_FLAMIAREF_COMMANDS_H

namespace flamia::ref {

struct Command {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv);
};

/// The registered subcommands, terminated by {nullptr, nullptr, nullptr}.
const Command *commands();

} // namespace flamia::ref

#endif // FLAMIA_TOOLS_FLAMIAREF_COMMANDS_H
