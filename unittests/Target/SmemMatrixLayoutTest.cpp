//===- SmemMatrixLayoutTest.cpp - Canonical shared-memory layouts ---------===//
//
// Checked against the PTX ISA 9.0 text: the swizzle tables of 5.5.7
// "Swizzling Modes", and the worked examples of 9.7.16.3.3 "Canonical
// Layouts" (tcgen05; the wgmma section 9.7.15.5.1.2.1.3 has the same ones).
//
//===----------------------------------------------------------------------===//
#include "flamia/Target/SmemMatrixLayout.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <vector>

using namespace flamia;

namespace {

// A two-level CuTe layout ((s0,s1[,s2]),(t0,t1)) : ((a0,a1[,a2]),(b0,b1)),
// evaluated at (row, col) with colexicographic coordinates, as the ISA prints
// its "Exact layout" lines.
struct CuteLayout2 {
  std::vector<uint32_t> rowShape, rowStride, colShape, colStride;
  uint64_t operator()(uint32_t row, uint32_t col) const {
    uint64_t off = 0;
    for (size_t i = 0; i < rowShape.size(); ++i) {
      off += uint64_t(row % rowShape[i]) * rowStride[i];
      row /= rowShape[i];
    }
    for (size_t i = 0; i < colShape.size(); ++i) {
      off += uint64_t(col % colShape[i]) * colStride[i];
      col /= colShape[i];
    }
    return off;
  }
};

SmemOperandTile tile(OperandMajor major, SmemSwizzle swizzle, unsigned bits,
                     uint32_t mn, uint32_t k,
                     AtomOrder order = AtomOrder::MNFastest) {
  SmemOperandTile t;
  t.major = major;
  t.swizzle = swizzle;
  t.elementBits = bits;
  t.mnExtent = mn;
  t.kExtent = k;
  t.order = order;
  return t;
}

SmemStrides strides(const SmemOperandTile &t) {
  SmemStrides s;
  std::string err;
  EXPECT_TRUE(computeSmemStrides(t, s, err)) << err;
  return s;
}

} // namespace

// PTX ISA 9.0, 5.5.7 "Swizzling Modes": the tables list, per 128-byte line of
// the repeating pattern, which 16-byte chunk lands at each of the 8 positions.
TEST(SmemSwizzle, MatchesThePtxIsaSwizzleTables) {
  const int t32[2][8] = {{0, 1, 2, 3, 4, 5, 6, 7}, {1, 0, 3, 2, 5, 4, 7, 6}};
  const int t64[4][8] = {{0, 1, 2, 3, 4, 5, 6, 7},
                         {1, 0, 3, 2, 5, 4, 7, 6},
                         {2, 3, 0, 1, 6, 7, 4, 5},
                         {3, 2, 1, 0, 7, 6, 5, 4}};
  const int t128[8][8] = {{0, 1, 2, 3, 4, 5, 6, 7}, {1, 0, 3, 2, 5, 4, 7, 6},
                          {2, 3, 0, 1, 6, 7, 4, 5}, {3, 2, 1, 0, 7, 6, 5, 4},
                          {4, 5, 6, 7, 0, 1, 2, 3}, {5, 4, 7, 6, 1, 0, 3, 2},
                          {6, 7, 4, 5, 2, 3, 0, 1}, {7, 6, 5, 4, 3, 2, 1, 0}};
  auto check = [](SmemSwizzle sw, const int *table, int lines) {
    for (int line = 0; line < lines; ++line)
      for (int pos = 0; pos < 8; ++pos) {
        int chunk = table[line * 8 + pos];
        uint32_t logical = line * 128 + chunk * 16 + 5; // a byte inside it
        EXPECT_EQ(applySmemSwizzle(logical, sw), uint32_t(line * 128 + pos * 16 + 5))
            << smemSwizzleName(sw) << " line " << line << " chunk " << chunk;
      }
  };
  check(SmemSwizzle::B32, &t32[0][0], 2);
  check(SmemSwizzle::B64, &t64[0][0], 4);
  check(SmemSwizzle::B128, &t128[0][0], 8);
  // The pattern repeats every 256/512/1024 bytes; no swizzle is the identity.
  EXPECT_EQ(applySmemSwizzle(1024 + 128 + 16, SmemSwizzle::B128), 1024u + 128 + 0);
  EXPECT_EQ(applySmemSwizzle(256 + 128, SmemSwizzle::B32), 256u + 128 + 16);
  EXPECT_EQ(applySmemSwizzle(12345, SmemSwizzle::None), 12345u);
  EXPECT_EQ(smemSwizzleRepeatBytes(SmemSwizzle::B32), 256u);
  EXPECT_EQ(smemSwizzleRepeatBytes(SmemSwizzle::B64), 512u);
  EXPECT_EQ(smemSwizzleRepeatBytes(SmemSwizzle::B128), 1024u);
}

