//===- Bench.cpp - flamia-run --bench -------------------------------------===//

#include "Bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <set>
#include <vector>

namespace flamia::run {

using runtime::Status;

namespace {

double median(std::vector<double> x) {
  if (x.empty())
    return 0;
  std::sort(x.begin(), x.end());
  const size_t n = x.size();
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

} // namespace

Status runBenchmark(Session &session, const RunOptions &options) {
  flamia_runtime *rt = session.runtime();
  Device &dev = session.device();
  const HostBatch &b = session.batch();
  const runtime::Manifest &m = session.manifest();
  const size_t numKernels = flamia_runtime_num_kernels(rt);

  // The quantization kernels must come first to be timed on their own.
  size_t numQuant = 0;
  while (numQuant < numKernels &&
         m.kernels[numQuant].name.find(options.quantizeMatch) !=
             std::string::npos)
    ++numQuant;
  bool separate = numQuant > 0 && numQuant < numKernels;
  for (size_t k = numQuant; k < numKernels; ++k)
    if (m.kernels[k].name.find(options.quantizeMatch) != std::string::npos)
      separate = false; // a quantization kernel after the forward

  // Host-side cost of a call: validation, cu_seqlens read, schedule, upload,
  // tensor maps (prepare), measured on its own.
  flamia_attention_args args = session.args();
  std::vector<double> prepareMs;
  for (int i = 0; i < std::max(3, std::min(options.bench, 20)); ++i) {
    auto t0 = std::chrono::steady_clock::now();
    flamia_status s = flamia_attention_prepare(rt, &args, dev.stream());
    if (s != FLAMIA_STATUS_OK)
      return capiError(s, "flamia_attention_prepare");
    FLAMIA_RETURN_IF_ERROR(dev.synchronize());
    prepareMs.push_back(std::chrono::duration<double, std::milli>(
                            std::chrono::steady_clock::now() - t0)
                            .count());
  }

  auto launch = [&](size_t first, size_t count) -> Status {
    if (count == 0)
      return Status::success();
    flamia_status s = flamia_runtime_launch(rt, first, count, dev.stream());
    if (s != FLAMIA_STATUS_OK)
      return capiError(s, "flamia_runtime_launch");
    return Status::success();
  };
  for (int i = 0; i < options.warmup; ++i)
    FLAMIA_RETURN_IF_ERROR(launch(0, numKernels));
  FLAMIA_RETURN_IF_ERROR(dev.synchronize());

  CUevent e0, e1, e2;
  FLAMIA_RETURN_IF_ERROR(dev.createEvent(e0));
  FLAMIA_RETURN_IF_ERROR(dev.createEvent(e1));
  FLAMIA_RETURN_IF_ERROR(dev.createEvent(e2));
  std::vector<double> quantMs, fwdMs, totalMs;
  for (int i = 0; i < options.bench; ++i) {
    FLAMIA_RETURN_IF_ERROR(dev.record(e0));
    FLAMIA_RETURN_IF_ERROR(launch(0, separate ? numQuant : 0));
    FLAMIA_RETURN_IF_ERROR(dev.record(e1));
    FLAMIA_RETURN_IF_ERROR(
        launch(separate ? numQuant : 0,
               separate ? numKernels - numQuant : numKernels));
    FLAMIA_RETURN_IF_ERROR(dev.record(e2));
    float a = 0, c = 0;
    FLAMIA_RETURN_IF_ERROR(dev.elapsed(e0, e1, a));
    FLAMIA_RETURN_IF_ERROR(dev.elapsed(e1, e2, c));
    quantMs.push_back(a);
    fwdMs.push_back(c);
    totalMs.push_back(static_cast<double>(a) + c);
  }

  const double flops = forwardFlops(b.cu, b.Hq, b.D, m.causal);
  const double total = median(totalMs), quant = median(quantMs),
               fwd = median(fwdMs);
  // Bytes the quantization kernels move: every buffer they take, once.
  double quantBytes = 0;
  std::set<int> seen;
  for (size_t k = 0; k < numQuant; ++k)
    for (const runtime::ManifestParam &p : m.kernels[k].params) {
      if ((p.kind != runtime::ParamKind::Ptr &&
           p.kind != runtime::ParamKind::TensorMap) ||
          !seen.insert(p.buffer).second)
        continue;
      flamia_buffer_info info;
      memset(&info, 0, sizeof info);
      info.struct_size = sizeof info;
      if (flamia_runtime_get_buffer(rt, m.buffers[p.buffer].name.c_str(),
                                    &info) == FLAMIA_STATUS_OK)
        quantBytes += static_cast<double>(info.bytes);
    }

  printf("\nbenchmark: %d iterations (median), %d warm-up\n", options.bench,
         options.warmup);
  printf("  FLOPs (%s forward, sum over documents of %s L^2 D Hq): %.4g\n",
         m.causal ? "causal" : "non-causal", m.causal ? "2" : "4", flops);
  printf(
      "  host prepare (validate, cu_seqlens, schedule, tensor maps): %.3f ms\n",
      median(prepareMs));
  if (separate) {
    printf("  quantization (%zu kernel%s): %.4f ms, %.4g bytes, %.1f GB/s\n",
           numQuant, numQuant == 1 ? "" : "s", quant, quantBytes,
           quant > 0 ? quantBytes / (quant * 1e6) : 0.0);
    printf("  forward: %.4f ms, %.1f TFLOP/s\n", fwd,
           fwd > 0 ? flops / (fwd * 1e9) : 0.0);
  } else {
    printf("  (no separate quantization timing: no leading kernels named "
           "*%s*)\n",
           options.quantizeMatch.c_str());
  }
  printf("  quantization + forward: %.4f ms, %.1f TFLOP/s\n", total,
         total > 0 ? flops / (total * 1e9) : 0.0);
  return Status::success();
}

Status runTrainingBenchmark(Session &session, const RunOptions &options) {
  flamia_runtime *rt = session.runtime();
  if (!session.backward())
    return Status::error(runtime::ErrorCode::InvalidArgument,
                         "the training benchmark needs a training-step "
                         "manifest (--backward)");
  Device &dev = session.device();
  const HostBatch &b = session.batch();
  const runtime::Manifest &m = session.manifest();
  const size_t numKernels = m.kernels.size();
  // The forward's kernels come first, then the backward's.
  size_t numForward = 0;
  while (numForward < numKernels &&
         m.kernels[numForward].phase == runtime::KernelPhase::Forward)
    ++numForward;
  for (size_t k = numForward; k < numKernels; ++k)
    if (m.kernels[k].phase != runtime::KernelPhase::Backward)
      return Status::error(runtime::ErrorCode::InvalidArgument,
                           "kernel '" + m.kernels[k].name +
                               "' of the forward phase comes after a "
                               "backward kernel");
  if (numForward == 0 || numForward == numKernels)
    return Status::error(runtime::ErrorCode::InvalidArgument,
                         "the manifest has no forward or no backward kernels");

  flamia_attention_args args = session.args();
  flamia_status prepared = flamia_attention_prepare(rt, &args, dev.stream());
  if (prepared != FLAMIA_STATUS_OK)
    return capiError(prepared, "flamia_attention_prepare");
  auto launch = [&](size_t first, size_t count) -> Status {
    flamia_status s = flamia_runtime_launch(rt, first, count, dev.stream());
    return s == FLAMIA_STATUS_OK ? Status::success()
                                 : capiError(s, "flamia_runtime_launch");
  };
  for (int i = 0; i < options.warmup; ++i)
    FLAMIA_RETURN_IF_ERROR(launch(0, numKernels));
  FLAMIA_RETURN_IF_ERROR(dev.synchronize());

  // One event before each kernel and one after the last: per-kernel times
  // and the phases from the same launches.
  std::vector<CUevent> events(numKernels + 1);
  for (CUevent &e : events)
    FLAMIA_RETURN_IF_ERROR(dev.createEvent(e));
  std::vector<std::vector<double>> kernelMs(numKernels);
  std::vector<double> forwardMs, backwardMs, stepMs;
  for (int i = 0; i < options.bench; ++i) {
    for (size_t k = 0; k < numKernels; ++k) {
      FLAMIA_RETURN_IF_ERROR(dev.record(events[k]));
      FLAMIA_RETURN_IF_ERROR(launch(k, 1));
    }
    FLAMIA_RETURN_IF_ERROR(dev.record(events[numKernels]));
    std::vector<double> t(numKernels);
    for (size_t k = 0; k < numKernels; ++k) {
      float ms = 0;
      FLAMIA_RETURN_IF_ERROR(dev.elapsed(events[k], events[k + 1], ms));
      t[k] = ms;
      kernelMs[k].push_back(ms);
    }
    double f = 0, bw = 0;
    for (size_t k = 0; k < numKernels; ++k)
      (k < numForward ? f : bw) += t[k];
    forwardMs.push_back(f);
    backwardMs.push_back(bw);
    stepMs.push_back(f + bw);
  }

  const double flops = forwardFlops(b.cu, b.Hq, b.D, m.causal);
  auto rate = [](double f, double ms) { return ms > 0 ? f / (ms * 1e9) : 0.0; };
  printf("\ntraining benchmark: %d iterations (median), %d warm-up\n",
         options.bench, options.warmup);
  printf("  FLOPs: forward %.4g (%s, sum over documents of %s L^2 D Hq), "
         "backward 2.5x\n",
         flops, m.causal ? "causal" : "non-causal", m.causal ? "2" : "4");
  for (size_t k = 0; k < numKernels; ++k)
    printf("  kernel %-28s %-8s %.4f ms\n", m.kernels[k].name.c_str(),
           runtime::kernelPhaseName(m.kernels[k].phase), median(kernelMs[k]));
  const double f = median(forwardMs), bw = median(backwardMs),
               st = median(stepMs);
  printf("  forward (with its quantization): %.4f ms, %.1f TFLOP/s\n", f,
         rate(flops, f));
  printf("  backward (with its quantization): %.4f ms, %.1f TFLOP/s\n", bw,
         rate(2.5 * flops, bw));
  printf("  forward + backward (both quantizations): %.4f ms, %.1f TFLOP/s\n",
         st, rate(3.5 * flops, st));
  return Status::success();
}

} // namespace flamia::run
