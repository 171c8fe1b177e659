//===- Sm100SmemDescriptorTest.cpp - tcgen05 shared-memory descriptor -----===//
//
// Expected values are derived by hand from PTX ISA 9.0, 9.7.16.4.1 "Shared
// memory descriptor", Table 40 (field positions) and Table 41 (base offset).
//
//===----------------------------------------------------------------------===//
#include "flamia/Target/Sm100SmemDescriptor.h"

#include "gtest/gtest.h"

#include <random>

using namespace flamia;

namespace {
uint64_t encode(const Sm100SmemDescriptor &f) {
  uint64_t d = 0;
  std::string err;
  EXPECT_TRUE(encodeSm100SmemDescriptor(f, d, err)) << err;
  return d;
}

Sm100SmemDescriptor fields(uint32_t start, uint32_t lbo, uint32_t sbo,
                           Sm100SwizzleMode sw, uint8_t base = 0) {
  Sm100SmemDescriptor f;
  f.startAddress = start;
  f.leadingByteOffset = lbo;
  f.strideByteOffset = sbo;
  f.swizzle = sw;
  f.baseOffset = base;
  return f;
}
} // namespace

// PTX ISA 9.0, Table 40. A K-major 128B-swizzled E4M3 tile at 0x400 with
// LBO 16 (encoded 1) and SBO 1024 (encoded 64):
//   start  0x400 >> 4 = 0x40        -> bits 0-13
//   LBO    16 >> 4    = 1           -> bit 16         = 0x10000
//   SBO    1024 >> 4  = 64          -> bits 32-45     = 0x40_0000_0000
//   fixed  0b001                    -> bit 46         = 0x4000_0000_0000
//   swizzle 128B = 2                -> bits 61-63     = 0x4000_0000_0000_0000
TEST(Sm100SmemDescriptor, HandDerivedValue) {
  EXPECT_EQ(encode(fields(0x400, 16, 1024, Sm100SwizzleMode::B128)),
            0x4000404000010040ull);
  // Same with 64B (4) and 32B (6) swizzle, and none (0).
  EXPECT_EQ(encode(fields(0x400, 16, 512, Sm100SwizzleMode::B64)),
            0x8000402000010040ull);
  EXPECT_EQ(encode(fields(0x400, 16, 256, Sm100SwizzleMode::B32)),
            0xC000401000010040ull);
  EXPECT_EQ(encode(fields(0, 0, 128, Sm100SwizzleMode::None)),
            0x0000400800000000ull);
  // Base offset 5 -> bits 49-51; absolute LBO mode -> bit 52.
  EXPECT_EQ(encode(fields(0x280, 0, 1024, Sm100SwizzleMode::B128, 5)),
            0x400A404000000028ull);
  Sm100SmemDescriptor abs = fields(0x400, 0x2400, 1024, Sm100SwizzleMode::B128);
  abs.lboAbsolute = true;
  EXPECT_EQ(encode(abs), 0x4010404002400040ull);
}

// Independent cross-check: DeepGEMM / TileLang build the tcgen05.cp source
// descriptor of a scale-factor tile as start >> 4 | (128 >> 4) << 32 |
// 1 << 46 ("version 1", no swizzle, LBO 0), i.e. 0x0000400800000000 plus the
// start address field (read in their sm100 kernels).
TEST(Sm100SmemDescriptor, ScaleFactorCopyDescriptorMatchesPublishedKernels) {
  uint64_t d = 0;
  std::string err;
  ASSERT_TRUE(makeSm100ScaleFactorCopyDescriptor(0, d, err)) << err;
  EXPECT_EQ(d, 0x0000400800000000ull);
  ASSERT_TRUE(makeSm100ScaleFactorCopyDescriptor(0x1a30, d, err)) << err;
  EXPECT_EQ(d, 0x0000400800000000ull | (0x1a30 >> 4));
  EXPECT_FALSE(makeSm100ScaleFactorCopyDescriptor(0x1a38, d, err));
}