// PTX ISA 9.0, 9.7.16.3.3 "Canonical Layouts", the five worked examples:
// exact layout, LBO and SBO (and their >> 4 encodings) as the ISA states them.
TEST(SmemStrides, ReproduceThePtxIsaCanonicalLayoutExamples) {
  struct Example {
    const char *name;
    SmemOperandTile tile;
    CuteLayout2 exact; // in elements; rows = MN, cols = K
    uint32_t checkK;   // K columns the exact layout is valid for
    uint32_t lboBytes, sboBytes;
    uint32_t lboEncoded, sboEncoded;
  };
  const Example examples[] = {
      // K-Major, no-swizzling, tf32: ((8,2),(4,4)):((4,32),(1,64)),
      // LBO = 64*sizeof(tf32), SBO = 32*sizeof(tf32), encodings 16 and 8.
      {"K-major none tf32",
       tile(OperandMajor::K, SmemSwizzle::None, 32, 16, 16),
       {{8, 2}, {4, 32}, {4, 4}, {1, 64}}, 16, 256, 128, 16, 8},
      // K-Major, 32B swizzling, tf32: ((8,2),(4,4)):((8,64),(1,4)),
      // LBO NA (encoded 1, "assumed"), SBO = 64*sizeof(tf32), encoding 16.
      // The example's second K atom would overlap the next row, so only the
      // first atom row (K < 8) is a layout the tile can hold.
      {"K-major 32B tf32", tile(OperandMajor::K, SmemSwizzle::B32, 32, 16, 8),
       {{8, 2}, {8, 64}, {4, 4}, {1, 4}}, 8, 16, 256, 1, 16},
      // MN-Major, no-swizzling, bf16: ((8,1,2),(8,2)):((1,8,64),(8,128)),
      // LBO = 128*sizeof(bf16), SBO = 64*sizeof(bf16), encodings 16 and 8.
      {"MN-major none bf16",
       tile(OperandMajor::MN, SmemSwizzle::None, 16, 16, 16),
       {{8, 1, 2}, {1, 8, 64}, {8, 2}, {8, 128}}, 16, 256, 128, 16, 8},
      // MN-Major, 32B swizzling, bf16: ((8,2,2),(8,2)):((1,8,128),(16,256)),
      // LBO = 128*sizeof(bf16), SBO = 256*sizeof(bf16), encodings 16 and 32.
      {"MN-major 32B bf16",
       tile(OperandMajor::MN, SmemSwizzle::B32, 16, 32, 16),
       {{8, 2, 2}, {1, 8, 128}, {8, 2}, {16, 256}}, 16, 256, 512, 16, 32},
      // MN-Major, 64B swizzling, bf16: ((8,4,2),(8,2)):((1,8,256),(32,512)),
      // LBO = 256*sizeof(bf16), SBO = 512*sizeof(bf16), encodings 32 and 64.
      {"MN-major 64B bf16",
       tile(OperandMajor::MN, SmemSwizzle::B64, 16, 64, 16),
       {{8, 4, 2}, {1, 8, 256}, {8, 2}, {32, 512}}, 16, 512, 1024, 32, 64},
  };
  for (const Example &e : examples) {
    SCOPED_TRACE(e.name);
    SmemStrides s = strides(e.tile);
    EXPECT_EQ(s.leadingByteOffset, e.lboBytes);
    EXPECT_EQ(s.strideByteOffset, e.sboBytes);
    EXPECT_EQ(s.leadingByteOffset >> 4, e.lboEncoded);
    EXPECT_EQ(s.strideByteOffset >> 4, e.sboEncoded);
    uint32_t eb = e.tile.elementBits / 8;
    for (uint32_t mn = 0; mn < e.tile.mnExtent; ++mn)
      for (uint32_t k = 0; k < e.checkK; ++k) {
        uint64_t exact = e.exact(mn, k) * eb;
        // The tile as stored, and the ISA's canonical formula with the
        // computed LBO/SBO, both land where the ISA's exact layout says.
        EXPECT_EQ(smemTileByteOffset(e.tile, mn, k), exact) << mn << "," << k;
        EXPECT_EQ(canonicalSmemByteOffset(e.tile.major, e.tile.swizzle,
                                          e.tile.elementBits, s, mn, k),
                  exact)
            << mn << "," << k;
      }
  }
}

