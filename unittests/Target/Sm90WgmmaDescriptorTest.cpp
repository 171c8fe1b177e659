//===- Sm90WgmmaDescriptorTest.cpp - Hopper wgmma descriptor and fragments -===//
//
// PTX ISA 9.0: 9.7.15.5.1.2.2 "Matrix Descriptor Format" (field positions),
// 9.7.15.2 "Matrix Shape", 9.7.15.3 "Matrix Data-types", 9.7.15.5.2
// wgmma.mma_async (transposes), 9.7.15.5.1.1 "Register Fragments" (figures,
// checked through the mma.sync text formulas of 9.7.14.5.8 / 9.7.14.5.10
// that the wgmma figures repeat per warp, and against CUTLASS's layouts).
//
//===----------------------------------------------------------------------===//
#include "flamia/Target/Sm90WgmmaDescriptor.h"

#include "gtest/gtest.h"

#include <random>
#include <set>
#include <utility>

using namespace flamia;
using WT = Sm90WgmmaType;

namespace {
uint64_t encode(const Sm90WgmmaDescriptor &f) {
  uint64_t d = 0;
  std::string err;
  EXPECT_TRUE(encodeSm90WgmmaDescriptor(f, d, err)) << err;
  return d;
}

Sm90WgmmaDescriptor fields(uint32_t start, uint32_t lbo, uint32_t sbo,
                           Sm90SwizzleMode sw, uint8_t base = 0) {
  Sm90WgmmaDescriptor f;
  f.startAddress = start;
  f.leadingByteOffset = lbo;
  f.strideByteOffset = sbo;
  f.swizzle = sw;
  f.baseOffset = base;
  return f;
}

Sm90WgmmaConfig cfg(WT a, WT b, Sm90AccumType d, uint32_t n) {
  Sm90WgmmaConfig c;
  c.aType = a;
  c.bType = b;
  c.dType = d;
  c.n = n;
  return c;
}

std::string rejection(const Sm90WgmmaConfig &c) {
  std::string err;
  EXPECT_FALSE(validateSm90Wgmma(c, err));
  return err;
}

// A CuTe thread-value layout ((4,8,4),(v0,v1,v2)):((s...),(t...)) evaluated
// at (thread, value) to the column-major index m + 64 * n of a 64-row tile.
uint32_t cuteTv(const uint32_t tShape[3], const uint32_t tStride[3],
                const uint32_t vShape[3], const uint32_t vStride[3],
                uint32_t thread, uint32_t value) {
  uint32_t idx = 0;
  for (int i = 0; i < 3; ++i) {
    idx += (thread % tShape[i]) * tStride[i];
    thread /= tShape[i];
  }
  for (int i = 0; i < 3; ++i) {
    idx += (value % vShape[i]) * vStride[i];
    value /= vShape[i];
  }
  return idx;
}
} // namespace

// PTX ISA 9.0, 9.7.15.5.1.2.2: a K-major 128B-swizzled bf16 tile at 0x400
// with LBO 16 (encoded 1) and SBO 1024 (encoded 64):
//   start 0x40 (bits 0-13) | 1 << 16 | 64 << 32 | swizzle 128B = 1 << 62.
TEST(Sm90WgmmaDescriptor, HandDerivedValue) {
  EXPECT_EQ(encode(fields(0x400, 16, 1024, Sm90SwizzleMode::B128)),
            0x4000004000010040ull);
  EXPECT_EQ(encode(fields(0x400, 16, 512, Sm90SwizzleMode::B64)),
            0x8000002000010040ull);
  EXPECT_EQ(encode(fields(0x400, 16, 256, Sm90SwizzleMode::B32)),
            0xC000001000010040ull);
  EXPECT_EQ(encode(fields(0x480, 0, 1024, Sm90SwizzleMode::B128, 1)),
            0x4002004000000048ull);
  // Unlike tcgen05 (bits 46-48 = 0b001), wgmma has no fixed constant.
  EXPECT_EQ(encode(fields(0, 0, 0, Sm90SwizzleMode::None)), 0u);
}

