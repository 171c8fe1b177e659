//===- Checks.h - flamia-run's checks against the CPU reference -*- C++ -*-===//
//
// The tool's side of the checks: downloading buffers and perturbed outputs
// through the Session, turning FlamiaValidation's results
// (include/flamia/Validation, which holds the logic, the tolerances and the
// messages) into report rows, and writing --dump's .npy files.
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
#include "flamia/Validation/Leaks.h"

#include <vector>

namespace flamia::run {

/// Outputs "written" (no NaN left from the fill), always checked.
void checkOutputsWritten(const std::vector<uint16_t> &o,
                         const std::vector<float> &lse, Report &report);

/// Every workspace buffer bit for bit against the numerics quantizer, by
/// what its manifest entry says it holds (validation::device::
/// checkQuantizedCopies). Returns an error only for a runtime failure.
/// `o` (the run's O) is what delta is checked against (--backward).
runtime::Status checkQuantizedCopies(Session &session,
                                     const RunOptions &options,
                                     const std::vector<uint16_t> &o,
                                     Report &report);

/// O and LSE against the CPU mxfp8 reference and the float64 reference
/// (validation::device::checkReference); with --dump, writes the arrays.
runtime::Status checkReference(Session &session, const RunOptions &options,
                               const std::vector<uint16_t> &o,
                               const std::vector<float> &lse, Report &report);

/// L1 and L2 by perturbation on the GPU, bit for bit
/// (validation::device::checkLeaks). `o`, `lse` are the outputs of the
/// unperturbed batch.
runtime::Status checkLeaks(Session &session, HostBatch &batch,
                           const RunOptions &options,
                           const std::vector<uint16_t> &o,
                           const std::vector<float> &lse, Report &report);

/// --backward: "gradients written (no NaN)", always.
void checkGradientsWritten(const validation::device::TrainingOutputs &run,
                           Report &report);

/// --backward --check of a debug build (flamia-compile --debug-scores, the
/// manifest has s_fwd and s_dq): fills both with NaN, runs the training step
/// again and compares the forward's S of the first key tile with the dQ
/// kernel's recomputation bit for bit (validation::device::
/// checkRecomputedScores). Nothing for other manifests.
runtime::Status checkRecomputedScores(Session &session, Report &report);

/// --backward --check: dQ, dK, dV against the CPU reference's backward fed
/// this run's O and LSE (validation::device::checkGradients); with --dump,
/// writes grad_o, dq, dk, dv and the references.
runtime::Status checkGradients(Session &session, const RunOptions &options,
                               const validation::device::TrainingOutputs &run,
                               Report &report);

/// --backward --leakcheck: the L2 checks over every output of the training
/// step, q, k, v and grad_o perturbed (validation::device::
/// checkTrainingLeaks).
runtime::Status checkTrainingLeaks(Session &session, HostBatch &batch,
                                   const RunOptions &options,
                                   const validation::device::TrainingOutputs &run,
                                   Report &report);

/// Runs the training step and downloads every output.
runtime::Status runTraining(Session &session,
                            validation::device::TrainingOutputs &out);

} // namespace flamia::run

#endif // FLAMIA_TOOLS_FLAMIARUN_CHECKS_H
