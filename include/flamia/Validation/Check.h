//===- Check.h - Device-result validation: results and inputs --*- C++ -*-===//
//
// FlamiaValidation (lib/Validation) judges what the kernels of an artifact
// directory computed on a device against the CPU numerics: the quantized
// workspace copies bit for bit (QuantizedCopies.h), O and LSE against the
// CPU mxfp8 and float64 references (Reference.h), and the L1/L2 leak checks
// by perturbation (Leaks.h). flamia-run, the unit tests and the Python
// package call it; docs/runtime.md, "flamia-run", says what each check
// compares and why its tolerance is what it is.
//
// The split: flamia::validation (include/flamia/Support/Validation.h) checks
// what a user *gives* a tool (sizes, cu_seqlens, the softmax scale);
// flamia::validation::device, here, checks what a device *returned*. This
// library takes host arrays (the batch, the downloaded buffers and outputs)
// and the manifest and returns typed results: one Check per row of
// flamia-run's table, with its verdict, numbers and message. It never touches
// a device, prints, or writes files: where a check needs the device again
// (a workspace buffer, a perturbed run) it asks a callback the caller
// supplies.
//
// Plain C++17: no LLVM/MLIR, no CUDA (it also builds with
// -DFLAMIA_ENABLE_COMPILER=OFF -DFLAMIA_ENABLE_RUNTIME=OFF).
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_VALIDATION_CHECK_H
#define FLAMIA_VALIDATION_CHECK_H

#include "flamia/Schedule/DocumentLayout.h"
#include "flamia/Numerics/RecipeConfig.h"
#include "flamia/Runtime/Manifest.h"
#include "flamia/Runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace flamia::validation::device {

/// Pass and Fail judge; Info reports a number; Skip says why a check could
/// not run. Only Fail counts as a failure.
enum class Verdict { Pass, Fail, Info, Skip };

/// "PASS", "FAIL", "info", "skip" (flamia-run's table).
const char *verdictName(Verdict verdict);

/// One result: a row of flamia-run's table.
struct Check {
  std::string name;       // what was checked, e.g. "q_tb (E4M3 payload)"
  int64_t compared = 0;   // elements (or bytes) compared; 0: none
  double maxAbsDiff = 0.0;
  Verdict verdict = Verdict::Info;
  std::string detail;     // the numbers behind the verdict, the first miss
};

/// The number of Fail checks.
int countFailures(const std::vector<Check> &checks);

/// A packed batch on the host, as views (the caller owns the memory):
/// cu_seqlens with numDocs + 1 entries, and bf16 bit patterns
/// q [T, Hq, D], k and v [T, Hkv, D]; for a training step also grad_o
/// [T, Hq, D] (null otherwise).
struct BatchView {
  const int32_t *cu = nullptr;
  int64_t numDocs = 0;
  int64_t T = 0, Hq = 0, Hkv = 0, D = 0;
  const uint16_t *q = nullptr, *k = nullptr, *v = nullptr;
  const uint16_t *gradO = nullptr;

  int64_t docLength(int64_t d) const { return cu[d + 1] - cu[d]; }
};

/// O (bf16 bits, [T, Hq, D]) and LSE (float32, [Hq, T]) of one run.
struct OutputsView {
  const uint16_t *o = nullptr;
  const float *lse = nullptr;
};

/// The CPU reference's recipe for this manifest: its kind's preset (strict or not)
/// with the manifest's safe block and, with a schedule, its block_n as the
/// key tile. An invalid-argument error names why there is none (another
/// recipe kind); the checks turn that into a Skip row.
runtime::Status referenceRecipe(const runtime::Manifest &manifest,
                                numerics::RecipeConfig &recipe);

/// The batch's documents (an invalid-argument error for a bad cu_seqlens).
runtime::Status documentsOf(const BatchView &batch,
                            DocumentLayout &docs);

/// "outputs written (no NaN)": O and LSE hold no NaN (they were filled with
/// NaN before the run, so a NaN is an unwritten element or a NaN computed).
Check checkOutputsWritten(const uint16_t *o, size_t oElements,
                          const float *lse, size_t lseElements);

} // namespace flamia::validation::device

#endif // FLAMIA_VALIDATION_CHECK_H