// Independent cross-check: the descriptor a public Hopper GEMM tutorial builds
// for its 128B-swizzled K-major bf16 tiles (KnowingNothing/MatmulTutorial,
// make_smem_desc: layout_type 1, leading_byte_offset 1, stride_byte_offset
// 64, base_offset 0), i.e. CUTLASS's GmmaDescriptor bitfields.
TEST(Sm90WgmmaDescriptor, MatchesPublishedTutorialDescriptor) {
  SmemOperandTile t;
  t.major = OperandMajor::K;
  t.swizzle = SmemSwizzle::B128;
  t.elementBits = 16;
  t.mnExtent = 128;
  t.kExtent = 64;
  uint64_t d = 0;
  std::string err;
  ASSERT_TRUE(makeSm90OperandDescriptor(t, 0, 0, d, err)) << err;
  EXPECT_EQ(d, (uint64_t(1) << 62) | (uint64_t(64) << 32) | (uint64_t(1) << 16));
  // The second K=16 slice starts 32 bytes in.
  ASSERT_TRUE(makeSm90OperandDescriptor(t, 0x8000, 16, d, err)) << err;
  EXPECT_EQ(decodeSm90WgmmaDescriptor(d).startAddress, 0x8020u);
}

TEST(Sm90WgmmaDescriptor, FieldsRoundTripAndReservedBitsStayZero) {
  std::mt19937 rng(11);
  for (int i = 0; i < 2000; ++i) {
    Sm90WgmmaDescriptor f;
    f.startAddress = (rng() & 0x3FFF) << 4;
    f.leadingByteOffset = (rng() & 0x3FFF) << 4;
    f.strideByteOffset = (rng() & 0x3FFF) << 4;
    f.swizzle = static_cast<Sm90SwizzleMode>(rng() % 4);
    f.baseOffset = f.swizzle == Sm90SwizzleMode::None ? 0 : rng() % 8;
    uint64_t d = encode(f);
    std::string err;
    EXPECT_TRUE(verifySm90WgmmaDescriptorBits(d, err)) << err;
    EXPECT_EQ(decodeSm90WgmmaDescriptor(d), f);
  }
  std::string err;
  for (unsigned bit : {14u, 15u, 30u, 31u, 46u, 47u, 48u, 52u, 61u}) {
    EXPECT_FALSE(verifySm90WgmmaDescriptorBits(uint64_t(1) << bit, err)) << bit;
  }
  uint64_t d;
  EXPECT_FALSE(encodeSm90WgmmaDescriptor(fields(8, 16, 1024, Sm90SwizzleMode::B128), d, err));
  EXPECT_FALSE(encodeSm90WgmmaDescriptor(fields(0, 16, 1024, Sm90SwizzleMode::None, 3), d, err));
  EXPECT_NE(err.find("swizzled modes only"), std::string::npos) << err;
  EXPECT_FALSE(encodeSm90WgmmaDescriptor(fields(0, 16, 1024, Sm90SwizzleMode::B128, 9), d, err));
  EXPECT_FALSE(encodeSm90WgmmaDescriptor(fields(0x40000, 16, 1024, Sm90SwizzleMode::B128), d, err));
}

