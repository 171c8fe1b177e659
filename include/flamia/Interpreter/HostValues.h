//===- HostValues.h - Values of the graph-level interpreter -----*- C++ -*-===//
//
// What an SSA value of a graph-level flamia function holds while
// flamia-interp executes it on the CPU:
//
//   HostTensor   a builtin tensor: bf16 and f32 elements as float32 (a bf16
//                tensor holds only bf16 values), i32 elements as int32;
//   HostQTensor  a !flamia.qtensor made by flamia.quantize: the tensor it
//                quantizes and the documents its token blocks follow. The
//                CPU reference quantizes from bf16 sources itself, so the
//                interpreter keeps the source and the layout (the type), not
//                the payload; flamia.dequantize quantizes on demand.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_INTERPRETER_HOSTVALUES_H
#define FLAMIA_INTERPRETER_HOSTVALUES_H

#include "flamia/Dialect/FlamiaTypes.h"
#include "flamia/Support/MLIR.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace flamia {

enum class HostElement { BF16, F32, I32 };

struct HostTensor {
  HostElement element = HostElement::F32;
  SmallVector<int64_t, 4> shape;
  std::vector<float> values; // BF16, F32
  std::vector<int32_t> ints; // I32

  int64_t getNumElements() const;
  bool isFloat() const { return element != HostElement::I32; }
  /// "300x2x64xbf16".
  std::string describe() const;
};

struct HostQTensor {
  QTensorType type;
  /// The tensor flamia.quantize read (bf16 or f32 values).
  std::shared_ptr<const HostTensor> source;
  /// Document starts of the token blocks ([0, T] without cu_seqlens).
  std::vector<int64_t> documentStarts;
  /// The flamia.quantize op, for diagnostics.
  Operation *producer = nullptr;
};

using HostValue = std::variant<std::shared_ptr<const HostTensor>,
                               std::shared_ptr<const HostQTensor>>;

/// The element kind of a builtin tensor type the interpreter can hold.
std::optional<HostElement> getHostElement(Type elementType);

} // namespace flamia

#endif // FLAMIA_INTERPRETER_HOSTVALUES_H
