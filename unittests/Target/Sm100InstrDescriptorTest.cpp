//===- Sm100InstrDescriptorTest.cpp - tcgen05.mma instruction descriptor --===//
//
// Expected values are derived by hand from PTX ISA 9.0, 9.7.16.4.2
// "Instruction descriptor", Tables 42, 43 and 44; legality from Table 39
// (9.7.16.2.1), Tables 49/50 (9.7.16.10.1), Table 52 (9.7.16.10.3) and
// Tables 54/55 (9.7.16.10.7.1).
//
//===----------------------------------------------------------------------===//
#include "flamia/Target/Sm100InstrDescriptor.h"

#include "gtest/gtest.h"

#include <vector>

using namespace flamia;
using ET = Sm100ElementType;

namespace {

Sm100MmaConfig bf16(uint32_t m, uint32_t n, OperandMajor bMajor = OperandMajor::K) {
  Sm100MmaConfig c;
  c.kind = Sm100MmaKind::F16;
  c.aType = c.bType = ET::BF16;
  c.dType = Sm100AccumType::F32;
  c.m = m;
  c.n = n;
  c.bMajor = bMajor;
  return c;
}

Sm100MmaConfig mxf8(ET a, ET b, uint32_t m, uint32_t n, unsigned ctaGroup = 1) {
  Sm100MmaConfig c;
  c.kind = Sm100MmaKind::MXF8F6F4;
  c.aType = a;
  c.bType = b;
  c.m = m;
  c.n = n;
  c.ctaGroup = ctaGroup;
  c.scaleType = Sm100ScaleType::UE8M0;
  c.scaleVec = Sm100ScaleVec::X1;
  return c;
}

/// NVFP4: kind::mxf4nvf4, E2M1 x E2M1, UE4M3 scales, scale_vec::4X.
Sm100MmaConfig nvfp4(uint32_t m = 128, uint32_t n = 128) {
  Sm100MmaConfig c;
  c.kind = Sm100MmaKind::MXF4NVF4;
  c.aType = c.bType = ET::E2M1;
  c.scaleType = Sm100ScaleType::UE4M3;
  c.scaleVec = Sm100ScaleVec::X4;
  c.m = m;
  c.n = n;
  return c;
}

uint32_t encode(const Sm100MmaConfig &c) {
  uint32_t d = 0;
  std::string err;
  EXPECT_TRUE(encodeSm100InstrDescriptor(c, d, err)) << err;
  return d;
}

std::string rejection(const Sm100MmaConfig &c) {
  uint32_t d = 0;
  std::string err;
  EXPECT_FALSE(encodeSm100InstrDescriptor(c, d, err));
  return err;
}

} // namespace

// PTX ISA 9.0, Table 42 (.kind::f16): bf16 x bf16 -> f32, M = 128, N = 128,
// both K-major:
//   dtype F32 = 1 at 4-5   -> 0x10
//   atype BF16 = 1 at 7-9  -> 0x80
//   btype BF16 = 1 at 10-12 -> 0x400
//   N >> 3 = 16 at 17-22   -> 0x200000
//   M >> 4 = 8 at 24-28    -> 0x08000000
TEST(Sm100InstrDescriptor, KindF16Bf16HandDerived) {
  EXPECT_EQ(encode(bf16(128, 128)), 0x08200490u);
  // P (bf16, K-major) x V (bf16, MN-major: transpose B = bit 16), N = 256.
  EXPECT_EQ(encode(bf16(128, 256, OperandMajor::MN)), 0x08410490u);
  // M = 64 (cta_group::1), N = 8: M >> 4 = 4, N >> 3 = 1.
  EXPECT_EQ(encode(bf16(64, 8)), 0x04020490u);
  // f16 x f16 -> f16: all type codes 0, dtype 0.
  Sm100MmaConfig h = bf16(128, 64);
  h.aType = h.bType = ET::F16;
  h.dType = Sm100AccumType::F16;
  EXPECT_EQ(encode(h), 0x08000000u | (8u << 17));
  // Negate A and B: bits 13 and 14.
  Sm100MmaConfig neg = bf16(128, 128);
  neg.negateA = neg.negateB = true;
  EXPECT_EQ(encode(neg), 0x08200490u | 0x6000u);
}

