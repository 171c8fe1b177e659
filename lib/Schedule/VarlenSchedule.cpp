//===- VarlenSchedule.cpp - Varlen work items, LPT order ------------------===//
#include "flamia/Schedule/VarlenSchedule.h"

#include <algorithm>
#include <limits>

namespace flamia {

double VarlenSchedule::totalWork() const {
  double total = 0;
  for (double c : costs)
    total += c;
  return total;
}

double VarlenSchedule::largestItem() const {
  double largest = 0;
  for (double c : costs)
    largest = std::max(largest, c);
  return largest;
}

namespace {
// All heads of one (document, query tile): they share one cost.
struct TileGroup {
  double cost;
  int32_t doc;
  int32_t tile;
};
} // namespace

bool buildVarlenSchedule(const int32_t *cuSeqlens, size_t count,
                         const VarlenScheduleParams &params,
                         VarlenSchedule &out, std::string &error) {
  if (!validateScheduleParams(params, error))
    return false;
  DocumentLayout docs;
  if (Status s = DocumentLayout::fromCuSeqlens(
          cuSeqlens, static_cast<int64_t>(count), std::nullopt, docs,
          params.blockM);
      !s) {
    error = s.message;
    return false;
  }
  constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
  int64_t numGroups = docs.numQueryTiles();
  int64_t numItems = numGroups * params.numQHeads;
  if (numItems > kInt32Max) {
    error = "too many work items (" + std::to_string(numItems) +
            " = query tiles x heads): at most 2^31 - 1";
    return false;
  }

  // One cost per (document, tile), generated in (document, tile) order.
  CostModel model = params.costModel();
  std::vector<TileGroup> groups;
  groups.reserve(static_cast<size_t>(numGroups));
  for (int d = 0; d < docs.numDocuments(); ++d) {
    int64_t length = docs.length(d);
    for (int64_t t = 0; t < docs.queryTilesIn(d); ++t)
      groups.push_back({model.itemCost(length, t), static_cast<int32_t>(d),
                        static_cast<int32_t>(t)});
  }
  // LPT; ties by (document, tile): a total order, hence deterministic.
  // The groups were generated in document order, the comparison baseline.
  if (params.order == ScheduleOrder::LongestFirst)
    std::sort(groups.begin(), groups.end(),
              [](const TileGroup &a, const TileGroup &b) {
                if (a.cost != b.cost)
                  return a.cost > b.cost;
                if (a.doc != b.doc)
                  return a.doc < b.doc;
                return a.tile < b.tile;
              });

  out = VarlenSchedule();
  out.params = params;
  out.items.reserve(static_cast<size_t>(numItems));
  out.costs.reserve(static_cast<size_t>(numItems));
  for (const TileGroup &g : groups) {
    // Validated cu_seqlens: the bounds are int32.
    int32_t docStart = static_cast<int32_t>(docs.begin(g.doc)),
            docEnd = static_cast<int32_t>(docs.end(g.doc));
    int32_t qStart = docStart + g.tile * params.blockM;
    VarlenWorkItem item;
    item.q_start = qStart;
    item.q_rows = std::min(params.blockM, docEnd - qStart);
    item.doc_start = docStart;
    item.doc_end = docEnd;
    item.doc_block_base = docs.scaleBlocksBefore(g.doc);
    item.q_tile_in_doc = g.tile;
    for (int32_t h = 0; h < params.numQHeads; ++h) {
      item.q_head = h;
      item.kv_head = params.kvHeadOf(h);
      out.items.push_back(item);
      out.costs.push_back(g.cost);
    }
  }
  out.docs = std::move(docs);
  return true;
}

} // namespace flamia
