//===- ScheduleBuffers.h - Host contents of the schedule buffers -*- C++
//-*-===//
//
// The schedule-role buffers of docs/runtime-abi.md, computed on the host from
// cu_seqlens (after it has been copied from the device and validated):
//
//   block_info  [NB, 2] int32: global start token and length of every
//               document-local 32-token block, in document order (blocks
//               start at each document's first token; the last one of a
//               document may be shorter; zero-length documents have none)
//   items       [NUM_ITEMS, 8] int32: the VarlenWorkItem array of
//               FlamiaSchedule (include/flamia/Schedule/ScheduleMetadata.h) in
//               execution order (LPT), built with the manifest's block_m,
//               block_n, safe_block, causal flag and cost model
//   kv_items    [NUM_KV_ITEMS, 8] int32: the backward dK/dV kernel's
//               key-tile items (buildKvTileSchedule: document, kv head, key
//               tile of block_n keys), LPT by their own cost; built only
//               when the manifest lists the buffer
//   counter     one int32, zeroed on the stream before every kernel that takes
//               it (not computed here)
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_RUNTIME_SCHEDULEBUFFERS_H
#define FLAMIA_RUNTIME_SCHEDULEBUFFERS_H

#include "flamia/Runtime/Manifest.h"
#include "flamia/Runtime/Status.h"
#include "flamia/Schedule/ScheduleMetadata.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace flamia::runtime {

/// cu_seqlens of `count` entries against `numTokens`: at least 2 entries
/// (NUM_DOCS >= 1), starts at 0, non-decreasing, ends at numTokens.
/// InvalidArgument with the message of flamia::validation::validateCuSeqlens,
/// the rule every tool shares ("cu_seqlens[2] = 7 is less than
/// cu_seqlens[1] = 10 (it must be non-decreasing)").
Status validateCuSeqlens(const int32_t *cuSeqlens, size_t count,
                         int64_t numTokens);

/// NB: sum over documents of ceil(L / 32). cu_seqlens must be valid.
int64_t countScaleBlocks(const int32_t *cuSeqlens, size_t count);

/// block_info for valid cu_seqlens: 2 * NB int32.
std::vector<int32_t> makeBlockInfo(const int32_t *cuSeqlens, size_t count);

struct ScheduleContents {
  int64_t numBlocks = 0;          // NB
  std::vector<int32_t> blockInfo; // [NB, 2]
  bool hasItems = false;          // the manifest has a schedule section
  std::vector<VarlenWorkItem> items;
  std::vector<double> costs; // cost model's cost of each item
  bool hasKvItems = false;   // the manifest lists a kv_items buffer
  std::vector<VarlenWorkItem> kvItems;
  std::vector<double> kvCosts;
};

/// Builds block_info and, when the manifest has a "schedule" section, the
/// work items for Hq/Hkv query/kv heads (head dim and causal flag from the
/// manifest), and the key-tile items when it also lists kv_items (the same
/// parameters and validation). With `checkInvariants`, FlamiaSchedule's
/// independent checks (coverage, document bounds, scale-block bases, LPT
/// order; checkKvTileSchedule for the key-tile items) run on the result; a
/// failure is an Internal error.
///
/// The order of both work lists is the manifest's (schedule.order), or
/// `order` when given. With L2Sections a section holds
/// manifest.schedule.l2SectionBytes of what the kernel reads per (document,
/// kv head): K and V for the forward's items, Q and dO of the kv head's
/// query heads for the key-tile items (sectionBytesPerToken).
Status buildScheduleContents(const Manifest &manifest,
                             const std::vector<int32_t> &cuSeqlens,
                             int32_t numQHeads, int32_t numKVHeads,
                             bool checkInvariants, ScheduleContents &out,
                             std::optional<ScheduleOrder> order = std::nullopt);

/// The bytes one token of one kv head brings into a section: the operand
/// copies the target's kernels read (sm_90a: bf16, 2 bytes per element;
/// sm_100a: E4M3 payloads and their E8M0 scales, 33/32 bytes), of K and V
/// (forward items) or of the group's Q and dO (key-tile items).
int64_t sectionBytesPerToken(const Manifest &manifest, bool keyTileItems,
                             int32_t queryHeadsPerKVHead);

} // namespace flamia::runtime

#endif // FLAMIA_RUNTIME_SCHEDULEBUFFERS_H