// Independent cross-check: Triton's tcgen05 lowering tests pin the
// .kind::i8 descriptor of a 128x128 MMA as 136314912 (u8) and 136316064 (s8)
// (test/Conversion/tritongpu_to_llvm_blackwell.mlir, "Verify descriptor is
// expected value for i8 unsigned/signed").
TEST(Sm100InstrDescriptor, KindI8MatchesTritonTestConstants) {
  Sm100MmaConfig c;
  c.kind = Sm100MmaKind::I8;
  c.aType = c.bType = ET::U8;
  c.dType = Sm100AccumType::S32;
  c.m = 128;
  c.n = 128;
  EXPECT_EQ(encode(c), 136314912u);
  c.aType = c.bType = ET::S8;
  EXPECT_EQ(encode(c), 136316064u);
}

// PTX ISA 9.0, Table 43 (.kind::mxf8f6f4): e4m3 x e4m3, UE8M0, M = 128,
// N = 128:
//   atype/btype E4M3 = 0
//   N >> 3 = 16 at 17-22        -> 0x200000
//   scale type UE8M0 = 1 at 23  -> 0x800000
//   M >> 7 = 1 at 27-28         -> 0x08000000
TEST(Sm100InstrDescriptor, KindMxf8f6f4HandDerived) {
  EXPECT_EQ(encode(mxf8(ET::E4M3, ET::E4M3, 128, 128)), 0x08A00000u);
  // Scale-factor A ID 2 at 29-30 (0x40000000), B ID 3 at 4-5 (0x30).
  Sm100MmaConfig ids = mxf8(ET::E4M3, ET::E4M3, 128, 128);
  ids.aScaleFactorId = 2;
  ids.bScaleFactorId = 3;
  EXPECT_EQ(encode(ids), 0x48A00030u);
  // O = P V: P e4m3 K-major, V e4m3 MN-major (bit 16), N = head dim 64.
  Sm100MmaConfig pv = mxf8(ET::E4M3, ET::E4M3, 128, 64);
  pv.bMajor = OperandMajor::MN;
  EXPECT_EQ(encode(pv), 0x08910000u);
  // e5m2 (1) x e2m1 (5): 0x80 | 0x1400; cta_group::2, M = 256 -> 2 << 27.
  EXPECT_EQ(encode(mxf8(ET::E5M2, ET::E2M1, 256, 256, 2)),
            0x10000000u | 0x800000u | (32u << 17) | 0x80u | (5u << 10));
}

// PTX ISA 9.0, Table 44 (.kind::mxf4 / .kind::mxf4nvf4): E2M1 = 1 in a
// 3-bit atype and a 2-bit btype (10-11).
TEST(Sm100InstrDescriptor, KindMxf4HandDerived) {
  // NVFP4: mxf4nvf4, UE4M3 (bit 23 = 0), scale_vec::4X, M = 128, N = 256.
  Sm100MmaConfig nv = nvfp4(128, 256);
  EXPECT_EQ(encode(nv), 0x08400480u);
  // MXFP4: mxf4, UE8M0, 2X, cta_group::2, M = 256, IDs 2 and 2.
  Sm100MmaConfig mx = nv;
  mx.kind = Sm100MmaKind::MXF4;
  mx.scaleType = Sm100ScaleType::UE8M0;
  mx.scaleVec = Sm100ScaleVec::X2;
  mx.ctaGroup = 2;
  mx.m = 256;
  mx.aScaleFactorId = 2;
  mx.bScaleFactorId = 2;
  EXPECT_EQ(encode(mx), 0x50C004A0u);
}

