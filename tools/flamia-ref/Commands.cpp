//===- Commands.cpp - The table of flamia-ref subcommands -------*- C++ -*-===//
#include "Commands.h"

namespace flamia::ref {

// Add a subcommand: declare its run function here and add a row below.
int runScheduleCommand(int argc, char **argv);

const Command *commands() {
  static const Command table[] = {
      {"schedule", "varlen work items, LPT order, persistent-grid makespan", runScheduleCommand},
      {nullptr, nullptr, nullptr},
  };
  return table;
}

} // namespace flamia::ref
