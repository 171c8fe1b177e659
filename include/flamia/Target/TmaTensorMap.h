//===- TmaTensorMap.h - Checks for cuTensorMapEncodeTiled parameters -*- C++ -*-===//
//
// The runtime builds TMA descriptors with the driver's cuTensorMapEncodeTiled.
// This header describes its parameters without CUDA headers (the enum values
// equal the driver's) and checks, before the call, every requirement the
// driver documents for it (CUDA 13.0 cuda.h, cuTensorMapEncodeTiled), with a
// message that names the parameter, so a bad shape fails with a sentence
// instead of CUDA_ERROR_INVALID_VALUE:
//
//   rank in [1, 5] (>= 3 with interleave); globalAddress 16-byte aligned (32
//   with 32B interleave or the 16B-aligned packed types); globalDim in
//   [1, 2^32]; globalStrides multiples of 16 (32 with 32B interleave or
//   packed 16B types), < 2^40, each including the previous dimension;
//   boxDim in [1, 256] with boxDim[0] * element size a multiple of 16 bytes
//   (no interleave); elementStrides in [1, 8]; with a swizzle and no
//   interleave, boxDim[0] * element size <= the swizzle span (32, 64, 128);
//   32B interleave needs 32B swizzle; NaN out-of-bounds fill only for
//   floating-point types.
//
// FLAMIA's Q, K, V, O are [T, H, D] with D contiguous. They are viewed as 2-D
// [T, H*D] (dims innermost first: {H*D, T}) or 3-D {D, H, T}; a box is
// {channels, tokens} or {channels, 1, tokens}.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_TARGET_TMATENSORMAP_H
#define FLAMIA_TARGET_TMATENSORMAP_H

#include <cstdint>
#include <string>

namespace flamia {

/// CUtensorMapDataType values.
enum class TmaDataType : uint8_t {
  UInt8 = 0, UInt16, UInt32, Int32, UInt64, Int64, Float16, Float32, Float64,
  BFloat16, Float32Ftz, TFloat32, TFloat32Ftz,
  U4x16Align8B,  ///< 16 x U4 packed, 8-byte aligned
  U4x16Align16B, ///< 16 x U4 packed with 8-byte gaps
  U6x16Align16B, ///< 16 x U6 packed with 4-byte gaps
};
/// CUtensorMapInterleave values.
enum class TmaInterleave : uint8_t { None = 0, B16 = 1, B32 = 2 };
/// CUtensorMapSwizzle values.
enum class TmaSwizzle : uint8_t {
  None = 0, B32 = 1, B64 = 2, B128 = 3,
  B128Atom32B = 4, B128Atom32BFlip8B = 5, B128Atom64B = 6,
};
/// CUtensorMapL2promotion values.
enum class TmaL2Promotion : uint8_t { None = 0, B64 = 1, B128 = 2, B256 = 3 };
/// CUtensorMapFloatOOBfill values.
enum class TmaOobFill : uint8_t { None = 0, NanRequestZeroFma = 1 };

/// Bits per element of a data type (4 and 6 for the packed types).
unsigned tmaElementBits(TmaDataType type);
/// 0, 32, 64 or 128 (every 128B variant spans 128 bytes).
unsigned tmaSwizzleSpanBytes(TmaSwizzle swizzle);

/// The arguments of cuTensorMapEncodeTiled, minus the output map.
struct TmaTiledParams {
  TmaDataType dataType = TmaDataType::UInt8;
  uint32_t rank = 2;
  uint64_t globalAddress = 0;
  uint64_t globalDim[5] = {0, 0, 0, 0, 0};   ///< innermost first
  uint64_t globalStrides[4] = {0, 0, 0, 0};  ///< bytes, dims 1..rank-1
  uint32_t boxDim[5] = {0, 0, 0, 0, 0};
  uint32_t elementStrides[5] = {1, 1, 1, 1, 1};
  TmaInterleave interleave = TmaInterleave::None;
  TmaSwizzle swizzle = TmaSwizzle::None;
  TmaL2Promotion l2Promotion = TmaL2Promotion::None;
  TmaOobFill oobFill = TmaOobFill::None;
};

/// Checks every documented requirement; on failure `error` names the
/// parameter, its index and the rule.
bool validateTmaTiled(const TmaTiledParams &params, std::string &error);

/// Bytes one box writes to shared memory (the transaction count an mbarrier
/// expects), elementStrides taken into account.
uint64_t tmaBoxBytes(const TmaTiledParams &params);

/// The shared-memory destination of a box: 128-byte aligned for
/// cp.async.bulk.tensor, and, FLAMIA's convention so that the matrix
/// descriptors can use base offset 0, aligned to the swizzle pattern's
/// repeat (256/512/1024 bytes for 32B/64B/128B, PTX ISA 9.0, 5.5.7).
bool validateTmaSmemDestination(uint32_t smemAddress, TmaSwizzle swizzle,
                                std::string &error);

/// A [tokens, heads, headDim] tensor viewed as 2-D {heads * headDim, tokens}
/// with a box of {boxChannels, boxTokens}, or, when `threeD`, 3-D
/// {headDim, heads, tokens} with a box of {boxChannels, 1, boxTokens}.
/// Fills `params` and validates it.
bool makeTokenMajorTensorMap(uint64_t globalAddress, uint64_t tokens,
                             uint32_t heads, uint32_t headDim,
                             TmaDataType dataType, uint32_t boxChannels,
                             uint32_t boxTokens, TmaSwizzle swizzle, bool threeD,
                             TmaTiledParams &params, std::string &error);

} // namespace flamia

#endif // FLAMIA_TARGET_TMATENSORMAP_H