// Each field lands in exactly its bits (PTX ISA 9.0, Table 40).
TEST(Sm100SmemDescriptor, EveryFieldInItsOwnBits) {
  const uint64_t fixed = uint64_t(1) << 46;
  EXPECT_EQ(encode(fields(0x3FFF0, 0, 0, Sm100SwizzleMode::None)), fixed | 0x3FFF);
  EXPECT_EQ(encode(fields(0, 0x3FFF0, 0, Sm100SwizzleMode::None)),
            fixed | (uint64_t(0x3FFF) << 16));
  EXPECT_EQ(encode(fields(0, 0, 0x3FFF0, Sm100SwizzleMode::None)),
            fixed | (uint64_t(0x3FFF) << 32));
  EXPECT_EQ(encode(fields(0, 0, 0, Sm100SwizzleMode::None, 7)),
            fixed | (uint64_t(7) << 49));
  EXPECT_EQ(encode(fields(0, 0, 0, Sm100SwizzleMode::B128Base32B)),
            fixed | (uint64_t(1) << 61));
  EXPECT_EQ(encode(fields(0, 0, 0, Sm100SwizzleMode::B32)),
            fixed | (uint64_t(6) << 61));
}

TEST(Sm100SmemDescriptor, RoundTripsEveryFieldWithReservedBitsZero) {
  std::mt19937 rng(7);
  const Sm100SwizzleMode modes[] = {
      Sm100SwizzleMode::None, Sm100SwizzleMode::B128Base32B,
      Sm100SwizzleMode::B128, Sm100SwizzleMode::B64, Sm100SwizzleMode::B32};
  for (int i = 0; i < 2000; ++i) {
    Sm100SmemDescriptor f;
    f.startAddress = (rng() & 0x3FFF) << 4;
    f.leadingByteOffset = (rng() & 0x3FFF) << 4;
    f.strideByteOffset = (rng() & 0x3FFF) << 4;
    f.swizzle = modes[rng() % 5];
    f.lboAbsolute = f.swizzle == Sm100SwizzleMode::B128 && (rng() & 1);
    f.baseOffset = f.lboAbsolute ? 0 : rng() % 8;
    uint64_t d = encode(f);
    std::string err;
    EXPECT_TRUE(verifySm100SmemDescriptorBits(d, err)) << err;
    EXPECT_EQ(decodeSm100SmemDescriptor(d), f);
  }
}

TEST(Sm100SmemDescriptor, RejectsIllegalFields) {
  uint64_t d;
  std::string err;
  EXPECT_FALSE(encodeSm100SmemDescriptor(fields(0x408, 16, 1024, Sm100SwizzleMode::B128), d, err));
  EXPECT_NE(err.find("start address 0x408 is not 16-byte aligned"), std::string::npos) << err;
  EXPECT_FALSE(encodeSm100SmemDescriptor(fields(0x40000, 16, 1024, Sm100SwizzleMode::B128), d, err));
  EXPECT_NE(err.find("18 address bits"), std::string::npos) << err;
  EXPECT_FALSE(encodeSm100SmemDescriptor(fields(0, 8, 1024, Sm100SwizzleMode::B128), d, err));
  EXPECT_NE(err.find("leading dimension byte offset"), std::string::npos) << err;
  EXPECT_FALSE(encodeSm100SmemDescriptor(fields(0, 16, 1000, Sm100SwizzleMode::B128), d, err));
  EXPECT_NE(err.find("stride dimension byte offset"), std::string::npos) << err;
  EXPECT_FALSE(encodeSm100SmemDescriptor(fields(0, 16, 1024, Sm100SwizzleMode::B128, 8), d, err));
  EXPECT_NE(err.find("base offset 8"), std::string::npos) << err;
  for (uint8_t bad : {3, 5, 7}) {
    EXPECT_FALSE(encodeSm100SmemDescriptor(
        fields(0, 16, 1024, static_cast<Sm100SwizzleMode>(bad)), d, err));
    EXPECT_NE(err.find("reserved"), std::string::npos) << err;
  }
  Sm100SmemDescriptor abs = fields(0, 0x400, 1024, Sm100SwizzleMode::B64);
  abs.lboAbsolute = true;
  EXPECT_FALSE(encodeSm100SmemDescriptor(abs, d, err));
  EXPECT_NE(err.find("9.7.16.3.1.2.1"), std::string::npos) << err;
}

