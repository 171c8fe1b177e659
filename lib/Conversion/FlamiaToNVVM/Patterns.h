//===- Patterns.h - convert-flamia-to-nvvm patterns -------------*- C++ -*-===//
#ifndef FLAMIA_LIB_CONVERSION_FLAMIATONVVM_PATTERNS_H
#define FLAMIA_LIB_CONVERSION_FLAMIATONVVM_PATTERNS_H

#include "TargetInfo.h"

#include "flamia/Dialect/FlamiaAttrs.h"
#include "flamia/Support/MLIR.h"

#include "mlir/Transforms/DialectConversion.h"

namespace flamia {

/// Types of the block level on a target: globals are generic pointers,
/// shared buffers, pipelines and queues shared-memory pointers, fragments
/// and per-row values LLVM structs of the target's register layout. The
/// patterns reach their target's facts through it (getTarget()).
class FlamiaTypeConverter : public TypeConverter {
public:
  FlamiaTypeConverter(MLIRContext *ctx, const TargetInfo &target);
  const TargetInfo &getTarget() const { return target; }

private:
  const TargetInfo &target;
};

/// A pattern of the shared fragment sets (FragmentPatterns.cpp,
/// GradientPatterns.cpp): knows its target and the target's layout.
template <typename OpTy>
struct FragmentPattern : mlir::OpConversionPattern<OpTy> {
  using mlir::OpConversionPattern<OpTy>::OpConversionPattern;
  const TargetInfo &target() const {
    return static_cast<const FlamiaTypeConverter *>(this->getTypeConverter())
        ->getTarget();
  }
  const FragmentLayout &layout() const { return target().getFragmentLayout(); }
};

/// Shared memory, pipelines, the work queue, TMA, item loads, constants.
void populateFlamiaMemoryPatterns(const FlamiaTypeConverter &converter,
                                  RewritePatternSet &patterns);

/// Fragments on any target, over its FragmentLayout: fill, zero, masking,
/// online softmax, P rounding, row scaling, epilogue.
void populateFragmentPatterns(const FlamiaTypeConverter &converter,
                              RewritePatternSet &patterns);

/// wgmma and its waits (sm_90a).
void populateSm90WarpgroupMmaPatterns(const FlamiaTypeConverter &converter,
                                      RewritePatternSet &patterns);

/// Tensor memory and tcgen05: allocation, loads and stores, scale-factor
/// copies, MMAs, commits (sm_100a).
void populateSm100TensorMemoryPatterns(const FlamiaTypeConverter &converter,
                                       RewritePatternSet &patterns);

/// flamia.quantize_block: the fused quantization of one token block.
/// The backward's fragment ops (softmax.grad, frag.block_quantize,
/// grad.store) and row_dot, on any target's fragment layout.
void populateGradientPatterns(const FlamiaTypeConverter &converter,
                              RewritePatternSet &patterns);

void populateQuantizeBlockPatterns(const FlamiaTypeConverter &converter,
                                   RewritePatternSet &patterns);

/// flamia.smem.mx_round: a warpgroup's rows of a shared-memory tile rounded
/// to MXFP8 (per-token scales) in place of the quantizer.
void populateSmemMxRoundPatterns(const FlamiaTypeConverter &converter,
                                 RewritePatternSet &patterns);

} // namespace flamia

#endif // FLAMIA_LIB_CONVERSION_FLAMIATONVVM_PATTERNS_H
