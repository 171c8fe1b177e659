//===- BlockLeaks.cpp - Where a scale block lets information leak ---------===//
//
// For each output position o (in increasing order) the partner x that gives
// the first witness is found in O(1): the conditions on x are intervals
// (partners left or right of o, outside o's safe block, a reader block that
// reaches past o), so the smallest qualifying x is an end point. A quadratic
// scan over every (o, x) pair, as the definition reads, took minutes for safe
// blocks of 2^16 tokens and never finished for 2^31; the unit tests check
// this against that scan exhaustively on small blocks.
//
//===----------------------------------------------------------------------===//
#include "flamia/Analysis/BlockLeaks.h"

#include <algorithm>
#include <numeric>

namespace flamia {

std::optional<LeakWitness> findBlockLeak(int64_t tokenBlock, int64_t safeBlock,
                                         LeakDirection direction,
                                         IndexedBy indexedBy) {
  if (tokenBlock <= 1)
    return std::nullopt; // per-token scales mix no positions
  // Every pattern repeats with period lcm(tokenBlock, safeBlock); two periods
  // plus a safe block of slack contain a representative of every case.
  int64_t period = safeBlock > 0 ? std::lcm(tokenBlock, safeBlock) : tokenBlock;
  int64_t n = 2 * period + std::max(tokenBlock, safeBlock) + 2;
  const int64_t b = tokenBlock;
  auto blockBegin = [&](int64_t p) { return p / b * b; };
  auto witness = [&](int64_t o, int64_t x) {
    int64_t reader = indexedBy == IndexedBy::Output ? o : x;
    int64_t begin = blockBegin(reader), end = begin + b;
    int64_t source = direction == LeakDirection::Future ? std::max(o + 1, begin)
                                                        : std::min(o - 1, end - 1);
    return LeakWitness{o, x, reader, source, begin, end};
  };
  for (int64_t o = 0; o < n; ++o) {
    // o's safe block is [safeBegin, safeEnd); partners inside it take the
    // bf16 path. Without a safe block every partner reads the scale.
    const bool safe = safeBlock > 0;
    const int64_t safeBegin = safe ? o / safeBlock * safeBlock : 0;
    const int64_t safeEnd = safe ? safeBegin + safeBlock : 0;
    if (direction == LeakDirection::Future) {
      // Partners x in [0, o] outside the safe block: [0, o] without safe
      // blocks, else [0, safeBegin - 1]. The reader's block leaks when it
      // ends past o: for the output's own row that is independent of x, for
      // the partner's row it holds from x >= ((o + 1) / b) * b on.
      int64_t hi = safe ? std::min(o, safeBegin - 1) : o;
      int64_t lo = indexedBy == IndexedBy::Output ? 0 : (o + 1) / b * b;
      if (indexedBy == IndexedBy::Output && blockBegin(o) + b - 1 <= o)
        continue; // o ends its block: no later token shares its scale
      if (lo <= hi)
        return witness(o, lo);
    } else {
      // Partners x in [o, n - 1] outside the safe block: from o without
      // safe blocks, else from safeEnd. The reader's block leaks when it
      // begins before o: for the output's row independent of x, for the
      // partner's row only while blockBegin(x) < o, which is monotone in x,
      // so the smallest partner decides.
      int64_t x = safe ? std::max(o, safeEnd) : o;
      if (x > n - 1)
        continue;
      int64_t reader = indexedBy == IndexedBy::Output ? o : x;
      if (blockBegin(reader) < o)
        return witness(o, x);
    }
  }
  return std::nullopt;
}

} // namespace flamia