// Independent cross-check of the block-scaled layout: CUTLASS's
// UMMA::InstrDescriptorBlockScaled (include/cute/arch/mma_sm100_desc.hpp)
// declares b_sf_id [4,6), a_format [7,10), b_format [10,13), negates 13/14,
// majors 15/16, n_dim [17,23) = N>>3, scale_format 23, m_dim [24,29) = M>>4,
// a_sf_id [29,31). The ISA writes M >> 7 in bits 27-28 with 24-26 reserved:
// the same bits for M in {128, 256}.
TEST(Sm100InstrDescriptor, BlockScaledAgreesWithCutlassBitfields) {
  auto cutlass = [](unsigned aFmt, unsigned bFmt, unsigned m, unsigned n,
                    unsigned aMajor, unsigned bMajor, unsigned sfFmt,
                    unsigned aSf, unsigned bSf) {
    return (bSf << 4) | (aFmt << 7) | (bFmt << 10) | (aMajor << 15) |
           (bMajor << 16) | ((n >> 3) << 17) | (sfFmt << 23) |
           ((m >> 4) << 24) | (aSf << 29);
  };
  for (unsigned ctaGroup : {1u, 2u})
    for (unsigned m : {128u, 256u})
      for (unsigned n = 16; n <= 256; n += 16)
        for (unsigned bMajor : {0u, 1u})
          for (unsigned sf = 0; sf < 4; ++sf) {
            if (ctaGroup == 1 && m == 256)
              continue;
            if (ctaGroup == 2 && n % 32 && bMajor)
              continue;
            Sm100MmaConfig c = mxf8(ET::E4M3, ET::E5M2, m, n, ctaGroup);
            c.bMajor = bMajor ? OperandMajor::MN : OperandMajor::K;
            c.aScaleFactorId = sf;
            c.bScaleFactorId = 3 - sf;
            EXPECT_EQ(encode(c), cutlass(0, 1, m, n, 0, bMajor, 1, sf, 3 - sf))
                << m << "x" << n << " sf " << sf;
          }
}

// Every legal configuration round-trips and leaves the reserved bits zero.
TEST(Sm100InstrDescriptor, RoundTripsEveryLegalConfiguration) {
  struct KindTypes {
    Sm100MmaKind kind;
    std::vector<ET> types;
    std::vector<Sm100AccumType> accums;
  };
  const KindTypes kinds[] = {
      {Sm100MmaKind::F16, {ET::F16, ET::BF16}, {Sm100AccumType::F32, Sm100AccumType::F16}},
      {Sm100MmaKind::TF32, {ET::TF32}, {Sm100AccumType::F32}},
      {Sm100MmaKind::F8F6F4, {ET::E4M3, ET::E5M2, ET::E2M3, ET::E3M2, ET::E2M1},
       {Sm100AccumType::F32, Sm100AccumType::F16}},
      {Sm100MmaKind::I8, {ET::U8, ET::S8}, {Sm100AccumType::S32}},
      {Sm100MmaKind::MXF8F6F4, {ET::E4M3, ET::E5M2, ET::E2M3, ET::E3M2, ET::E2M1},
       {Sm100AccumType::F32}},
      {Sm100MmaKind::MXF4, {ET::E2M1}, {Sm100AccumType::F32}},
      {Sm100MmaKind::MXF4NVF4, {ET::E2M1}, {Sm100AccumType::F32}},
  };
  int legal = 0;
  for (const KindTypes &k : kinds)
    for (ET a : k.types)
      for (ET b : k.types)
        for (Sm100AccumType acc : k.accums)
          for (unsigned ctaGroup : {1u, 2u})
            for (unsigned m : {64u, 128u, 256u})
              for (unsigned n = 8; n <= 256; n += 8)
                for (unsigned majors = 0; majors < 4; ++majors)
                  for (unsigned sf = 0; sf < 4; ++sf) {
                    Sm100MmaConfig c;
                    c.kind = k.kind;
                    c.aType = a;
                    c.bType = b;
                    c.dType = acc;
                    c.ctaGroup = ctaGroup;
                    c.m = m;
                    c.n = n;
                    c.aMajor = (majors & 1) ? OperandMajor::MN : OperandMajor::K;
                    c.bMajor = (majors & 2) ? OperandMajor::MN : OperandMajor::K;
                    c.negateA = k.kind != Sm100MmaKind::I8 && (n & 16);
                    if (isSm100BlockScaledKind(k.kind)) {
                      c.scaleType = Sm100ScaleType::UE8M0;
                      c.scaleVec = k.kind == Sm100MmaKind::MXF8F6F4
                                       ? Sm100ScaleVec::X1
                                       : Sm100ScaleVec::X2;
                      c.aScaleFactorId = sf;
                      c.bScaleFactorId = (sf + 2) % 4;
                    } else if (sf) {
                      continue;
                    }
                    std::string err;
                    uint32_t d = 0;
                    if (!encodeSm100InstrDescriptor(c, d, err))
                      continue;
                    ++legal;
                    ASSERT_TRUE(verifySm100InstrDescriptorBits(d, c.kind, err)) << err;
                    Sm100MmaConfig back;
                    ASSERT_TRUE(decodeSm100InstrDescriptor(d, c.kind, ctaGroup, back, err)) << err;
                    EXPECT_EQ(back, c) << sm100MmaOpcode(c) << " " << m << "x" << n;
                  }
  // Sanity: the sweep really covered thousands of legal encodings.
  EXPECT_GT(legal, 10000);
}

