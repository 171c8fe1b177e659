//===- HostValues.cpp - Values of the graph-level interpreter -------------===//
#include "flamia/Interpreter/HostValues.h"

using namespace mlir;
using namespace flamia;

int64_t HostTensor::getNumElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string HostTensor::describe() const {
  std::string s;
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  switch (element) {
  case HostElement::BF16:
    return s + "bf16";
  case HostElement::F32:
    return s + "f32";
  case HostElement::I32:
    return s + "i32";
  }
  return s + "?";
}

std::optional<HostElement> flamia::getHostElement(Type elementType) {
  if (elementType.isBF16())
    return HostElement::BF16;
  if (elementType.isF32())
    return HostElement::F32;
  if (elementType.isSignlessInteger(32))
    return HostElement::I32;
  return std::nullopt;
}
