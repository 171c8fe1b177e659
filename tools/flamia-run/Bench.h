//===- Bench.h - flamia-run --bench -----------------------------*- C++ -*-===//
#ifndef FLAMIA_TOOLS_FLAMIARUN_BENCH_H
#define FLAMIA_TOOLS_FLAMIARUN_BENCH_H

#include "Options.h"
#include "Session.h"

#include "flamia/Runtime/Status.h"

namespace flamia::run {

/// Times `options.bench` iterations of every kernel (after warm-up), with
/// CUDA events around the quantization kernels and the rest; prints medians,
/// TFLOP/s and the quantization bandwidth.
runtime::Status runBenchmark(Session &session, const RunOptions &options);

} // namespace flamia::run

#endif // FLAMIA_TOOLS_FLAMIARUN_BENCH_H