// For every tile shape FLAMIA may use, the descriptor (start address from
// smemOperandStartOffset, LBO/SBO from computeSmemStrides) read through the
// ISA's canonical layout addresses exactly the bytes the tile occupies, for
// every MMA K-slice (32 bytes of K: K=8 tf32, 16 bf16, 32 fp8).
TEST(SmemStrides, DescriptorAddressesEveryElementOfEveryKSlice) {
  for (OperandMajor major : {OperandMajor::K, OperandMajor::MN})
    for (SmemSwizzle sw : {SmemSwizzle::None, SmemSwizzle::B32,
                           SmemSwizzle::B64, SmemSwizzle::B128})
      for (unsigned bits : {8u, 16u, 32u})
        for (AtomOrder order : {AtomOrder::MNFastest, AtomOrder::KFastest})
          for (uint32_t mnAtoms : {1u, 2u, 4u})
            for (uint32_t kAtoms : {1u, 2u, 3u}) {
              SmemOperandTile t = tile(major, sw, bits, 0, 0, order);
              t.mnExtent = smemAtomMnExtent(t) * mnAtoms * (major == OperandMajor::K ? 2 : 1);
              t.kExtent = smemAtomKExtent(t) * kAtoms;
              uint32_t instrK = 32 * 8 / bits;
              if (t.kExtent % instrK)
                continue;
              SmemStrides s;
              std::string err;
              ASSERT_TRUE(computeSmemStrides(t, s, err)) << err;
              for (uint32_t k0 = 0; k0 < t.kExtent; k0 += instrK) {
                uint64_t start = smemOperandStartOffset(t, k0);
                ASSERT_EQ(start % 16, 0u);
                for (uint32_t mn = 0; mn < t.mnExtent; ++mn)
                  for (uint32_t kk = 0; kk < instrK; ++kk)
                    ASSERT_EQ(start + canonicalSmemByteOffset(t.major, t.swizzle,
                                                              t.elementBits, s,
                                                              mn, kk),
                              smemTileByteOffset(t, mn, k0 + kk))
                        << (major == OperandMajor::K ? "K" : "MN") << "-major "
                        << smemSwizzleName(sw) << " " << bits << "-bit order "
                        << int(order) << " mn " << mn << " k " << k0 + kk;
              }
            }
}

