//===- TmaTensorMapTest.cpp - cuTensorMapEncodeTiled parameter checks -----===//
//
// Each rule is the CUDA 13.0 driver API documentation of
// cuTensorMapEncodeTiled (cuda.h); enum values are CUtensorMap*'s.
//
//===----------------------------------------------------------------------===//
#include "flamia/Target/TmaTensorMap.h"

#include "gtest/gtest.h"

using namespace flamia;

namespace {
std::string rejection(const TmaTiledParams &p) {
  std::string err;
  EXPECT_FALSE(validateTmaTiled(p, err));
  return err;
}

TmaTiledParams qkv(TmaDataType type, uint32_t heads, uint32_t headDim,
                   uint32_t boxChannels, TmaSwizzle swizzle) {
  TmaTiledParams p;
  std::string err;
  makeTokenMajorTensorMap(0x7f0000000000ull, 16384, heads, headDim, type,
                          boxChannels, 128, swizzle, false, p, err);
  return p;
}
} // namespace

TEST(TmaTensorMap, EnumValuesAreTheDrivers) {
  // typedef enum CUtensorMapDataType_enum { UINT8 = 0, UINT16, UINT32, INT32,
  // UINT64, INT64, FLOAT16, FLOAT32, FLOAT64, BFLOAT16, FLOAT32_FTZ,
  // TFLOAT32, TFLOAT32_FTZ, 16U4_ALIGN8B, 16U4_ALIGN16B, 16U6_ALIGN16B }.
  EXPECT_EQ(static_cast<int>(TmaDataType::BFloat16), 9);
  EXPECT_EQ(static_cast<int>(TmaDataType::U6x16Align16B), 15);
  // CU_TENSOR_MAP_SWIZZLE_NONE = 0, 32B, 64B, 128B, 128B_ATOM_32B,
  // 128B_ATOM_32B_FLIP_8B, 128B_ATOM_64B.
  EXPECT_EQ(static_cast<int>(TmaSwizzle::B128), 3);
  EXPECT_EQ(static_cast<int>(TmaSwizzle::B128Atom64B), 6);
  EXPECT_EQ(tmaElementBits(TmaDataType::BFloat16), 16u);
  EXPECT_EQ(tmaElementBits(TmaDataType::U4x16Align8B), 4u);
}

TEST(TmaTensorMap, FlamiaTokenMajorViews) {
  std::string err;
  TmaTiledParams p;
  // bf16 [16384, 16, 128] as 2-D {2048, 16384}, box {64 channels, 128
  // tokens}: 128-byte inner box, 128B swizzle; row stride 16*128*2 = 4096.
  ASSERT_TRUE(makeTokenMajorTensorMap(0x7f0000000000ull, 16384, 16, 128,
                                      TmaDataType::BFloat16, 64, 128,
                                      TmaSwizzle::B128, false, p, err)) << err;
  EXPECT_EQ(p.rank, 2u);
  EXPECT_EQ(p.globalDim[0], 2048u);
  EXPECT_EQ(p.globalDim[1], 16384u);
  EXPECT_EQ(p.globalStrides[0], 4096u);
  EXPECT_EQ(tmaBoxBytes(p), 16384u);
  // E4M3 (UINT8) K or V: a 128-channel box is 128 bytes.
  ASSERT_TRUE(makeTokenMajorTensorMap(0x7f0000000000ull, 16384, 16, 128,
                                      TmaDataType::UInt8, 128, 128,
                                      TmaSwizzle::B128, false, p, err)) << err;
  EXPECT_EQ(tmaBoxBytes(p), 16384u);
  // The same as 3-D {128, 16, 16384}, strides {256, 4096} bytes for bf16.
  ASSERT_TRUE(makeTokenMajorTensorMap(0x7f0000000000ull, 16384, 16, 128,
                                      TmaDataType::BFloat16, 64, 128,
                                      TmaSwizzle::B128, true, p, err)) << err;
  EXPECT_EQ(p.rank, 3u);
  EXPECT_EQ(p.globalStrides[0], 256u);
  EXPECT_EQ(p.globalStrides[1], 4096u);
  EXPECT_EQ(p.boxDim[1], 1u);
  // Head dim 64 in E4M3 with the 64B swizzle.
  ASSERT_TRUE(makeTokenMajorTensorMap(0x7f0000000000ull, 4096, 8, 64,
                                      TmaDataType::UInt8, 64, 128,
                                      TmaSwizzle::B64, false, p, err)) << err;
}

