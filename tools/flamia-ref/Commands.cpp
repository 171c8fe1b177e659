//===- Commands.cpp - The table of flamia-ref subcommands -------*- C++ -*-===//
#include "Commands.h"

namespace flamia::ref {

// Add a subcommand: declare its run function here and add a row below.

const Command *commands() {
  static const Command table[] = {
      {nullptr, nullptr, nullptr},
  };
  return table;
}

} // namespace flamia::ref
