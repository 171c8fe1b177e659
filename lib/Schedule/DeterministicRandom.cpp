//===- DeterministicRandom.cpp - Portable seeded RNG ----------------------===//
#include "flamia/Schedule/DeterministicRandom.h"

#include <cmath>

namespace flamia {

uint64_t DeterministicRandom::next() {
  state_ += 0x9E3779B97F4A7C15ull;
  uint64_t z = state_;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double DeterministicRandom::uniform() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

double DeterministicRandom::normal() {
  // u1 in (0, 1] so that log(u1) is finite.
  double u1 = 1.0 - uniform();
  double u2 = uniform();
  const double twoPi = 6.283185307179586476925286766559;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(twoPi * u2);
}

} // namespace flamia