TEST(TmaTensorMap, SwizzleBoundsTheInnerBoxDimension) {
  // "CU_TENSOR_MAP_SWIZZLE_128B* require the bounding box inner dimension to
  // be <= 128": 128 bf16 channels are 256 bytes.
  EXPECT_NE(rejection(qkv(TmaDataType::BFloat16, 16, 128, 128, TmaSwizzle::B128))
                .find("exceeds the 128-byte swizzle span"),
            std::string::npos);
  EXPECT_NE(rejection(qkv(TmaDataType::UInt8, 16, 128, 128, TmaSwizzle::B64))
                .find("64-byte swizzle span"),
            std::string::npos);
  EXPECT_NE(rejection(qkv(TmaDataType::UInt8, 16, 128, 64, TmaSwizzle::B32))
                .find("32-byte"),
            std::string::npos);
  std::string err;
  EXPECT_TRUE(validateTmaTiled(qkv(TmaDataType::UInt8, 16, 128, 128, TmaSwizzle::B128Atom32B), err)) << err;
  EXPECT_TRUE(validateTmaTiled(qkv(TmaDataType::BFloat16, 16, 128, 256, TmaSwizzle::None), err)) << err;
}

TEST(TmaTensorMap, RejectsWhatTheDriverRejects) {
  TmaTiledParams good = qkv(TmaDataType::BFloat16, 16, 128, 64, TmaSwizzle::B128);
  std::string err;
  ASSERT_TRUE(validateTmaTiled(good, err)) << err;

  TmaTiledParams p = good;
  p.globalAddress += 8;
  EXPECT_NE(rejection(p).find("globalAddress must be 16-byte aligned"), std::string::npos);
  p = good;
  p.rank = 0;
  EXPECT_NE(rejection(p).find("tensorRank 0"), std::string::npos);
  p.rank = 6;
  EXPECT_NE(rejection(p).find("tensorRank 6"), std::string::npos);
  p = good;
  p.interleave = TmaInterleave::B16;
  EXPECT_NE(rejection(p).find(">= 3"), std::string::npos);
  p = good;
  p.globalDim[1] = 0;
  EXPECT_NE(rejection(p).find("globalDim[1] = 0"), std::string::npos);
  p.globalDim[1] = (uint64_t(1) << 32) + 1;
  EXPECT_NE(rejection(p).find("[1, 2^32]"), std::string::npos);
  // Head dim 36 in bf16: a token row of 72 bytes is not a multiple of 16.
  p = qkv(TmaDataType::BFloat16, 1, 36, 32, TmaSwizzle::None);
  EXPECT_NE(rejection(p).find("globalStrides[0] = 72 bytes is not a multiple of 16"),
            std::string::npos);
  p = good;
  p.globalStrides[0] = 2048; // smaller than 2048 channels x 2 bytes
  EXPECT_NE(rejection(p).find("does not span"), std::string::npos);
  p = good;
  p.globalStrides[0] = uint64_t(1) << 40;
  EXPECT_NE(rejection(p).find("2^40"), std::string::npos);
  p = good;
  p.boxDim[1] = 257;
  EXPECT_NE(rejection(p).find("boxDim[1] = 257"), std::string::npos);
  p = good;
  p.boxDim[0] = 4; // 8 bytes
  EXPECT_NE(rejection(p).find("multiple of 16 bytes"), std::string::npos);
  p = good;
  p.elementStrides[1] = 9;
  EXPECT_NE(rejection(p).find("elementStrides[1] = 9"), std::string::npos);
  // 32B interleave: rank >= 3 and the 32B swizzle only.
  TmaTiledParams il;
  makeTokenMajorTensorMap(0x1000, 64, 2, 128, TmaDataType::BFloat16, 16, 8,
                          TmaSwizzle::B64, true, il, err);
  il.interleave = TmaInterleave::B32;
  EXPECT_NE(rejection(il).find("32B interleave requires the 32B swizzle"), std::string::npos);
  // NaN fill is for floating-point types.
  p = qkv(TmaDataType::UInt8, 16, 128, 128, TmaSwizzle::B128);
  p.oobFill = TmaOobFill::NanRequestZeroFma;
  EXPECT_NE(rejection(p).find("floating-point"), std::string::npos);
  p = good;
  p.oobFill = TmaOobFill::NanRequestZeroFma;
  EXPECT_TRUE(validateTmaTiled(p, err)) << err;
  // Packed 4-bit, 16B aligned: boxDim[0] must be 128, globalDim[0] % 128.
  p = good;
  p.dataType = TmaDataType::U4x16Align16B;
  p.swizzle = TmaSwizzle::None;
  p.boxDim[0] = 64;
  p.globalStrides[0] = 2048;
  EXPECT_NE(rejection(p).find("boxDim[0] must be 128"), std::string::npos);
}

TEST(TmaTensorMap, SharedMemoryDestination) {
  std::string err;
  EXPECT_TRUE(validateTmaSmemDestination(0x400, TmaSwizzle::B128, err));
  EXPECT_TRUE(validateTmaSmemDestination(0x480, TmaSwizzle::None, err));
  EXPECT_TRUE(validateTmaSmemDestination(0x200, TmaSwizzle::B64, err));
  EXPECT_FALSE(validateTmaSmemDestination(0x440, TmaSwizzle::None, err));
  EXPECT_NE(err.find("128-byte aligned"), std::string::npos);
  EXPECT_FALSE(validateTmaSmemDestination(0x480, TmaSwizzle::B128, err));
  EXPECT_NE(err.find("1024-byte swizzle repeat"), std::string::npos);
}
