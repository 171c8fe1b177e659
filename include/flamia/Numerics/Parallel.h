//===- Parallel.h - A minimal std::thread parallel-for -----------*- C++ -*-===//
//
// Work items are independent and write disjoint outputs, so results never
// depend on the number of threads or on scheduling.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_NUMERICS_PARALLEL_H
#define FLAMIA_NUMERICS_PARALLEL_H

#include <atomic>
#include <cstdint>
#include <functional>

namespace flamia::numerics {

/// Threads used by parallelFor: FLAMIA_NUM_THREADS if set, else
/// std::thread::hardware_concurrency(); setNumThreads overrides both (0
/// restores the default).
int numThreads();
void setNumThreads(int n);

/// Calls body(i) for every i in [0, n), spread over numThreads() threads
/// (dynamic scheduling: items are handed out one at a time).
void parallelFor(int64_t n, const std::function<void(int64_t)> &body);

} // namespace flamia::numerics

#endif // FLAMIA_NUMERICS_PARALLEL_H
