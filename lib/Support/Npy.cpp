//===- Npy.cpp - Reading and writing NumPy .npy files -----------*- C++ -*-===//
#include "flamia/Support/Npy.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace flamia {

namespace {
struct DTypeInfo {
  NpyDType dtype;
  const char *descr;
  const char *altDescr; // accepted on read (e.g. "|u1" vs "<u1")
  size_t size;
  const char *name;
};
constexpr DTypeInfo kDTypes[] = {
    {NpyDType::Float32, "<f4", "<f4", 4, "float32"},
    {NpyDType::Float64, "<f8", "<f8", 8, "float64"},
    {NpyDType::Int32, "<i4", "<i4", 4, "int32"},
    {NpyDType::Int64, "<i8", "<i8", 8, "int64"},
    {NpyDType::UInt8, "|u1", "<u1", 1, "uint8"},
    {NpyDType::UInt16, "<u2", "<u2", 2, "uint16"},
};

const DTypeInfo &info(NpyDType dtype) {
  for (const DTypeInfo &i : kDTypes)
    if (i.dtype == dtype)
      return i;
  return kDTypes[0];
}

// Finds `'key': ` in the header dict and returns the position after it.
size_t findKey(const std::string &header, const char *key) {
  std::string pattern = std::string("'") + key + "'";
  size_t pos = header.find(pattern);
  if (pos == std::string::npos)
    return pos;
  pos = header.find(':', pos + pattern.size());
  if (pos == std::string::npos)
    return pos;
  ++pos;
  while (pos < header.size() && header[pos] == ' ')
    ++pos;
  return pos;
}
} // namespace

const char *npyDescr(NpyDType dtype) { return info(dtype).descr; }
size_t npyElementSize(NpyDType dtype) { return info(dtype).size; }
const char *npyDTypeName(NpyDType dtype) { return info(dtype).name; }

int64_t NpyArray::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string NpyArray::shapeString() const {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? ", " : "") << shape[i];
  os << ']';
  return os.str();
}

NpyArray makeNpyArray(NpyDType dtype, std::vector<int64_t> shape) {
  NpyArray a;
  a.dtype = dtype;
  a.shape = std::move(shape);
  a.bytes.assign(static_cast<size_t>(a.numElements()) * npyElementSize(dtype),
                 0);
  return a;
}

bool readNpy(const std::string &path, NpyArray &out, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot open file: " + std::strerror(errno);
    return false;
  }
  return readNpy(in, path, out, error);
}