// FLAMIA's operand tiles, by hand from the canonical layouts.
TEST(SmemStrides, FlamiaAttentionTiles) {
  // Q or K, E4M3, head dim 128, 128 rows, K-major: a TMA box of 128 bytes x
  // 128 rows with 128B swizzle. Rows 128 bytes apart, 8-row groups 1024
  // apart: SBO = 1024; LBO unused (16, encoded 1). The four K=32 slices start
  // 32 bytes apart inside the 128-byte row.
  SmemOperandTile qk = tile(OperandMajor::K, SmemSwizzle::B128, 8, 128, 128);
  SmemStrides s = strides(qk);
  EXPECT_EQ(s.strideByteOffset, 1024u);
  EXPECT_EQ(s.leadingByteOffset, 16u);
  EXPECT_EQ(smemOperandStartOffset(qk, 0), 0u);
  EXPECT_EQ(smemOperandStartOffset(qk, 32), 32u);
  EXPECT_EQ(smemOperandStartOffset(qk, 96), 96u);
  EXPECT_EQ(smemTileBytes(qk), 16384u);

  // E4M3, head dim 64: 64-byte rows, 64B swizzle, SBO = 8 x 64 = 512.
  SmemOperandTile qk64 = tile(OperandMajor::K, widestSmemSwizzleFor(64), 8, 128, 64);
  EXPECT_EQ(qk64.swizzle, SmemSwizzle::B64);
  EXPECT_EQ(strides(qk64).strideByteOffset, 512u);

  // BF16 Q/K, head dim 128: two 128-byte atom columns along K (TMA loads
  // 64 channels per box); a column is 128 rows x 128 bytes = 16384 bytes.
  SmemOperandTile qkBf16 = tile(OperandMajor::K, SmemSwizzle::B128, 16, 128, 128);
  EXPECT_EQ(strides(qkBf16).strideByteOffset, 1024u);
  EXPECT_EQ(smemOperandStartOffset(qkBf16, 16), 32u);
  EXPECT_EQ(smemOperandStartOffset(qkBf16, 48), 96u);
  EXPECT_EQ(smemOperandStartOffset(qkBf16, 64), 16384u);
  EXPECT_EQ(smemOperandStartOffset(qkBf16, 112), 16384u + 96);

  // V (the B operand of O = P V), E4M3, 128 keys x 128 channels, channels
  // contiguous = MN-major; TMA writes 128-byte channel rows, one per key:
  // 8-key groups 1024 bytes apart (SBO); the next 128 channels would follow
  // all 16 key groups (LBO = 16 x 1024). Slice k0 = 32 keys starts 4096 in.
  SmemOperandTile v = tile(OperandMajor::MN, SmemSwizzle::B128, 8, 128, 128,
                           AtomOrder::KFastest);
  s = strides(v);
  EXPECT_EQ(s.strideByteOffset, 1024u);
  EXPECT_EQ(s.leadingByteOffset, 16384u);
  EXPECT_EQ(smemOperandStartOffset(v, 32), 4096u);

  // V, BF16, 128 keys x 128 channels: two 64-channel atoms along MN.
  SmemOperandTile vBf16 = tile(OperandMajor::MN, SmemSwizzle::B128, 16, 128,
                               128, AtomOrder::KFastest);
  s = strides(vBf16);
  EXPECT_EQ(s.strideByteOffset, 1024u);
  EXPECT_EQ(s.leadingByteOffset, 16384u);
  EXPECT_EQ(smemOperandStartOffset(vBf16, 16), 2048u);
  EXPECT_EQ(smemTileByteOffset(vBf16, 64, 0), 16384u);
}

// Where 2-D TMA loads with boxes `boxBytes` wide (the row, up to the 128
// bytes the widest swizzle allows) put element (row, col) of a [rows, cols]
// tile, before the swizzle: the boxes side by side along cols, each rows x
// boxBytes.
uint64_t tmaBoxOffset(uint32_t rows, uint32_t boxBytes, unsigned bits,
                      uint32_t row, uint32_t col) {
  uint32_t perBox = boxBytes * 8 / bits;
  return uint64_t(col / perBox) * rows * boxBytes + uint64_t(row) * boxBytes +
         uint64_t(col % perBox) * bits / 8;
}

