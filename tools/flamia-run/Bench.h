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

/// --backward: times the training step's kernels by phase (the forward's,
/// the backward's, both: each including its quantization kernel) and each
/// kernel alone, `options.bench` iterations after warm-up; prints medians
/// and TFLOP/s with the backward counted as 2.5 forwards.
runtime::Status runTrainingBenchmark(Session &session,
                                     const RunOptions &options);

} // namespace flamia::run

#endif // FLAMIA_TOOLS_FLAMIARUN_BENCH_H
