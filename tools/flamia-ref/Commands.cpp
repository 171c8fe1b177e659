//===- Commands.cpp - The table of flamia-ref subcommands -------*- C++ -*-===//
#include "Commands.h"

namespace flamia::ref {

// Add a subcommand: declare its run function here and add a row below.
int runQuantizeCommand(int argc, char **argv);
int runAttentionCommand(int argc, char **argv);
int runLeakCheckCommand(int argc, char **argv);
int runQualityCommand(int argc, char **argv);
int runScheduleCommand(int argc, char **argv);

const Command *commands() {
  static const Command table[] = {
      {"quantize", "quantize a [T, H, D] tensor (MXFP8, MXFP4, NVFP4)",
       runQuantizeCommand},
      {"attention", "CPU reference attention forward (+ backward)",
       runAttentionCommand},
      {"leakcheck", "check L1/L2/L3/Consistency by perturbation",
       runLeakCheckCommand},
      {"quality", "measure recipes against the float64 reference",
       runQualityCommand},
      {"schedule", "varlen work items, LPT order, persistent-grid makespan",
       runScheduleCommand},
      {nullptr, nullptr, nullptr},
  };
  return table;
}

} // namespace flamia::ref
