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
  /// Longest first inside L2 sections: the (document, kv head) pairs,
  /// longest document first, are cut into consecutive sections whose
  /// operand bytes (VarlenScheduleParams::sectionBytesPerToken) fit
  /// l2SectionBytes; the sections run one after another, each in LPT order.
  /// The CTAs running at one time then read the K/V (or Q/dO) of a few
  /// pairs, which stay in L2, instead of one pair each.
  L2Sections,
};

/// The order a target's kernels are scheduled in unless told otherwise:
/// L2Sections on sm_90a (faster than LongestFirst on the H200's packed
/// workloads, docs/performance.md run 39), LongestFirst on sm_100a (no
/// Blackwell GPU has measured either).
ScheduleOrder defaultScheduleOrder(ScheduleTarget target);

/// "lpt", "document", "l2-sections".
const char *scheduleOrderName(ScheduleOrder order);
/// The inverse of scheduleOrderName; on an unknown name returns false with a
/// message listing the names.
bool parseScheduleOrder(const std::string &name, ScheduleOrder &order,
                        std::string &error);
/// parseScheduleOrder for the orders a kernel set runs in (manifests, the
/// pass option, runtime overrides): lpt or l2-sections, not the document
/// baseline. The message is "unknown order 'NAME' (expected lpt or
/// l2-sections)".
bool parseKernelScheduleOrder(const std::string &name, ScheduleOrder &order,
                              std::string &error);

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
  /// L2Sections: the most operand bytes one section holds (a single pair
  /// larger than this is a section of its own), and the bytes one token of
  /// one kv head contributes. The defaults are the sm_90a forward's: 16 MiB
  /// of the H200's 50 MiB L2, so that the sections running at one time
  /// (a section's tail overlaps the next one's head) and the streamed Q and
  /// O fit (8 and 16 MiB measured the same, 4 and 32 MiB 1-2% slower on
  /// fixed2k: run 39), and the bf16 K and V copies it reads, 2 x 2 bytes x
  /// head dim.
  int64_t l2SectionBytes = int64_t{16} << 20;
  int64_t sectionBytesPerToken = 0; // 0: 4 x headDim

  /// The query heads that share one KV head: Hq / Hkv.
  int32_t queryHeadsPerKVHead() const { return numQHeads / numKVHeads; }
  /// GQA: query head h reads KV head h / (Hq / Hkv).
  int32_t kvHeadOf(int32_t qHead) const {
    return qHead / queryHeadsPerKVHead();
  }
  /// sectionBytesPerToken, or its default 4 x headDim when it is 0.
  int64_t bytesPerSectionToken() const {
    return sectionBytesPerToken > 0 ? sectionBytesPerToken
                                    : int64_t{4} * headDim;
  }
  /// The cost model of this configuration.
  CostModel costModel() const;
};

/// Checks every field; the message names the field and the bad value.
bool validateScheduleParams(const VarlenScheduleParams &params,
                            std::string &error);

} // namespace flamia

#endif // FLAMIA_SCHEDULE_SCHEDULEPARAMS_H