TEST(Sm100InstrDescriptor, RejectsIllegalCombinations) {
  // FP4 operands cannot be MN-major (Table 52).
  Sm100MmaConfig fp4mn = mxf8(ET::E4M3, ET::E2M1, 128, 128);
  fp4mn.bMajor = OperandMajor::MN;
  EXPECT_NE(rejection(fp4mn).find("Table 52"), std::string::npos);
  // mxf4 / mxf4nvf4 have no transpose at all (Table 49).
  Sm100MmaConfig nv = nvfp4();
  nv.aMajor = OperandMajor::MN;
  EXPECT_NE(rejection(nv).find("Table 49"), std::string::npos);
  // N not a multiple of 8, or above 256 (Table 39).
  EXPECT_NE(rejection(bf16(128, 12)).find("N = 12"), std::string::npos);
  EXPECT_NE(rejection(bf16(128, 264)).find("N = 264"), std::string::npos);
  // cta_group::2 needs N a multiple of 16.
  Sm100MmaConfig pair = bf16(256, 24);
  pair.ctaGroup = 2;
  EXPECT_NE(rejection(pair).find("multiple of 16"), std::string::npos);
  // 8-bit MN-major B needs N a multiple of 16 with cta_group::1 (Table 50).
  Sm100MmaConfig pv = mxf8(ET::E4M3, ET::E4M3, 128, 24);
  pv.bMajor = OperandMajor::MN;
  EXPECT_NE(rejection(pv).find("Table 50"), std::string::npos);
  // Block-scaled kinds have no M = 64 (Table 39; M >> 7 cannot hold it).
  EXPECT_NE(rejection(mxf8(ET::E4M3, ET::E4M3, 64, 128)).find("M = 64"), std::string::npos);
  // M = 256 needs cta_group::2; M = 64 does not exist with cta_group::2.
  EXPECT_NE(rejection(bf16(256, 128)).find("cta_group::1"), std::string::npos);
  Sm100MmaConfig pair64 = bf16(64, 128);
  pair64.ctaGroup = 2;
  EXPECT_NE(rejection(pair64).find("128 or 256"), std::string::npos);
  // mxf8f6f4 takes UE8M0 scales only, with scale_vec::1X (Tables 54/55).
  Sm100MmaConfig ue4m3 = mxf8(ET::E4M3, ET::E4M3, 128, 128);
  ue4m3.scaleType = Sm100ScaleType::UE4M3;
  EXPECT_NE(rejection(ue4m3).find("Tables 54 and 55"), std::string::npos);
  Sm100MmaConfig vec2 = mxf8(ET::E4M3, ET::E4M3, 128, 128);
  vec2.scaleVec = Sm100ScaleVec::X2;
  EXPECT_NE(rejection(vec2).find("scale_vec::2X"), std::string::npos);
  // Scale-factor IDs: 2X takes 0 or 2, 4X only 0.
  Sm100MmaConfig id1 = nv;
  id1.aMajor = OperandMajor::K;
  id1.scaleType = Sm100ScaleType::UE8M0;
  id1.scaleVec = Sm100ScaleVec::X2;
  id1.bScaleFactorId = 1;
  EXPECT_NE(rejection(id1).find("scale-factor B ID 1"), std::string::npos);
  Sm100MmaConfig id2 = nv;
  id2.aMajor = OperandMajor::K;
  id2.aScaleFactorId = 2;
  EXPECT_NE(rejection(id2).find("scale-factor A ID 2"), std::string::npos);
  // Non-block-scaled kinds have no scale-factor IDs.
  Sm100MmaConfig f16ids = bf16(128, 128);
  f16ids.aScaleFactorId = 1;
  EXPECT_NE(rejection(f16ids).find("no scale-factor IDs"), std::string::npos);
  // Types: bf16 cannot accumulate in f16; f16 and bf16 are not mixed;
  // e4m3 is not a kind::f16 type; i8 has no negate.
  Sm100MmaConfig bf16acc = bf16(128, 128);
  bf16acc.dType = Sm100AccumType::F16;
  EXPECT_NE(rejection(bf16acc).find("cannot accumulate into f16"), std::string::npos);
  Sm100MmaConfig mixed = bf16(128, 128);
  mixed.aType = ET::F16;
  EXPECT_NE(rejection(mixed).find("same type"), std::string::npos);
  Sm100MmaConfig wrong = bf16(128, 128);
  wrong.aType = wrong.bType = ET::E4M3;
  EXPECT_NE(rejection(wrong).find("kind::f16 does not take e4m3"), std::string::npos);
  Sm100MmaConfig i8neg;
  i8neg.kind = Sm100MmaKind::I8;
  i8neg.aType = i8neg.bType = ET::S8;
  i8neg.dType = Sm100AccumType::S32;
  i8neg.negateB = true;
  EXPECT_NE(rejection(i8neg).find("negate"), std::string::npos);
  // i8, cta_group::1: N = 40 is not in {8, 16, 24, 32, 48, ...}.
  Sm100MmaConfig i8n = i8neg;
  i8n.negateB = false;
  i8n.n = 40;
  EXPECT_NE(rejection(i8n).find("N = 40"), std::string::npos);
}

