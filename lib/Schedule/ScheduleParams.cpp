//===- ScheduleParams.cpp - Kernel configuration a varlen schedule is for -===//
#include "flamia/Schedule/ScheduleParams.h"

#include "flamia/Schedule/DocumentLayout.h"

#include <cmath>
#include <cstdio>

namespace flamia {

CostModel VarlenScheduleParams::costModel() const {
  CostModel model;
  model.blockM = blockM;
  model.blockN = blockN;
  model.safeBlock = safeBlock;
  model.headDim = headDim;
  model.causal = causal;
  model.weights = weights;
  return model;
}

ScheduleOrder defaultScheduleOrder(ScheduleTarget target) {
  return target == ScheduleTarget::Sm90a ? ScheduleOrder::L2Sections
                                         : ScheduleOrder::LongestFirst;
}

const char *scheduleOrderName(ScheduleOrder order) {
  switch (order) {
  case ScheduleOrder::LongestFirst:
    return "lpt";
  case ScheduleOrder::DocumentOrder:
    return "document";
  case ScheduleOrder::L2Sections:
    return "l2-sections";
  }
  return "?";
}

bool parseScheduleOrder(const std::string &name, ScheduleOrder &order,
                        std::string &error) {
  for (ScheduleOrder o :
       {ScheduleOrder::LongestFirst, ScheduleOrder::DocumentOrder,
        ScheduleOrder::L2Sections})
    if (name == scheduleOrderName(o)) {
      order = o;
      return true;
    }
  error = "unknown schedule order '" + name +
          "' (expected lpt, document or l2-sections)";
  return false;
}

bool parseKernelScheduleOrder(const std::string &name, ScheduleOrder &order,
                              std::string &error) {
  ScheduleOrder parsed;
  if (!parseScheduleOrder(name, parsed, error) ||
      parsed == ScheduleOrder::DocumentOrder) {
    error = "unknown order '" + name + "' (expected lpt or l2-sections)";
    return false;
  }
  order = parsed;
  return true;
}

namespace {
bool checkMultipleOf32(const char *name, int32_t value, std::string &error) {
  if (value > 0 && value % kVarlenScaleBlock == 0)
    return true;
  error = std::string(name) + " must be a positive multiple of 32, got " +
          std::to_string(value);
  return false;
}

bool checkWeight(const char *name, double value, bool allowZero,
                 std::string &error) {
  if (std::isfinite(value) && (value > 0 || (allowZero && value == 0)))
    return true;
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  error = std::string("cost weight ") + name + " must be " +
          (allowZero ? "finite and >= 0" : "finite and > 0") + ", got " + text;
  return false;
}
} // namespace

bool validateScheduleParams(const VarlenScheduleParams &p, std::string &error) {
  if (p.numQHeads <= 0) {
    error = "number of query heads must be positive, got " +
            std::to_string(p.numQHeads);
    return false;
  }
  if (p.numKVHeads <= 0) {
    error = "number of kv heads must be positive, got " +
            std::to_string(p.numKVHeads);
    return false;
  }
  if (p.numQHeads % p.numKVHeads != 0) {
    error = "query heads (" + std::to_string(p.numQHeads) +
            ") must be a multiple of kv heads (" +
            std::to_string(p.numKVHeads) + ")";
    return false;
  }
  if (p.headDim != 64 && p.headDim != 128 && p.headDim != 192 &&
      p.headDim != 256) {
    error = "head dim must be 64, 128, 192 or 256, got " +
            std::to_string(p.headDim);
    return false;
  }
  if (p.l2SectionBytes <= 0 || p.sectionBytesPerToken < 0) {
    error = "L2 section bytes must be positive and bytes per token "
            "non-negative, got " +
            std::to_string(p.l2SectionBytes) + " and " +
            std::to_string(p.sectionBytesPerToken);
    return false;
  }
  return checkMultipleOf32("query tile size (block_m)", p.blockM, error) &&
         checkMultipleOf32("key tile size (block_n)", p.blockN, error) &&
         checkMultipleOf32("safe block", p.safeBlock, error) &&
         checkWeight("item_overhead", p.weights.itemOverhead, true, error) &&
         checkWeight("fp8_tile", p.weights.fp8Tile, false, error) &&
         checkWeight("bf16_tile", p.weights.bf16Tile, false, error);
}

} // namespace flamia
