//===- GridSimulatorTest.cpp - Persistent-grid makespan on hand cases -----===//
#include "flamia/Schedule/GridSimulator.h"

#include "gtest/gtest.h"

using namespace flamia;

// Two CTAs, costs 5 4 3 3 2 2 1 in this order:
//   CTA 0: 5 [0, 5), 3 [5, 8), 2 [8, 10)
//   CTA 1: 4 [0, 4), 3 [4, 7), 2 [7, 9), 1 [9, 10)
TEST(GridSimulator, HandTrace) {
  GridSimulation sim = simulatePersistentGrid({5, 4, 3, 3, 2, 2, 1}, 2);
  EXPECT_EQ(sim.cta, (std::vector<int32_t>{0, 1, 1, 0, 1, 0, 1}));
  EXPECT_EQ(sim.start, (std::vector<double>{0, 0, 4, 5, 7, 8, 9}));
  EXPECT_EQ(sim.busy, (std::vector<double>{10, 10}));
  EXPECT_EQ(sim.makespan, 10.0);
  EXPECT_EQ(sim.totalWork, 20.0);
  EXPECT_EQ(sim.largestItem, 5.0);
  EXPECT_EQ(sim.lowerBound, 10.0);
  EXPECT_EQ(sim.ratio(), 1.0);
}

// LPT is not optimal: 3 3 2 2 2 on two CTAs runs 3+2+2 = 7 on one, while
// 3+3 | 2+2+2 = 6 is possible (and is the lower bound 12 / 2).
TEST(GridSimulator, LptCanMissTheBound) {
  GridSimulation sim = simulatePersistentGrid({3, 3, 2, 2, 2}, 2);
  EXPECT_EQ(sim.makespan, 7.0);
  EXPECT_EQ(sim.lowerBound, 6.0);
  EXPECT_DOUBLE_EQ(sim.ratio(), 7.0 / 6.0);
}

// The order is the schedule: shortest-first puts the long item last.
TEST(GridSimulator, OrderMatters) {
  EXPECT_EQ(simulatePersistentGrid({1, 1, 10}, 2).makespan, 11.0);
  EXPECT_EQ(simulatePersistentGrid({10, 1, 1}, 2).makespan, 10.0);
}

TEST(GridSimulator, LowerBound) {
  // Largest item dominates.
  EXPECT_EQ(makespanLowerBound({10, 1, 1}, 4), 10.0);
  // Total work / SMs dominates.
  EXPECT_EQ(makespanLowerBound({3, 3, 3, 3, 3}, 2), 7.5);
  EXPECT_EQ(makespanLowerBound({}, 132), 0.0);
  GridSimulation sim = simulatePersistentGrid({10, 1, 1}, 4);
  EXPECT_EQ(sim.makespan, 10.0);
  EXPECT_EQ(sim.lowerBound, 10.0);
}

TEST(GridSimulator, EmptyList) {
  GridSimulation sim = simulatePersistentGrid({}, 132);
  EXPECT_EQ(sim.makespan, 0.0);
  EXPECT_EQ(sim.lowerBound, 0.0);
  EXPECT_EQ(sim.ratio(), 1.0);
  EXPECT_EQ(sim.busy.size(), 132u);
}

// More CTAs than items: each item starts at time 0 on its own CTA.
TEST(GridSimulator, MoreCtasThanItems) {
  GridSimulation sim = simulatePersistentGrid({4, 2.5, 1}, 132);
  EXPECT_EQ(sim.cta, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(sim.start, (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(sim.makespan, 4.0);
  EXPECT_EQ(sim.lowerBound, 4.0);
}
