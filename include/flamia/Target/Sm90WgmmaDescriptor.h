//===- Sm90WgmmaDescriptor.h - Hopper wgmma descriptor, shapes, fragments -*- C++ -*-===//
//
// What the sm_90a lowering needs to issue wgmma.mma_async and to run softmax
// on its accumulators. PTX ISA 9.0:
//
//   9.7.15.5.1.2.2 "Matrix Descriptor Format" (64 bits):
//     bits 0-13  matrix-descriptor-encode(start address)
//          16-29 matrix-descriptor-encode(leading dimension byte offset)
//          32-45 matrix-descriptor-encode(stride dimension byte offset)
//          49-51 base offset (all swizzle modes but none)
//          62-63 swizzle: 0 none, 1 128B, 2 64B, 3 32B
//     (14-15, 30-31, 46-48, 52-61 are not fields: 0)
//   9.7.15.5.1.2.1 LBO/SBO and canonical layouts (the same table as tcgen05,
//     see SmemMatrixLayout.h).
//   9.7.15.2 "Matrix Shape": M = 64; N = 8..256 step 8 (f16, bf16, tf32,
//     e4m3/e5m2); N = 8, 16, 24, 32, then step 16 to 256 (s8/u8, b1);
//     K = 16 (f16/bf16), 8 (tf32), 32 (e4m3/e5m2, s8/u8), 256 (b1).
//   9.7.15.3 "Matrix Data-types" and 9.7.15.5.2 wgmma.mma_async: transpose
//     (imm-trans-a/b) only for .f16/.bf16 operands read through descriptors.
//   9.7.15.5.1.1 "Register Fragments" (Figures 148/149 for m64nNk16, 152/153
//     for m64nNk32): each warp w of the warpgroup holds rows 16w..16w+15 in
//     the layout of mma.sync m16n8k16 / m16n8k32 (9.7.14.5.8, 9.7.14.5.10),
//     repeated every 8 columns of N.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_TARGET_SM90WGMMADESCRIPTOR_H
#define FLAMIA_TARGET_SM90WGMMADESCRIPTOR_H

#include "flamia/Target/SmemMatrixLayout.h"

#include <cstdint>
#include <string>

namespace flamia {

/// Bits 62-63 (PTX ISA 9.0, 9.7.15.5.1.2.2). Values are the encodings.
enum class Sm90SwizzleMode : uint8_t { None = 0, B128 = 1, B64 = 2, B32 = 3 };

const char *sm90SwizzleModeName(Sm90SwizzleMode mode);
Sm90SwizzleMode toSm90SwizzleMode(SmemSwizzle swizzle);

/// The fields of a wgmma matrix descriptor, in bytes (not yet >> 4).
struct Sm90WgmmaDescriptor {
  uint32_t startAddress = 0;
  uint32_t leadingByteOffset = 0;
  uint32_t strideByteOffset = 0;
  uint8_t baseOffset = 0;
  Sm90SwizzleMode swizzle = Sm90SwizzleMode::None;

  bool operator==(const Sm90WgmmaDescriptor &o) const {
    return startAddress == o.startAddress &&
           leadingByteOffset == o.leadingByteOffset &&
           strideByteOffset == o.strideByteOffset &&
           baseOffset == o.baseOffset && swizzle == o.swizzle;
  }
};

/// Encodes `fields`; fails on misaligned or out-of-range addresses and
/// offsets, a base offset over 7, or a base offset with no swizzle.
bool encodeSm90WgmmaDescriptor(const Sm90WgmmaDescriptor &fields,
                               uint64_t &descriptor, std::string &error);
Sm90WgmmaDescriptor decodeSm90WgmmaDescriptor(uint64_t descriptor);
/// Bits outside the fields (14-15, 30-31, 46-48, 52-61) are zero.
bool verifySm90WgmmaDescriptorBits(uint64_t descriptor, std::string &error);

/// The descriptor for the K-slice at `k0` of `tile` at shared address
/// `tileBase` (aligned to the swizzle repeat; base offset 0).
bool makeSm90OperandDescriptor(const SmemOperandTile &tile, uint32_t tileBase,
                               uint32_t k0, uint64_t &descriptor,
                               std::string &error);

enum class Sm90WgmmaType : uint8_t { F16, BF16, TF32, E4M3, E5M2, S8, U8, B1 };
enum class Sm90AccumType : uint8_t { F16, F32, S32 };

const char *sm90WgmmaTypeName(Sm90WgmmaType type);
/// Bits per element (1, 8, 16, 32).
unsigned sm90WgmmaTypeBits(Sm90WgmmaType type);
/// K of one wgmma for `type`: 16, 8, 32 or 256.
unsigned sm90WgmmaK(Sm90WgmmaType type);

/// One dense wgmma.mma_async (M is always 64).
struct Sm90WgmmaConfig {
  Sm90WgmmaType aType = Sm90WgmmaType::BF16;
  Sm90WgmmaType bType = Sm90WgmmaType::BF16;
  Sm90AccumType dType = Sm90AccumType::F32;
  uint32_t n = 128;
  OperandMajor aMajor = OperandMajor::K; ///< imm-trans-a = 1 for MN
  OperandMajor bMajor = OperandMajor::K; ///< imm-trans-b = 1 for MN
  bool aInRegisters = false;
};

/// Checks types, N and transposes against 9.7.15.2/.3 and 9.7.15.5.2.
bool validateSm90Wgmma(const Sm90WgmmaConfig &config, std::string &error);
/// "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16".
std::string sm90WgmmaOpcode(const Sm90WgmmaConfig &config);
/// Accumulator registers per thread: N/2 for f32/s32, N/4 (.f16x2) for f16.
unsigned sm90AccumulatorRegisters(const Sm90WgmmaConfig &config);

/// A (row, column) of a 64 x N (accumulator) or 64 x K (A) tile.
struct Sm90FragmentCoord {
  uint32_t row = 0;
  uint32_t col = 0;
  bool operator==(const Sm90FragmentCoord &o) const {
    return row == o.row && col == o.col;
  }
};

/// Accumulator element d_i (i in [0, N/2)) of thread `thread` (0-127 within
/// the warpgroup) for every m64nNk* shape with a 32-bit accumulator (for an
/// f16 accumulator d_i is half i % 2 of .f16x2 register i / 2):
///   warp = thread / 32, lane = thread % 32,
///   row = 16 * warp + lane / 4 + 8 * ((i / 2) % 2),
///   col = 8 * (i / 4) + 2 * (lane % 4) + (i % 2).
Sm90FragmentCoord sm90AccumulatorCoord(unsigned thread, unsigned i);

/// Element a_i of the A operand in registers for a K-slice: 16-bit types
/// (m64nNk16, i in [0, 8), a_i in .f16x2 register i / 2, half i % 2):
///   row = 16 * warp + lane / 4 + 8 * ((i / 2) % 2),
///   col = 2 * (lane % 4) + (i % 2) + 8 * (i / 4);
/// 8-bit types (m64nNk32, i in [0, 16), a_i in .b32 register i / 4, byte
/// i % 4):
///   row = 16 * warp + lane / 4 + 8 * ((i / 4) % 2),
///   col = 4 * (lane % 4) + (i % 4) + 16 * (i / 8).
/// Returns false for other types or out-of-range i.
bool sm90AFragmentCoord(Sm90WgmmaType aType, unsigned thread, unsigned i,
                        Sm90FragmentCoord &coord);

} // namespace flamia

#endif // FLAMIA_TARGET_SM90WGMMADESCRIPTOR_H
