//===- NpyTest.cpp - .npy reading and writing -------------------*- C++ -*-===//
#include "flamia/Support/Npy.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <fstream>
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
