//===- SmemMatrixLayout.h - Canonical shared-memory MMA operand layouts -*- C++ -*-===//
//
// The canonical shared-memory layouts that wgmma (sm_90a) and tcgen05.mma
// (sm_100a) read through a matrix descriptor, and the two byte offsets (LBO,
// SBO) a descriptor carries for them. Both ISAs define them with the same
// table:
//
//   PTX ISA 9.0, 9.7.16.3 "Major-ness supported by Strides" (tcgen05):
//     9.7.16.3.1 Leading dimension byte offset, 9.7.16.3.2 Stride dimension
//     byte offset, 9.7.16.3.3 Canonical Layouts;
//   PTX ISA 9.0, 9.7.15.5.1.2.1 (wgmma, identical table).
//
// In CuTe notation, with T = 128 / element-bits (elements per 16 bytes) and
// c = swizzle-bytes / 16:
//
//   K-major,  no swizzle : ((8,m),(T,2k)) : ((1T,SBO),(1,LBO))
//   K-major,  swizzled   : ((8,m),(T,2k)) : ((cT,SBO),(1,T))     LBO unused ("assumed 1")
//   MN-major, no swizzle : ((T,1,m),(8,k)) : ((1,T,SBO),(1T,LBO))
//   MN-major, swizzled   : ((T,c,m),(8,k)) : ((1,T,LBO),(cT,SBO))
//
// composed with Swizzle<log2 c, 4, 3> (16-byte chunk index XOR 128-byte line
// index, PTX ISA 9.0, 5.5.7 "Swizzling Modes").
//
// Plain C++17, no LLVM/MLIR and no exceptions: the MLIR lowering and the CUDA
// runtime (which builds without LLVM) both use it.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_TARGET_SMEMMATRIXLAYOUT_H
#define FLAMIA_TARGET_SMEMMATRIXLAYOUT_H

#include <cstdint>
#include <string>

