//===- TmaTensorMap.cpp - Checks for cuTensorMapEncodeTiled parameters ----===//
#include "flamia/Target/TmaTensorMap.h"

namespace flamia {

namespace {
bool isPacked16B(TmaDataType t) {
  return t == TmaDataType::U4x16Align16B || t == TmaDataType::U6x16Align16B;
}
bool isPacked(TmaDataType t) {
  return isPacked16B(t) || t == TmaDataType::U4x16Align8B;
}
bool isFloat(TmaDataType t) {
  switch (t) {
  case TmaDataType::Float16:
  case TmaDataType::Float32:
  case TmaDataType::Float64:
  case TmaDataType::BFloat16:
  case TmaDataType::Float32Ftz:
  case TmaDataType::TFloat32:
  case TmaDataType::TFloat32Ftz:
    return true;
  default:
    return false;
  }
}
std::string idx(const char *name, uint32_t i) {
  return std::string(name) + "[" + std::to_string(i) + "]";
}
bool fail(std::string &error, const std::string &msg) {
  error = "cuTensorMapEncodeTiled: " + msg;
  return false;
}
} // namespace

unsigned tmaElementBits(TmaDataType type) {
  switch (type) {
  case TmaDataType::UInt8:
    return 8;
  case TmaDataType::UInt16:
  case TmaDataType::Float16:
  case TmaDataType::BFloat16:
    return 16;
  case TmaDataType::UInt64:
  case TmaDataType::Int64:
  case TmaDataType::Float64:
    return 64;
  case TmaDataType::U4x16Align8B:
  case TmaDataType::U4x16Align16B:
    return 4;
  case TmaDataType::U6x16Align16B:
    return 6;
  default:
    return 32;
  }
}

unsigned tmaSwizzleSpanBytes(TmaSwizzle swizzle) {
  switch (swizzle) {
  case TmaSwizzle::None:
    return 0;
  case TmaSwizzle::B32:
    return 32;
  case TmaSwizzle::B64:
    return 64;
  default:
    return 128;
  }
}

bool validateTmaTiled(const TmaTiledParams &p, std::string &error) {
  const unsigned bits = tmaElementBits(p.dataType);
  const bool interleaved = p.interleave != TmaInterleave::None;
  if (static_cast<unsigned>(p.dataType) > 15)
    return fail(error, "unknown tensorDataType " +
                           std::to_string(static_cast<unsigned>(p.dataType)));
  if (p.rank == 0 || p.rank > 5)
    return fail(error, "tensorRank " + std::to_string(p.rank) +
                           " is not in [1, 5]");
  if (interleaved && p.rank < 3)
    return fail(error, "tensorRank must be >= 3 with an interleaved layout, not " +
                           std::to_string(p.rank));
  // globalAddress.
  uint64_t addrAlign =
      (p.interleave == TmaInterleave::B32 || isPacked16B(p.dataType)) ? 32 : 16;
  if (p.globalAddress % addrAlign)
    return fail(error, "globalAddress must be " + std::to_string(addrAlign) +
                           "-byte aligned");
  // globalDim.
  for (uint32_t i = 0; i < p.rank; ++i)
    if (p.globalDim[i] == 0 || p.globalDim[i] > (uint64_t(1) << 32))
      return fail(error, idx("globalDim", i) + " = " +
                             std::to_string(p.globalDim[i]) +
                             " is not in [1, 2^32]");
  if (isPacked16B(p.dataType) && p.globalDim[0] % 128)
    return fail(error, "globalDim[0] must be a multiple of 128 for the 16B-aligned "
                       "packed types");
  if (p.dataType == TmaDataType::U4x16Align8B && p.globalDim[0] % 2)
    return fail(error, "globalDim[0] must be even for 16U4_ALIGN8B");
  // globalStrides: multiples of 16 (or 32), < 2^40, each including the
  // previous dimension ("globalStrides[0] = globalDim[0] * elementSize +
  // padding[0]; globalStrides[i] = globalStrides[i-1] * (globalDim[i] +
  // padding[i])").
  uint64_t strideAlign =
      (p.interleave == TmaInterleave::B32 || isPacked16B(p.dataType)) ? 32 : 16;
  for (uint32_t i = 0; i + 1 < p.rank; ++i) {
    uint64_t s = p.globalStrides[i];
    if (s % strideAlign)
      return fail(error, idx("globalStrides", i) + " = " + std::to_string(s) +
                             " bytes is not a multiple of " +
                             std::to_string(strideAlign));
    if (s >= (uint64_t(1) << 40))
      return fail(error, idx("globalStrides", i) + " = " + std::to_string(s) +
                             " is not below 2^40");
    uint64_t inner = i == 0 ? (p.globalDim[0] * bits + 7) / 8
                            : p.globalStrides[i - 1] * p.globalDim[i];
    if (s < inner)
      return fail(error, idx("globalStrides", i) + " = " + std::to_string(s) +
                             " bytes does not span the " + std::to_string(inner) +
                             " bytes of the dimensions inside it");
  }
  // boxDim.
  for (uint32_t i = 0; i < p.rank; ++i)
    if (p.boxDim[i] == 0 || p.boxDim[i] > 256)
      return fail(error, idx("boxDim", i) + " = " + std::to_string(p.boxDim[i]) +
                             " is not in [1, 256]");
  uint64_t innerBoxBytes = (uint64_t(p.boxDim[0]) * bits + 7) / 8;
  if (!interleaved && (uint64_t(p.boxDim[0]) * bits) % 128)
    return fail(error, "boxDim[0] * element size = " +
                           std::to_string(innerBoxBytes) +
                           " bytes is not a multiple of 16 bytes");
  if (isPacked16B(p.dataType) && p.boxDim[0] != 128)
    return fail(error, "boxDim[0] must be 128 for the 16B-aligned packed types");
  // elementStrides.
  for (uint32_t i = 0; i < p.rank; ++i)
    if (p.elementStrides[i] == 0 || p.elementStrides[i] > 8)
      return fail(error, idx("elementStrides", i) + " = " +
                             std::to_string(p.elementStrides[i]) +
                             " is not in [1, 8]");
  // Interleave and swizzle.
  if (static_cast<unsigned>(p.interleave) > 2 || static_cast<unsigned>(p.swizzle) > 6 ||
      static_cast<unsigned>(p.l2Promotion) > 3 || static_cast<unsigned>(p.oobFill) > 1)
    return fail(error, "unknown interleave, swizzle, L2 promotion or OOB fill value");
  if (!interleaved && p.swizzle != TmaSwizzle::None &&
      innerBoxBytes > tmaSwizzleSpanBytes(p.swizzle))
    return fail(error, "the box's inner dimension (boxDim[0] * element size = " +
                           std::to_string(innerBoxBytes) +
                           " bytes) exceeds the " +
                           std::to_string(tmaSwizzleSpanBytes(p.swizzle)) +
                           "-byte swizzle span");
  if (p.interleave == TmaInterleave::B32 && p.swizzle != TmaSwizzle::B32)
    return fail(error, "32B interleave requires the 32B swizzle");
  if (p.dataType == TmaDataType::U6x16Align16B) {
    if (interleaved)
      return fail(error, "16U6_ALIGN16B requires no interleave");
    if (p.swizzle != TmaSwizzle::None && p.swizzle != TmaSwizzle::B128 &&
        p.swizzle != TmaSwizzle::B128Atom32B && p.swizzle != TmaSwizzle::B128Atom64B)
      return fail(error, "16U6_ALIGN16B supports swizzle none, 128B, 128B_ATOM_32B "
                         "(and 128B_ATOM_64B for stores) only");
  }
  if (p.dataType == TmaDataType::U4x16Align16B && p.swizzle != TmaSwizzle::None &&
      p.swizzle != TmaSwizzle::B128 && p.swizzle != TmaSwizzle::B128Atom32B)
    return fail(error, "16U4_ALIGN16B supports swizzle none, 128B and 128B_ATOM_32B "
                       "only (loads)");
  if (p.oobFill == TmaOobFill::NanRequestZeroFma &&
      (!isFloat(p.dataType) || isPacked(p.dataType)))
    return fail(error, "the NaN out-of-bounds fill needs a floating-point data type");
  return true;
}

uint64_t tmaBoxBytes(const TmaTiledParams &p) {
  uint64_t elements = 1;
  for (uint32_t i = 0; i < p.rank && i < 5; ++i) {
    uint32_t s = p.elementStrides[i] ? p.elementStrides[i] : 1;
    // Dimension 0 has no traversal stride without interleave.
    uint64_t n = (i == 0 && p.interleave == TmaInterleave::None)
                     ? p.boxDim[i]
                     : (p.boxDim[i] + s - 1) / s;
    elements *= n;
  }
  return (elements * tmaElementBits(p.dataType) + 7) / 8;
}

bool validateTmaSmemDestination(uint32_t smemAddress, TmaSwizzle swizzle,
                                std::string &error) {
  if (smemAddress % 128) {
    error = "TMA shared-memory destination " + std::to_string(smemAddress) +
            " is not 128-byte aligned";
    return false;
  }
  uint32_t repeat = swizzle == TmaSwizzle::None  ? 128
                    : swizzle == TmaSwizzle::B32 ? 256
                    : swizzle == TmaSwizzle::B64 ? 512
                                                 : 1024;
  if (smemAddress % repeat) {
    error = "TMA shared-memory destination " + std::to_string(smemAddress) +
            " is not aligned to the " + std::to_string(repeat) +
            "-byte swizzle repeat (FLAMIA keeps MMA descriptor base offsets 0)";
    return false;
  }
  return true;
}

bool makeTokenMajorTensorMap(uint64_t globalAddress, uint64_t tokens,
                             uint32_t heads, uint32_t headDim,
                             TmaDataType dataType, uint32_t boxChannels,
                             uint32_t boxTokens, TmaSwizzle swizzle, bool threeD,
                             TmaTiledParams &p, std::string &error) {
  p = TmaTiledParams();
  p.dataType = dataType;
  p.globalAddress = globalAddress;
  p.swizzle = swizzle;
  uint64_t rowBytes = uint64_t(heads) * headDim * tmaElementBits(dataType) / 8;
  if (threeD) {
    p.rank = 3;
    p.globalDim[0] = headDim;
    p.globalDim[1] = heads;
    p.globalDim[2] = tokens;
    p.globalStrides[0] = uint64_t(headDim) * tmaElementBits(dataType) / 8;
    p.globalStrides[1] = rowBytes;
    p.boxDim[0] = boxChannels;
    p.boxDim[1] = 1;
    p.boxDim[2] = boxTokens;
  } else {
    p.rank = 2;
    p.globalDim[0] = uint64_t(heads) * headDim;
    p.globalDim[1] = tokens;
    p.globalStrides[0] = rowBytes;
    p.boxDim[0] = boxChannels;
    p.boxDim[1] = boxTokens;
  }
  return validateTmaTiled(p, error);
}

} // namespace flamia
