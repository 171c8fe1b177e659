//===- ScheduleParams.h - Kernel configuration ------------------*- C++ -*-===//
//
// What the schedule builder needs to know about the attention kernel: heads
// (GQA), head dim, causal flag, tile sizes, the safe block and the cost
// weights. Validated once; everything downstream assumes valid values.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_SCHEDULE_SCHEDULEPARAMS_H
#define FLAMIA_SCHEDULE_SCHEDULEPARAMS_H

#include "flamia/Schedule/CostModel.h"

#include <cstdint>
#include <string>

namespace flamia {

/// The order of the work list.
enum class ScheduleOrder {
  /// Longest processing time first (the kernel's order).
  LongestFirst,
  /// (document, query tile, head) ascending, i.e. as the tokens lie: the
  /// baseline a non-scheduling varlen kernel runs, for comparison only.
  DocumentOrder,
};

struct VarlenScheduleParams {
  int32_t numQHeads = 0;  // Hq
  int32_t numKVHeads = 0; // Hkv; Hq must be a multiple (GQA)
  int32_t headDim = 128;  // 64, 128, 192 or 256
  bool causal = true;
  int32_t blockM = 128;    // query tile rows, a positive multiple of 32
  int32_t blockN = 128;    // key tile columns, a positive multiple of 32
  int32_t safeBlock = 128; // a positive multiple of 32
  CostWeights weights = costWeightsForTarget(ScheduleTarget::Sm100a);
  ScheduleOrder order = ScheduleOrder::LongestFirst;

  /// The query heads that share one KV head: Hq / Hkv.
  int32_t queryHeadsPerKVHead() const { return numQHeads / numKVHeads; }
  /// GQA: query head h reads KV head h / (Hq / Hkv).
  int32_t kvHeadOf(int32_t qHead) const {
    return qHead / queryHeadsPerKVHead();
  }
  /// The cost model of this configuration.
  CostModel costModel() const;
};

/// Checks every field; the message names the field and the bad value.
bool validateScheduleParams(const VarlenScheduleParams &params,
                            std::string &error);

} // namespace flamia

#endif // FLAMIA_SCHEDULE_SCHEDULEPARAMS_H
