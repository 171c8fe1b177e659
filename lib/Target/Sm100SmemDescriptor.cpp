//===- Sm100SmemDescriptor.cpp - tcgen05 shared-memory matrix descriptor --===//
#include "flamia/Target/Sm100SmemDescriptor.h"

#include <cstdio>

namespace flamia {

namespace {
// Field positions, PTX ISA 9.0, Table 40.
constexpr unsigned kStartShift = 0;
constexpr unsigned kLboShift = 16;
constexpr unsigned kSboShift = 32;
constexpr unsigned kFixedShift = 46; // 3 bits, constant 0b001
constexpr unsigned kBaseOffsetShift = 49;
constexpr unsigned kLboModeShift = 52;
constexpr unsigned kSwizzleShift = 61;
constexpr uint64_t kField14 = 0x3FFF;
// Bits 14-15, 30-31, 53-60.
constexpr uint64_t kReservedMask =
    (uint64_t(0x3) << 14) | (uint64_t(0x3) << 30) | (uint64_t(0xFF) << 53);

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

bool checkAddressField(const char *name, uint32_t value, std::string &error) {
  if (value % 16) {
    error = std::string(name) + " " + hex(value) +
            " is not 16-byte aligned (PTX ISA 9.7.16.4.1)";
    return false;
  }
  if (value > 0x3FFFF) {
    error = std::string(name) + " " + hex(value) +
            " does not fit the 18 address bits matrix-descriptor-encode keeps";
    return false;
  }
  return true;
}

bool validSwizzleValue(unsigned v) { return v == 0 || v == 1 || v == 2 || v == 4 || v == 6; }
} // namespace

const char *sm100SwizzleModeName(Sm100SwizzleMode mode) {
  switch (mode) {
  case Sm100SwizzleMode::None:
    return "none";
  case Sm100SwizzleMode::B128Base32B:
    return "128B_base32B";
  case Sm100SwizzleMode::B128:
    return "128B";
  case Sm100SwizzleMode::B64:
    return "64B";
  case Sm100SwizzleMode::B32:
    return "32B";
  }
  return nullptr;
}

Sm100SwizzleMode toSm100SwizzleMode(SmemSwizzle swizzle) {
  switch (swizzle) {
  case SmemSwizzle::None:
    return Sm100SwizzleMode::None;
  case SmemSwizzle::B32:
    return Sm100SwizzleMode::B32;
  case SmemSwizzle::B64:
    return Sm100SwizzleMode::B64;
  case SmemSwizzle::B128:
    return Sm100SwizzleMode::B128;
  }
  return Sm100SwizzleMode::None;
}

bool encodeSm100SmemDescriptor(const Sm100SmemDescriptor &f, uint64_t &out,
                               std::string &error) {
  if (!checkAddressField("start address", f.startAddress, error) ||
      !checkAddressField(f.lboAbsolute ? "leading dimension byte address"
                                       : "leading dimension byte offset",
                         f.leadingByteOffset, error) ||
      !checkAddressField("stride dimension byte offset", f.strideByteOffset,
                         error))
    return false;
  if (f.baseOffset > 7) {
    error = "base offset " + std::to_string(f.baseOffset) +
            " does not fit 3 bits";
    return false;
  }
  unsigned sw = static_cast<unsigned>(f.swizzle);
  if (!validSwizzleValue(sw)) {
    error = "swizzle mode " + std::to_string(sw) +
            " is invalid (values 3, 5 and 7 are reserved, PTX ISA Table 40)";
    return false;
  }
  if (f.lboAbsolute && (f.swizzle != Sm100SwizzleMode::B128 || f.baseOffset)) {
    error = "the absolute leading-dimension address mode needs 128B swizzle "
            "(16B atomicity) and base offset 0 (PTX ISA 9.7.16.3.1.2.1)";
    return false;
  }
  uint64_t d = 0;
  d |= matrixDescriptorEncode(f.startAddress) << kStartShift;
  d |= matrixDescriptorEncode(f.leadingByteOffset) << kLboShift;
  d |= matrixDescriptorEncode(f.strideByteOffset) << kSboShift;
  d |= uint64_t(0b001) << kFixedShift;
  d |= uint64_t(f.baseOffset) << kBaseOffsetShift;
  d |= uint64_t(f.lboAbsolute ? 1 : 0) << kLboModeShift;
  d |= uint64_t(sw) << kSwizzleShift;
  out = d;
  return true;
}

Sm100SmemDescriptor decodeSm100SmemDescriptor(uint64_t d) {
  Sm100SmemDescriptor f;
  f.startAddress = static_cast<uint32_t>(((d >> kStartShift) & kField14) << 4);
  f.leadingByteOffset = static_cast<uint32_t>(((d >> kLboShift) & kField14) << 4);
  f.strideByteOffset = static_cast<uint32_t>(((d >> kSboShift) & kField14) << 4);
  f.baseOffset = static_cast<uint8_t>((d >> kBaseOffsetShift) & 0x7);
  f.lboAbsolute = (d >> kLboModeShift) & 1;
  f.swizzle = static_cast<Sm100SwizzleMode>((d >> kSwizzleShift) & 0x7);
  return f;
}

bool verifySm100SmemDescriptorBits(uint64_t d, std::string &error) {
  if (d & kReservedMask) {
    error = "descriptor " + hex(d) + " has reserved bits set (" +
            hex(d & kReservedMask) + "; bits 14-15, 30-31 and 53-60 must be 0)";
    return false;
  }
  if (((d >> kFixedShift) & 0x7) != 0b001) {
    error = "descriptor " + hex(d) +
            " does not hold the fixed constant 0b001 in bits 46-48";
    return false;
  }
  if (!validSwizzleValue((d >> kSwizzleShift) & 0x7)) {
    error = "descriptor " + hex(d) + " has an invalid swizzle value " +
            std::to_string((d >> kSwizzleShift) & 0x7);
    return false;
  }
  return true;
}

uint8_t sm100SwizzleBaseOffset(uint32_t patternStart) {
  return static_cast<uint8_t>((patternStart >> 7) & 0x7);
}

bool makeSm100OperandDescriptor(const SmemOperandTile &tile, uint32_t tileBase,
                                uint32_t k0, uint64_t &descriptor,
                                std::string &error) {
  SmemStrides strides;
  if (!computeSmemStrides(tile, strides, error))
    return false;
  uint32_t repeat = smemSwizzleRepeatBytes(tile.swizzle);
  if (tileBase % repeat) {
    error = "tile base " + hex(tileBase) + " is not aligned to the " +
            std::to_string(repeat) + "-byte repeat of the " +
            smemSwizzleName(tile.swizzle) +
            " swizzle (FLAMIA keeps the descriptor base offset 0)";
    return false;
  }
  if (k0 >= tile.kExtent) {
    error = "K offset " + std::to_string(k0) + " is outside the tile's K extent " +
            std::to_string(tile.kExtent);
    return false;
  }
  Sm100SmemDescriptor f;
  f.startAddress = tileBase + smemOperandStartOffset(tile, k0);
  f.leadingByteOffset = strides.leadingByteOffset;
  f.strideByteOffset = strides.strideByteOffset;
  f.swizzle = toSm100SwizzleMode(tile.swizzle);
  return encodeSm100SmemDescriptor(f, descriptor, error);
}

bool makeSm100ScaleFactorCopyDescriptor(uint32_t tileAddress,
                                        uint64_t &descriptor,
                                        std::string &error) {
  Sm100SmemDescriptor f;
  f.startAddress = tileAddress;
  f.leadingByteOffset = 0;
  f.strideByteOffset = 128;
  f.swizzle = Sm100SwizzleMode::None;
  return encodeSm100SmemDescriptor(f, descriptor, error);
}

} // namespace flamia
