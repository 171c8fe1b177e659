//===- Sm100SmemDescriptor.h - tcgen05 shared-memory matrix descriptor -*- C++ -*-===//
//
// The 64-bit shared-memory descriptor that tcgen05.mma (operands A and B) and
// tcgen05.cp (the source matrix) take. PTX ISA 9.0, 9.7.16.4.1 "Shared memory
// descriptor", Table 40:
//
//   bits   size  field
//   0-13   14    matrix-descriptor-encode(matrix start address)
//   14-15   2    (reserved, 0)
//   16-29  14    matrix-descriptor-encode(leading dimension byte offset)
//                 or (bit 52 = 1) of the leading dimension byte address
//   30-31   2    (reserved, 0)
//   32-45  14    matrix-descriptor-encode(stride dimension byte offset)
//   46-48   3    fixed constant 0b001
//   49-51   3    matrix base offset
//   52      1    leading dimension stride mode: 0 relative, 1 absolute
//   53-60   8    fixed constant 0
//   61-63   3    swizzle: 0 none, 1 128B with 32B atomicity, 2 128B,
//                4 64B, 6 32B (3, 5, 7 invalid)
//
//   matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4
//
// (The ISA prints the bits 53-60 constant as "0xb00000000", meaning the 8-bit
// binary 0b00000000.) Start address, LBO and SBO must be 16-byte aligned. The
// base offset is 0 when the swizzle pattern starts at a 1024/512/256-byte
// boundary (Table 41), otherwise (pattern start addr >> 7) & 7. The absolute
// LBO mode is sm_103a-only (9.7.16.4.1.1) and needs 128B swizzle, K-major
// operands and base offset 0 (9.7.16.3.1.2.1).
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_TARGET_SM100SMEMDESCRIPTOR_H
#define FLAMIA_TARGET_SM100SMEMDESCRIPTOR_H

#include "flamia/Target/SmemMatrixLayout.h"

#include <cstdint>
#include <string>

namespace flamia {

/// Bits 61-63 (PTX ISA 9.0, Table 40). Values are the field encodings.
enum class Sm100SwizzleMode : uint8_t {
  None = 0,
  B128Base32B = 1, ///< 128-byte swizzle with 32-byte atomicity (tf32 MN-major)
  B128 = 2,
  B64 = 4,
  B32 = 6,
};

/// "none", "128B_base32B", "128B", "64B", "32B"; nullptr for invalid values.
const char *sm100SwizzleModeName(Sm100SwizzleMode mode);
/// The tcgen05 encoding of a canonical swizzle width.
Sm100SwizzleMode toSm100SwizzleMode(SmemSwizzle swizzle);

/// The fields of a tcgen05 shared-memory descriptor, in bytes (not yet >> 4).
struct Sm100SmemDescriptor {
  uint32_t startAddress = 0;      ///< shared::cta byte address
  uint32_t leadingByteOffset = 0; ///< LBO bytes, or an address if lboAbsolute
  uint32_t strideByteOffset = 0;  ///< SBO bytes
  uint8_t baseOffset = 0;         ///< 0..7
  bool lboAbsolute = false;       ///< bit 52 (sm_103a only)
  Sm100SwizzleMode swizzle = Sm100SwizzleMode::None;

  bool operator==(const Sm100SmemDescriptor &o) const {
    return startAddress == o.startAddress &&
           leadingByteOffset == o.leadingByteOffset &&
           strideByteOffset == o.strideByteOffset &&
           baseOffset == o.baseOffset && lboAbsolute == o.lboAbsolute &&
           swizzle == o.swizzle;
  }
};

/// (x & 0x3FFFF) >> 4.
constexpr uint64_t matrixDescriptorEncode(uint64_t x) {
  return (x & 0x3FFFF) >> 4;
}

/// Encodes `fields`. Fails, with a message naming the field and the rule,
/// when an address or offset is not 16-byte aligned or does not fit the
/// 18 address bits the encoding keeps (the hardware would silently wrap),
/// the base offset exceeds 7, the swizzle value is invalid, or the absolute
/// LBO mode is combined with anything but 128B swizzle and base offset 0.
bool encodeSm100SmemDescriptor(const Sm100SmemDescriptor &fields,
                               uint64_t &descriptor, std::string &error);

/// Decodes every field (addresses and offsets multiplied back by 16).
Sm100SmemDescriptor decodeSm100SmemDescriptor(uint64_t descriptor);

/// Checks the bits that are not fields: 14-15, 30-31 and 53-60 zero, 46-48
/// equal to 0b001, and a valid swizzle value.
bool verifySm100SmemDescriptorBits(uint64_t descriptor, std::string &error);

/// The base offset for a swizzle pattern that starts at `patternStart`:
/// (patternStart >> 7) & 7 (PTX ISA 9.0, 9.7.16.4.1).
uint8_t sm100SwizzleBaseOffset(uint32_t patternStart);

/// The descriptor tcgen05.mma needs to read the K-slice at `k0` of `tile`
/// stored at shared address `tileBase`. `tileBase` must be aligned to the
/// swizzle repeat (1024 bytes for 128B) so that the base offset is 0: FLAMIA
/// allocates its operand buffers that way.
bool makeSm100OperandDescriptor(const SmemOperandTile &tile, uint32_t tileBase,
                                uint32_t k0, uint64_t &descriptor,
                                std::string &error);

/// The source descriptor of `tcgen05.cp.cta_group::N.32x128b.warpx4` for one
/// 512-byte scale-factor tile at `tileAddress` (16-byte aligned): a K-major,
/// unswizzled 32-row x 16-byte matrix, rows 16 bytes apart, so SBO = 8 rows x
/// 16 bytes = 128 (9.7.16.3.2). It has one 16-byte column, so LBO is never
/// used; it is encoded as 0.
bool makeSm100ScaleFactorCopyDescriptor(uint32_t tileAddress,
                                        uint64_t &descriptor,
                                        std::string &error);

} // namespace flamia

#endif // FLAMIA_TARGET_SM100SMEMDESCRIPTOR_H
