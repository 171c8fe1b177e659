//===- StructSize.h - The struct_size rule of the C APIs ---------*- C++ -*-===//
//
// Every C API struct starts with `struct_size`; later versions only append
// fields. A caller's struct larger than this library's is accepted when the
// bytes past it are zero (a newer caller's fields this library does not know
// would otherwise be ignored silently). Each library words its own message.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_LIB_CAPI_STRUCTSIZE_H
#define FLAMIA_LIB_CAPI_STRUCTSIZE_H

#include <cstddef>

namespace flamia::capi {

/// Whether bytes [known, size) of the struct at `s` are all zero.
inline bool tailIsZero(const void *s, size_t size, size_t known) {
  const unsigned char *bytes = static_cast<const unsigned char *>(s);
  for (size_t i = known; i < size; ++i)
    if (bytes[i] != 0)
      return false;
  return true;
}

} // namespace flamia::capi

#endif // FLAMIA_LIB_CAPI_STRUCTSIZE_H