// The sm_100a backward's tiles, as the operands of each GEMM read them
// (lib/Transforms/TileAttentionBackwardSm100.cpp): every element the MMA
// addresses through the descriptor is where TMA put it.
//   S^T = K Q^T, dP^T = V dO^T: Q, dO as B, K-major, 64 query rows;
//   dV += P^T dO, dK += dS^T Q_tb: dO, Q_tb as B, MN-major (rows = the 64
//     queries contracted, cols = channels);
//   dQ += dS K: K as B, MN-major (rows = the 128 keys contracted).
TEST(SmemStrides, BackwardTilesMatchTheTmaBoxes) {
  struct Case {
    OperandMajor major;
    unsigned bits;
    uint32_t rows, cols;
  };
  for (Case c : {Case{OperandMajor::K, 8, 64, 128}, Case{OperandMajor::K, 8, 64, 64},
                 Case{OperandMajor::K, 16, 64, 128}, Case{OperandMajor::K, 16, 64, 64},
                 Case{OperandMajor::MN, 8, 64, 128}, Case{OperandMajor::MN, 8, 64, 64},
                 Case{OperandMajor::MN, 16, 64, 128}, Case{OperandMajor::MN, 16, 64, 64},
                 Case{OperandMajor::MN, 8, 128, 128}, Case{OperandMajor::MN, 16, 128, 128},
                 Case{OperandMajor::MN, 16, 128, 64}}) {
    uint32_t rowBytes = std::min<uint32_t>(c.cols * c.bits / 8, 128);
    bool kMajor = c.major == OperandMajor::K;
    SmemOperandTile t = kMajor
        ? tile(c.major, widestSmemSwizzleFor(rowBytes), c.bits, c.rows, c.cols)
        : tile(c.major, widestSmemSwizzleFor(rowBytes), c.bits, c.cols, c.rows,
               AtomOrder::KFastest);
    SmemStrides s = strides(t);
    uint32_t instrK = 32 * 8 / c.bits;
    for (uint32_t k0 = 0; k0 < t.kExtent; k0 += instrK) {
      uint64_t start = smemOperandStartOffset(t, k0);
      for (uint32_t mn = 0; mn < t.mnExtent; ++mn)
        for (uint32_t kk = 0; kk < instrK; ++kk) {
          uint32_t row = kMajor ? mn : k0 + kk, col = kMajor ? k0 + kk : mn;
          ASSERT_EQ(start + canonicalSmemByteOffset(t.major, t.swizzle, t.elementBits,
                                                    s, mn, kk),
                    tmaBoxOffset(c.rows, rowBytes, c.bits, row, col))
              << (kMajor ? "K" : "MN") << "-major " << c.bits << "-bit " << c.rows
              << "x" << c.cols << " mn " << mn << " k " << k0 + kk;
        }
    }
  }
  // By hand: Q (E4M3, 64 queries x 128 channels, K-major) has 8-row groups
  // 1024 bytes apart; its bf16 copy's second 64 channels start after the
  // first box of 64 x 128 bytes.
  SmemOperandTile q = tile(OperandMajor::K, SmemSwizzle::B128, 8, 64, 128);
  EXPECT_EQ(strides(q).strideByteOffset, 1024u);
  SmemOperandTile qBf16 = tile(OperandMajor::K, SmemSwizzle::B128, 16, 64, 128);
  EXPECT_EQ(smemOperandStartOffset(qBf16, 64), 8192u);
  // dO as dV's B: 64 queries (K) x 128 channels (N), MN-major: 8-query
  // groups 1024 apart (SBO), the bf16 copy's second 64 channels 8192 on
  // (LBO); the K = 32 slice of E4M3 starts 4 groups in.
  SmemOperandTile dO = tile(OperandMajor::MN, SmemSwizzle::B128, 8, 128, 64,
                            AtomOrder::KFastest);
  EXPECT_EQ(strides(dO).strideByteOffset, 1024u);
  EXPECT_EQ(smemOperandStartOffset(dO, 32), 4096u);
  SmemOperandTile dOBf16 = tile(OperandMajor::MN, SmemSwizzle::B128, 16, 128,
                                64, AtomOrder::KFastest);
  EXPECT_EQ(strides(dOBf16).strideByteOffset, 1024u);
  EXPECT_EQ(strides(dOBf16).leadingByteOffset, 8192u);
  EXPECT_EQ(smemOperandStartOffset(dOBf16, 48), 6144u);
}

TEST(SmemStrides, RejectsTilesTheLayoutsCannotDescribe) {
  SmemStrides s;
  std::string err;
  EXPECT_FALSE(computeSmemStrides(tile(OperandMajor::K, SmemSwizzle::B128, 4, 128, 256), s, err));
  EXPECT_NE(err.find("4-bit"), std::string::npos) << err;
  EXPECT_FALSE(computeSmemStrides(tile(OperandMajor::K, SmemSwizzle::B128, 8, 100, 128), s, err));
  EXPECT_NE(err.find("MN extent 100"), std::string::npos) << err;
  // BF16 K-major 128B needs whole 64-element atom rows.
  EXPECT_FALSE(computeSmemStrides(tile(OperandMajor::K, SmemSwizzle::B128, 16, 128, 32), s, err));
  EXPECT_NE(err.find("K extent 32"), std::string::npos) << err;
  // 512 K-atoms of 1024 bytes: LBO = 512 KiB does not fit 14 bits of 16 bytes.
  EXPECT_FALSE(computeSmemStrides(tile(OperandMajor::MN, SmemSwizzle::B128, 8, 256,
                                       8 * 512, AtomOrder::KFastest), s, err));
  EXPECT_NE(err.find("262128"), std::string::npos) << err;
}
