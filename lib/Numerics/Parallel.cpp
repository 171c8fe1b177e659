//===- Parallel.cpp - A minimal std::thread parallel-for ------------------===//
#include "flamia/Numerics/Parallel.h"

#include <algorithm>
#include <cstdlib>
#include <thread>
#include <vector>

namespace flamia::numerics {

static std::atomic<int> overrideThreads{0};

int numThreads() {
  if (int n = overrideThreads.load())
    return n;
  if (const char *env = std::getenv("FLAMIA_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n > 0)
      return n;
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw ? static_cast<int>(hw) : 1;
}

void setNumThreads(int n) { overrideThreads.store(n > 0 ? n : 0); }

void parallelFor(int64_t n, const std::function<void(int64_t)> &body) {
  if (n <= 0)
    return;
  int64_t threads = std::min<int64_t>(numThreads(), n);
  if (threads <= 1) {
    for (int64_t i = 0; i < n; ++i)
      body(i);
    return;
  }
  std::atomic<int64_t> next{0};
  auto worker = [&]() {
    for (int64_t i = next.fetch_add(1); i < n; i = next.fetch_add(1))
      body(i);
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(threads - 1));
  for (int64_t t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();
  for (std::thread &t : pool)
    t.join();
}

} // namespace flamia::numerics
