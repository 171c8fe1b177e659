//===- TensorMapTest.cpp - TMA descriptor validation and encoding ---------===//

#include "flamia/Runtime/TensorMap.h"

#include <gtest/gtest.h>

using namespace flamia::runtime;

namespace {

TensorMapRequest goodRequest() {
  TensorMapRequest r;
  r.what = "kernel 'fwd' parameter 'tma_q'";
  r.bufferName = "q_deq";
  r.dtype = DType::BF16;
  r.address = 0x7f0000000000;
  r.rows = 4096;
  r.cols = 16 * 128;
  r.bufferBytes = 4096ull * 16 * 128 * 2;
  r.boxRows = 128;
  r.boxCols = 64;
  r.swizzle = 128;
  return r;
}

std::string errorOf(const TensorMapRequest &r) {
  Status s = validateTensorMapRequest(r);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code, ErrorCode::InvalidArgument);
  const std::string prefix =
      "kernel 'fwd' parameter 'tma_q' (tensor map of buffer 'q_deq'): ";
  EXPECT_EQ(s.message.compare(0, prefix.size(), prefix), 0) << s.message;
  return s.message.size() > prefix.size() ? s.message.substr(prefix.size())
                                          : s.message;
}

TEST(TensorMap, AcceptsTheForwardKernelsView) {
  EXPECT_TRUE(validateTensorMapRequest(goodRequest()).ok());
  TensorMapRequest r = goodRequest();
  r.swizzle = 0;
  r.boxCols = 256; // unswizzled boxes may be wider than 128 bytes
  EXPECT_TRUE(validateTensorMapRequest(r).ok());
  r = goodRequest();
  r.dtype = DType::U8;
  r.cols = 16 * 128;
  r.bufferBytes = 4096ull * 16 * 128;
  r.boxCols = 128; // 128 bytes of FP8 codes: exactly the swizzle span
  EXPECT_TRUE(validateTensorMapRequest(r).ok());
}

TEST(TensorMap, RejectsWhatTheHardwareCannotDo) {
  TensorMapRequest r = goodRequest();
  r.address += 8;
  EXPECT_EQ(errorOf(r), "global address 0x7f0000000008 is not 16-byte aligned");
  r = goodRequest();
  r.address = 0;
  EXPECT_EQ(errorOf(r), "null global address");
  r = goodRequest();
  r.cols = 100; // 200 bytes per row
  r.bufferBytes = 4096 * 200;
  r.boxCols = 8;
  EXPECT_EQ(errorOf(r), "row stride 100 x 2 bytes = 200 bytes is not a "
                        "multiple of 16");
  r = goodRequest();
  r.rows = 0;
  EXPECT_EQ(errorOf(r), "rows = 0 outside [1, 2^32]");
  r = goodRequest();
  r.cols = (int64_t{1} << 32) + 1;
  EXPECT_EQ(errorOf(r), "cols = 4294967297 outside [1, 2^32]");
  r = goodRequest();
  r.boxRows = 257;
  EXPECT_EQ(errorOf(r), "box rows = 257 outside [1, 256]");
  r = goodRequest();
  r.boxCols = 0;
  EXPECT_EQ(errorOf(r), "box cols = 0 outside [1, 256]");
  r = goodRequest();
  r.boxCols = 4;
  EXPECT_EQ(errorOf(r),
            "box row 4 x 2 bytes = 8 bytes is not a multiple of 16");
  r = goodRequest();
  r.boxCols = 128; // 256 bytes > 128-byte swizzle
  EXPECT_EQ(errorOf(r),
            "box row of 256 bytes exceeds the 128-byte swizzle span");
  r = goodRequest();
  r.swizzle = 32;
  EXPECT_EQ(errorOf(r),
            "box row of 128 bytes exceeds the 32-byte swizzle span");
  r = goodRequest();
  r.swizzle = 16;
  EXPECT_EQ(errorOf(r), "swizzle 16 is not one of 0, 32, 64, 128");
  r = goodRequest();
  r.l2Promotion = 512;
  EXPECT_EQ(errorOf(r), "l2_promotion 512 is not one of 0, 64, 128, 256");
}

TEST(TensorMap, TheViewMustFitTheBuffer) {
  TensorMapRequest r = goodRequest();
  r.bufferBytes -= 1;
  EXPECT_EQ(errorOf(r), "the view [4096, 2048] of bf16 needs 16777216 bytes "
                        "but the buffer has 16777215");
}

TEST(TensorMap, EncodingArgumentsAreInnermostFirst) {
  TensorMapEncoding e = tensorMapEncoding(goodRequest());
  EXPECT_EQ(e.dataType, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  EXPECT_EQ(e.rank, 2u);
  EXPECT_EQ(e.globalDim[0], 2048u);     // cols
  EXPECT_EQ(e.globalDim[1], 4096u);     // rows
  EXPECT_EQ(e.globalStrides[0], 4096u); // bytes per row
  EXPECT_EQ(e.boxDim[0], 64u);
  EXPECT_EQ(e.boxDim[1], 128u);
  EXPECT_EQ(e.elementStrides[0], 1u);
  EXPECT_EQ(e.elementStrides[1], 1u);
  EXPECT_EQ(e.interleave, CU_TENSOR_MAP_INTERLEAVE_NONE);
  EXPECT_EQ(e.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(e.l2Promotion, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
  EXPECT_EQ(e.oobFill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);

  TensorMapRequest r = goodRequest();
  r.dtype = DType::F32;
  r.swizzle = 64;
  r.boxCols = 16;
  r.l2Promotion = 0;
  e = tensorMapEncoding(r);
  EXPECT_EQ(e.dataType, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  EXPECT_EQ(e.globalStrides[0], 2048u * 4);
  EXPECT_EQ(e.swizzle, CU_TENSOR_MAP_SWIZZLE_64B);
  EXPECT_EQ(e.l2Promotion, CU_TENSOR_MAP_L2_PROMOTION_NONE);
  r.dtype = DType::U8;
  EXPECT_EQ(tensorMapEncoding(r).dataType, CU_TENSOR_MAP_DATA_TYPE_UINT8);
  r.dtype = DType::I32;
  EXPECT_EQ(tensorMapEncoding(r).dataType, CU_TENSOR_MAP_DATA_TYPE_INT32);
}

} // namespace