namespace flamia {

/// Which dimension of an MMA operand is contiguous in shared memory. For A
/// (MxK) and B (NxK): K-major = "no transpose", MN-major = "transpose" (PTX ISA
/// 9.0, 9.7.16.10.6 and 9.7.15.5.1.2).
enum class OperandMajor : uint8_t { K = 0, MN = 1 };

/// The swizzle width of a canonical layout, in bytes (16-byte atomicity). The
/// tcgen05-only "128B with 32B atomicity" mode is not a canonical layout for
/// 8/16-bit operands (PTX ISA 9.0, Table 52) and is not modelled here.
enum class SmemSwizzle : uint8_t { None = 0, B32 = 32, B64 = 64, B128 = 128 };

/// 0, 32, 64 or 128.
unsigned smemSwizzleBytes(SmemSwizzle swizzle);
/// "none", "32B", "64B", "128B".
const char *smemSwizzleName(SmemSwizzle swizzle);
/// The alignment at which the swizzle pattern repeats and the descriptor's
/// base offset is 0: 256, 512, 1024 bytes for 32B/64B/128B (PTX ISA 9.0,
/// Table 41 / 9.7.15.5.1.2.2 / 5.5.7); 16 for no swizzle.
uint32_t smemSwizzleRepeatBytes(SmemSwizzle swizzle);
/// The widest swizzle whose span divides `rowBytes` (the contiguous bytes of
/// one row of a tile as TMA writes it): 128, 64, 32 or none.
SmemSwizzle widestSmemSwizzleFor(uint32_t rowBytes);

/// Applies the swizzle (Swizzle<B,4,3>: byte-offset bits [4,4+B) ^= bits
/// [7,7+B), B = log2(bytes/16)) to `offset`, a byte offset from an address
/// aligned to smemSwizzleRepeatBytes(). This is where TMA stores, and where
/// the tensor core reads, the 16-byte chunk that the unswizzled layout puts at
/// `offset` (PTX ISA 9.0, 5.5.7 tables).
uint32_t applySmemSwizzle(uint32_t offset, SmemSwizzle swizzle);

/// How the swizzle atoms of a tile are placed. An atom is 8 rows x max(16,
/// swizzle) bytes: for K-major 8 MN-rows of swizzle-bytes of K, for MN-major 8
/// K-rows of swizzle-bytes of MN (PTX ISA 9.0, Table 53). `MNFastest`: the
/// next atom along MN follows the current one (a TMA box whose inner
/// dimension is one atom wide writes this for K-major tiles). `KFastest`: the
/// next atom along K follows (TMA writes this for MN-major tiles).
enum class AtomOrder : uint8_t { MNFastest = 0, KFastest = 1 };

/// A dense operand tile in shared memory.
struct SmemOperandTile {
  OperandMajor major = OperandMajor::K;
  SmemSwizzle swizzle = SmemSwizzle::B128;
  /// 8 (E4M3/E5M2/INT8), 16 (BF16/F16) or 32 (TF32). Packed 4- and 6-bit
  /// operands use padded containers (PTX ISA 9.0, 9.7.16.10.4) and are not
  /// modelled.
  unsigned elementBits = 8;
  /// Elements along M (operand A) or N (operand B), and along K.
  uint32_t mnExtent = 0;
  uint32_t kExtent = 0;
  AtomOrder order = AtomOrder::MNFastest;
};

/// The leading and stride dimension byte offsets (in bytes, not yet >> 4).
struct SmemStrides {
  uint32_t leadingByteOffset = 0;
  uint32_t strideByteOffset = 0;
};

/// Atom extents of a tile's layout, in elements: {mn, k}.
uint32_t smemAtomMnExtent(const SmemOperandTile &tile);
uint32_t smemAtomKExtent(const SmemOperandTile &tile);
/// 8 * max(16, swizzle bytes).
uint32_t smemAtomBytes(const SmemOperandTile &tile);
/// Total bytes of the tile.
uint64_t smemTileBytes(const SmemOperandTile &tile);

/// Checks element width and that the extents are whole atoms.
bool validateSmemOperandTile(const SmemOperandTile &tile, std::string &error);

/// LBO and SBO of the tile per the canonical-layout table above. For K-major
/// swizzled tiles LBO is "not used, assumed to be 1" (PTX ISA 9.0,
/// 9.7.16.3.1.1); this returns 16 bytes, i.e. the encoded value 1, as in the
/// ISA's own example (9.7.16.3.3, "Encoding of LBO in descriptor: 1
/// (assumed)").
bool computeSmemStrides(const SmemOperandTile &tile, SmemStrides &strides,
                        std::string &error);

/// The unswizzled byte offset of element (mn, k) of the tile as stored
/// (atoms placed per `tile.order`). Add the tile base and apply
/// applySmemSwizzle() for the physical address.
uint64_t smemTileByteOffset(const SmemOperandTile &tile, uint32_t mn,
                            uint32_t k);

/// The byte offset, from the tile base, of the descriptor start address for
/// an MMA that reads the K-slice starting at element `k0` (a multiple of the
/// instruction K). For K-major swizzled tiles this steps inside the 128-byte
/// row of an atom (the hardware applies the swizzle to the resulting
/// address), and jumps to the next atom column at the atom's K width.
uint32_t smemOperandStartOffset(const SmemOperandTile &tile, uint32_t k0);

/// The ISA's canonical layout, transcribed (the table at the top of this
/// file): byte offset of element (mn, k) relative to the descriptor start,
/// given the descriptor's LBO and SBO. For K-major swizzled layouts `k` must
/// lie inside one atom row (k < swizzle bytes / element bytes).
uint64_t canonicalSmemByteOffset(OperandMajor major, SmemSwizzle swizzle,
                                 unsigned elementBits, SmemStrides strides,
                                 uint32_t mn, uint32_t k);

} // namespace flamia

#endif // FLAMIA_TARGET_SMEMMATRIXLAYOUT_H
