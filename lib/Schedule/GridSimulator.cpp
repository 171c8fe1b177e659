//===- GridSimulator.cpp - Makespan of a persistent grid on a work list ---===//
#include "flamia/Schedule/GridSimulator.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <utility>

namespace flamia {

double makespanLowerBound(const std::vector<double> &costs, int32_t numSms) {
  double total = 0, largest = 0;
  for (double c : costs) {
    total += c;
    largest = std::max(largest, c);
  }
  return std::max(total / numSms, largest);
}

GridSimulation simulatePersistentGrid(const std::vector<double> &costs,
                                      int32_t numSms) {
  GridSimulation sim;
  sim.cta.resize(costs.size());
  sim.start.resize(costs.size());
  sim.busy.assign(static_cast<size_t>(numSms), 0.0);
  // (time the CTA becomes free, CTA): earliest first, then lowest CTA.
  using Slot = std::pair<double, int32_t>;
  std::priority_queue<Slot, std::vector<Slot>, std::greater<Slot>> idle;
  for (int32_t c = 0; c < numSms; ++c)
    idle.push({0.0, c});
  for (size_t k = 0; k < costs.size(); ++k) {
    Slot slot = idle.top();
    idle.pop();
    sim.cta[k] = slot.second;
    sim.start[k] = slot.first;
    sim.busy[static_cast<size_t>(slot.second)] += costs[k];
    double finish = slot.first + costs[k];
    sim.makespan = std::max(sim.makespan, finish);
    sim.totalWork += costs[k];
    sim.largestItem = std::max(sim.largestItem, costs[k]);
    idle.push({finish, slot.second});
  }
  sim.lowerBound = std::max(sim.totalWork / numSms, sim.largestItem);
  return sim;
}

} // namespace flamia
