//===- SmemMatrixLayout.cpp - Canonical shared-memory MMA operand layouts -===//
#include "flamia/Target/SmemMatrixLayout.h"

namespace flamia {

namespace {
/// Largest byte offset a descriptor field can hold: matrix-descriptor-encode(x)
/// = (x & 0x3FFFF) >> 4 keeps 18 address bits.
constexpr uint64_t kMaxEncodableOffset = 0x3FFF0;

uint32_t rowBytes(SmemSwizzle swizzle) {
  unsigned s = smemSwizzleBytes(swizzle);
  return s ? s : 16;
}

uint32_t elementsPer(uint32_t bytes, unsigned elementBits) {
  return bytes * 8 / elementBits;
}

uint64_t mnAtomStride(const SmemOperandTile &tile) {
  uint64_t atom = smemAtomBytes(tile);
  uint64_t numKAtoms = tile.kExtent / smemAtomKExtent(tile);
  return tile.order == AtomOrder::MNFastest ? atom : numKAtoms * atom;
}

uint64_t kAtomStride(const SmemOperandTile &tile) {
  uint64_t atom = smemAtomBytes(tile);
  uint64_t numMnAtoms = tile.mnExtent / smemAtomMnExtent(tile);
  return tile.order == AtomOrder::KFastest ? atom : numMnAtoms * atom;
}
} // namespace

unsigned smemSwizzleBytes(SmemSwizzle swizzle) {
  return static_cast<unsigned>(swizzle);
}

const char *smemSwizzleName(SmemSwizzle swizzle) {
  switch (swizzle) {
  case SmemSwizzle::None:
    return "none";
  case SmemSwizzle::B32:
    return "32B";
  case SmemSwizzle::B64:
    return "64B";
  case SmemSwizzle::B128:
    return "128B";
  }
  return "?";
}

uint32_t smemSwizzleRepeatBytes(SmemSwizzle swizzle) {
  // PTX ISA 9.0, Table 41 (tcgen05), 9.7.15.5.1.2.2 (wgmma), 5.5.7 (TMA): the
  // repeating pattern starts at a 256/512/1024-byte boundary for 32/64/128-byte
  // swizzle (2, 4, 8 lines of 128 bytes).
  switch (swizzle) {
  case SmemSwizzle::None:
    return 16;
  case SmemSwizzle::B32:
    return 256;
  case SmemSwizzle::B64:
    return 512;
  case SmemSwizzle::B128:
    return 1024;
  }
  return 16;
}

SmemSwizzle widestSmemSwizzleFor(uint32_t bytes) {
  if (bytes && bytes % 128 == 0)
    return SmemSwizzle::B128;
  if (bytes && bytes % 64 == 0)
    return SmemSwizzle::B64;
  if (bytes && bytes % 32 == 0)
    return SmemSwizzle::B32;
  return SmemSwizzle::None;
}

uint32_t applySmemSwizzle(uint32_t offset, SmemSwizzle swizzle) {
  unsigned bits = 0;
  switch (swizzle) {
  case SmemSwizzle::None:
    return offset;
  case SmemSwizzle::B32:
    bits = 1;
    break;
  case SmemSwizzle::B64:
    bits = 2;
    break;
  case SmemSwizzle::B128:
    bits = 3;
    break;
  }
  uint32_t mask = (1u << bits) - 1;
  return offset ^ (((offset >> 7) & mask) << 4);
}

uint32_t smemAtomMnExtent(const SmemOperandTile &tile) {
  if (tile.major == OperandMajor::K)
    return 8;
  return elementsPer(rowBytes(tile.swizzle), tile.elementBits);
}

uint32_t smemAtomKExtent(const SmemOperandTile &tile) {
  if (tile.major == OperandMajor::MN)
    return 8;
  return elementsPer(rowBytes(tile.swizzle), tile.elementBits);
}

uint32_t smemAtomBytes(const SmemOperandTile &tile) {
  return 8 * rowBytes(tile.swizzle);
}

uint64_t smemTileBytes(const SmemOperandTile &tile) {
  return uint64_t(tile.mnExtent) * tile.kExtent * tile.elementBits / 8;
}

bool validateSmemOperandTile(const SmemOperandTile &tile, std::string &error) {
  if (tile.elementBits != 8 && tile.elementBits != 16 &&
      tile.elementBits != 32) {
    error = "shared-memory operand tiles of " +
            std::to_string(tile.elementBits) +
            "-bit elements are not supported (8, 16 or 32 bits; packed 4/6-bit "
            "operands use padded containers, PTX ISA 9.7.16.10.4)";
    return false;
  }
  uint32_t am = smemAtomMnExtent(tile), ak = smemAtomKExtent(tile);
  if (tile.mnExtent == 0 || tile.mnExtent % am) {
    error = "MN extent " + std::to_string(tile.mnExtent) +
            " is not a positive multiple of the swizzle atom's " +
            std::to_string(am) + " elements (" +
            (tile.major == OperandMajor::K ? "K" : "MN") + "-major, " +
            smemSwizzleName(tile.swizzle) + " swizzle)";
    return false;
  }
  if (tile.kExtent == 0 || tile.kExtent % ak) {
    error = "K extent " + std::to_string(tile.kExtent) +
            " is not a positive multiple of the swizzle atom's " +
            std::to_string(ak) + " elements (" +
            (tile.major == OperandMajor::K ? "K" : "MN") + "-major, " +
            smemSwizzleName(tile.swizzle) + " swizzle)";
    return false;
  }
  return true;
}

bool computeSmemStrides(const SmemOperandTile &tile, SmemStrides &strides,
                        std::string &error) {
  if (!validateSmemOperandTile(tile, error))
    return false;
  uint64_t mnStride = mnAtomStride(tile), kStride = kAtomStride(tile);
  uint64_t lbo = 0, sbo = 0;
  bool swizzled = tile.swizzle != SmemSwizzle::None;
  if (tile.major == OperandMajor::K) {
    // K-major: SBO = offset from the first 8 rows to the next 8 rows
    // (9.7.16.3.2). LBO = offset between the two 16-byte columns of the 8x2
    // core-matrix tile (no swizzle) or unused (swizzled) (9.7.16.3.1.1).
    sbo = mnStride;
    lbo = swizzled ? 16 : kStride;
  } else {
    // MN-major: swizzled -> LBO = offset between consecutive
    // (swizzle-bytes/16)-row groups along MN, SBO = offset between 8-column
    // groups along K. Interleave (no swizzle) -> SBO along MN, LBO along K.
    if (swizzled) {
      lbo = mnStride;
      sbo = kStride;
    } else {
      sbo = mnStride;
      lbo = kStride;
    }
  }
  if (lbo > kMaxEncodableOffset || sbo > kMaxEncodableOffset) {
    error = "tile needs LBO " + std::to_string(lbo) + " / SBO " +
            std::to_string(sbo) +
            " bytes; a descriptor field holds at most 262128 bytes";
    return false;
  }
  strides.leadingByteOffset = static_cast<uint32_t>(lbo);
  strides.strideByteOffset = static_cast<uint32_t>(sbo);
  return true;
}

uint64_t smemTileByteOffset(const SmemOperandTile &tile, uint32_t mn,
                            uint32_t k) {
  uint32_t am = smemAtomMnExtent(tile), ak = smemAtomKExtent(tile);
  uint64_t base = uint64_t(mn / am) * mnAtomStride(tile) +
                  uint64_t(k / ak) * kAtomStride(tile);
  uint32_t row = rowBytes(tile.swizzle);
  uint64_t inAtom;
  if (tile.major == OperandMajor::K)
    inAtom = uint64_t(mn % am) * row + uint64_t(k % ak) * tile.elementBits / 8;
  else
    inAtom = uint64_t(k % ak) * row + uint64_t(mn % am) * tile.elementBits / 8;
  return base + inAtom;
}

uint32_t smemOperandStartOffset(const SmemOperandTile &tile, uint32_t k0) {
  return static_cast<uint32_t>(smemTileByteOffset(tile, 0, k0));
}

uint64_t canonicalSmemByteOffset(OperandMajor major, SmemSwizzle swizzle,
                                 unsigned elementBits, SmemStrides strides,
                                 uint32_t mn, uint32_t k) {
  // Everything in elements first, as the ISA writes it, then to bytes.
  const uint64_t T = 128 / elementBits;
  const uint64_t c = smemSwizzleBytes(swizzle) / 16;
  const uint64_t eb = elementBits / 8;
  const uint64_t lbo = strides.leadingByteOffset / eb;
  const uint64_t sbo = strides.strideByteOffset / eb;
  uint64_t el;
  if (major == OperandMajor::K) {
    if (swizzle == SmemSwizzle::None)
      // ((8,m),(T,2k)) : ((1T,SBO),(1,LBO))
      el = (mn % 8) * T + (mn / 8) * sbo + (k % T) + (k / T) * lbo;
    else
      // ((8,m),(T,2k)) : ((cT,SBO),(1,T)): the K index runs linearly over
      // the 2k T-wide columns of one atom row.
      el = (mn % 8) * c * T + (mn / 8) * sbo + k;
  } else {
    if (swizzle == SmemSwizzle::None)
      // ((T,1,m),(8,k)) : ((1,T,SBO),(1T,LBO))
      el = (mn % T) + (mn / T) * sbo + (k % 8) * T + (k / 8) * lbo;
    else
      // ((T,c,m),(8,k)) : ((1,T,LBO),(cT,SBO))
      el = (mn % T) + ((mn / T) % c) * T + (mn / (c * T)) * lbo +
           (k % 8) * c * T + (k / 8) * sbo;
  }
  return el * eb;
}

} // namespace flamia
