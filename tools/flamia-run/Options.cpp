//===- Options.cpp - flamia-run's command line ----------------------------===//

#include "Options.h"

#include "flamia/Support/Validation.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

namespace flamia::run {

const char *usage() {
  return R"(usage: flamia-run --artifacts DIR [options]
       flamia-run --selftest [--device N]

Runs the kernels of an artifact directory (manifest.json + cubins written by
flamia-compile) through the FLAMIA C API on random (or .npy) packed inputs,
and optionally checks them against the CPU reference (FlamiaNumerics) and
benchmarks them. Prints a table; exits 0 only if every check passes.

inputs
  --workload W      single | fixed2k | lognormal1k | tiny34 | docs:L1,L2,...
                    (document lengths; 0 allowed). Default: single.
  --tokens T        total tokens (default: 4096 with --check/--leakcheck,
                    else 32768; tiny34 278528; docs: the sum)
  --heads H         query heads (default 16)
  --kv-heads HKV    key/value heads (default: H)
  --seed S          random seed (default 1)
  --outliers        outlier inputs: K channels {3,17,64%D,D-5} x100, Q and V
                    tokens t % 61 == 7 x100
  --softmax-scale S (default: the manifest's, else 1/sqrt(D))
  --q Q.npy --k K.npy --v V.npy [--cu-seqlens CU.npy]
                    float32 inputs holding bf16 values ([T,Hq,D], [T,Hkv,D],
                    int32 [num_docs+1]) instead of random ones
  --device N        CUDA device ordinal (default 0)

checks
  --check           quantized payloads and scales of every workspace copy bit
                    for bit vs the numerics quantizer; O and LSE vs the
                    CPU mxfp8 reference (and the float64 reference)
  --ref-heads N     query heads compared with the reference (a multiple of
                    Hq/Hkv; 0 = all; default: as many as fit --ref-budget)
  --ref-budget F    multiply-adds the reference may cost (default 1.5e11)
  --leakcheck       L1/L2 perturbation checks on the GPU, bit for bit
  --sanitize-friendly
                    zero the workspace, fill outputs with NaN, synchronize
                    after every kernel (for compute-sanitizer); no --bench
  --dump DIR        with --check: write inputs, outputs and references as
                    .npy to DIR (created if missing; a failed write is an
                    error, exit 2)

benchmark
  --bench N         time N iterations (after --warmup, default 3) with CUDA
                    events; medians; TFLOP/s with the causal FLOP count
  --quantize-match S  kernels whose name contains S are the quantization
                    (default "quant")
  -v, --verbose     print the manifest's kernels and the launch shapes
  --version         print FLAMIA's version

self-test (no FLAMIA kernel needed)
  --selftest        run a hand-written PTX kernel (JIT-compiled by the
                    driver) that echoes its parameters, the work counter, the
                    cluster size and dynamic shared memory; compare with what
                    the runtime packed and uploaded
)";
}

namespace {

bool parseInt(const std::string &s, int64_t &out) {
  if (s.empty())
    return false;
  errno = 0;
  char *end = nullptr;
  long long v = strtoll(s.c_str(), &end, 10);
  if (errno || *end)
    return false;
  out = v;
  return true;
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

bool parseOptions(int argc, char **argv, RunOptions &o, bool &help,
                  std::string &error) {
  static const std::set<std::string> valued = {
      "--artifacts",      "--workload", "--tokens",    "--heads",
      "--kv-heads",       "--seed",     "--device",    "--softmax-scale",
      "--bench",          "--warmup",   "--ref-heads", "--ref-budget",
      "--quantize-match", "--q",        "--k",         "--v",
      "--cu-seqlens",     "--dump"};
  static const std::set<std::string> flags = {
      "--check", "--leakcheck", "--sanitize-friendly", "--outliers", "--help",
      "-h",      "-v",          "--verbose",           "--selftest",
      "--version"};
  help = false;
  std::map<std::string, std::string> values;
  std::set<std::string> seen;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], name = arg, value;
    bool inlineValue = false;
    if (size_t eq = arg.find('='); eq != std::string::npos && arg[0] == '-') {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      inlineValue = true;
    }
    if (flags.count(name)) {
      if (inlineValue) {
        error = "option " + name + " takes no value";
        return false;
      }
      seen.insert(name);
    } else if (valued.count(name)) {
      if (!inlineValue) {
        if (i + 1 >= argc) {
          error = "option " + name + " needs a value";
          return false;
        }
        value = argv[++i];
      }
      values[name] = value;
    } else {
      error = arg[0] == '-' ? "unknown option " + arg
                            : "unexpected argument '" + arg + "'";
      return false;
    }
  }
  if (seen.count("--help") || seen.count("-h")) {
    help = true;
    return true;
  }
  if (seen.count("--version")) {
    o.version = true;
    return true;
  }
  auto integer = [&](const char *name, int64_t min, int64_t max, int64_t &out) {
    auto it = values.find(name);
    if (it == values.end())
      return true;
    int64_t v;
    if (!parseInt(it->second, v) || v < min || v > max) {
      error = std::string(name) + " expects an integer in [" +
              std::to_string(min) + ", " + std::to_string(max) + "], got '" +
              it->second + "'";
      return false;
    }
    out = v;
    return true;
  };
  o.selfTest = seen.count("--selftest");
  if (!values.count("--artifacts") && !o.selfTest) {
    error = "--artifacts DIR is required";
    return false;
  }
  if (o.selfTest && values.count("--artifacts")) {
    error = "--selftest brings its own artifacts (no --artifacts)";
    return false;
  }
  if (values.count("--artifacts"))
    o.artifacts = values["--artifacts"];
  if (values.count("--workload"))
    o.workload = values["--workload"];
  int64_t seed = static_cast<int64_t>(o.seed), device = o.device,
          bench = o.bench, warmup = o.warmup;
  if (!integer("--tokens", 0, INT32_MAX, o.tokens) ||
      !integer("--heads", 1, 65535, o.heads) ||
      !integer("--kv-heads", 1, 65535, o.kvHeads) ||
      !integer("--seed", 0, INT64_MAX, seed) ||
      !integer("--device", 0, 1024, device) ||
      !integer("--bench", 1, 1000000, bench) ||
      !integer("--warmup", 0, 1000, warmup) ||
      !integer("--ref-heads", 0, 65535, o.refHeads))
    return false;
  o.seed = static_cast<uint64_t>(seed);
  o.device = static_cast<int>(device);
  o.bench = static_cast<int>(bench);
  o.warmup = static_cast<int>(warmup);
  o.headsGiven = values.count("--heads") || values.count("--kv-heads");
  if (o.kvHeads < 0)
    o.kvHeads = o.heads;
  if (values.count("--softmax-scale")) {
    double s;
    const std::string &text = values["--softmax-scale"];
    if (!parseDouble(text, s) && std::isfinite(s)) {
      error = "--softmax-scale expects a number, got '" + text + "'";
      return false;
    }
    // The rule of every tool and the runtime, on the value as given and on
    // its float32 rounding (what the kernels receive).
    if (!validation::validateFloat32SoftmaxScale(s, text, error)) {
      error = "--softmax-scale " + text + ": " + error;
      return false;
    }
    o.softmaxScale = static_cast<float>(s);
  }
  if (values.count("--ref-budget") &&
      (!parseDouble(values["--ref-budget"], o.refBudget) || o.refBudget <= 0)) {
    error = "--ref-budget expects a positive number";
    return false;
  }
  if (values.count("--quantize-match"))
    o.quantizeMatch = values["--quantize-match"];
  o.qNpy = values.count("--q") ? values["--q"] : "";
  o.kNpy = values.count("--k") ? values["--k"] : "";
  o.vNpy = values.count("--v") ? values["--v"] : "";
  o.cuNpy = values.count("--cu-seqlens") ? values["--cu-seqlens"] : "";
  o.dumpDir = values.count("--dump") ? values["--dump"] : "";
  const bool anyNpy = !o.qNpy.empty() || !o.kNpy.empty() || !o.vNpy.empty();
  if (anyNpy && (o.qNpy.empty() || o.kNpy.empty() || o.vNpy.empty())) {
    error = "--q, --k and --v go together";
    return false;
  }
  if (!o.cuNpy.empty() && !anyNpy) {
    error = "--cu-seqlens needs --q, --k and --v";
    return false;
  }
  o.check = seen.count("--check");
  if (!o.dumpDir.empty() && !o.check) {
    error = "--dump DIR writes what --check compares; it needs --check";
    return false;
  }
  o.leakcheck = seen.count("--leakcheck");
  o.sanitizeFriendly = seen.count("--sanitize-friendly");
  o.outliers = seen.count("--outliers");
  o.verbose = seen.count("-v") || seen.count("--verbose");
  if (o.sanitizeFriendly && o.bench) {
    error = "--sanitize-friendly and --bench do not go together (the "
            "sanitizer's timings mean nothing)";
    return false;
  }
  if (anyNpy && (values.count("--workload") || values.count("--tokens") ||
                 o.headsGiven || o.outliers)) {
    error = "--workload, --tokens, --heads, --kv-heads and --outliers "
            "describe random inputs; with --q/--k/--v everything comes from "
            "the files";
    return false;
  }
  return true;
}

} // namespace flamia::run
