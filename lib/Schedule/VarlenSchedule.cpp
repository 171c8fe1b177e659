//===- VarlenSchedule.cpp - Varlen work items, LPT order, L2 sections -----===//
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
// Heads [headBegin, headEnd) of one (document, tile): they share one cost.
// The tile is a query tile (forward items) or a key tile (key-tile items);
// the heads are query heads or kv heads ("head units", one per item).
struct TileGroup {
  double cost;
  int32_t doc;
  int32_t tile;
  int32_t headBegin;
  int32_t headEnd;
};

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// LPT with ties by (document, tile, first head): a total order, hence
// deterministic.
void sortLongestFirst(std::vector<TileGroup>::iterator begin,
                      std::vector<TileGroup>::iterator end) {
  std::sort(begin, end, [](const TileGroup &a, const TileGroup &b) {
    if (a.cost != b.cost)
      return a.cost > b.cost;
    if (a.doc != b.doc)
      return a.doc < b.doc;
    if (a.tile != b.tile)
      return a.tile < b.tile;
    return a.headBegin < b.headBegin;
  });
}

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

// The groups in execution order. LongestFirst and DocumentOrder: one group
// per (document, tile) holding all heads, generated in (document, tile)
// order (the DocumentOrder baseline), then sorted LPT. L2Sections: one group
// per (document, tile, kv head), `unitsPerKvHead` head units each, sorted
// LPT inside each section; `sectionBegins` gets the first item of each.
template <typename CostFn>
std::vector<TileGroup> orderedGroups(const DocumentLayout &docs,
                                     const VarlenScheduleParams &params,
                                     int32_t unitsPerKvHead, CostFn cost,
                                     std::vector<size_t> &sectionBegins) {
  std::vector<TileGroup> groups;
  sectionBegins.clear();
  const int32_t units = unitsPerKvHead * params.numKVHeads;
  if (params.order != ScheduleOrder::L2Sections) {
    groups.reserve(static_cast<size_t>(docs.numQueryTiles()));
    for (int d = 0; d < docs.numDocuments(); ++d)
      for (int64_t t = 0; t < docs.queryTilesIn(d); ++t)
        groups.push_back({cost(docs.length(d), t), static_cast<int32_t>(d),
                          static_cast<int32_t>(t), 0, units});
    if (params.order == ScheduleOrder::LongestFirst)
      sortLongestFirst(groups.begin(), groups.end());
    return groups;
  }

  // Documents longest first (ties by index), then each document's kv heads
  // ascending; a section closes before the pair that would overflow it.
  std::vector<int32_t> byLength;
  for (int d = 0; d < docs.numDocuments(); ++d)
    if (docs.length(d) > 0)
      byLength.push_back(static_cast<int32_t>(d));
  std::stable_sort(byLength.begin(), byLength.end(), [&](int32_t a, int32_t b) {
    return docs.length(a) > docs.length(b);
  });
  groups.reserve(static_cast<size_t>(docs.numQueryTiles()) *
                 static_cast<size_t>(params.numKVHeads));
  const int64_t perToken = params.bytesPerSectionToken();
  size_t sectionStart = 0, items = 0;
  int64_t sectionBytes = 0;
  auto closeSection = [&] {
    if (sectionStart == groups.size())
      return;
    sortLongestFirst(groups.begin() + static_cast<ptrdiff_t>(sectionStart),
                     groups.end());
    sectionBegins.push_back(items);
    for (size_t g = sectionStart; g < groups.size(); ++g)
      items += static_cast<size_t>(groups[g].headEnd - groups[g].headBegin);
    sectionStart = groups.size();
    sectionBytes = 0;
  };
  for (int32_t d : byLength) {
    int64_t pairBytes = docs.length(d) * perToken;
    for (int32_t h = 0; h < params.numKVHeads; ++h) {
      if (sectionBytes > 0 && sectionBytes + pairBytes > params.l2SectionBytes)
        closeSection();
      sectionBytes += pairBytes;
      for (int64_t t = 0; t < docs.queryTilesIn(d); ++t)
        groups.push_back({cost(docs.length(d), t), d, static_cast<int32_t>(t),
                          h * unitsPerKvHead, (h + 1) * unitsPerKvHead});
    }
  }
  closeSection();
  return groups;
}

// The items of the ordered groups: one per head unit of each group, heads
// ascending (query heads, or kv heads for key-tile items; `headItem` fills
// the head fields).
template <typename HeadFn>
void emitItems(const std::vector<TileGroup> &groups, DocumentLayout docs,
               const VarlenScheduleParams &params, int32_t tileSize,
               int32_t headsPerTile, HeadFn headItem,
               std::vector<size_t> sectionBegins, VarlenSchedule &out) {
  out = VarlenSchedule();
  out.params = params;
  size_t numItems = static_cast<size_t>(docs.numQueryTiles()) *
                    static_cast<size_t>(headsPerTile);
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
    for (int32_t h = g.headBegin; h < g.headEnd; ++h) {
      headItem(h, item);
      out.items.push_back(item);
      out.costs.push_back(g.cost);
    }
  }
  out.docs = std::move(docs);
  out.sectionBegins = std::move(sectionBegins);
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
  std::vector<size_t> sections;
  std::vector<TileGroup> groups = orderedGroups(
      docs, params, params.queryHeadsPerKVHead(),
      [&](int64_t length, int64_t t) { return model.itemCost(length, t); },
      sections);
  emitItems(
      groups, std::move(docs), params, params.blockM, params.numQHeads,
      [&](int32_t h, VarlenWorkItem &item) {
        item.q_head = h;
        item.kv_head = params.kvHeadOf(h);
      },
      std::move(sections), out);
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
  std::vector<size_t> sections;
  std::vector<TileGroup> groups = orderedGroups(
      docs, params, /*unitsPerKvHead=*/1,
      [&](int64_t length, int64_t t) {
        return kvTileCost(length, t, params.blockN, kKvTileQueryStep,
                          params.causal, group);
      },
      sections);
  emitItems(
      groups, std::move(docs), params, params.blockN, params.numKVHeads,
      [&](int32_t h, VarlenWorkItem &item) {
        item.q_head = h * group;
        item.kv_head = h;
      },
      std::move(sections), out);
  return true;
}

} // namespace flamia
