//===- BlockLeaks.cpp - Where a scale block lets information leak ---------===//
#include "flamia/Analysis/BlockLeaks.h"

#include <algorithm>
#include <numeric>

namespace mlir::flamia {

std::optional<LeakWitness> findBlockLeak(int64_t tokenBlock, int64_t safeBlock,
                                         LeakDirection direction,
                                         IndexedBy indexedBy) {
  if (tokenBlock <= 1)
    return std::nullopt; // per-token scales mix no positions
  // Every pattern repeats with period lcm(tokenBlock, safeBlock); two periods
  // plus a safe block of slack contain a representative of every case.
  int64_t period = safeBlock > 0 ? std::lcm(tokenBlock, safeBlock) : tokenBlock;
  int64_t n = 2 * period + std::max(tokenBlock, safeBlock) + 2;
  auto sameSafeBlock = [&](int64_t a, int64_t b) {
    return safeBlock > 0 && a / safeBlock == b / safeBlock;
  };
  for (int64_t o = 0; o < n; ++o) {
    // Partners: keys x <= o for query-indexed outputs (Future), queries
    // x >= o for key-indexed outputs (Past).
    int64_t lo = direction == LeakDirection::Future ? 0 : o;
    int64_t hi = direction == LeakDirection::Future ? o : n - 1;
    for (int64_t x = lo; x <= hi; ++x) {
      if (sameSafeBlock(o, x))
        continue; // bf16 path: no scale involved
      int64_t reader = indexedBy == IndexedBy::Output ? o : x;
      int64_t begin = reader / tokenBlock * tokenBlock;
      int64_t end = begin + tokenBlock;
      if (direction == LeakDirection::Future && end - 1 > o)
        return LeakWitness{o, x, reader, std::max(o + 1, begin), begin, end};
      if (direction == LeakDirection::Past && begin < o)
        return LeakWitness{o, x, reader, std::min(o - 1, end - 1), begin, end};
    }
  }
  return std::nullopt;
}

} // namespace mlir::flamia
