//===- LeakCheck.h - The L1/L2/L3/Consistency properties, by perturbation -*- C++ -*-===//
//
// docs/design.md section 4, "Properties", checked on the CPU reference by
// perturbing inputs and comparing outputs bit for bit:
//
//   L1 forward causality   for cut points c of each document (block
//                          boundaries and mid-block), perturb Q, K or V at
//                          c+1 with a large outlier, and Q, K, V at every
//                          position > c of the document with fresh random
//                          values: O and LSE at positions <= c must not
//                          change.
//   L2 document isolation  perturb Q, K, V or dO of one document (outliers at
//                          its last token, random values everywhere in it):
//                          O, LSE, dQ, dK, dV of every other document must not
//                          change (the backward uses each run's own O, LSE).
//   L3 strict backward     (optional) with O and LSE treated as inputs of the
//                          backward: perturbing Q, K, V, dO, O or LSE at
//                          positions > c must not change dQ at positions <= c;
//                          perturbing them at positions < c must not change dK,
//                          dV at positions >= c.
//   Consistency            the backward's recomputed scores (for dQ and for
//                          dK/dV) equal the forward's, bit for bit.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_NUMERICS_LEAKCHECK_H
#define FLAMIA_NUMERICS_LEAKCHECK_H

#include "flamia/Numerics/RecipeConfig.h"
#include "flamia/Numerics/Status.h"
#include "flamia/Numerics/SyntheticInputs.h"

#include <cstdint>
#include <string>
#include <vector>

namespace flamia::numerics {

struct LeakCheckOptions {
  bool checkL1 = true;
  bool checkL2 = true;
  bool checkL3 = false;
  bool checkConsistency = true;
  /// Cut points as offsets from each document's first token; those with no
  /// later token in the document are skipped.
  std::vector<int64_t> cutOffsets = {0, 31, 32, 45, 127, 128, 150, 200};
  /// Outliers are this factor times the tensor's largest magnitude.
  float outlierFactor = 1000.0f;
  uint32_t seed = 20250601;
};

struct PropertyResult {
  std::string name; // "L1", "L2", "L3", "Consistency"
  bool checked = false;
  bool pass = true;
  std::string skippedBecause;
  int64_t runs = 0;
  /// One line per comparison: what was perturbed, what was compared (tensor,
  /// positions, number of elements) and the largest absolute difference.
  std::vector<std::string> log;
  /// "O[t=130, h=0, d=3] after perturbing K[t=131] (outlier)".
  std::string firstDifference;

  /// "L1: PASS", "L1: FAIL (first differing output: ...)", "L3: SKIPPED (...)".
  std::string verdict() const;
};

struct LeakCheckReport {
  std::vector<PropertyResult> results;
  bool pass() const;
};

/// Runs the requested checks of `recipe` on `base` (causal attention; L1 and
/// L3 are skipped for non-causal inputs, Consistency for recipe `none`).
Status runLeakCheck(const AttentionTensors &base, const RecipeConfig &recipe,
                    const LeakCheckOptions &options, LeakCheckReport &report);

} // namespace flamia::numerics

#endif // FLAMIA_NUMERICS_LEAKCHECK_H
