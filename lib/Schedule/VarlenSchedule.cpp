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
// All heads of one (document, tile): they share one cost. The tile is a query
// tile (forward items) or a key tile (key-tile items).
struct TileGroup {
  double cost;
  int32_t doc;
  int32_t tile;
};

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// What both builders share: the parameters and cu_seqlens validated, the
// document layout with the prefix sums of `tileSize`-token tiles (query or
// key tiles) and the item count (tiles x heads) checked against int32.
bool layoutTiles(const int32_t *cuSeqlens, size_t count,
                 const VarlenScheduleParams &params, int32_t tileSize,
                 int32_t headsPerTile, const char *what, DocumentLayout &docs,
                 std::string &error) {
  if (!validateScheduleParams(params, error))
    return false;
  if (Status s = DocumentLayout::fromCuSeqlens(
          cuSeqlens, static_cast<int64_t>(count), std::nullopt, docs,
          tileSize);
      !s) {
    error = s.message;
    return false;
  }
  int64_t numItems = docs.numQueryTiles() * headsPerTile;
  if (numItems > kInt32Max) {
    error = "too many work items (" + std::to_string(numItems) + " = " + what +
            "): at most 2^31 - 1";
    return false;
  }
  return true;
}

// One cost per (document, tile), generated in (document, tile) order, then
// LPT with ties by (document, tile): a total order, hence deterministic. The
// generation order is the DocumentOrder baseline.
template <typename CostFn>
std::vector<TileGroup> orderedGroups(const DocumentLayout &docs,
                                     ScheduleOrder order, CostFn cost) {
  std::vector<TileGroup> groups;
  groups.reserve(static_cast<size_t>(docs.numQueryTiles()));
  for (int d = 0; d < docs.numDocuments(); ++d)
    for (int64_t t = 0; t < docs.queryTilesIn(d); ++t)
      groups.push_back({cost(docs.length(d), t), static_cast<int32_t>(d),
                        static_cast<int32_t>(t)});
  if (order == ScheduleOrder::LongestFirst)
    std::sort(groups.begin(), groups.end(),
              [](const TileGroup &a, const TileGroup &b) {
                if (a.cost != b.cost)
                  return a.cost > b.cost;
                if (a.doc != b.doc)
                  return a.doc < b.doc;
                return a.tile < b.tile;
              });
  return groups;
}

// The items of the ordered groups: one per head of each group, heads
// ascending (query heads, or kv heads for key-tile items; `headItem` fills
// the head fields).
template <typename HeadFn>
void emitItems(const std::vector<TileGroup> &groups, DocumentLayout docs,
               const VarlenScheduleParams &params, int32_t tileSize,
               int32_t headsPerTile, HeadFn headItem, VarlenSchedule &out) {
  out = VarlenSchedule();
  out.params = params;
  size_t numItems = groups.size() * static_cast<size_t>(headsPerTile);
  out.items.reserve(numItems);
  out.costs.reserve(numItems);
  for (const TileGroup &g : groups) {
    // Validated cu_seqlens: the bounds are int32.
    int32_t docStart = static_cast<int32_t>(docs.begin(g.doc)),
            docEnd = static_cast<int32_t>(docs.end(g.doc));
    int32_t tileStart = docStart + g.tile * tileSize;
    VarlenWorkItem item;
    item.q_start = tileStart;
    item.q_rows = std::min(tileSize, docEnd - tileStart);
    item.doc_start = docStart;
    item.doc_end = docEnd;
    item.doc_block_base = docs.scaleBlocksBefore(g.doc);
    item.q_tile_in_doc = g.tile;
    for (int32_t h = 0; h < headsPerTile; ++h) {
      headItem(h, item);
      out.items.push_back(item);
      out.costs.push_back(g.cost);
    }
  }
  out.docs = std::move(docs);
}
} // namespace

bool buildVarlenSchedule(const int32_t *cuSeqlens, size_t count,
                         const VarlenScheduleParams &params,
                         VarlenSchedule &out, std::string &error) {
  DocumentLayout docs;
  if (!layoutTiles(cuSeqlens, count, params, params.blockM, params.numQHeads,
                   "query tiles x heads", docs, error))
    return false;
  CostModel model = params.costModel();
  std::vector<TileGroup> groups =
      orderedGroups(docs, params.order, [&](int64_t length, int64_t t) {
        return model.itemCost(length, t);
      });
  emitItems(groups, std::move(docs), params, params.blockM, params.numQHeads,
            [&](int32_t h, VarlenWorkItem &item) {
              item.q_head = h;
              item.kv_head = params.kvHeadOf(h);
            },
            out);
  return true;
}

bool buildKvTileSchedule(const int32_t *cuSeqlens, size_t count,
                         const VarlenScheduleParams &params,
                         VarlenSchedule &out, std::string &error) {
  DocumentLayout docs;
  if (!layoutTiles(cuSeqlens, count, params, params.blockN, params.numKVHeads,
                   "key tiles x kv heads", docs, error))
    return false;
  const int32_t group = params.queryHeadsPerKVHead();
  std::vector<TileGroup> groups =
      orderedGroups(docs, params.order, [&](int64_t length, int64_t t) {
        return kvTileCost(length, t, params.blockN, kKvTileQueryStep,
                          params.causal, group);
      });
  emitItems(groups, std::move(docs), params, params.blockN, params.numKVHeads,
            [&](int32_t h, VarlenWorkItem &item) {
              item.q_head = h * group;
              item.kv_head = h;
            },
            out);
  return true;
}

} // namespace flamia
