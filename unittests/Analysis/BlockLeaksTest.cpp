//===- BlockLeaksTest.cpp - findBlockLeak against the definition ----------===//
#include "flamia/Analysis/BlockLeaks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <numeric>

using namespace flamia;

namespace {

/// The definition, scanned pair by pair: the first (o, x) in lexicographic
/// order whose reader's scale block covers a position o must not see.
std::optional<LeakWitness> scanEveryPair(int64_t tokenBlock, int64_t safeBlock,
                                         LeakDirection direction,
                                         IndexedBy indexedBy) {
  if (tokenBlock <= 1)
    return std::nullopt;
  int64_t period = safeBlock > 0 ? std::lcm(tokenBlock, safeBlock) : tokenBlock;
  int64_t n = 2 * period + std::max(tokenBlock, safeBlock) + 2;
  for (int64_t o = 0; o < n; ++o) {
    int64_t lo = direction == LeakDirection::Future ? 0 : o;
    int64_t hi = direction == LeakDirection::Future ? o : n - 1;
    for (int64_t x = lo; x <= hi; ++x) {
      if (safeBlock > 0 && o / safeBlock == x / safeBlock)
        continue;
      int64_t reader = indexedBy == IndexedBy::Output ? o : x;
      int64_t begin = reader / tokenBlock * tokenBlock, end = begin + tokenBlock;
      if (direction == LeakDirection::Future && end - 1 > o)
        return LeakWitness{o, x, reader, std::max(o + 1, begin), begin, end};
      if (direction == LeakDirection::Past && begin < o)
        return LeakWitness{o, x, reader, std::min(o - 1, end - 1), begin, end};
    }
  }
  return std::nullopt;
}

TEST(BlockLeaks, AgreesWithThePairScanOnEverySmallLayout) {
  int checked = 0, leaks = 0;
  for (int64_t tokenBlock = 1; tokenBlock <= 16; ++tokenBlock)
    for (int64_t safeBlock = 0; safeBlock <= 48; ++safeBlock)
      for (LeakDirection d : {LeakDirection::Future, LeakDirection::Past})
        for (IndexedBy by : {IndexedBy::Output, IndexedBy::Partner}) {
          auto want = scanEveryPair(tokenBlock, safeBlock, d, by);
          auto got = findBlockLeak(tokenBlock, safeBlock, d, by);
          ASSERT_EQ(want.has_value(), got.has_value())
              << "token block " << tokenBlock << ", safe block " << safeBlock
              << ", direction " << int(d) << ", indexed by " << int(by);
          ++checked;
          if (!want)
            continue;
          ++leaks;
          EXPECT_EQ(want->output, got->output);
          EXPECT_EQ(want->partner, got->partner);
          EXPECT_EQ(want->reader, got->reader);
          EXPECT_EQ(want->source, got->source);
          EXPECT_EQ(want->blockBegin, got->blockBegin);
          EXPECT_EQ(want->blockEnd, got->blockEnd);
        }
  // Both outcomes occur, so the comparison is not vacuous.
  EXPECT_GT(leaks, 0);
  EXPECT_LT(leaks, checked);
}

TEST(BlockLeaks, KnownLayouts) {
  // K in 32x32 token blocks under a safe block of 128: safe (the recipe).
  EXPECT_FALSE(findBlockLeak(32, 128, LeakDirection::Future, IndexedBy::Partner));
  // Without a safe block the key block reaches past o.
  EXPECT_TRUE(findBlockLeak(32, 0, LeakDirection::Future, IndexedBy::Partner));
  // A safe block that splits token blocks leaks (48 is not a multiple of 32).
  EXPECT_TRUE(findBlockLeak(32, 48, LeakDirection::Future, IndexedBy::Partner));
  // Token-block Q (the output's own row) always sees later queries' values.
  EXPECT_TRUE(findBlockLeak(32, 128, LeakDirection::Future, IndexedBy::Output));
}

TEST(BlockLeaks, HugeSafeBlocksAreDecidedQuickly) {
  // These hung flamia-verify-causality (quadratic in the safe block).
  auto start = std::chrono::steady_clock::now();
  for (int64_t safeBlock : {int64_t(1) << 14, int64_t(1) << 16})
    for (LeakDirection d : {LeakDirection::Future, LeakDirection::Past}) {
      EXPECT_FALSE(findBlockLeak(32, safeBlock, d, IndexedBy::Partner));
      EXPECT_TRUE(findBlockLeak(32, safeBlock, d, IndexedBy::Output));
    }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 30.0);
}

} // namespace
