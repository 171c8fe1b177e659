//===- Checks.h - flamia-run's checks against the CPU reference -*- C++ -*-===//
//
// docs/runtime.md, "flamia-run", says what each check compares and why its
// tolerance is what it is.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_TOOLS_FLAMIARUN_CHECKS_H
#define FLAMIA_TOOLS_FLAMIARUN_CHECKS_H

#include "Options.h"
#include "Report.h"
#include "Session.h"

#include "flamia/Runtime/Status.h"

#include <vector>

namespace flamia::run {

/// Tolerances of the reference comparison (docs/runtime.md).
constexpr double kMaxRelL2O = 1e-2;
/// LSE: this plus the row's worst-case fp32 accumulation error of a score.
constexpr double kMaxAbsLse = 1e-3;
/// The GPU must be at least this much closer to the mxfp8 reference than to
/// the float64 reference ...
constexpr double kMaxRatioToQuantizationError = 0.5;
/// ... when the recipe's own error (mxfp8 ref vs float64 ref) is above this
/// (4 x 2^-9: a few bf16 roundings of O).
constexpr double kMinQuantizationErrorForRatio = 4.0 / 512.0;

/// Outputs "written" (no NaN left from the fill), always checked.
void checkOutputsWritten(const std::vector<uint16_t> &o,
                         const std::vector<float> &lse, Report &report);

/// Every workspace buffer bit for bit against the numerics quantizer, by
/// what its manifest entry says it holds ("holds": payload, scales,
/// dequantized copy or scale tiles of q, k or v, per token or per token
/// block); scratch buffers are listed, not checked. Returns an error only
/// for a runtime failure.
runtime::Status checkQuantizedCopies(Session &session,
                                     const RunOptions &options, Report &report);

/// O and LSE against the CPU mxfp8 reference and the float64 reference.
runtime::Status checkReference(Session &session, const RunOptions &options,
                               const std::vector<uint16_t> &o,
                               const std::vector<float> &lse, Report &report);

/// L1 and L2 by perturbation on the GPU, bit for bit. `o`, `lse` are the
/// outputs of the unperturbed batch.
runtime::Status checkLeaks(Session &session, HostBatch &batch,
                           const RunOptions &options,
                           const std::vector<uint16_t> &o,
                           const std::vector<float> &lse, Report &report);

} // namespace flamia::run

#endif // FLAMIA_TOOLS_FLAMIARUN_CHECKS_H