bool readNpy(std::istream &in, const std::string &path, NpyArray &out,
             std::string &error) {
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) {
    error = path + ": not a .npy file (bad magic)";
    return false;
  }
  int major = static_cast<unsigned char>(magic[6]);
  uint32_t headerLen = 0;
  if (major == 1) {
    unsigned char len[2];
    if (!in.read(reinterpret_cast<char *>(len), 2)) {
      error = path + ": truncated .npy header";
      return false;
    }
    headerLen = len[0] | (len[1] << 8);
  } else if (major == 2 || major == 3) {
    unsigned char len[4];
    if (!in.read(reinterpret_cast<char *>(len), 4)) {
      error = path + ": truncated .npy header";
      return false;
    }
    headerLen = len[0] | (len[1] << 8) | (len[2] << 16) | (uint32_t(len[3]) << 24);
  } else {
    error = path + ": unsupported .npy format version " + std::to_string(major);
    return false;
  }
  if (headerLen > (1u << 20)) {
    error = path + ": .npy header too large";
    return false;
  }
  std::string header(headerLen, '\0');
  if (!in.read(header.data(), headerLen)) {
    error = path + ": truncated .npy header";
    return false;
  }

  size_t pos = findKey(header, "descr");
  if (pos == std::string::npos || pos >= header.size() || header[pos] != '\'') {
    error = path + ": .npy header has no 'descr'";
    return false;
  }
  size_t end = header.find('\'', pos + 1);
  std::string descr = header.substr(pos + 1, end - pos - 1);
  bool found = false;
  for (const DTypeInfo &i : kDTypes) {
    if (descr == i.descr || descr == i.altDescr) {
      out.dtype = i.dtype;
      found = true;
    }
  }
  if (!found) {
    error = path + ": unsupported dtype '" + descr +
            "' (supported: float32, float64, int32, int64, uint8, uint16, "
            "little-endian)";
    return false;
  }

  pos = findKey(header, "fortran_order");
  if (pos == std::string::npos) {
    error = path + ": .npy header has no 'fortran_order'";
    return false;
  }
  if (header.compare(pos, 4, "True") == 0) {
    error = path + ": Fortran-ordered arrays are not supported (save a "
                   "C-contiguous array)";
    return false;
  }

  pos = findKey(header, "shape");
  if (pos == std::string::npos || header[pos] != '(') {
    error = path + ": .npy header has no 'shape'";
    return false;
  }
  end = header.find(')', pos);
  if (end == std::string::npos) {
    error = path + ": malformed 'shape' in .npy header";
    return false;
  }
  out.shape.clear();
  std::string dims = header.substr(pos + 1, end - pos - 1);
  std::stringstream ss(dims);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t b = item.find_first_not_of(' ');
    if (b == std::string::npos)
      continue;
    char *stop = nullptr;
    errno = 0;
    long long v = std::strtoll(item.c_str() + b, &stop, 10);
    // Only trailing spaces may follow the digits; ERANGE means > 2^63 - 1.
    bool trailingJunk =
        *stop != '\0' && std::string(stop).find_first_not_of(' ') !=
                              std::string::npos;
    if (stop == item.c_str() + b || v < 0 || errno == ERANGE || trailingJunk) {
      error = path + ": malformed 'shape' in .npy header";
      return false;
    }
    out.shape.push_back(v);
  }

  // The shape is untrusted: compute its byte size in 64 bits with every
  // multiplication overflow-checked, and compare it with what the file holds
  // before allocating, so that a header claiming 2^40 bytes over a 64-byte
  // body is a "truncated data" error rather than std::bad_alloc.
  uint64_t total = npyElementSize(out.dtype);
  for (int64_t d : out.shape) {
    if (__builtin_mul_overflow(total, static_cast<uint64_t>(d), &total) ||
        total > (uint64_t(1) << 40)) {
      error = path + ": array too large (shape " + out.shapeString() + ")";
      return false;
    }
  }
  auto truncated = [&](uint64_t available) {
    error = path + ": truncated data (expected " + std::to_string(total) +
            " bytes for shape " + out.shapeString() + ", found " +
            std::to_string(available) + ")";
    return false;
  };
  const std::streamoff dataStart = in.tellg();
  if (dataStart >= 0 && in.seekg(0, std::ios::end)) {
    const std::streamoff fileEnd = in.tellg();
    in.seekg(dataStart);
    if (fileEnd >= dataStart &&
        static_cast<uint64_t>(fileEnd - dataStart) < total)
      return truncated(static_cast<uint64_t>(fileEnd - dataStart));
  }
  in.clear();
  // Read in bounded chunks: a stream that cannot seek (a pipe) is still
  // never trusted for more than it delivers plus one chunk.
  constexpr uint64_t kChunk = uint64_t(1) << 26;
  out.bytes.clear();
  while (out.bytes.size() < total) {
    const size_t have = out.bytes.size();
    const size_t want = static_cast<size_t>(std::min<uint64_t>(kChunk, total - have));
    out.bytes.resize(have + want);
    if (!in.read(reinterpret_cast<char *>(out.bytes.data() + have),
                 static_cast<std::streamsize>(want)))
      return truncated(have + static_cast<uint64_t>(in.gcount()));
  }
  return true;
}

bool writeNpy(const std::string &path, const NpyArray &array,
              std::string &error) {
  std::string header = std::string("{'descr': '") + npyDescr(array.dtype) +
                       "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < array.shape.size(); ++i)
    header += std::to_string(array.shape[i]) + ", ";
  if (array.shape.size() > 1)
    header.resize(header.size() - 2);
  else if (array.shape.size() == 1)
    header.resize(header.size() - 1); // "(5,)"
  header += "), }";
  // Pad with spaces so that the data starts at a multiple of 64 bytes.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';

  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    error = path + ": cannot create file: " + std::strerror(errno);
    return false;
  }
  const char magic[] = "\x93NUMPY\x01\x00";
  out.write(magic, 8);
  unsigned char len[2] = {static_cast<unsigned char>(header.size() & 0xff),
                          static_cast<unsigned char>(header.size() >> 8)};
  out.write(reinterpret_cast<const char *>(len), 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char *>(array.bytes.data()),
            static_cast<std::streamsize>(array.bytes.size()));
  if (!out) {
    error = path + ": write failed";
    return false;
  }
  return true;
}

} // namespace flamia