TEST(Sm100InstrDescriptor, VerifyAndDecodeFlagReservedBits) {
  uint32_t d = encode(mxf8(ET::E4M3, ET::E4M3, 128, 128));
  std::string err;
  for (unsigned bit : {0u, 1u, 2u, 3u, 6u, 24u, 25u, 26u, 31u}) {
    EXPECT_FALSE(verifySm100InstrDescriptorBits(d | (1u << bit), Sm100MmaKind::MXF8F6F4, err)) << bit;
    Sm100MmaConfig c;
    EXPECT_FALSE(decodeSm100InstrDescriptor(d | (1u << bit), Sm100MmaKind::MXF8F6F4, 1, c, err));
  }
  // Table 44: bit 12 is reserved (btype is 2 bits), bit 31 selects K = 96.
  uint32_t dn = encode(nvfp4());
  EXPECT_FALSE(verifySm100InstrDescriptorBits(dn | (1u << 12), Sm100MmaKind::MXF4NVF4, err));
  EXPECT_FALSE(verifySm100InstrDescriptorBits(dn | (1u << 31), Sm100MmaKind::MXF4NVF4, err));
  // Table 42: bits 6, 23, 29 reserved; 30-31 (.ws shift) kept 0.
  uint32_t df = encode(bf16(128, 128));
  for (unsigned bit : {6u, 23u, 29u, 30u, 31u})
    EXPECT_FALSE(verifySm100InstrDescriptorBits(df | (1u << bit), Sm100MmaKind::F16, err)) << bit;
  // A kind::f16 descriptor with a type code kind::f16 does not define.
  Sm100MmaConfig c;
  EXPECT_FALSE(decodeSm100InstrDescriptor((df & ~0x380u) | (5u << 7), Sm100MmaKind::F16, 1, c, err));
  EXPECT_NE(err.find("type code"), std::string::npos) << err;
}

TEST(Sm100InstrDescriptor, OpcodesAndShapes) {
  EXPECT_EQ(sm100MmaOpcode(bf16(128, 128)), "tcgen05.mma.cta_group::1.kind::f16");
  EXPECT_EQ(sm100MmaOpcode(mxf8(ET::E4M3, ET::E4M3, 128, 128)),
            "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X");
  Sm100MmaConfig nv = nvfp4();
  nv.ctaGroup = 2;
  EXPECT_EQ(sm100MmaOpcode(nv),
            "tcgen05.mma.cta_group::2.kind::mxf4nvf4.block_scale.scale_vec::4X");
  // Table 39 K per kind; block size = K / scale_vec (Table 54).
  EXPECT_EQ(sm100MmaK(Sm100MmaKind::F16), 16u);
  EXPECT_EQ(sm100MmaK(Sm100MmaKind::TF32), 8u);
  EXPECT_EQ(sm100MmaK(Sm100MmaKind::MXF8F6F4), 32u);
  EXPECT_EQ(sm100MmaK(Sm100MmaKind::MXF4NVF4), 64u);
  EXPECT_EQ(sm100ScaleBlockSize(Sm100MmaKind::MXF8F6F4, Sm100ScaleVec::X1), 32u);
  EXPECT_EQ(sm100ScaleBlockSize(Sm100MmaKind::MXF4, Sm100ScaleVec::X2), 32u);
  EXPECT_EQ(sm100ScaleBlockSize(Sm100MmaKind::MXF4NVF4, Sm100ScaleVec::X4), 16u);
}

