//===- ScheduleInvariants.h - Schedule checks -------------------*- C++ -*-===//
//
// Independent checks of a work list against the cu_seqlens and parameters it
// was built for. Each recomputes what it needs from cu_seqlens (it does not
// trust the builder's DocumentLayout) and returns false with a message that
// names the first offending item. They run in O(N log D) and are cheap enough
// for the runtime to call in debug builds.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_SCHEDULE_SCHEDULEINVARIANTS_H
#define FLAMIA_SCHEDULE_SCHEDULEINVARIANTS_H

#include "flamia/Schedule/ScheduleMetadata.h"
#include "flamia/Schedule/ScheduleParams.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace flamia {

struct VarlenSchedule;

/// Every (non-empty document, query head, query tile) appears exactly once,
/// and nothing else does: each item names a real document (doc_start,
/// doc_end equal cu_seqlens[d], cu_seqlens[d + 1] of a non-empty document d),
/// a query head in [0, Hq), its GQA KV head q_head / (Hq / Hkv), and a tile in
/// [0, ceil(L / block_m)).
bool checkScheduleCoverage(const int32_t *cuSeqlens, size_t count,
                           const VarlenScheduleParams &params,
                           const VarlenWorkItem *items, size_t numItems,
                           std::string &error);

/// No item reads outside its document: its rows are exactly the tile
/// [doc_start + t * block_m, min(doc_end, doc_start + (t + 1) * block_m)),
/// so the last tile stops at doc_end; its key tiles start at doc_start, the
/// last one starts before doc_end, they cover every key the item needs
/// (causal: up to its last row; otherwise the whole document), and the key
/// range it reads ends at or before doc_end.
bool checkScheduleDocumentBounds(const VarlenScheduleParams &params,
                                 const VarlenWorkItem *items, size_t numItems,
                                 std::string &error);

/// Scale-block offsets follow the quantizer's numbering: 32-token blocks
/// start at each document's first token, NB = sum over documents of
/// ceil(L / 32), blocks in document order. Checks each item's doc_block_base
/// and, when `docBlockBase` is not null, the num_docs + 1 entries of the
/// per-document offset array.
bool checkScaleBlockBases(const int32_t *cuSeqlens, size_t count,
                          const VarlenWorkItem *items, size_t numItems,
                          const int32_t *docBlockBase, std::string &error);

/// Costs are non-increasing (LPT order).
bool checkLptOrder(const std::vector<double> &costs, std::string &error);

/// The L2Sections order: sections start at item 0 and are non-empty; costs
/// are non-increasing inside each; every (document, kv head) pair's items
/// lie in one section; a section of more than one pair holds at most
/// params.l2SectionBytes (pair bytes: document length x
/// bytesPerSectionToken()).
bool checkL2Sections(const VarlenSchedule &schedule, std::string &error);

/// All of the above on a built schedule (the LPT check for the LongestFirst
/// order, the section check for L2Sections).
bool checkVarlenSchedule(const VarlenSchedule &schedule, std::string &error);

/// The key-tile items of buildKvTileSchedule against their cu_seqlens:
/// every (non-empty document, kv head, key tile of block_n keys) exactly once
/// and nothing else; each item's keys exactly its tile, clipped at doc_end;
/// q_head the group's first query head (kv_head * Hq / Hkv); the scale-block
/// bases as above; and the order's check (LPT or L2 sections).
bool checkKvTileSchedule(const VarlenSchedule &schedule, std::string &error);

} // namespace flamia

#endif // FLAMIA_SCHEDULE_SCHEDULEINVARIANTS_H
