//===- Leaks.h - L1/L2 leak checks by perturbation --------------*- C++ -*-===//
//
// L1 (causality): the outputs of positions <= cut of a document stay bit for
// bit the same when later positions of the document change. L2 (isolation):
// a document's change, fresh values or all NaN, leaves every other
// document's O rows and LSE columns bit-identical. Each perturbed run must
// also change some of the perturbed rows, else the check is vacuous (a
// Fail). The library chooses the documents, cuts and seeds and judges; a
// callback runs the kernels on the perturbed batch. See Check.h for the
// library as a whole.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_VALIDATION_LEAKS_H
#define FLAMIA_VALIDATION_LEAKS_H

#include "flamia/Validation/Check.h"

#include <functional>

namespace flamia::validation::device {

/// Tokens [begin, end) of q, k and v replaced: by fresh N(0, 1) values from
/// `seed` with an outlier at `begin` (numerics::perturbPackedBf16Tokens,
/// flamia/Numerics/SyntheticInputs.h), or, with `allNaN`, every element a quiet
/// NaN (bf16 0x7FC0).
struct Perturbation {
  int64_t begin = 0, end = 0;
  uint64_t seed = 0;
  bool allNaN = false;
};

/// Runs the kernels on the batch with `p` applied and returns O [T, Hq, D]
/// and LSE [Hq, T]; the batch must be as before when it returns (also on an
/// error).
using RunPerturbed = std::function<runtime::Status(
    const Perturbation &p, std::vector<uint16_t> &o, std::vector<float> &lse)>;

/// O rows and LSE columns of tokens outside [begin, end), bit for bit.
struct LeakComparison {
  int64_t compared = 0;      // elements outside [begin, end)
  int64_t differing = 0;     // of those, the ones that changed
  int64_t changedInside = 0; // tokens inside with any changed output
  double maxAbs = 0;         // of the changed outside (NaN: infinity)
  std::string first;         // the first changed outside, "O[t=, h=, d=]" or
                             // "LSE[h=, t=]"; empty if none
};

/// `before` vs `after` (same batch shape; only batch.T, Hq, D are used).
LeakComparison compareOutside(const BatchView &batch,
                              const OutputsView &before,
                              const OutputsView &after, int64_t begin,
                              int64_t end);

/// The documents perturbed: the longest, the first and the last non-empty
/// one, without repeats (empty when there are no tokens).
std::vector<int64_t> leakCheckDocuments(const BatchView &batch);

/// The L1 cuts of a document of `length` tokens: positions c with
/// c + 1 < length among 0, 31, 32, 45, 127, 128, 129, 150, 200, 255, 256,
/// 1000, length / 2, length - 2, ascending and distinct.
std::vector<int64_t> causalityCuts(int64_t length);

/// An L2 row from one perturbed run: Fail if another document's output
/// changed ("N outputs of other documents changed, first X") or nothing
/// inside did ("CAUSE changed nothing (vacuous check)"), else Pass ("other
/// documents bit-identical; N of DOCLENGTH ROWS changed").
void judgeIsolation(Check &check, const LeakComparison &c, int64_t docLength,
                    const std::string &cause, const std::string &rows);

/// All leak checks, appended to `out`: per chosen document "L1 causality,
/// doc D (L=N)" (one row over all its cuts; Skip when the kernels are not
/// causal or the document is shorter than 2 tokens), then "L2 isolation,
/// doc D perturbed" (Skip with a single non-empty document), then "L2
/// isolation, doc D all NaN" (not for the first document, whose NaNs no
/// earlier document's last key tile could load). `base` holds the
/// unperturbed outputs; `seed` the run's input seed. Errors only from `run`.
runtime::Status checkLeaks(const BatchView &batch, bool causal, uint64_t seed,
                           const OutputsView &base, const RunPerturbed &run,
                           std::vector<Check> &out);

// ---- A training step (forward + backward kernels): the L2 checks extended
// to every gradient (GradientLeaks.cpp).

/// Every output of one training-step run: O (bf16 bits [T, Hq, D]), LSE
/// ([Hq, T]) and the gradients as float32 (dq [T, Hq, D], dk, dv [T, Hkv,
/// D]; bf16 gradients widened, which keeps their bits distinct).
struct TrainingOutputs {
  std::vector<uint16_t> o;
  std::vector<float> lse, dq, dk, dv;
};

/// Runs the forward and backward kernels with `p` applied to q, k, v and
/// grad_o (tokens [begin, end) of each) and returns every output; the batch
/// must be as before when it returns.
using RunTrainingPerturbed = std::function<runtime::Status(
    const Perturbation &p, TrainingOutputs &out)>;

/// `before` vs `after` outside tokens [begin, end), bit for bit, over O,
/// LSE, dQ, dK and dV ("dQ[t=, h=, d=]", ... in `first`). changedInside
/// counts the tokens inside with any output (forward or gradient) changed.
LeakComparison compareTrainingOutside(const BatchView &batch,
                                      const TrainingOutputs &before,
                                      const TrainingOutputs &after,
                                      int64_t begin, int64_t end);

/// The L2 checks of a training step, appended to `out`, for the documents of
/// leakCheckDocuments: "L2 isolation with gradients, doc D perturbed" (q, k,
/// v and grad_o of the document fresh; Skip with a single non-empty
/// document) and "L2 isolation with gradients, doc D all NaN" (every q, k,
/// v and grad_o element of the document NaN; not for the first non-empty
/// document): every other document's O, LSE, dQ, dK and dV bit-identical,
/// and something of the document changed (else a vacuous-check Fail).
/// Errors from `run`, or a run that returns arrays of the wrong size.
runtime::Status checkTrainingLeaks(const BatchView &batch, uint64_t seed,
                                   const TrainingOutputs &base,
                                   const RunTrainingPerturbed &run,
                                   std::vector<Check> &out);

// ---- L3, strict backward causality (docs/design.md), of a training step
// (GradientLeaks.cpp).

/// Runs the forward and backward kernels with `p` applied to q, k, v and
/// grad_o; with `baseForwardOutputs` the backward reads the unperturbed
/// run's O and LSE (written over the forward's between the two phases)
/// instead of the perturbed forward's. The batch must be as before when it
/// returns.
using RunStrictPerturbed = std::function<runtime::Status(
    const Perturbation &p, bool baseForwardOutputs, TrainingOutputs &out)>;

/// The L3 checks, appended to `out`, per document of leakCheckDocuments
/// with at least 2 tokens, over the cuts c of causalityCuts:
///   "L3 dQ vs future, doc D (L=N)": q, k, v, grad_o of the tokens after c
///     fresh; dQ of tokens <= c (every head) bit-identical, and some dQ of
///     the perturbed tokens changed (else a vacuous-check Fail);
///   "L3 dK,dV vs past, doc D (L=N)": for c >= 1, the tokens before c fresh
///     and the backward given the unperturbed O and LSE (the backward's
///     inputs are Q, K, V, dO, O, LSE: L3 is a property of it, as the CPU
///     check of flamia-ref leakcheck --l3 has it); dK and dV of tokens >= c
///     bit-identical, and some of the perturbed tokens' changed.
/// One row per document and direction (Skip when the kernels are not
/// causal: L3 is about causal order). Errors from `run`, or a run that
/// returns arrays of the wrong size.
runtime::Status checkStrictCausality(const BatchView &batch, bool causal,
                                     uint64_t seed, const TrainingOutputs &base,
                                     const RunStrictPerturbed &run,
                                     std::vector<Check> &out);

} // namespace flamia::validation::device

#endif // FLAMIA_VALIDATION_LEAKS_H
