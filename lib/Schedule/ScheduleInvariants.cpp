//===- ScheduleInvariants.cpp - Checks every varlen schedule must pass ----===//
#include "flamia/Schedule/ScheduleInvariants.h"

#include "flamia/Schedule/DocumentLayout.h"
#include "flamia/Schedule/VarlenSchedule.h"
#include "flamia/Support/Validation.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace flamia {

namespace {
int64_t ceilDivNonNegative(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::string describe(size_t k, const VarlenWorkItem &it) {
  return "item " + std::to_string(k) + " (q_start " +
         std::to_string(it.q_start) + ", q_rows " + std::to_string(it.q_rows) +
         ", document [" + std::to_string(it.doc_start) + ", " +
         std::to_string(it.doc_end) + "), q_head " + std::to_string(it.q_head) +
         ", tile " + std::to_string(it.q_tile_in_doc) + ")";
}

// The non-empty document [docStart, docEnd) of cu_seqlens, or -1.
int64_t findDocument(const int32_t *cu, size_t count, int32_t docStart,
                     int32_t docEnd) {
  // The last entry <= docStart: skips zero-length documents starting there.
  const int32_t *it = std::upper_bound(cu, cu + count, docStart);
  int64_t d = (it - cu) - 1;
  if (d < 0 || static_cast<size_t>(d) + 1 >= count || cu[d] != docStart ||
      cu[d + 1] != docEnd)
    return -1;
  return d;
}
} // namespace

bool checkScheduleCoverage(const int32_t *cu, size_t count,
                           const VarlenScheduleParams &params,
                           const VarlenWorkItem *items, size_t numItems,
                           std::string &error) {
  if (!validation::validateCuSeqlens(cu, count, -1, error))
    return false;
  if (!validateScheduleParams(params, error))
    return false;
  // Slot of (document, tile, head): (tileBase[d] + t) * Hq + h.
  std::vector<int64_t> tileBase(count, 0);
  for (size_t d = 0; d + 1 < count; ++d)
    tileBase[d + 1] =
        tileBase[d] + ceilDivNonNegative(cu[d + 1] - cu[d], params.blockM);
  int64_t expected = tileBase[count - 1] * params.numQHeads;
  std::vector<bool> seen(static_cast<size_t>(expected), false);
  for (size_t k = 0; k < numItems; ++k) {
    const VarlenWorkItem &it = items[k];
    int64_t d = findDocument(cu, count, it.doc_start, it.doc_end);
    if (d < 0) {
      error =
          describe(k, it) + " does not name a non-empty document of cu_seqlens";
      return false;
    }
    int64_t tiles = tileBase[d + 1] - tileBase[d];
    if (it.q_tile_in_doc < 0 || it.q_tile_in_doc >= tiles) {
      error = describe(k, it) + ": tile out of range, the document has " +
              std::to_string(tiles) + " query tiles";
      return false;
    }
    if (it.q_head < 0 || it.q_head >= params.numQHeads) {
      error = describe(k, it) + ": query head out of range [0, " +
              std::to_string(params.numQHeads) + ")";
      return false;
    }
    int32_t kv = it.q_head / (params.numQHeads / params.numKVHeads);
    if (it.kv_head != kv) {
      error = describe(k, it) + ": kv_head is " + std::to_string(it.kv_head) +
              ", GQA maps query head " + std::to_string(it.q_head) +
              " to kv head " + std::to_string(kv);
      return false;
    }
    size_t slot = static_cast<size_t>(
        (tileBase[d] + it.q_tile_in_doc) * params.numQHeads + it.q_head);
    if (seen[slot]) {
      error = describe(k, it) + " is scheduled twice";
      return false;
    }
    seen[slot] = true;
  }
  if (static_cast<int64_t>(numItems) != expected) {
    error = std::to_string(numItems) + " items, expected " +
            std::to_string(expected) + " (query tiles x query heads)";
    // Name one that is missing.
    for (size_t d = 0; d + 1 < count; ++d)
      for (int64_t t = 0; t < tileBase[d + 1] - tileBase[d]; ++t)
        for (int32_t h = 0; h < params.numQHeads; ++h)
          if (!seen[static_cast<size_t>((tileBase[d] + t) * params.numQHeads +
                                        h)]) {
            error += "; missing document " + std::to_string(d) + " tile " +
                     std::to_string(t) + " head " + std::to_string(h);
            return false;
          }
    return false;
  }
  return true;
}

bool checkScheduleDocumentBounds(const VarlenScheduleParams &params,
                                 const VarlenWorkItem *items, size_t numItems,
                                 std::string &error) {
  const int64_t bm = params.blockM, bn = params.blockN;
  for (size_t k = 0; k < numItems; ++k) {
    const VarlenWorkItem &it = items[k];
    int64_t docStart = it.doc_start, docEnd = it.doc_end;
    if (docStart < 0 || docEnd <= docStart) {
      error = describe(k, it) + ": empty or negative document range";
      return false;
    }
    int64_t rowStart = docStart + it.q_tile_in_doc * bm;
    int64_t rowEnd = std::min(docEnd, rowStart + bm);
    if (it.q_tile_in_doc < 0 || it.q_start != rowStart || rowStart >= docEnd ||
        it.q_start + static_cast<int64_t>(it.q_rows) != rowEnd) {
      error = describe(k, it) + ": rows [" + std::to_string(it.q_start) + ", " +
              std::to_string(static_cast<int64_t>(it.q_start) + it.q_rows) +
              ") are not query tile " + std::to_string(it.q_tile_in_doc) +
              " of its document, clipped at its end";
      return false;
    }
    int64_t keyTiles = varlenItemNumKeyTiles(it, params.blockN, params.causal);
    int64_t needed = params.causal ? rowEnd : docEnd; // one past the last key
    int64_t lastTileStart = docStart + (keyTiles - 1) * bn;
    if (keyTiles < 1 || lastTileStart >= docEnd ||
        docStart + keyTiles * bn < needed) {
      error = describe(k, it) + ": visits " + std::to_string(keyTiles) +
              " key tiles of " + std::to_string(bn) +
              ", which do not cover its keys up to " + std::to_string(needed) +
              " or start a tile outside its document";
      return false;
    }
    int64_t keyEnd = varlenItemKeyEnd(it, params.blockN, params.causal);
    if (keyEnd > docEnd || keyEnd < needed) {
      error = describe(k, it) + ": reads keys up to " + std::to_string(keyEnd) +
              ", beyond its document's end " + std::to_string(docEnd) +
              " or short of " + std::to_string(needed);
      return false;
    }
  }
  return true;
}

bool checkScaleBlockBases(const int32_t *cu, size_t count,
                          const VarlenWorkItem *items, size_t numItems,
                          const int32_t *docBlockBase, std::string &error) {
  if (!validation::validateCuSeqlens(cu, count, -1, error))
    return false;
  std::vector<int64_t> base(count, 0);
  for (size_t d = 0; d + 1 < count; ++d)
    base[d + 1] =
        base[d] + ceilDivNonNegative(cu[d + 1] - cu[d], kVarlenScaleBlock);
  if (docBlockBase) {
    for (size_t d = 0; d < count; ++d) {
      if (docBlockBase[d] != base[d]) {
        error = "doc_block_base[" + std::to_string(d) + "] is " +
                std::to_string(docBlockBase[d]) + ", the quantizer numbers " +
                std::to_string(base[d]) + " blocks before document " +
                std::to_string(d);
        return false;
      }
    }
  }
  for (size_t k = 0; k < numItems; ++k) {
    const VarlenWorkItem &it = items[k];
    int64_t d = findDocument(cu, count, it.doc_start, it.doc_end);
    if (d < 0) {
      error =
          describe(k, it) + " does not name a non-empty document of cu_seqlens";
      return false;
    }
    if (it.doc_block_base != base[d]) {
      error = describe(k, it) + ": doc_block_base is " +
              std::to_string(it.doc_block_base) + ", the quantizer numbers " +
              std::to_string(base[d]) + " blocks before document " +
              std::to_string(d);
      return false;
    }
  }
  return true;
}

namespace {
// Costs [begin, end) do not increase; else names the first item that costs
// more than its predecessor, after `what` ("section 3 is ").
bool checkNonIncreasing(const std::vector<double> &costs, size_t begin,
                        size_t end, const std::string &what,
                        std::string &error) {
  for (size_t k = begin + 1; k < end; ++k) {
    if (costs[k] > costs[k - 1]) {
      char text[96];
      std::snprintf(text, sizeof(text), "%g, more than item %zu (%g)", costs[k],
                    k - 1, costs[k - 1]);
      error = what + "not in LPT order: item " + std::to_string(k) + " costs " +
              text;
      return false;
    }
  }
  return true;
}
} // namespace

bool checkLptOrder(const std::vector<double> &costs, std::string &error) {
  return checkNonIncreasing(costs, 0, costs.size(), "", error);
}

bool checkL2Sections(const VarlenSchedule &s, std::string &error) {
  const std::vector<size_t> &begins = s.sectionBegins;
  const VarlenScheduleParams &p = s.params;
  if (s.costs.size() != s.items.size()) {
    error = std::to_string(s.items.size()) + " items but " +
            std::to_string(s.costs.size()) + " costs";
    return false;
  }
  if (s.items.empty()) {
    if (begins.empty())
      return true;
    error = "sections but no items";
    return false;
  }
  if (begins.empty() || begins[0] != 0) {
    error = "the first section does not start at item 0";
    return false;
  }
  // Section of each (document start, kv head) pair; the bytes of each
  // section and how many pairs it holds.
  std::map<std::pair<int32_t, int32_t>, size_t> sectionOf;
  std::vector<int64_t> bytes(begins.size(), 0), pairs(begins.size(), 0);
  const int64_t perToken = p.bytesPerSectionToken();
  auto sectionEnd = [&](size_t sec) {
    return sec + 1 < begins.size() ? begins[sec + 1] : s.items.size();
  };
  for (size_t sec = 0; sec < begins.size(); ++sec)
    if (sectionEnd(sec) <= begins[sec] || sectionEnd(sec) > s.items.size()) {
      error = "section " + std::to_string(sec) + " is empty or out of range";
      return false;
    }
  // Which section each pair is in first, so that a split pair is named as
  // such rather than as an order violation.
  for (size_t sec = 0; sec < begins.size(); ++sec) {
    for (size_t k = begins[sec]; k < sectionEnd(sec); ++k) {
      const VarlenWorkItem &it = s.items[k];
      auto [slot, fresh] =
          sectionOf.try_emplace({it.doc_start, it.kv_head}, sec);
      if (fresh) {
        bytes[sec] += int64_t{it.doc_end - it.doc_start} * perToken;
        ++pairs[sec];
      } else if (slot->second != sec) {
        error = describe(k, it) + ": its (document, kv head " +
                std::to_string(it.kv_head) + ") is in sections " +
                std::to_string(slot->second) + " and " + std::to_string(sec);
        return false;
      }
    }
  }
  for (size_t sec = 0; sec < begins.size(); ++sec) {
    if (!checkNonIncreasing(s.costs, begins[sec], sectionEnd(sec),
                            "section " + std::to_string(sec) + " is ", error))
      return false;
    if (pairs[sec] > 1 && bytes[sec] > p.l2SectionBytes) {
      error = "section " + std::to_string(sec) + " holds " +
              std::to_string(bytes[sec]) + " bytes in " +
              std::to_string(pairs[sec]) + " pairs, more than the " +
              std::to_string(p.l2SectionBytes) + " allowed";
      return false;
    }
  }
  return true;
}

namespace {
bool checkOrder(const VarlenSchedule &s, std::string &error) {
  switch (s.params.order) {
  case ScheduleOrder::LongestFirst:
    return checkLptOrder(s.costs, error);
  case ScheduleOrder::L2Sections:
    return checkL2Sections(s, error);
  case ScheduleOrder::DocumentOrder:
    return true;
  }
  return true;
}
} // namespace

bool checkVarlenSchedule(const VarlenSchedule &s, std::string &error) {
  const std::vector<int32_t> &cu = s.docs.cuSeqlens();
  if (s.costs.size() != s.items.size()) {
    error = std::to_string(s.items.size()) + " items but " +
            std::to_string(s.costs.size()) + " costs";
    return false;
  }
  return checkScheduleCoverage(cu.data(), cu.size(), s.params, s.items.data(),
                               s.items.size(), error) &&
         checkScheduleDocumentBounds(s.params, s.items.data(), s.items.size(),
                                     error) &&
         checkScaleBlockBases(cu.data(), cu.size(), s.items.data(),
                              s.items.size(), s.docs.scaleBlocksBefore().data(),
                              error) &&
         checkOrder(s, error);
}

bool checkKvTileSchedule(const VarlenSchedule &s, std::string &error) {
  const std::vector<int32_t> &cu = s.docs.cuSeqlens();
  const VarlenScheduleParams &p = s.params;
  if (s.costs.size() != s.items.size()) {
    error = std::to_string(s.items.size()) + " items but " +
            std::to_string(s.costs.size()) + " costs";
    return false;
  }
  if (!validation::validateCuSeqlens(cu.data(), cu.size(), -1, error) ||
      !validateScheduleParams(p, error))
    return false;
  // Slot of (document, key tile, kv head): (tileBase[d] + t) * Hkv + h.
  std::vector<int64_t> tileBase(cu.size(), 0);
  for (size_t d = 0; d + 1 < cu.size(); ++d)
    tileBase[d + 1] =
        tileBase[d] + ceilDivNonNegative(cu[d + 1] - cu[d], p.blockN);
  int64_t expected = tileBase.back() * p.numKVHeads;
  if (static_cast<int64_t>(s.items.size()) != expected) {
    error = std::to_string(s.items.size()) + " key-tile items, expected " +
            std::to_string(expected) + " (key tiles x kv heads)";
    return false;
  }
  std::vector<bool> seen(static_cast<size_t>(expected), false);
  for (size_t k = 0; k < s.items.size(); ++k) {
    const VarlenWorkItem &it = s.items[k];
    int64_t d = findDocument(cu.data(), cu.size(), it.doc_start, it.doc_end);
    if (d < 0) {
      error =
          describe(k, it) + " does not name a non-empty document of cu_seqlens";
      return false;
    }
    int64_t tiles = tileBase[d + 1] - tileBase[d];
    int64_t keyStart = it.doc_start + int64_t{it.q_tile_in_doc} * p.blockN;
    int64_t keyEnd = std::min<int64_t>(it.doc_end, keyStart + p.blockN);
    if (it.q_tile_in_doc < 0 || it.q_tile_in_doc >= tiles ||
        it.q_start != keyStart || it.q_start + int64_t{it.q_rows} != keyEnd) {
      error = describe(k, it) + ": keys [" + std::to_string(it.q_start) + ", " +
              std::to_string(int64_t{it.q_start} + it.q_rows) +
              ") are not key tile " + std::to_string(it.q_tile_in_doc) +
              " of its document (" + std::to_string(tiles) +
              " tiles), clipped at its end";
      return false;
    }
    if (it.kv_head < 0 || it.kv_head >= p.numKVHeads ||
        it.q_head != it.kv_head * p.queryHeadsPerKVHead()) {
      error = describe(k, it) + ": kv_head " + std::to_string(it.kv_head) +
              " not in [0, " + std::to_string(p.numKVHeads) +
              ") or q_head not its group's first query head";
      return false;
    }
    size_t slot = static_cast<size_t>(
        (tileBase[d] + it.q_tile_in_doc) * p.numKVHeads + it.kv_head);
    if (seen[slot]) {
      error = describe(k, it) + " is scheduled twice";
      return false;
    }
    seen[slot] = true;
  }
  return checkScaleBlockBases(cu.data(), cu.size(), s.items.data(),
                              s.items.size(), s.docs.scaleBlocksBefore().data(),
                              error) &&
         checkOrder(s, error);
}

} // namespace flamia
