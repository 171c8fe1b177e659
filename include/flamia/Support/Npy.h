//===- Npy.h - Reading and writing NumPy .npy files -------------*- C++ -*-===//
//
// Plain C++ (no LLVM): used by flamia-ref on the CPU and flamia-run on the GPU
// machine. Supports format version 1.0/2.0/3.0 files holding one C-ordered,
// little-endian array of a fixed-size numeric dtype.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_SUPPORT_NPY_H
#define FLAMIA_SUPPORT_NPY_H

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace flamia {

/// The element types FLAMIA's tools exchange through .npy files.
enum class NpyDType { Float32, Float64, Int32, Int64, UInt8, UInt16 };

/// The NumPy descr string ("<f4", "|u1", ...) of a dtype.
const char *npyDescr(NpyDType dtype);
/// Bytes per element.
size_t npyElementSize(NpyDType dtype);
/// A human-readable name ("float32", ...), for error messages.
const char *npyDTypeName(NpyDType dtype);

/// One array: dtype, shape and the raw little-endian bytes in C order.
struct NpyArray {
  NpyDType dtype = NpyDType::Float32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  int64_t numElements() const;
  template <typename T> const T *data() const {
    return reinterpret_cast<const T *>(bytes.data());
  }
  template <typename T> T *data() { return reinterpret_cast<T *>(bytes.data()); }
  /// "[4096, 2, 128]".
  std::string shapeString() const;
};

/// Reads `path`. On failure returns false and sets `error` to a message that
/// names the file and the problem (missing file, bad magic, unsupported dtype,
/// Fortran order, truncated data, ...).
bool readNpy(const std::string &path, NpyArray &out, std::string &error);
/// The same from an open stream positioned at the magic; `name` prefixes
/// the messages. The claimed size is checked against what a seekable stream
/// holds before anything is allocated.
bool readNpy(std::istream &in, const std::string &name, NpyArray &out,
             std::string &error);

/// Writes `array` to `path` (format version 1.0). On failure returns false
/// and sets `error`.
bool writeNpy(const std::string &path, const NpyArray &array,
              std::string &error);

/// Convenience constructor: an array of `dtype` and `shape`, zero-filled.
NpyArray makeNpyArray(NpyDType dtype, std::vector<int64_t> shape);

} // namespace flamia

#endif // FLAMIA_SUPPORT_NPY_H