TEST(Sm100SmemDescriptor, VerifyFlagsReservedAndFixedBits) {
  uint64_t good = encode(fields(0x400, 16, 1024, Sm100SwizzleMode::B128));
  std::string err;
  EXPECT_TRUE(verifySm100SmemDescriptorBits(good, err)) << err;
  for (unsigned bit : {14u, 15u, 30u, 31u, 53u, 57u, 60u}) {
    EXPECT_FALSE(verifySm100SmemDescriptorBits(good | (uint64_t(1) << bit), err)) << bit;
    EXPECT_NE(err.find("reserved bits"), std::string::npos) << err;
  }
  EXPECT_FALSE(verifySm100SmemDescriptorBits(good & ~(uint64_t(1) << 46), err));
  EXPECT_NE(err.find("0b001"), std::string::npos) << err;
  EXPECT_FALSE(verifySm100SmemDescriptorBits(good | (uint64_t(1) << 47), err));
  EXPECT_FALSE(verifySm100SmemDescriptorBits((good & ~(uint64_t(7) << 61)) |
                                                 (uint64_t(5) << 61),
                                             err));
  EXPECT_NE(err.find("invalid swizzle"), std::string::npos) << err;
}

// PTX ISA 9.0, 9.7.16.4.1: base offset = (pattern start addr >> 7) & 7; zero
// at the 1024-byte boundaries where the 128B pattern starts (Table 41).
TEST(Sm100SmemDescriptor, BaseOffsetFormula) {
  EXPECT_EQ(sm100SwizzleBaseOffset(0x400), 0);
  EXPECT_EQ(sm100SwizzleBaseOffset(0x480), 1);
  EXPECT_EQ(sm100SwizzleBaseOffset(0x780), 7);
  EXPECT_EQ(sm100SwizzleBaseOffset(0x800), 0);
  EXPECT_EQ(sm100SwizzleBaseOffset(0x8300), 6);
}

TEST(Sm100SmemDescriptor, OperandDescriptorForAttentionTiles) {
  // Q, E4M3, 128 x 128, K-major 128B at 0x2000; the third K=32 slice.
  SmemOperandTile q;
  q.major = OperandMajor::K;
  q.swizzle = SmemSwizzle::B128;
  q.elementBits = 8;
  q.mnExtent = 128;
  q.kExtent = 128;
  uint64_t d = 0;
  std::string err;
  ASSERT_TRUE(makeSm100OperandDescriptor(q, 0x2000, 64, d, err)) << err;
  EXPECT_EQ(d, encode(fields(0x2040, 16, 1024, Sm100SwizzleMode::B128)));
  Sm100SmemDescriptor f = decodeSm100SmemDescriptor(d);
  EXPECT_EQ(f.startAddress, 0x2040u);
  EXPECT_EQ(f.swizzle, Sm100SwizzleMode::B128);
  // A 128B-swizzled tile must start on a 1024-byte boundary.
  EXPECT_FALSE(makeSm100OperandDescriptor(q, 0x2200, 0, d, err));
  EXPECT_NE(err.find("1024-byte repeat"), std::string::npos) << err;
  EXPECT_FALSE(makeSm100OperandDescriptor(q, 0x2000, 128, d, err));
  EXPECT_NE(err.find("outside"), std::string::npos) << err;
}
