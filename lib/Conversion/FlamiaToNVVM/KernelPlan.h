//===- KernelPlan.h - Shared memory and parameters of a kernel --*- C++ -*-===//
//
// Decided once per flamia.kernel before its ops are lowered: where each
// shared-memory buffer, pipeline and queue lives in dynamic shared memory,
// which global parameters are read through TMA (and become CUtensorMap
// parameters), and the register budget of each role.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_LIB_CONVERSION_FLAMIATONVVM_KERNELPLAN_H
#define FLAMIA_LIB_CONVERSION_FLAMIATONVVM_KERNELPLAN_H

#include "flamia/Dialect/FlamiaOps.h"
#include "flamia/Support/MLIR.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>

namespace flamia {

/// Attribute holding an op's byte offset in dynamic shared memory.
constexpr const char *kSmemOffsetAttr = "flamia.smem_offset";
/// Attribute (on wg.mma) holding the first warpgroup of its role.
constexpr const char *kRoleFirstAttr = "flamia.role_first";
/// Attribute (on smem.zero_rows) holding the number of threads of its role.
constexpr const char *kRoleThreadsAttr = "flamia.role_threads";
/// Marks the scf.if that holds one role's code after role lowering.
constexpr const char *kRoleRegionAttr = "flamia.role_region";
/// Named barrier of flamia.smem.zero_rows (flamia.turn uses 1..7,
/// flamia.smem.mx_round 8..11, the tensor-memory deallocation 15).
constexpr int64_t kZeroRowsBarrier = 14;
/// Named barriers of flamia.smem.mx_round: this plus the warpgroup's index
/// in the CTA (8..11), one per warpgroup.
constexpr int64_t kMxRoundBarrier = 8;
/// Scratch for cross-warp reductions of flamia.quantize_block.
constexpr int64_t kQuantizeScratchBytes = 256;

/// How a TMA-read parameter is viewed (docs/runtime-abi.md, `tensormap`).
struct TensorMapView {
  int64_t boxRows = 0, boxCols = 0, swizzleBytes = 128;

  /// The view that fills `tile`: boxes of the tile's rows x one swizzle
  /// atom (128 bytes, or the whole row when it is 32 or 64 bytes). Columns
  /// count the tensor map's elements: bytes for packed 4-bit tiles (the
  /// map is u8), the tile's elements otherwise.
  static TensorMapView of(SmemType tile) {
    int64_t bits = tile.getElementType().getIntOrFloatBitWidth();
    int64_t mapBytes = bits < 8 ? 1 : bits / 8;
    int64_t atomBytes = std::min<int64_t>(128, tile.getRowBytes());
    return {tile.getRows(), atomBytes / mapBytes, atomBytes};
  }
};

struct KernelPlan {
  int64_t smemBytes = 0;
  /// Kernel parameter index -> its TMA view (others are plain pointers).
  llvm::DenseMap<unsigned, TensorMapView> tensorMaps;

  /// Mbarrier layout of a pipeline at `base`: full[s] then empty[s].
  static int64_t fullBarrier(int64_t stage) { return 8 * stage; }
  static int64_t emptyBarrier(int64_t stages, int64_t stage) {
    return 8 * (stages + stage);
  }
  /// Queue layout: full[2], empty[2] mbarriers, then 2 int32 slots.
  static int64_t queueFull(int64_t slot) { return 8 * slot; }
  static int64_t queueEmpty(int64_t slot) { return 16 + 8 * slot; }
  static int64_t queueSlot(int64_t slot) { return 32 + 4 * slot; }
  static constexpr int64_t kQueueBytes = 48;

  /// Plans `kernel` and annotates its ops with their offsets. Fails with a
  /// diagnostic if shared memory overflows or a parameter is used both
  /// through TMA and through pointers.
  static FailureOr<KernelPlan> build(KernelOp kernel, int64_t smemLimit);
};

} // namespace flamia

#endif // FLAMIA_LIB_CONVERSION_FLAMIATONVVM_KERNELPLAN_H
