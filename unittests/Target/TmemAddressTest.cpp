//===- TmemAddressTest.cpp - sm_100a tensor-memory addresses --------------===//
//
// PTX ISA 9.0: 9.7.16.1.1 "Tensor Memory Addressing" (lane in 31-16, column
// in 15-0), 9.7.16.7.1 tcgen05.alloc (power of two in [32, 512]), 9.7.16.8.1
// "Access restrictions" (warp w of a warpgroup: lanes 32w..32w+31),
// 9.7.16.8.3 Table 47 (.num x shape -> registers).
//
//===----------------------------------------------------------------------===//
#include "flamia/Target/TmemAddress.h"

#include "gtest/gtest.h"

using namespace flamia;

TEST(TmemAddress, LaneInHighHalfColumnInLowHalf) {
  EXPECT_EQ(encodeTmemAddress(0, 0), 0u);
  EXPECT_EQ(encodeTmemAddress(0, 511), 511u);
  EXPECT_EQ(encodeTmemAddress(1, 0), 0x10000u);
  EXPECT_EQ(encodeTmemAddress(127, 511), 0x007F01FFu);
  EXPECT_EQ(tmemAddressLane(0x007F01FFu), 127u);
  EXPECT_EQ(tmemAddressColumn(0x007F01FFu), 511u);
  // Independent cross-check: Triton's lowering tests add 1048576 = 16 << 16
  // for row 16 and 1048640 = 16 << 16 + 64 for (row 16, column 64) to a TMEM
  // base (test/Conversion/tritongpu_to_llvm_blackwell.mlir).
  EXPECT_EQ(tmemAddressAt(0, 16, 0), 1048576u);
  EXPECT_EQ(tmemAddressAt(0, 16, 64), 1048640u);
  // An allocation returned at column 128 of lane 0, accumulator row 33 col 5.
  EXPECT_EQ(tmemAddressAt(encodeTmemAddress(0, 128), 33, 5), (33u << 16) | 133u);
  for (uint32_t lane : {0u, 31u, 64u, 127u})
    for (uint32_t col : {0u, 32u, 255u, 511u}) {
      uint32_t a = encodeTmemAddress(lane, col);
      EXPECT_EQ(tmemAddressLane(a), lane);
      EXPECT_EQ(tmemAddressColumn(a), col);
    }
  std::string err;
  EXPECT_TRUE(validateTmemCell(127, 511, err));
  EXPECT_FALSE(validateTmemCell(128, 0, err));
  EXPECT_FALSE(validateTmemCell(0, 512, err));
  EXPECT_NE(err.find("128 lanes x 512 columns"), std::string::npos) << err;
}

TEST(TmemAddress, AllocationIsAPowerOfTwoBetween32And512) {
  std::string err;
  for (uint32_t n : {32u, 64u, 128u, 256u, 512u})
    EXPECT_TRUE(validateTmemAllocation(n, err)) << n;
  for (uint32_t n : {0u, 16u, 48u, 96u, 384u, 1024u}) {
    EXPECT_FALSE(validateTmemAllocation(n, err)) << n;
    EXPECT_NE(err.find("power of two in [32, 512]"), std::string::npos);
  }
  EXPECT_EQ(tmemAllocationFor(0), 32u);
  EXPECT_EQ(tmemAllocationFor(1), 32u);
  EXPECT_EQ(tmemAllocationFor(33), 64u);
  // FLAMIA's forward, D = 128: two S buffers (2 x 128 f32 columns), O (128),
  // scales (2 x 4 for SFA/SFB of one K tile): 392 columns -> 512.
  EXPECT_EQ(tmemAllocationFor(2 * 128 + 128 + 8), 512u);
  EXPECT_EQ(tmemAllocationFor(512), 512u);
  EXPECT_EQ(tmemAllocationFor(513), 0u);
}

TEST(TmemAddress, WarpQuadrantRule) {
  // Table in 9.7.16.8.1: warp 0 -> lanes 0-31, 1 -> 32-63, 2 -> 64-95,
  // 3 -> 96-127; the warp index is taken within its warpgroup.
  for (unsigned w = 0; w < 16; ++w) {
    EXPECT_EQ(tmemLaneQuadrant(w), w % 4);
    EXPECT_EQ(tmemFirstLaneOfWarp(w), 32 * (w % 4));
  }
  EXPECT_TRUE(tmemWarpCanAccessLanes(0, 0, 32));
  EXPECT_TRUE(tmemWarpCanAccessLanes(5, 32, 32));   // warp 5 = warp 1 of group 1
  EXPECT_TRUE(tmemWarpCanAccessLanes(7, 100, 28));
  EXPECT_FALSE(tmemWarpCanAccessLanes(1, 0, 32));
  EXPECT_FALSE(tmemWarpCanAccessLanes(2, 80, 32));  // runs into lane 96
  EXPECT_FALSE(tmemWarpCanAccessLanes(3, 96, 0));
}

TEST(TmemAddress, LdStRegisterCountsMatchTable47) {
  // Table 47: rows .x1 ... .x128; columns .32x32b (k=1), .16x128b (2),
  // .16x256b (4).
  const unsigned nums[] = {1, 2, 4, 8, 16, 32, 64, 128};
  const unsigned k1[] = {1, 2, 4, 8, 16, 32, 64, 128};
  const unsigned k2[] = {2, 4, 8, 16, 32, 64, 128, 0};
  const unsigned k4[] = {4, 8, 16, 32, 64, 128, 0, 0};
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(tmemLdStRegisters(TmemLdStShape::S32x32b, nums[i]), k1[i]);
    EXPECT_EQ(tmemLdStRegisters(TmemLdStShape::S16x64b, nums[i]), k1[i]);
    EXPECT_EQ(tmemLdStRegisters(TmemLdStShape::S16x32bx2, nums[i]), k1[i]);
    EXPECT_EQ(tmemLdStRegisters(TmemLdStShape::S16x128b, nums[i]), k2[i]);
    EXPECT_EQ(tmemLdStRegisters(TmemLdStShape::S16x256b, nums[i]), k4[i]);
  }
  EXPECT_EQ(tmemLdStRegisters(TmemLdStShape::S32x32b, 3), 0u);
  EXPECT_EQ(tmemLdStRegisters(TmemLdStShape::S32x32b, 256), 0u);
  EXPECT_STREQ(tmemLdStShapeName(TmemLdStShape::S16x32bx2), "16x32bx2");
}

TEST(TmemAddress, Load32x32bGivesEachThreadOneRow) {
  // Warp 6 (quadrant 2), lane 5, register 17 of a load at column 64.
  EXPECT_EQ(tmemLoad32x32bElement(6, 5, 17, 64), (TmemElement{69, 81}));
  // The four warps of a warpgroup together cover rows 0..127 exactly once
  // per column.
  bool seen[128] = {};
  for (unsigned w = 4; w < 8; ++w)
    for (unsigned t = 0; t < 32; ++t) {
      TmemElement e = tmemLoad32x32bElement(w, t, 0, 0);
      ASSERT_LT(e.row, 128u);
      EXPECT_FALSE(seen[e.row]);
      seen[e.row] = true;
    }
  for (bool s : seen)
    EXPECT_TRUE(s);
}
