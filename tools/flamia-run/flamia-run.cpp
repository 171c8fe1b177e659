//===- flamia-run.cpp - Run, check and time FLAMIA kernels on a GPU -------===//
//
// Runs the kernels of an artifact directory through the C API on random (or
// .npy) packed-document inputs; compares quantized copies, O and LSE with the
// CPU reference; checks L1/L2 by perturbation; benchmarks. See usage() and
// docs/runtime.md.
//
//===----------------------------------------------------------------------===//

#include "Bench.h"
#include "Checks.h"
#include "Options.h"
#include "Report.h"
#include "SelfTest.h"
#include "Session.h"
#include "Workload.h"

#include "flamia/Runtime/Manifest.h"
#include "flamia/Support/Version.h"

#include <chrono>
#include <cstdio>
#include <cerrno>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

using namespace flamia;
using namespace flamia::run;
using runtime::ErrorCode;
using runtime::Status;

namespace {

int exitCodeOf(const Status &s) {
  switch (s.code) {
  case ErrorCode::InvalidArgument:
  case ErrorCode::InvalidManifest:
  case ErrorCode::InvalidArtifact:
  case ErrorCode::NotFound:
    return kExitBadInput;
  default:
    return kExitRuntimeError;
  }
}

int fail(const Status &s) {
  const std::string category = runtime::errorCodeString(s.code);
  if (s.message.compare(0, category.size(), category) == 0)
    fprintf(stderr, "flamia-run: error: %s\n", s.message.c_str());
  else
    fprintf(stderr, "flamia-run: error: %s: %s\n", category.c_str(),
            s.message.c_str());
  return exitCodeOf(s);
}

/// --dump DIR: created if missing; it must be a writable directory. Checked
/// before any work, so that a bad path costs nothing.
bool prepareDumpDirectory(const std::string &dir, std::string &error) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    error = "--dump " + dir + ": cannot create the directory: " +
            std::strerror(errno);
    return false;
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    error = "--dump " + dir + ": not a directory";
    return false;
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    error = "--dump " + dir + ": cannot write to the directory: " +
            std::strerror(errno);
    return false;
  }
  return true;
}

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since)
      .count();
}

} // namespace

