//===- ValidationTest.cpp - The shared validation rules ---------*- C++ -*-===//
#include "flamia/Support/FileOutput.h"
#include "flamia/Support/Validation.h"

#include "gtest/gtest.h"

#include <cmath>
#include <dirent.h>
#include <fstream>
#include <limits>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace flamia;
using namespace flamia::validation;

namespace {

TEST(Validation, SoftmaxScaleMustBeFiniteAndPositive) {
  std::string e;
  EXPECT_TRUE(validateSoftmaxScale(0.125, e));
  EXPECT_TRUE(validateSoftmaxScale(1e-30, e));
  EXPECT_FALSE(validateSoftmaxScale(0.0, e));
  EXPECT_EQ(e, "softmax_scale 0 must be finite and > 0");
  EXPECT_FALSE(validateSoftmaxScale(-0.5, e));
  EXPECT_EQ(e, "softmax_scale -0.5 must be finite and > 0");
  EXPECT_FALSE(validateSoftmaxScale(-0.0, e));
  EXPECT_FALSE(validateSoftmaxScale(INFINITY, e));
  EXPECT_EQ(e, "softmax_scale inf must be finite and > 0");
  EXPECT_FALSE(validateSoftmaxScale(NAN, e));
  EXPECT_NE(e.find("nan"), std::string::npos) << e;
  // The value is named exactly, not rounded to six digits.
  EXPECT_FALSE(validateSoftmaxScale(-0.08838834764831845, e));
  EXPECT_EQ(e, "softmax_scale -0.08838834764831845 must be finite and > 0");
}

TEST(Validation, Float32SoftmaxScaleChecksTheRoundingToo) {
  std::string e;
  EXPECT_TRUE(validateFloat32SoftmaxScale(0.125, "0.125", e));
  // Finite and > 0 as a double, 0 or inf as the float32 the kernels get:
  // named as the user wrote it.
  EXPECT_FALSE(validateFloat32SoftmaxScale(1e-60, "1e-60", e));
  EXPECT_EQ(e, "softmax_scale 1e-60 is not a positive finite float32");
  EXPECT_FALSE(validateFloat32SoftmaxScale(1e60, "1e60", e));
  EXPECT_EQ(e, "softmax_scale 1e60 is not a positive finite float32");
  // Invalid as a double: validateSoftmaxScale's message.
  EXPECT_FALSE(validateFloat32SoftmaxScale(-0.5, "-0.5", e));
  EXPECT_EQ(e, "softmax_scale -0.5 must be finite and > 0");
}

TEST(Validation, CuSeqlens) {
  std::string e;
  const int32_t ok[] = {0, 10, 10, 40};
  EXPECT_TRUE(validateCuSeqlens(ok, 4, 40, e));
  EXPECT_TRUE(validateCuSeqlens(ok, 4, -1, e));
  const int32_t empty[] = {0, 0};
  EXPECT_TRUE(validateCuSeqlens(empty, 2, 0, e));

  EXPECT_FALSE(validateCuSeqlens(ok, 1, -1, e));
  EXPECT_EQ(e, "cu_seqlens has 1 entries; it needs num_docs + 1 >= 2 (0, then "
               "each document's end)");
  EXPECT_FALSE(validateCuSeqlens(nullptr, 3, -1, e));
  EXPECT_EQ(e, "cu_seqlens is null");
  const int32_t start[] = {1, 20, 40};
  EXPECT_FALSE(validateCuSeqlens(start, 3, 40, e));
  EXPECT_EQ(e, "cu_seqlens[0] = 1; it must be 0");
  const int32_t decr[] = {0, 30, 20, 40};
  EXPECT_FALSE(validateCuSeqlens(decr, 4, 40, e));
  EXPECT_EQ(e, "cu_seqlens[2] = 20 is less than cu_seqlens[1] = 30 (it must "
               "be non-decreasing)");
  EXPECT_FALSE(validateCuSeqlens(ok, 4, 41, e));
  EXPECT_EQ(e, "cu_seqlens[3] = 40 but the batch has T = 41 tokens (the last "
               "entry must be T)");
  const int32_t negative[] = {0, -5};
  EXPECT_FALSE(validateCuSeqlens(negative, 2, -1, e));
  EXPECT_NE(e.find("cu_seqlens[1] = -5"), std::string::npos) << e;
}

TEST(Validation, CuSeqlensDTypeIsInt32) {
  std::string e;
  EXPECT_TRUE(validateCuSeqlensDType("int32", e));
  EXPECT_FALSE(validateCuSeqlensDType("int64", e));
  EXPECT_EQ(e, "cu_seqlens must be int32, got int64");
}

TEST(Validation, CuSeqlensFromLengths) {
  std::string e;
  std::vector<int32_t> cu;
  const int64_t lengths[] = {300, 0, 45};
  ASSERT_TRUE(cuSeqlensFromLengths(lengths, 3, kMaxTokens, cu, e)) << e;
  EXPECT_EQ(cu, (std::vector<int32_t>{0, 300, 300, 345}));
  const int64_t negative[] = {3, -1};
  EXPECT_FALSE(cuSeqlensFromLengths(negative, 2, kMaxTokens, cu, e));
  EXPECT_EQ(e, "document length -1 (document 1) is negative");
  // Sums past the limit (and past int64) are caught before they overflow.
  const int64_t huge[] = {kMaxTokens, 1};
  EXPECT_FALSE(cuSeqlensFromLengths(huge, 2, kMaxTokens, cu, e));
  EXPECT_NE(e.find("more than 2147483647 tokens"), std::string::npos) << e;
  const int64_t wrap[] = {1, std::numeric_limits<int64_t>::max()};
  EXPECT_FALSE(cuSeqlensFromLengths(wrap, 2, 100, cu, e));
  EXPECT_NE(e.find("more than 100 tokens"), std::string::npos) << e;
  EXPECT_FALSE(cuSeqlensFromLengths(lengths, 0, 100, cu, e));
}

TEST(Validation, HeadsAndProblemSize) {
  std::string e;
  EXPECT_TRUE(validateHeads(16, 4, e));
  EXPECT_FALSE(validateHeads(65536, 1, e));
  EXPECT_EQ(e, "Hq (query heads) = 65536 must be in [1, 65535]");
  EXPECT_FALSE(validateHeads(4, 3, e));
  EXPECT_EQ(e, "Hq (query heads) = 4 is not a multiple of Hkv (kv heads) = 3");
  EXPECT_FALSE(validateHeads(4, 8, e));
  EXPECT_EQ(e, "Hkv (kv heads) = 8 must be in [1, Hq = 4]");

  EXPECT_TRUE(validateProblemSize(0, 1, 1, 64, kMaxTensorElements, e));
  EXPECT_TRUE(validateProblemSize(3670016, 16, 16, 128, kMaxTensorElements, e));
  EXPECT_FALSE(validateProblemSize(3670017, 16, 16, 128, kMaxTensorElements, e));
  EXPECT_EQ(e, "T x Hq x D = 3670017 x 16 x 128 = 7516194816 elements exceeds "
               "the limit of 7516192768 elements per tensor");
  EXPECT_FALSE(validateProblemSize(int64_t{1} << 31, 1, 1, 64,
                                   kMaxTensorElements, e));
  EXPECT_EQ(e, "T (tokens) = 2147483648 must be in [0, 2147483647] "
               "(cu_seqlens is int32)");
  EXPECT_FALSE(validateProblemSize(-1, 1, 1, 64, kMaxTensorElements, e));
  EXPECT_FALSE(validateProblemSize(10, 1, 1, 0, kMaxTensorElements, e));
  EXPECT_EQ(e, "D (head dim) = 0 must be >= 1");
  // An overflowing product is reported, not wrapped.
  EXPECT_FALSE(validateProblemSize(kMaxTokens, 65535, 1,
                                   std::numeric_limits<int64_t>::max() / 2,
                                   std::numeric_limits<int64_t>::max(), e));
  EXPECT_NE(e.find("exceeds the limit"), std::string::npos) << e;
}

TEST(Validation, CheckedProductAndParsing) {
  int64_t p = -7;
  EXPECT_TRUE(checkedProduct({3, 4, 5}, p));
  EXPECT_EQ(p, 60);
  EXPECT_FALSE(checkedProduct({int64_t{1} << 32, int64_t{1} << 32}, p));
  EXPECT_EQ(p, 60) << "unchanged on overflow";
  EXPECT_FALSE(checkedProduct({-1, 2}, p));

  std::string e;
  int64_t v = 0;
  EXPECT_TRUE(parseIntegerInRange("42", "--x", 0, 100, v, e));
  EXPECT_EQ(v, 42);
  EXPECT_TRUE(parseIntegerInRange("-3", "--x", -5, 5, v, e));
  EXPECT_EQ(v, -3);
  for (const char *bad : {"", " 1", "+1", "1x", "0x10", "101",
                          "99999999999999999999", "-", "1.0"}) {
    EXPECT_FALSE(parseIntegerInRange(bad, "--x", 0, 100, v, e)) << bad;
    EXPECT_EQ(e, std::string("--x expects an integer in [0, 100], got '") +
                     bad + "'");
  }
}

TEST(Validation, FormatBlockPairings) {
  std::string e;
  using EE = ElementEncoding;
  using SE = ScaleEncoding;
  EXPECT_TRUE(validateFormatBlock(EE::E4M3, SE::E8M0, false, 1, 32, 128,
                                  "mxfp8-e4m3", e));
  EXPECT_TRUE(validateFormatBlock(EE::E4M3, SE::E8M0, false, 32, 32, 128,
                                  "mxfp8-e4m3", e));
  EXPECT_TRUE(validateFormatBlock(EE::E2M1, SE::UE4M3, false, 16, 16, 48,
                                  "nvfp4", e));
  EXPECT_TRUE(validateFormatBlock(EE::E5M2, SE::E8M0, true, 0, 0, 128,
                                  "mxfp8-e5m2", e));

  EXPECT_FALSE(validateFormatBlock(EE::E4M3, SE::E8M0, false, 1, 16, 128,
                                   "mxfp8-e4m3", e));
  EXPECT_EQ(e, "mxfp8-e4m3: MX (E8M0) scales cover 32 channels: the channel "
               "block must be 32, got 16");
  EXPECT_FALSE(validateFormatBlock(EE::E2M1, SE::UE4M3, false, 1, 32, 128,
                                   "nvfp4", e));
  EXPECT_EQ(e, "nvfp4: NVFP4 (E4M3) scales cover 16 channels: the channel "
               "block must be 16, got 32");
  EXPECT_FALSE(validateFormatBlock(EE::E2M1, SE::UE4M3, true, 0, 0, 128,
                                   "nvfp4", e));
  EXPECT_NE(e.find("per-tensor"), std::string::npos) << e;
  EXPECT_FALSE(validateFormatBlock(EE::E4M3, SE::UE4M3, false, 1, 16, 128,
                                   "e4m3-with-e4m3-scales", e));
  EXPECT_NE(e.find("E2M1"), std::string::npos) << e;
  EXPECT_FALSE(validateFormatBlock(EE::E4M3, SE::E8M0, false, 8, 32, 128,
                                   "mxfp8-e4m3", e));
  EXPECT_EQ(e, "mxfp8-e4m3: the token block must be 1 (per token) or a "
               "positive multiple of 16, got 8");
  EXPECT_FALSE(validateFormatBlock(EE::E4M3, SE::E8M0, false, 1, 32, 48,
                                   "mxfp8-e4m3", e));
  EXPECT_EQ(e, "head dim 48 is not divisible by the channel block 32");
  // Head dim unknown (< 1): only the pairing is checked.
  EXPECT_TRUE(validateFormatBlock(EE::E4M3, SE::E8M0, false, 1, 32, -1,
                                  "mxfp8-e4m3", e));
}

std::string tempDir() {
  std::string t = std::string(::testing::TempDir()) + "/flamia-fileoutput-" +
                  std::to_string(::getpid());
  ::mkdir(t.c_str(), 0755);
  return t;
}

std::vector<std::string> listDir(const std::string &dir) {
  std::vector<std::string> names;
  if (DIR *d = ::opendir(dir.c_str())) {
    while (dirent *e = ::readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..")
        names.push_back(e->d_name);
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string slurp(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(FileOutput, WritesAtomicallyAndLeavesNothingOnFailure) {
  const std::string dir = tempDir();
  std::string e;
  ASSERT_TRUE(writeFileAtomically(dir + "/a.bin", "hello", 5, e)) << e;
  EXPECT_EQ(slurp(dir + "/a.bin"), "hello");
  EXPECT_EQ(listDir(dir), std::vector<std::string>{"a.bin"});

  EXPECT_FALSE(writeFileAtomically(dir + "/missing/b.bin", "x", 1, e));
  EXPECT_NE(e.find(dir + "/missing/b.bin: cannot create file"),
            std::string::npos)
      << e;
  // A destination that cannot be replaced (a directory): the rename fails,
  // the temporary is removed.
  ::mkdir((dir + "/isdir").c_str(), 0755);
  EXPECT_FALSE(writeFileAtomically(dir + "/isdir", "x", 1, e));
  EXPECT_EQ(e, dir + "/isdir: cannot replace a directory");
  EXPECT_EQ(listDir(dir), (std::vector<std::string>{"a.bin", "isdir"}));
  ::rmdir((dir + "/isdir").c_str());
  ::unlink((dir + "/a.bin").c_str());
}

TEST(FileOutput, NpyFilesAllOrNothing) {
  const std::string dir = tempDir();
  std::string e;
  NpyArray a = makeNpyArray(NpyDType::Int32, {3});
  a.data<int32_t>()[2] = 7;
  // An existing file is kept as it was when a later file fails.
  ASSERT_TRUE(writeFileAtomically(dir + "/x.npy", "old", 3, e)) << e;
  ::mkdir((dir + "/y.npy").c_str(), 0755);
  EXPECT_FALSE(writeNpyFilesAtomically(
      {{dir + "/x.npy", a}, {dir + "/y.npy", a}}, e));
  EXPECT_NE(e.find(dir + "/y.npy"), std::string::npos) << e;
  EXPECT_EQ(slurp(dir + "/x.npy"), "old");
  EXPECT_EQ(listDir(dir), (std::vector<std::string>{"x.npy", "y.npy"}));
  ::rmdir((dir + "/y.npy").c_str());

  ASSERT_TRUE(writeNpyFilesAtomically(
      {{dir + "/x.npy", a}, {dir + "/y.npy", a}}, e))
      << e;
  NpyArray back;
  ASSERT_TRUE(readNpy(dir + "/y.npy", back, e)) << e;
  EXPECT_EQ(back.shape, a.shape);
  EXPECT_EQ(back.bytes, a.bytes);
  EXPECT_EQ(listDir(dir), (std::vector<std::string>{"x.npy", "y.npy"}));
  ::unlink((dir + "/x.npy").c_str());
  ::unlink((dir + "/y.npy").c_str());
  ::rmdir(dir.c_str());
}

} // namespace