TEST(Sm90WgmmaShape, LegalAndIllegalInstructions) {
  std::string err;
  // 9.7.15.2: bf16 m64nNk16 for N = 8..256 step 8.
  for (uint32_t n = 8; n <= 256; n += 8)
    EXPECT_TRUE(validateSm90Wgmma(cfg(WT::BF16, WT::BF16, Sm90AccumType::F32, n), err)) << n;
  EXPECT_NE(rejection(cfg(WT::BF16, WT::BF16, Sm90AccumType::F32, 12)).find("m64n12k16"),
            std::string::npos);
  EXPECT_NE(rejection(cfg(WT::BF16, WT::BF16, Sm90AccumType::F32, 264)).find("9.7.15.2"),
            std::string::npos);
  // e4m3 x e5m2 -> f32 is legal (FP8 variants may mix); k32.
  EXPECT_TRUE(validateSm90Wgmma(cfg(WT::E4M3, WT::E5M2, Sm90AccumType::F32, 128), err)) << err;
  EXPECT_EQ(sm90WgmmaK(WT::E4M3), 32u);
  // s8/u8: N = 8, 16, 24, 32, 48, ..., 256 (ptxas 13.0 also takes n240/n256,
  // which the instruction's syntax block omits).
  EXPECT_TRUE(validateSm90Wgmma(cfg(WT::S8, WT::S8, Sm90AccumType::S32, 24), err));
  EXPECT_TRUE(validateSm90Wgmma(cfg(WT::S8, WT::S8, Sm90AccumType::S32, 48), err));
  EXPECT_TRUE(validateSm90Wgmma(cfg(WT::U8, WT::U8, Sm90AccumType::S32, 256), err));
  EXPECT_NE(rejection(cfg(WT::S8, WT::S8, Sm90AccumType::S32, 40)).find("m64n40k32"),
            std::string::npos);
  // Types: both integer operands of one signedness; bf16 accumulates in f32.
  EXPECT_FALSE(validateSm90Wgmma(cfg(WT::S8, WT::U8, Sm90AccumType::S32, 64), err));
  EXPECT_NE(rejection(cfg(WT::BF16, WT::BF16, Sm90AccumType::F16, 64)).find("bf16 x bf16 -> f16"),
            std::string::npos);
  EXPECT_FALSE(validateSm90Wgmma(cfg(WT::F16, WT::BF16, Sm90AccumType::F32, 64), err));
  EXPECT_TRUE(validateSm90Wgmma(cfg(WT::F16, WT::F16, Sm90AccumType::F16, 64), err));
  // Transposes: f16/bf16 only (9.7.15.5.2).
  Sm90WgmmaConfig v = cfg(WT::BF16, WT::BF16, Sm90AccumType::F32, 64);
  v.bMajor = OperandMajor::MN;
  EXPECT_TRUE(validateSm90Wgmma(v, err)) << err;
  Sm90WgmmaConfig v8 = cfg(WT::E4M3, WT::E4M3, Sm90AccumType::F32, 64);
  v8.bMajor = OperandMajor::MN;
  EXPECT_NE(rejection(v8).find(".f16/.bf16 only"), std::string::npos);
  Sm90WgmmaConfig tf = cfg(WT::TF32, WT::TF32, Sm90AccumType::F32, 64);
  tf.aMajor = OperandMajor::MN;
  EXPECT_FALSE(validateSm90Wgmma(tf, err));
  // A from registers cannot be transposed.
  Sm90WgmmaConfig rs = cfg(WT::BF16, WT::BF16, Sm90AccumType::F32, 64);
  rs.aInRegisters = true;
  EXPECT_TRUE(validateSm90Wgmma(rs, err));
  rs.aMajor = OperandMajor::MN;
  EXPECT_NE(rejection(rs).find("imm-trans-a"), std::string::npos);
  // Opcodes and register counts.
  EXPECT_EQ(sm90WgmmaOpcode(cfg(WT::BF16, WT::BF16, Sm90AccumType::F32, 128)),
            "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16");
  EXPECT_EQ(sm90WgmmaOpcode(cfg(WT::E4M3, WT::E4M3, Sm90AccumType::F32, 64)),
            "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3");
  EXPECT_EQ(sm90AccumulatorRegisters(cfg(WT::BF16, WT::BF16, Sm90AccumType::F32, 128)), 64u);
  EXPECT_EQ(sm90AccumulatorRegisters(cfg(WT::F16, WT::F16, Sm90AccumType::F16, 128)), 32u);
}

// The wgmma figures (149, 153) show, per warp w, the mma.sync accumulator
// layout of 9.7.14.5.8 repeated over N in 8-column blocks, with rows offset
// by 16w. The mma.sync text: groupID = lane >> 2, threadID_in_group = lane % 4;
// c_i: row = groupID (+8 for i >= 2), col = threadID_in_group * 2 + (i & 1).
TEST(Sm90Fragments, AccumulatorMatchesMmaSyncFormulasPerWarp) {
  for (unsigned t = 0; t < 128; ++t)
    for (unsigned i = 0; i < 128; ++i) { // N = 256
      unsigned w = t / 32, lane = t % 32, block = i / 4, c = i % 4;
      Sm90FragmentCoord expect;
      expect.row = 16 * w + (lane >> 2) + (c >= 2 ? 8 : 0);
      expect.col = 8 * block + (lane % 4) * 2 + (c & 1);
      EXPECT_EQ(sm90AccumulatorCoord(t, i), expect) << t << " " << i;
    }
}

// Independent cross-check: CUTLASS's CLayout_64xN
// ((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512)) maps (thread, value) to
// m + 64 n (include/cute/atom/mma_traits_sm90_gmma.hpp).
TEST(Sm90Fragments, AccumulatorMatchesCutlassCLayout) {
  const uint32_t ts[3] = {4, 8, 4}, tt[3] = {128, 1, 16};
  const uint32_t vs[3] = {2, 2, 32}, vt[3] = {64, 8, 512};
  std::set<std::pair<uint32_t, uint32_t>> covered;
  for (unsigned t = 0; t < 128; ++t)
    for (unsigned i = 0; i < 128; ++i) {
      uint32_t idx = cuteTv(ts, tt, vs, vt, t, i);
      Sm90FragmentCoord c = sm90AccumulatorCoord(t, i);
      EXPECT_EQ(c.row, idx % 64);
      EXPECT_EQ(c.col, idx / 64);
      covered.insert({c.row, c.col});
    }
  EXPECT_EQ(covered.size(), 64u * 256u); // every element exactly once
}

