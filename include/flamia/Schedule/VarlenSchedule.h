//===- VarlenSchedule.h - Varlen work items, LPT order ----------*- C++ -*-===//
//
// Builds the work list of a persistent varlen attention kernel: one item per
// (document, query head, query tile), query tiles starting at each document's
// first token and clipped at its last, zero-length documents contributing
// nothing. Items are ordered longest processing time first (LPT) by the cost
// model (CostModel.h), ties broken by (document, query tile, query head)
// ascending. Every head of a (document, tile) costs the same, so the heads of
// one tile are always adjacent, and the query heads that share a KV head
// (GQA) are consecutive: CTAs that run at the same time read the same K/V
// tiles, which then come from L2. (ScheduleOrder::DocumentOrder keeps the
// tokens' order instead, as a baseline to compare with.)
//
// ScheduleOrder::L2Sections cuts the (document, kv head) pairs, longest
// document first, into sections of at most params.l2SectionBytes of the
// pairs' operands (K and V for the forward) and runs the sections one after
// another, each in LPT order (ties by document, tile, head). LPT alone runs
// the same tile index of every pair together, so each pair's K/V is read
// again from DRAM for each of its tiles once the pairs outgrow L2; in a
// section the tiles of a few pairs run together and share it from L2. The
// last section holds the shortest documents, so the tail stays short.
//
// Cost: O(D + G log G + N) for D documents, G (document, tile) pairs and
// N = G * Hq items: prefix sums over cu_seqlens once (DocumentLayout), one
// sort of the G pairs, one pass writing the items. Nothing scans cu_seqlens
// per item or per CTA.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_SCHEDULE_VARLENSCHEDULE_H
#define FLAMIA_SCHEDULE_VARLENSCHEDULE_H

#include "flamia/Schedule/DocumentLayout.h"
#include "flamia/Schedule/ScheduleMetadata.h"
#include "flamia/Schedule/ScheduleParams.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace flamia {

struct VarlenSchedule {
  VarlenScheduleParams params;
  DocumentLayout docs;
  /// Items in execution order: item k is what the k-th fetch of the device
  /// work counter returns.
  std::vector<VarlenWorkItem> items;
  /// costs[k]: the cost of items[k]; non-increasing in the LongestFirst
  /// order.
  std::vector<double> costs;
  /// L2Sections: the index of each section's first item, ascending, the
  /// first 0 (empty for the other orders and for no items). Costs are
  /// non-increasing inside each section.
  std::vector<size_t> sectionBegins;

  double totalWork() const;
  double largestItem() const;
};

/// Validates `params` and `cuSeqlens` and builds the schedule. On bad input
/// returns false with a message naming the problem.
bool buildVarlenSchedule(const int32_t *cuSeqlens, size_t count,
                         const VarlenScheduleParams &params,
                         VarlenSchedule &out, std::string &error);

/// The key-tile items of the backward dK/dV kernel (docs/runtime-abi.md,
/// "kv_items"): one item per (document, kv head, key tile of
/// params.blockN keys), key tiles document-local and clipped at the
/// document's end, zero-length documents contributing nothing. The fields of
/// VarlenWorkItem are read as: q_start = global index of the tile's first
/// key, q_rows = keys in the tile, doc_start/doc_end/doc_block_base as for
/// query items, q_head = the first query head of the GQA group (kv_head *
/// Hq / Hkv), kv_head, q_tile_in_doc = the key tile's index in its document.
/// Ordered LPT by kvTileCost (CostModel.h; query step kKvTileQueryStep),
/// ties by (document, key tile, kv head) ascending; ScheduleOrder::
/// DocumentOrder keeps (document, key tile, kv head). Same validation and
/// messages as buildVarlenSchedule; `out.docs` has the key-tile prefix sums.
bool buildKvTileSchedule(const int32_t *cuSeqlens, size_t count,
                         const VarlenScheduleParams &params,
                         VarlenSchedule &out, std::string &error);

} // namespace flamia

#endif // FLAMIA_SCHEDULE_VARLENSCHEDULE_H
