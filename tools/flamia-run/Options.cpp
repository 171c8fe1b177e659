//===- Options.cpp - flamia-run's command line ----------------------------===//

#include "Options.h"

#include "flamia/Schedule/ScheduleParams.h"
#include "flamia/Support/CommandLine.h"
#include "flamia/Support/Validation.h"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace flamia::run {

namespace {

/// Every option, with the help usage() prints.
cli::CommandLine declareOptions() {
  cli::CommandLine cl;
  cl.allowPositional(false);
  cl.addSection("inputs")
      .addString("--artifacts", "DIR",
                 "manifest.json and cubins written by flamia-compile")
      .addString("--workload", "W",
                 "single | fixed2k | lognormal1k | tiny34 | docs:L1,L2,...\n"
                 "(document lengths; 0 allowed). Default: single.")
      .addInteger("--tokens", "T", 0, INT32_MAX,
                  "total tokens (default: 4096 with --check/--leakcheck,\n"
                  "else 32768; tiny34 278528; docs: the sum)")
      .addInteger("--heads", "H", 1, 65535, "query heads (default 16)")
      .addInteger("--kv-heads", "HKV", 1, 65535, "key/value heads (default: H)")
      .addInteger("--seed", "S", 0, INT64_MAX, "random seed (default 1)")
      .addFlag("--outliers",
               "outlier inputs: K channels {3,17,64%D,D-5} x100, Q and V\n"
               "tokens t % 61 == 7 x100")
      .addString("--softmax-scale", "S",
                 "(default: the manifest's, else 1/sqrt(D))")
      .addString("--q", "Q.npy",
                 "float32 inputs holding bf16 values instead of random\n"
                 "ones: Q [T, Hq, D]; --k, --v and --cu-seqlens with it")
      .addString("--k", "K.npy", "K [T, Hkv, D]")
      .addString("--v", "V.npy", "V [T, Hkv, D]")
      .addString("--cu-seqlens", "CU.npy",
                 "int32 [num_docs+1] (default: one document)")
      .addString("--grad-o", "G.npy",
                 "with --backward: grad_o [T, Hq, D] (float32 holding\n"
                 "bf16 values) instead of random")
      .addInteger("--device", "N", 0, 1024, "CUDA device ordinal (default 0)")
      .addSection("checks")
      .addFlag("--check",
               "quantized payloads and scales of every workspace copy bit\n"
               "for bit vs the numerics quantizer; O and LSE vs the\n"
               "CPU mxfp8 reference (and the float64 reference)")
      .addInteger("--ref-heads", "N", 0, 65535,
                  "query heads compared with the reference (a multiple of\n"
                  "Hq/Hkv; 0 = all; default: as many as fit --ref-budget)")
      .addString("--ref-budget", "F",
                 "multiply-adds the reference may cost (default 1.5e11)")
      .addFlag("--leakcheck",
               "L1/L2 perturbation checks on the GPU, bit for bit")
      .addFlag("--backward",
               "a training-step manifest (backward kernels): grad_o\n"
               "N(0, 1) from the seed; --check adds grad_o's copies, delta\n"
               "and dQ/dK/dV vs the CPU reference, --leakcheck the L2\n"
               "checks of every gradient (and L3 for a strict recipe),\n"
               "--dump dq, dk, dv")
      .addFlag("--l3",
               "with --backward --leakcheck: the L3 checks (dQ_i sees no\n"
               "later token, dK_j and dV_j no earlier one) for any recipe,\n"
               "not only strict ones (mxfp8 is expected to fail them)")
      .addFlag("--sanitize-friendly",
               "zero the workspace, fill outputs with NaN, synchronize\n"
               "after every kernel (for compute-sanitizer); no --bench")
      .addString("--dump", "DIR",
                 "with --check: write inputs, outputs and references as\n"
                 ".npy to DIR (created if missing; a failed write is an\n"
                 "error, exit 2)")
      .addSection("benchmark")
      .addInteger("--bench", "N", 1, 1000000,
                  "time N iterations (after --warmup) with CUDA events;\n"
                  "medians; TFLOP/s with the causal FLOP count")
      .addInteger("--warmup", "N", 0, 1000,
                  "untimed iterations before --bench (default 3)")
      .addString("--schedule-order", "O",
                 "lpt | l2-sections: the order of the work lists instead\n"
                 "of the manifest's (A/B runs of one kernel set)")
      .addString("--quantize-match", "S",
                 "kernels whose name contains S are the quantization\n"
                 "(default \"quant\")")
      .addSection("other")
      .addFlag({"-v", "--verbose"},
               "print the manifest's kernels and the launch shapes")
      .addFlag("--version", "print FLAMIA's version")
      .addFlag({"-h", "--help"}, "print this help")
      .addSection("self-test (no FLAMIA kernel needed)")
      .addFlag("--selftest",
               "run a hand-written PTX kernel (JIT-compiled by the\n"
               "driver) that echoes its parameters, the work counter, the\n"
               "cluster size and dynamic shared memory; compare with what\n"
               "the runtime packed and uploaded");
  return cl;
}

bool parseDouble(const std::string &s, double &out) {
  if (s.empty())
    return false;
  errno = 0;
  char *end = nullptr;
  out = strtod(s.c_str(), &end);
  return !errno && !*end && std::isfinite(out);
}

} // namespace