// A in registers. 16-bit (Figure 148) per warp = mma.sync m16n8k16 A
// (9.7.14.5.8): row = groupID for a0,a1,a4,a5, +8 otherwise;
// col = threadID_in_group * 2 + (i & 1), +8 for i >= 4.
// 8-bit (Figure 152) per warp = mma.sync m16n8k32 A (9.7.14.5.10):
// row = groupID for i < 4 or 8 <= i < 12, +8 otherwise;
// col = threadID_in_group * 4 + (i & 3), +16 for i >= 8.
TEST(Sm90Fragments, AOperandMatchesMmaSyncFormulasAndCutlass) {
  const uint32_t ts[3] = {4, 8, 4};
  const uint32_t t16[3] = {128, 1, 16}, v16s[3] = {2, 2, 2}, v16t[3] = {64, 8, 512};
  const uint32_t t8[3] = {256, 1, 16}, v8s[3] = {4, 2, 2}, v8t[3] = {64, 8, 1024};
  for (unsigned t = 0; t < 128; ++t) {
    unsigned w = t / 32, lane = t % 32, g = lane >> 2, q = lane % 4;
    for (unsigned i = 0; i < 8; ++i) {
      Sm90FragmentCoord c;
      ASSERT_TRUE(sm90AFragmentCoord(WT::BF16, t, i, c));
      bool upper = !(i < 2 || (i >= 4 && i < 6));
      EXPECT_EQ(c.row, 16 * w + g + (upper ? 8 : 0));
      EXPECT_EQ(c.col, q * 2 + (i & 1) + (i >= 4 ? 8 : 0));
      // CUTLASS ALayout_64x16.
      uint32_t idx = cuteTv(ts, t16, v16s, v16t, t, i);
      EXPECT_EQ(c.row, idx % 64);
      EXPECT_EQ(c.col, idx / 64);
    }
    for (unsigned i = 0; i < 16; ++i) {
      Sm90FragmentCoord c;
      ASSERT_TRUE(sm90AFragmentCoord(WT::E4M3, t, i, c));
      bool upper = !(i < 4 || (i >= 8 && i < 12));
      EXPECT_EQ(c.row, 16 * w + g + (upper ? 8 : 0));
      EXPECT_EQ(c.col, q * 4 + (i & 3) + (i >= 8 ? 16 : 0));
      // CUTLASS ALayout_64x32.
      uint32_t idx = cuteTv(ts, t8, v8s, v8t, t, i);
      EXPECT_EQ(c.row, idx % 64);
      EXPECT_EQ(c.col, idx / 64);
    }
  }
  Sm90FragmentCoord c;
  EXPECT_FALSE(sm90AFragmentCoord(WT::BF16, 0, 8, c));
  EXPECT_FALSE(sm90AFragmentCoord(WT::TF32, 0, 0, c));
  EXPECT_FALSE(sm90AFragmentCoord(WT::E4M3, 128, 0, c));
}

// What the softmax/PV lowering relies on: for 16-bit P the f32 accumulator
// registers 8j..8j+7 of S hold exactly the elements the A fragment of the
// j-th K=16 slice of P needs (so S -> P needs no data movement), while for
// FP8 P (K=32 slices) a thread holds different columns than it must supply.
TEST(Sm90Fragments, AccumulatorToAFragmentForPV) {
  for (unsigned t = 0; t < 128; ++t)
    for (unsigned j = 0; j < 8; ++j)
      for (unsigned e = 0; e < 8; ++e) {
        Sm90FragmentCoord acc = sm90AccumulatorCoord(t, 8 * j + e), a;
        ASSERT_TRUE(sm90AFragmentCoord(WT::BF16, t, e, a));
        EXPECT_EQ(acc.row, a.row);
        EXPECT_EQ(acc.col, 16 * j + a.col);
      }
  unsigned mismatched = 0;
  for (unsigned t = 0; t < 128; ++t)
    for (unsigned e = 0; e < 16; ++e) {
      Sm90FragmentCoord acc = sm90AccumulatorCoord(t, e), a;
      ASSERT_TRUE(sm90AFragmentCoord(WT::E4M3, t, e, a));
      mismatched += !(acc == a);
    }
  EXPECT_GT(mismatched, 0u);
}
