//===- GridSimulator.h - Persistent-grid makespan ---------------*- C++ -*-===//
//
// Simulates the persistent kernel: one CTA per SM, all starting at time 0;
// whenever a CTA finishes an item it takes the next one from the device work
// counter (greedy list scheduling in the list's order). When several CTAs
// are free at the same time the lowest-numbered one takes the next item; this
// choice does not change the makespan (the set of finish times is the same).
//
// The lower bound on any schedule of the items on `numSms` machines is
// max(total work / numSms, largest item).
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_SCHEDULE_GRIDSIMULATOR_H
#define FLAMIA_SCHEDULE_GRIDSIMULATOR_H

#include <cstdint>
#include <vector>

namespace flamia {

struct GridSimulation {
  double makespan = 0;  // when the last CTA finishes
  double totalWork = 0; // sum of all item costs
  double largestItem = 0;
  double lowerBound = 0; // max(totalWork / numSms, largestItem)
  /// Per item (in list order): the CTA that ran it and when it started.
  std::vector<int32_t> cta;
  std::vector<double> start;
  /// Per CTA: the summed cost of its items.
  std::vector<double> busy;

  /// makespan / lowerBound; 1 for an empty list.
  double ratio() const { return lowerBound > 0 ? makespan / lowerBound : 1.0; }
};

/// max(sum / numSms, max), numSms > 0.
double makespanLowerBound(const std::vector<double> &costs, int32_t numSms);

/// Runs `costs` (in execution order) on `numSms` CTAs (numSms > 0). O(N log
/// numSms).
GridSimulation simulatePersistentGrid(const std::vector<double> &costs,
                                      int32_t numSms);

} // namespace flamia

#endif // FLAMIA_SCHEDULE_GRIDSIMULATOR_H
