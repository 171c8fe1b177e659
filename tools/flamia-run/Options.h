//===- Options.h - flamia-run's command line --------------------*- C++ -*-===//
#ifndef FLAMIA_TOOLS_FLAMIARUN_OPTIONS_H
#define FLAMIA_TOOLS_FLAMIARUN_OPTIONS_H

#include "flamia/Schedule/ScheduleParams.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace flamia::run {

/// Exit codes (docs/runtime.md, "flamia-run").
constexpr int kExitPass = 0;
constexpr int kExitCheckFailed = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitRuntimeError = 3;

struct RunOptions {
  std::string artifacts;
  std::string workload = "single"; // single|fixed2k|lognormal1k|tiny34|docs:..
  int64_t tokens = -1;             // -1: the workload's default
  int64_t heads = 16;
  int64_t kvHeads = -1;    // -1: = heads
  bool headsGiven = false; // --heads or --kv-heads on the command line
  uint64_t seed = 1;
  bool outliers = false;
  int device = 0;
  float softmaxScale = 0.0f;
  bool check = false;
  bool leakcheck = false;
  /// --backward --leakcheck: also the L3 checks where the recipe is not
  /// strict (a strict manifest gets them anyway).
  bool l3 = false;
  /// Run a training-step manifest's forward and backward kernels (grad_o
  /// generated from the seed), and check the gradients.
  bool backward = false;
  bool sanitizeFriendly = false;
  int bench = 0;
  int warmup = 3;
  /// Query heads compared with the CPU reference: -1 automatic, 0 all.
  int64_t refHeads = -1;
  /// Reference budget (multiply-adds) for the automatic head choice.
  double refBudget = 1.5e11;
  /// Kernels timed as "quantization": names containing this.
  std::string quantizeMatch = "quant";
  /// --schedule-order (unset: the manifest's order).
  std::optional<ScheduleOrder> scheduleOrder;
  std::string qNpy, kNpy, vNpy, cuNpy; // .npy inputs instead of random
  std::string gradONpy;                // --backward: grad_o from .npy
  std::string dumpDir;
  bool verbose = false;
  bool selfTest = false;
  bool version = false; // --version: print it and exit
};

/// Parses argv; on error returns false with a message. `help` is set for
/// --help.
bool parseOptions(int argc, char **argv, RunOptions &out, bool &help,
                  std::string &error);

/// The usage text.
const char *usage();

} // namespace flamia::run

#endif // FLAMIA_TOOLS_FLAMIARUN_OPTIONS_H
