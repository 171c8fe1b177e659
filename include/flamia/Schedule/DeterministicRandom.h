//===- DeterministicRandom.h - Portable seeded RNG --------------*- C++ -*-===//
//
// SplitMix64 (Steele, Lea, Flood: "Fast splittable pseudorandom number
// generators", OOPSLA 2014): a 64-bit counter advanced by the golden-ratio
// increment, then mixed. Unlike std::mt19937 with std::normal_distribution,
// whose outputs depend on the standard library, its integer outputs are
// defined by the algorithm alone, so a workload generated from a fixed seed is
// the same with every compiler.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_SCHEDULE_DETERMINISTICRANDOM_H
#define FLAMIA_SCHEDULE_DETERMINISTICRANDOM_H

#include <cstdint>

namespace flamia {

class DeterministicRandom {
public:
  explicit DeterministicRandom(uint64_t seed) : state_(seed) {}

  /// The next 64 random bits.
  uint64_t next();
  /// Uniform in [0, 1) with 53 random bits.
  double uniform();
  /// Standard normal (Box-Muller, one value per two uniforms). Uses std::log,
  /// std::sqrt and std::cos, so it is reproducible to the last bit only with
  /// the same math library.
  double normal();

private:
  uint64_t state_;
};

} // namespace flamia

#endif // FLAMIA_SCHEDULE_DETERMINISTICRANDOM_H