int main(int argc, char **argv) {
  RunOptions options;
  bool help = false;
  std::string error;
  if (!parseOptions(argc, argv, options, help, error)) {
    fprintf(stderr, "flamia-run: %s\n\n%s", error.c_str(), usage());
    return kExitBadInput;
  }
  if (help) {
    fputs(usage(), stdout);
    return kExitPass;
  }
  if (options.version) {
    printf("flamia-run %s\n", versionBanner());
    return kExitPass;
  }
  if (!options.dumpDir.empty() &&
      !prepareDumpDirectory(options.dumpDir, error)) {
    fprintf(stderr, "flamia-run: %s\n", error.c_str());
    return kExitBadInput;
  }
  if (options.selfTest) {
    Report report;
    Status s = runSelfTest(options, report);
    if (!s.ok())
      return fail(s);
    printf("\n");
    report.print(stdout);
    printf("\n%s: %d check%s failed\n", report.pass() ? "PASS" : "FAIL",
           report.failures(), report.failures() == 1 ? "" : "s");
    return report.pass() ? kExitPass : kExitCheckFailed;
  }

  // The manifest first (no driver needed), for the head dim of the inputs.
  runtime::Manifest manifest;
  Status s = runtime::loadManifest(options.artifacts, manifest);
  if (!s.ok())
    return fail(s);

  // Sizes first (cheap: cu_seqlens and the dimensions), then the driver, the
  // device and its memory, and only then the inputs, which can take long.
  HostBatch batch;
  auto t0 = std::chrono::steady_clock::now();
  if (!options.qNpy.empty()) {
    if (!loadNpyInputs(options, batch, error))
      return fail(runtime::invalidArgument(error));
  } else {
    if (!makeCuSeqlens(options, batch.cu, error))
      return fail(runtime::invalidArgument(error));
    batch.T = batch.cu.back();
    batch.Hq = options.heads;
    batch.Hkv = options.kvHeads;
    batch.D = manifest.headDim;
    if (batch.Hq % batch.Hkv != 0)
      return fail(runtime::invalidArgument(
          "--heads " + std::to_string(batch.Hq) +
          " is not a multiple of --kv-heads " + std::to_string(batch.Hkv)));
  }
  if (!checkBatchSize(batch, options, error))
    return fail(runtime::invalidArgument(error));
  double inputSeconds = seconds(t0);

  Session session;
  s = session.open(options, batch);
  if (!s.ok())
    return fail(s);
  if (options.qNpy.empty()) {
    t0 = std::chrono::steady_clock::now();
    generateInputs(batch, options.seed, options.outliers);
    inputSeconds = seconds(t0);
  }
  if (options.backward && options.gradONpy.empty())
    generateGradO(batch, options.seed);
  if (options.backward && !options.gradONpy.empty() &&
      !loadGradO(options.gradONpy, batch, error))
    return fail(runtime::invalidArgument(error));
  s = session.uploadInputs();
  if (!s.ok())
    return fail(s);

  flamia_device_info dev;
  memset(&dev, 0, sizeof dev);
  dev.struct_size = sizeof dev;
  flamia_runtime_get_device_info(session.runtime(), &dev);
  int64_t longest = 0, empty = 0;
  for (int64_t d = 0; d < batch.numDocs(); ++d) {
    longest = std::max<int64_t>(longest, batch.docLength(d));
    empty += batch.docLength(d) == 0;
  }
  printf("flamia-run: %s (device %d, cc %d.%d, %d SMs, driver %d)\n", dev.name,
         dev.ordinal, dev.compute_major, dev.compute_minor, dev.num_sms,
         dev.driver_version);
  printf("  artifacts %s: target %s, recipe %s%s, head_dim %lld, %s, %zu "
         "kernels:",
         options.artifacts.c_str(), flamia_runtime_target(session.runtime()),
         manifest.recipe.kind.empty() ? "-" : manifest.recipe.kind.c_str(),
         manifest.recipe.strict ? " (strict)" : "",
         static_cast<long long>(manifest.headDim),
         manifest.causal ? "causal" : "non-causal",
         flamia_runtime_num_kernels(session.runtime()));
  for (size_t k = 0; k < flamia_runtime_num_kernels(session.runtime()); ++k)
    printf(" %s", flamia_runtime_kernel_name(session.runtime(), k));
  printf("\n  batch: %s, T %lld, %lld documents (%lld empty, longest %lld), "
         "Hq %lld, Hkv %lld, D %lld, seed %llu%s (%.1f s to make)\n",
         options.qNpy.empty() ? options.workload.c_str() : "npy",
         static_cast<long long>(batch.T),
         static_cast<long long>(batch.numDocs()), static_cast<long long>(empty),
         static_cast<long long>(longest), static_cast<long long>(batch.Hq),
         static_cast<long long>(batch.Hkv), static_cast<long long>(batch.D),
         static_cast<unsigned long long>(options.seed),
         options.outliers ? ", outliers" : "", inputSeconds);
  if (manifest.schedule.present) {
    ScheduleOrder order =
        options.scheduleOrder.value_or(manifest.schedule.order);
    printf("  schedule order: %s%s\n", scheduleOrderName(order),
           options.scheduleOrder ? " (--schedule-order)" : "");
  }
  if (options.verbose)
    for (const runtime::ManifestKernel &k : manifest.kernels)
      printf("  kernel %s: grid [%s, %s, %s], block [%u, %u, %u], cluster "
             "[%u, %u, %u], %lld bytes dynamic smem, %zu params\n",
             k.name.c_str(), k.grid[0].text().c_str(), k.grid[1].text().c_str(),
             k.grid[2].text().c_str(), k.block[0], k.block[1], k.block[2],
             k.cluster[0], k.cluster[1], k.cluster[2],
             static_cast<long long>(k.smemBytes), k.params.size());

  // One forward (with --backward: the training step); everything else
  // compares against it.
  t0 = std::chrono::steady_clock::now();
  validation::device::TrainingOutputs run;
  s = options.backward ? runTraining(session, run) : session.forward();
  if (!s.ok())
    return fail(s);
  printf("  %s: ok (%.3f s including host preparation)\n",
         options.backward ? "training step (forward + backward)" : "forward",
         seconds(t0));
  std::vector<uint16_t> o;
  std::vector<float> lse;
  if (options.backward) {
    o = run.o;
    lse = run.lse;
  } else {
    s = session.downloadOutputs(o, lse);
    if (!s.ok())
      return fail(s);
  }

  Report report;
  checkOutputsWritten(o, lse, report);
  if (options.backward)
    checkGradientsWritten(run, report);
  if (options.check) {
    t0 = std::chrono::steady_clock::now();
    s = checkQuantizedCopies(session, options, o, report);
    if (!s.ok())
      return fail(s);
    s = checkReference(session, options, o, lse, report);
    if (!s.ok())
      return fail(s);
    if (options.backward) {
      s = checkGradients(session, options, run, report);
      if (!s.ok())
        return fail(s);
      s = checkRecomputedScores(session, report);
      if (!s.ok())
        return fail(s);
    }
    printf("  reference checks: %.1f s\n", seconds(t0));
  }
  if (options.leakcheck) {
    t0 = std::chrono::steady_clock::now();
    s = checkLeaks(session, batch, options, o, lse, report);
    if (!s.ok())
      return fail(s);
    if (options.backward) {
      s = checkTrainingLeaks(session, batch, options, run, report);
      if (!s.ok())
        return fail(s);
    }
    printf("  leak checks: %.1f s\n", seconds(t0));
  }
  printf("\n");
  report.print(stdout);

  if (options.bench) {
    s = options.backward ? runTrainingBenchmark(session, options)
                         : runBenchmark(session, options);
    if (!s.ok())
      return fail(s);
  }
  printf("\n%s: %d check%s failed\n", report.pass() ? "PASS" : "FAIL",
         report.failures(), report.failures() == 1 ? "" : "s");
  return report.pass() ? kExitPass : kExitCheckFailed;
}