// The sm_100a backward's GEMMs (lib/Transforms/TileAttentionBackwardSm100.cpp),
// by hand from Tables 42/43. dK/dV kernel, query tiles of 64:
//   S^T = K Q^T, E4M3 block-scaled (scale type UE8M0, bit 23), M = 128,
//     N = 64, both K-major: N >> 3 = 8 at 17-22 (0x100000), M >> 4 = 8 at
//     24-28 (0x08000000) -> 0x08900000;
//   dV += P^T dO with N = head dim 128 (0x200000), B (dO) MN-major (bit 16)
//     and B's scale-factor ID 2 (bits 4-5) for the second 64 queries of
//     dO's 128-row scale tile (b_k_block) -> 0x08A10020;
//   dP^T = V dO^T on the safe block in bf16, N = 64 -> 0x08100490.
// dQ kernel: dQ += dS K, N = head dim 64, K (B) MN-major -> 0x08910000.
TEST(Sm100InstrDescriptor, BackwardGemms) {
  EXPECT_EQ(encode(mxf8(ET::E4M3, ET::E4M3, 128, 64)), 0x08900000u);
  Sm100MmaConfig dv = mxf8(ET::E4M3, ET::E4M3, 128, 128);
  dv.bMajor = OperandMajor::MN;
  dv.bScaleFactorId = 2;
  EXPECT_EQ(encode(dv), 0x08A10020u);
  EXPECT_EQ(encode(bf16(128, 64)), 0x08100490u);
  Sm100MmaConfig dq = mxf8(ET::E4M3, ET::E4M3, 128, 64);
  dq.bMajor = OperandMajor::MN;
  EXPECT_EQ(encode(dq), 0x08910000u);
  // k_valid's select needs the descriptor affine in the K step: step kk of
  // a 128-deep contraction reads A's and B's scale byte kk (IDs 0-3), so
  // consecutive steps differ by 0x20000010 and no step carries into another
  // field.
  Sm100MmaConfig step = dq;
  uint32_t first = encode(step);
  for (unsigned kk = 1; kk < 4; ++kk) {
    step.aScaleFactorId = step.bScaleFactorId = kk;
    EXPECT_EQ(encode(step), first + kk * 0x20000010u) << kk;
  }
  // An 8-bit MN-major B (dQ's K, dV's dO, dK's Q_tb) needs N % 16 == 0
  // (Table 50): head dims 64 and 128 are, 72 is not.
  Sm100MmaConfig odd = dq;
  odd.n = 72;
  EXPECT_NE(rejection(odd).find("Table 50"), std::string::npos);
  // nvfp4-mixed: S = Q K^T and dP = dO V^T (N = 128 keys) and S^T = K Q^T,
  // dP^T = V dO^T (N = 64 queries) by mxf4nvf4, UE4M3, scale_vec::4X, both
  // operands K-major, scale-factor ID 0 in every K = 64 step (each step
  // reads its own 4-column chunk): n_dim = N >> 3 in bits 17-22.
  EXPECT_EQ(encode(nvfp4(128, 128)), 0x08200480u);
  EXPECT_EQ(encode(nvfp4(128, 64)), 0x08100480u);
  // FP4 operands are K-major only: an MN-major B (a token-contracted GEMM)
  // is rejected, which is why dQ, dV and dK read the E4M3 token blocks.
  Sm100MmaConfig nvMn = nvfp4(128, 64);
  nvMn.bMajor = OperandMajor::MN;
  EXPECT_FALSE(rejection(nvMn).empty());
}
