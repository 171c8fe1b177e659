//===- TargetInfo.h - What the lowering knows about a chip ------*- C++ -*-===//
//
// Every fact of a target that convert-flamia-to-nvvm depends on, in one
// object: the PTX feature set, the shared-memory limit, how fragments sit in
// the warpgroup's registers, and the tensor-memory ordering rules. Patterns
// ask the TargetInfo of their type converter instead of comparing chips, so
// that adding a target means adding one TargetInfo (and its MMA and
// tensor-memory patterns), not finding every `if (sm100)`.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_LIB_CONVERSION_FLAMIATONVVM_TARGETINFO_H
#define FLAMIA_LIB_CONVERSION_FLAMIATONVVM_TARGETINFO_H

#include "FragmentLayout.h"

#include "flamia/Dialect/FlamiaAttrs.h"
#include "flamia/Support/MLIR.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"

namespace flamia {

class TargetInfo {
public:
  /// The TargetInfo of `chip` (static storage: one per chip).
  static const TargetInfo &get(Chip chip);

  Chip getChip() const { return chip; }
  /// The chip's name as in `#flamia.target` and in error messages.
  llvm::StringRef getName() const { return name; }
  /// The PTX ISA the kernels need (the nvvm.target feature string).
  llvm::StringRef getPtxFeatures() const { return ptxFeatures; }
  /// The opt-in maximum of dynamic shared memory per block, in bytes.
  int64_t getSmemLimitBytes() const { return smemLimitBytes; }
  /// Where the elements of a !flamia.frag and a !flamia.rows live.
  const FragmentLayout &getFragmentLayout() const { return layout; }
  /// Whether tensor-memory work (tcgen05) around an mbarrier hand-off needs
  /// tcgen05.fence::{before,after}_thread_sync to be ordered by it.
  bool fencesTensorMemoryAtBarriers() const { return tensorMemory; }
  /// Whether P can be rounded to E4M3 codes packed four per register (the
  /// A operand layout the chip's MMA reads them in).
  bool packsE4M3Fragments() const { return tensorMemory; }
  /// Whether each role reads the shared-memory base itself
  /// (readSmemBasePerRole in FlamiaToNVVM.cpp). sm_100a's four-warpgroup
  /// backward kernels need it to keep ptxas from spilling the base across
  /// setmaxnreg; sm_90a's kernels, validated on the H200 as they are, do
  /// not, and keep their PTX.
  bool readsSmemBasePerRole() const { return tensorMemory; }
  /// Whether the chip has tensor memory and tcgen05 (flamia.tmem.*,
  /// flamia.umma*); else its MMAs are wgmma (flamia.wg.mma, wg.wait).
  bool hasTensorMemory() const { return tensorMemory; }
  /// An error on `op` when it is an op of the other target's MMA family
  /// (tensor memory on a chip without it, wgmma on one with tcgen05):
  /// without it the conversion would only say "failed to legalize".
  LogicalResult checkLowers(Operation *op) const;

private:
  TargetInfo(Chip chip, llvm::StringRef name, llvm::StringRef ptxFeatures,
             int64_t smemLimitBytes, const FragmentLayout &layout,
             bool tensorMemory)
      : chip(chip), name(name), ptxFeatures(ptxFeatures),
        smemLimitBytes(smemLimitBytes), layout(layout),
        tensorMemory(tensorMemory) {}

  Chip chip;
  llvm::StringRef name;
  llvm::StringRef ptxFeatures;
  int64_t smemLimitBytes;
  const FragmentLayout &layout;
  bool tensorMemory;
};

} // namespace flamia

#endif // FLAMIA_LIB_CONVERSION_FLAMIATONVVM_TARGETINFO_H
