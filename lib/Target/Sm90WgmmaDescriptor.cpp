//===- Sm90WgmmaDescriptor.cpp - Hopper wgmma descriptor, shapes, fragments -===//
#include "flamia/Target/Sm90WgmmaDescriptor.h"

#include <cstdio>

namespace flamia {

namespace {
constexpr uint64_t kField14 = 0x3FFF;
// Everything that is not start (0-13), LBO (16-29), SBO (32-45), base offset
// (49-51) or swizzle (62-63).
constexpr uint64_t kReservedMask = (uint64_t(0x3) << 14) | (uint64_t(0x3) << 30) |
                                   (uint64_t(0x7) << 46) | (uint64_t(0x3FF) << 52);

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

bool checkAddressField(const char *name, uint32_t value, std::string &error) {
  if (value % 16) {
    error = std::string(name) + " " + hex(value) +
            " is not 16-byte aligned (PTX ISA 9.7.15.5.1)";
    return false;
  }
  if (value > 0x3FFFF) {
    error = std::string(name) + " " + hex(value) +
            " does not fit the 18 address bits matrix-descriptor-encode keeps";
    return false;
  }
  return true;
}

bool isFp8(Sm90WgmmaType t) {
  return t == Sm90WgmmaType::E4M3 || t == Sm90WgmmaType::E5M2;
}
bool isInt8(Sm90WgmmaType t) {
  return t == Sm90WgmmaType::S8 || t == Sm90WgmmaType::U8;
}
const char *accumName(Sm90AccumType t) {
  return t == Sm90AccumType::F16 ? "f16" : t == Sm90AccumType::F32 ? "f32" : "s32";
}
} // namespace

const char *sm90SwizzleModeName(Sm90SwizzleMode mode) {
  switch (mode) {
  case Sm90SwizzleMode::None:
    return "none";
  case Sm90SwizzleMode::B128:
    return "128B";
  case Sm90SwizzleMode::B64:
    return "64B";
  case Sm90SwizzleMode::B32:
    return "32B";
  }
  return "?";
}

Sm90SwizzleMode toSm90SwizzleMode(SmemSwizzle swizzle) {
  switch (swizzle) {
  case SmemSwizzle::None:
    return Sm90SwizzleMode::None;
  case SmemSwizzle::B32:
    return Sm90SwizzleMode::B32;
  case SmemSwizzle::B64:
    return Sm90SwizzleMode::B64;
  case SmemSwizzle::B128:
    return Sm90SwizzleMode::B128;
  }
  return Sm90SwizzleMode::None;
}

bool encodeSm90WgmmaDescriptor(const Sm90WgmmaDescriptor &f, uint64_t &out,
                               std::string &error) {
  if (!checkAddressField("start address", f.startAddress, error) ||
      !checkAddressField("leading dimension byte offset", f.leadingByteOffset,
                         error) ||
      !checkAddressField("stride dimension byte offset", f.strideByteOffset,
                         error))
    return false;
  if (f.baseOffset > 7) {
    error = "base offset " + std::to_string(f.baseOffset) + " does not fit 3 bits";
    return false;
  }
  if (f.baseOffset && f.swizzle == Sm90SwizzleMode::None) {
    error = "the base offset is valid for the swizzled modes only (PTX ISA "
            "9.7.15.5.1.2.2)";
    return false;
  }
  if (static_cast<unsigned>(f.swizzle) > 3) {
    error = "swizzle mode " + std::to_string(static_cast<unsigned>(f.swizzle)) +
            " does not fit 2 bits";
    return false;
  }
  uint64_t d = 0;
  d |= ((uint64_t(f.startAddress) & 0x3FFFF) >> 4);
  d |= ((uint64_t(f.leadingByteOffset) & 0x3FFFF) >> 4) << 16;
  d |= ((uint64_t(f.strideByteOffset) & 0x3FFFF) >> 4) << 32;
  d |= uint64_t(f.baseOffset) << 49;
  d |= uint64_t(f.swizzle) << 62;
  out = d;
  return true;
}

Sm90WgmmaDescriptor decodeSm90WgmmaDescriptor(uint64_t d) {
  Sm90WgmmaDescriptor f;
  f.startAddress = static_cast<uint32_t>((d & kField14) << 4);
  f.leadingByteOffset = static_cast<uint32_t>(((d >> 16) & kField14) << 4);
  f.strideByteOffset = static_cast<uint32_t>(((d >> 32) & kField14) << 4);
  f.baseOffset = static_cast<uint8_t>((d >> 49) & 0x7);
  f.swizzle = static_cast<Sm90SwizzleMode>((d >> 62) & 0x3);
  return f;
}

bool verifySm90WgmmaDescriptorBits(uint64_t d, std::string &error) {
  if (d & kReservedMask) {
    error = "wgmma descriptor " + hex(d) + " has bits outside its fields set (" +
            hex(d & kReservedMask) + ")";
    return false;
  }
  return true;
}

bool makeSm90OperandDescriptor(const SmemOperandTile &tile, uint32_t tileBase,
                               uint32_t k0, uint64_t &descriptor,
                               std::string &error) {
  SmemStrides strides;
  if (!computeSmemStrides(tile, strides, error))
    return false;
  uint32_t repeat = smemSwizzleRepeatBytes(tile.swizzle);
  if (tileBase % repeat) {
    error = "tile base " + hex(tileBase) + " is not aligned to the " +
            std::to_string(repeat) + "-byte repeat of the " +
            smemSwizzleName(tile.swizzle) + " swizzle";
    return false;
  }
  if (k0 >= tile.kExtent) {
    error = "K offset " + std::to_string(k0) + " is outside the tile's K extent " +
            std::to_string(tile.kExtent);
    return false;
  }
  Sm90WgmmaDescriptor f;
  f.startAddress = tileBase + smemOperandStartOffset(tile, k0);
  f.leadingByteOffset = strides.leadingByteOffset;
  f.strideByteOffset = strides.strideByteOffset;
  f.swizzle = toSm90SwizzleMode(tile.swizzle);
  return encodeSm90WgmmaDescriptor(f, descriptor, error);
}

const char *sm90WgmmaTypeName(Sm90WgmmaType type) {
  switch (type) {
  case Sm90WgmmaType::F16:
    return "f16";
  case Sm90WgmmaType::BF16:
    return "bf16";
  case Sm90WgmmaType::TF32:
    return "tf32";
  case Sm90WgmmaType::E4M3:
    return "e4m3";
  case Sm90WgmmaType::E5M2:
    return "e5m2";
  case Sm90WgmmaType::S8:
    return "s8";
  case Sm90WgmmaType::U8:
    return "u8";
  case Sm90WgmmaType::B1:
    return "b1";
  }
  return "?";
}

unsigned sm90WgmmaTypeBits(Sm90WgmmaType type) {
  switch (type) {
  case Sm90WgmmaType::F16:
  case Sm90WgmmaType::BF16:
    return 16;
  case Sm90WgmmaType::TF32:
    return 32;
  case Sm90WgmmaType::B1:
    return 1;
  default:
    return 8;
  }
}

unsigned sm90WgmmaK(Sm90WgmmaType type) {
  switch (type) {
  case Sm90WgmmaType::F16:
  case Sm90WgmmaType::BF16:
    return 16;
  case Sm90WgmmaType::TF32:
    return 8;
  case Sm90WgmmaType::B1:
    return 256;
  default:
    return 32;
  }
}

bool validateSm90Wgmma(const Sm90WgmmaConfig &c, std::string &error) {
  auto fail = [&](const std::string &msg) {
    error = msg;
    return false;
  };
  const std::string types = std::string(sm90WgmmaTypeName(c.aType)) + " x " +
                            sm90WgmmaTypeName(c.bType) + " -> " +
                            accumName(c.dType);
  // 9.7.15.3: .f16 -> f16/f32; .bf16, .tf32 -> f32; e4m3/e5m2 (mixed) ->
  // f16/f32; both u8 or both s8 -> s32; b1 -> s32. A and B have the same type
  // except for the FP8 variants (9.7.15.5.2).
  bool ok;
  if (isFp8(c.aType) || isFp8(c.bType))
    ok = isFp8(c.aType) && isFp8(c.bType) && c.dType != Sm90AccumType::S32;
  else if (c.aType != c.bType)
    ok = false;
  else if (c.aType == Sm90WgmmaType::F16)
    ok = c.dType != Sm90AccumType::S32;
  else if (c.aType == Sm90WgmmaType::BF16 || c.aType == Sm90WgmmaType::TF32)
    ok = c.dType == Sm90AccumType::F32;
  else
    ok = c.dType == Sm90AccumType::S32;
  if (!ok)
    return fail("wgmma does not take " + types +
                " (PTX ISA 9.7.15.3 and 9.7.15.5.2)");
  // 9.7.15.2: N.
  bool intShape = isInt8(c.aType) || c.aType == Sm90WgmmaType::B1;
  bool nOk = intShape ? (c.n >= 8 && c.n <= 256 &&
                         (c.n <= 32 ? c.n % 8 == 0 : c.n % 16 == 0))
                      : (c.n >= 8 && c.n <= 256 && c.n % 8 == 0);
  if (!nOk)
    return fail("wgmma " + types + " has no shape m64n" + std::to_string(c.n) +
                "k" + std::to_string(sm90WgmmaK(c.aType)) +
                (intShape ? " (N = 8, 16, 24, 32, then steps of 16 to 256"
                          : " (N a multiple of 8 in [8, 256]") +
                "; PTX ISA 9.7.15.2)");
  // 9.7.15.5.2: transposes only for f16/bf16, through descriptors.
  bool sixteen = c.aType == Sm90WgmmaType::F16 || c.aType == Sm90WgmmaType::BF16;
  if (c.aMajor == OperandMajor::MN && c.aInRegisters)
    return fail("A in registers has no transpose (imm-trans-a exists only for "
                "A in shared memory; PTX ISA 9.7.15.5.2)");
  if ((c.aMajor == OperandMajor::MN || c.bMajor == OperandMajor::MN) && !sixteen)
    return fail(std::string("wgmma with ") + sm90WgmmaTypeName(c.aType) +
                " operands cannot transpose: MN-major operands are supported "
                "for .f16/.bf16 only (PTX ISA 9.7.15.5.2)");
  if (c.aInRegisters && c.aType == Sm90WgmmaType::B1)
    return fail("this helper models A fragments for 8/16/32-bit types only");
  return true;
}

std::string sm90WgmmaOpcode(const Sm90WgmmaConfig &c) {
  std::string op = "wgmma.mma_async.sync.aligned.m64n" + std::to_string(c.n) +
                   "k" + std::to_string(sm90WgmmaK(c.aType)) + "." +
                   accumName(c.dType) + "." + sm90WgmmaTypeName(c.aType) + "." +
                   sm90WgmmaTypeName(c.bType);
  return op;
}

unsigned sm90AccumulatorRegisters(const Sm90WgmmaConfig &c) {
  return c.dType == Sm90AccumType::F16 ? c.n / 4 : c.n / 2;
}

Sm90FragmentCoord sm90AccumulatorCoord(unsigned thread, unsigned i) {
  unsigned warp = thread / 32, lane = thread % 32;
  Sm90FragmentCoord c;
  c.row = 16 * warp + lane / 4 + 8 * ((i / 2) % 2);
  c.col = 8 * (i / 4) + 2 * (lane % 4) + (i % 2);
  return c;
}

bool sm90AFragmentCoord(Sm90WgmmaType aType, unsigned thread, unsigned i,
                        Sm90FragmentCoord &c) {
  unsigned warp = thread / 32, lane = thread % 32;
  if (thread >= 128)
    return false;
  unsigned bits = sm90WgmmaTypeBits(aType);
  if (bits == 16 && i < 8) {
    c.row = 16 * warp + lane / 4 + 8 * ((i / 2) % 2);
    c.col = 2 * (lane % 4) + (i % 2) + 8 * (i / 4);
    return true;
  }
  if (bits == 8 && i < 16) {
    c.row = 16 * warp + lane / 4 + 8 * ((i / 4) % 2);
    c.col = 4 * (lane % 4) + (i % 4) + 16 * (i / 8);
    return true;
  }
  return false;
}

} // namespace flamia
