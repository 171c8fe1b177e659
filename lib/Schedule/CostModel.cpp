//===- CostModel.cpp - Cost of one varlen work item -----------------------===//
#include "flamia/Schedule/CostModel.h"

#include <algorithm>

namespace flamia {

const char *scheduleTargetName(ScheduleTarget target) {
  switch (target) {
  case ScheduleTarget::Sm90a:
    return "sm_90a";
  case ScheduleTarget::Sm100a:
    return "sm_100a";
  }
  return "?";
}

bool parseScheduleTarget(const std::string &name, ScheduleTarget &out,
                         std::string &error) {
  if (name == "sm_90a") {
    out = ScheduleTarget::Sm90a;
    return true;
  }
  if (name == "sm_100a") {
    out = ScheduleTarget::Sm100a;
    return true;
  }
  error = "unknown target '" + name + "' (expected sm_90a or sm_100a)";
  return false;
}

CostWeights costWeightsForTarget(ScheduleTarget target) {
  CostWeights w;
  w.itemOverhead = 1.0;
  w.fp8Tile = 1.0;
  w.bf16Tile = target == ScheduleTarget::Sm100a ? 2.0 : 1.0;
  return w;
}

namespace {
// Document-local rows [begin, end) of a query tile.
struct Range {
  int64_t begin, end;
};

Range queryRows(int64_t docLength, int64_t qTile, int64_t blockM) {
  int64_t begin = qTile * blockM;
  return {begin, std::min(docLength, begin + blockM)};
}
} // namespace

int64_t CostModel::numVisitedKeyTiles(int64_t docLength, int64_t qTile) const {
  Range rows = queryRows(docLength, qTile, blockM);
  int64_t keys = causal ? rows.end : docLength;
  return (keys + blockN - 1) / blockN;
}

KeyTileKind CostModel::classifyKeyTile(int64_t docLength, int64_t qTile,
                                       int64_t keyTile) const {
  Range rows = queryRows(docLength, qTile, blockM);
  int64_t k0 = keyTile * blockN, k1 = std::min(docLength, k0 + blockN);
  bool inside = false, outside = false;
  // Walk the safe blocks the query rows touch; within one, every row shares
  // the same safe block [s0, s0 + safeBlock).
  for (int64_t s0 = rows.begin / safeBlock * safeBlock; s0 < rows.end;
       s0 += safeBlock) {
    int64_t lastRow = std::min(rows.end, s0 + safeBlock) - 1;
    int64_t s1 = s0 + safeBlock;
    // Keys of this tile in the rows' safe block; visible (causal) if the
    // first of them is not after the last row.
    int64_t i0 = std::max(k0, s0), i1 = std::min(k1, s1);
    if (i0 < i1 && (!causal || i0 <= lastRow))
      inside = true;
    // Keys before the safe block are in every row's past: always visible.
    if (k0 < s0 && k0 < k1)
      outside = true;
    // Keys after the safe block are after every row: visible only without
    // the causal mask.
    if (k1 > s1 && !causal)
      outside = true;
  }
  if (inside && outside)
    return KeyTileKind::Mixed;
  return inside ? KeyTileKind::Bf16 : KeyTileKind::Fp8;
}

KeyTileCounts CostModel::countKeyTiles(int64_t docLength, int64_t qTile) const {
  Range rows = queryRows(docLength, qTile, blockM);
  int64_t visited = numVisitedKeyTiles(docLength, qTile);
  // The union of the rows' safe blocks, clipped to the document.
  int64_t safeBegin = rows.begin / safeBlock * safeBlock;
  int64_t safeEnd =
      std::min(docLength, ((rows.end - 1) / safeBlock + 1) * safeBlock);
  // Tiles wholly before safeBegin hold keys outside every row's safe block,
  // all in the rows' past: FP8 only.
  int64_t firstMiddle = std::min(visited, safeBegin / blockN);
  // Tiles starting at or after safeEnd (visited only without the causal
  // mask) are also wholly outside: FP8 only.
  int64_t endMiddle = std::min(visited, (safeEnd + blockN - 1) / blockN);
  KeyTileCounts counts;
  counts.fp8 = firstMiddle + (visited - endMiddle);
  for (int64_t k = firstMiddle; k < endMiddle; ++k) {
    switch (classifyKeyTile(docLength, qTile, k)) {
    case KeyTileKind::Fp8:
      ++counts.fp8;
      break;
    case KeyTileKind::Bf16:
      ++counts.bf16;
      break;
    case KeyTileKind::Mixed:
      ++counts.mixed;
      break;
    }
  }
  return counts;
}

double CostModel::itemCost(int64_t docLength, int64_t qTile) const {
  KeyTileCounts c = countKeyTiles(docLength, qTile);
  double tiles = static_cast<double>(c.fp8) * weights.fp8Tile +
                 static_cast<double>(c.bf16) * weights.bf16Tile +
                 static_cast<double>(c.mixed) * weights.mixedTile();
  return headDimScale() * (weights.itemOverhead + tiles);
}

double kvTileCost(int64_t docLength, int64_t keyTile, int32_t blockN,
                  int32_t queryStep, bool causal, int32_t queryHeadsPerKVHead) {
  int64_t queryTiles = (docLength + queryStep - 1) / queryStep;
  // Causal: tiles [floor(first key / queryStep), queryTiles) hold a query at
  // or after the key tile's first key.
  int64_t skipped = causal ? keyTile * blockN / queryStep : 0;
  return static_cast<double>(queryHeadsPerKVHead) *
         static_cast<double>(queryTiles - skipped);
}

} // namespace flamia
