//===- NpyTest.cpp - .npy reading and writing -------------------*- C++ -*-===//
#include "flamia/Support/Npy.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace flamia;

namespace {
std::string tempPath(const char *name) {
  return std::string(::testing::TempDir()) + "/" + name + "." +
         std::to_string(::getpid()) + ".npy";
}

void writeRaw(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A minimal v1.0 file by hand, as NumPy writes it.
std::string npyFile(const std::string &dict, const std::string &payload) {
  std::string header = dict;
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + payload;
}
} // namespace

TEST(Npy, RoundTripsEveryDTypeAndShape) {
  for (NpyDType dt : {NpyDType::Float32, NpyDType::Float64, NpyDType::Int32,
                      NpyDType::Int64, NpyDType::UInt8, NpyDType::UInt16}) {
    for (std::vector<int64_t> shape :
         {std::vector<int64_t>{}, {7}, {3, 2, 5}, {0, 4}}) {
      NpyArray a = makeNpyArray(dt, shape);
      for (size_t i = 0; i < a.bytes.size(); ++i)
        a.bytes[i] = static_cast<uint8_t>(i * 37 + 11);
      std::string path = tempPath("roundtrip"), err;
      ASSERT_TRUE(writeNpy(path, a, err)) << err;
      NpyArray b;
      ASSERT_TRUE(readNpy(path, b, err)) << err;
      EXPECT_EQ(b.dtype, dt);
      EXPECT_EQ(b.shape, shape);
      EXPECT_EQ(b.bytes, a.bytes);
      std::remove(path.c_str());
    }
  }
}

TEST(Npy, ReadsWhatNumPyWrites) {
  // np.save(f, np.array([[1, 2, 3]], dtype=np.int32))
  std::string payload("\x01\0\0\0\x02\0\0\0\x03\0\0\0", 12);
  std::string path = tempPath("numpy"), err;
  writeRaw(path, npyFile("{'descr': '<i4', 'fortran_order': False, 'shape': (1, 3), }",
                         payload));
  NpyArray a;
  ASSERT_TRUE(readNpy(path, a, err)) << err;
  EXPECT_EQ(a.dtype, NpyDType::Int32);
  EXPECT_EQ(a.shapeString(), "[1, 3]");
  EXPECT_EQ(a.data<int32_t>()[2], 3);
  std::remove(path.c_str());
}

TEST(Npy, ErrorsNameTheProblem) {
  std::string err;
  NpyArray a;
  EXPECT_FALSE(readNpy("/nonexistent/dir/x.npy", a, err));
  EXPECT_NE(err.find("cannot open"), std::string::npos) << err;

  std::string path = tempPath("bad");
  writeRaw(path, "hello world, not numpy");
  EXPECT_FALSE(readNpy(path, a, err));
  EXPECT_NE(err.find("bad magic"), std::string::npos) << err;

  writeRaw(path, npyFile("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }",
                         std::string(16, '\0')));
  EXPECT_FALSE(readNpy(path, a, err));
  EXPECT_NE(err.find("unsupported dtype '<c8'"), std::string::npos) << err;

  writeRaw(path, npyFile("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
                         std::string(16, '\0')));
  EXPECT_FALSE(readNpy(path, a, err));
  EXPECT_NE(err.find("Fortran"), std::string::npos) << err;

  writeRaw(path, npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), }",
                         std::string(16, '\0')));
  EXPECT_FALSE(readNpy(path, a, err));
  EXPECT_NE(err.find("truncated data"), std::string::npos) << err;
  std::remove(path.c_str());
}

// issue 18: a header claiming 2^31 x 2 x 64 float32 (2^40 bytes) over a
// 64-byte body must be a "truncated data" error, not std::bad_alloc.
TEST(Npy, HugeClaimedShapeOverTinyBodyIsAnError) {
  std::string path = tempPath("huge"), err;
  writeRaw(path, npyFile("{'descr': '<f4', 'fortran_order': False, "
                         "'shape': (2147483648, 2, 64), }",
                         std::string(64, '\0')));
  NpyArray a;
  EXPECT_FALSE(readNpy(path, a, err));
  EXPECT_NE(err.find("truncated data (expected 1099511627776 bytes"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("found 64"), std::string::npos) << err;
  EXPECT_TRUE(a.bytes.empty());
  std::remove(path.c_str());
}

// Byte sizes past 2^40, and past 2^64 (which 64-bit arithmetic would wrap
// to a small number), are rejected from the header alone.
TEST(Npy, OverflowingShapesAreRejected) {
  for (const char *shape : {"(1099511627776, 2)",
                            "(4294967296, 4294967296, 4294967296)",
                            "(9223372036854775807, 9223372036854775807)"}) {
    std::string err;
    NpyArray a;
    std::istringstream in(npyFile(std::string("{'descr': '<f8', "
                                              "'fortran_order': False, "
                                              "'shape': ") +
                                      shape + ", }",
                                  ""));
    EXPECT_FALSE(readNpy(in, "mem.npy", a, err)) << shape;
    EXPECT_NE(err.find("array too large"), std::string::npos) << err;
  }
  // A zero dimension makes any other dimension harmless.
  std::string err;
  NpyArray a;
  std::istringstream in(npyFile("{'descr': '<f8', 'fortran_order': False, "
                                "'shape': (0, 9223372036854775807), }",
                                ""));
  EXPECT_TRUE(readNpy(in, "mem.npy", a, err)) << err;
}

TEST(Npy, MalformedDimensionsAreRejected) {
  for (const char *shape :
       {"(3x,)", "(-1,)", "(99999999999999999999,)", "(2, 3 4)"}) {
    std::string err;
    NpyArray a;
    std::istringstream in(npyFile(std::string("{'descr': '<u1', "
                                              "'fortran_order': False, "
                                              "'shape': ") +
                                      shape + ", }",
                                  std::string(64, '\0')));
    EXPECT_FALSE(readNpy(in, "mem.npy", a, err)) << shape;
    EXPECT_NE(err.find("malformed 'shape'"), std::string::npos) << err;
  }
}