const char *usage() {
  static const std::string text =
      std::string(
          "usage: flamia-run --artifacts DIR [options]\n"
          "       flamia-run --selftest [--device N]\n"
          "\n"
          "Runs the kernels of an artifact directory (manifest.json + cubins "
          "written by\n"
          "flamia-compile) through the FLAMIA C API on random (or .npy) "
          "packed inputs,\n"
          "and optionally checks them against the CPU reference "
          "(FlamiaNumerics) and\n"
          "benchmarks them. Prints a table; exits 0 only if every check "
          "passes.\n"
          "\n") +
      declareOptions().helpText();
  return text.c_str();
}

bool parseOptions(int argc, char **argv, RunOptions &o, bool &help,
                  std::string &error) {
  help = false;
  cli::CommandLine cl = declareOptions();
  if (!cl.parse(argc, argv, 1, error))
    return false;
  if (cl.flag("--help")) {
    help = true;
    return true;
  }
  if (cl.flag("--version")) {
    o.version = true;
    return true;
  }
  auto text = [&](const char *name) { return cl.value(name).value_or(""); };
  o.selfTest = cl.flag("--selftest");
  if (!cl.given("--artifacts") && !o.selfTest) {
    error = "--artifacts DIR is required";
    return false;
  }
  if (o.selfTest && cl.given("--artifacts")) {
    error = "--selftest brings its own artifacts (no --artifacts)";
    return false;
  }
  o.artifacts = text("--artifacts");
  if (cl.given("--workload"))
    o.workload = text("--workload");
  int64_t seed = static_cast<int64_t>(o.seed), device = o.device,
          bench = o.bench, warmup = o.warmup;
  if (!cl.getInteger("--tokens", o.tokens, error) ||
      !cl.getInteger("--heads", o.heads, error) ||
      !cl.getInteger("--kv-heads", o.kvHeads, error) ||
      !cl.getInteger("--seed", seed, error) ||
      !cl.getInteger("--device", device, error) ||
      !cl.getInteger("--bench", bench, error) ||
      !cl.getInteger("--warmup", warmup, error) ||
      !cl.getInteger("--ref-heads", o.refHeads, error))
    return false;
  o.seed = static_cast<uint64_t>(seed);
  o.device = static_cast<int>(device);
  o.bench = static_cast<int>(bench);
  o.warmup = static_cast<int>(warmup);
  o.headsGiven = cl.given("--heads") || cl.given("--kv-heads");
  if (o.kvHeads < 0)
    o.kvHeads = o.heads;
  if (cl.given("--softmax-scale")) {
    // Parsed here, not as a real option: inf and nan reach the rule below
    // and get its message.
    double s = 0; // what an empty value leaves: "expects a number"
    const std::string scale = text("--softmax-scale");
    if (!parseDouble(scale, s) && std::isfinite(s)) {
      error = "--softmax-scale expects a number, got '" + scale + "'";
      return false;
    }
    // The rule of every tool and the runtime, on the value as given and on
    // its float32 rounding (what the kernels receive).
    if (!validation::validateFloat32SoftmaxScale(s, scale, error)) {
      error = "--softmax-scale " + scale + ": " + error;
      return false;
    }
    o.softmaxScale = static_cast<float>(s);
  }
  if (cl.given("--ref-budget") &&
      (!parseDouble(text("--ref-budget"), o.refBudget) || o.refBudget <= 0)) {
    error = "--ref-budget expects a positive number";
    return false;
  }
  if (cl.given("--schedule-order")) {
    const std::string order = text("--schedule-order");
    ScheduleOrder parsed;
    std::string why;
    if (!parseKernelScheduleOrder(order, parsed, why)) {
      error =
          "--schedule-order expects lpt or l2-sections, got '" + order + "'";
      return false;
    }
    o.scheduleOrder = parsed;
  }
  if (cl.given("--quantize-match"))
    o.quantizeMatch = text("--quantize-match");
  o.qNpy = text("--q");
  o.kNpy = text("--k");
  o.vNpy = text("--v");
  o.cuNpy = text("--cu-seqlens");
  o.dumpDir = text("--dump");
  const bool anyNpy = !o.qNpy.empty() || !o.kNpy.empty() || !o.vNpy.empty();
  if (anyNpy && (o.qNpy.empty() || o.kNpy.empty() || o.vNpy.empty())) {
    error = "--q, --k and --v go together";
    return false;
  }
  if (!o.cuNpy.empty() && !anyNpy) {
    error = "--cu-seqlens needs --q, --k and --v";
    return false;
  }
  o.check = cl.flag("--check");
  if (!o.dumpDir.empty() && !o.check) {
    error = "--dump DIR writes what --check compares; it needs --check";
    return false;
  }
  o.leakcheck = cl.flag("--leakcheck");
  o.l3 = cl.flag("--l3");
  if (o.l3 && !(o.leakcheck && cl.flag("--backward"))) {
    error = "--l3 checks a training step's gradients: it needs --backward "
            "and --leakcheck";
    return false;
  }
  o.backward = cl.flag("--backward");
  o.gradONpy = text("--grad-o");
  if (!o.gradONpy.empty() && !o.backward) {
    error = "--grad-o is the gradient of a training step; it needs --backward";
    return false;
  }
  o.sanitizeFriendly = cl.flag("--sanitize-friendly");
  o.outliers = cl.flag("--outliers");
  o.verbose = cl.flag("--verbose");
  if (o.sanitizeFriendly && o.bench) {
    error = "--sanitize-friendly and --bench do not go together (the "
            "sanitizer's timings mean nothing)";
    return false;
  }
  if (anyNpy && (cl.given("--workload") || cl.given("--tokens") ||
                 o.headsGiven || o.outliers)) {
    error = "--workload, --tokens, --heads, --kv-heads and --outliers "
            "describe random inputs; with --q/--k/--v everything comes from "
            "the files";
    return false;
  }
  return true;
}

} // namespace flamia::run
