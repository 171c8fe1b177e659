//===- CostModel.h - Cost of one varlen work item ---------------*- C++ -*-===//
//
// The cost of a work item (document, query head, query tile), in units of one
// FP8 block-scaled key tile of BN keys at head dim 128:
//
//   cost = (D / 128) * (item_overhead + sum over visited key tiles of w(tile))
//
// Visited key tiles are document-local, BN keys each, from the document's
// first token: causal items visit them up to the tile holding their last query
// row, non-causal items visit every tile of the document. A key tile is
// classified by the (query, key) pairs of the item it computes; a pair is
// "inside" when the key lies in the query's safe block (the document-local
// block of `safe_block` tokens holding the query) and "outside" otherwise;
// causally masked pairs (key after query) compute nothing and are ignored:
//   - only outside pairs:  w = fp8_tile                (FP8 block-scaled MMA)
//   - only inside pairs:   w = bf16_tile               (bf16 MMA)
//   - both:                w = fp8_tile + bf16_tile    (the kernel runs both
//                                                       MMAs and selects)
// A tile costs the same whether it is full, clipped at the document's end, or
// partly masked (the MMA runs on the whole tile). item_overhead is the fixed
// prologue/epilogue (loading the Q tile, normalizing and storing O and LSE,
// filling and draining the pipeline), in key tiles.
//
// Presets: sm_100a runs the bf16 MMA at half the rate of the FP8 block-scaled
// MMA, so bf16_tile = 2; sm_90a has no block-scaled MMA, the FP8 path applies
// the 32-block scales between wgmma k-steps and runs at about the bf16 rate,
// so bf16_tile = 1. item_overhead = 1 on both: an estimate, to be calibrated
// against measured kernels.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_SCHEDULE_COSTMODEL_H
#define FLAMIA_SCHEDULE_COSTMODEL_H

#include <cstdint>
#include <string>

namespace flamia {

enum class ScheduleTarget { Sm90a, Sm100a };

/// "sm_90a" / "sm_100a".
const char *scheduleTargetName(ScheduleTarget target);
/// Parses "sm_90a" or "sm_100a"; otherwise false with a message listing both.
bool parseScheduleTarget(const std::string &name, ScheduleTarget &out,
                         std::string &error);

struct CostWeights {
  double itemOverhead = 1.0; // c_item: fixed cost per item, in key tiles
  double fp8Tile = 1.0;      // a key tile computed with the FP8 MMA only
  double bf16Tile = 2.0;     // a key tile computed with the bf16 MMA only
  double mixedTile() const { return fp8Tile + bf16Tile; }
};

/// The preset weights of a target (see the file comment).
CostWeights costWeightsForTarget(ScheduleTarget target);

/// How a visited key tile is computed.
enum class KeyTileKind { Fp8, Bf16, Mixed };

/// Visited key tiles of one item, by kind.
struct KeyTileCounts {
  int64_t fp8 = 0;
  int64_t bf16 = 0;
  int64_t mixed = 0;
  int64_t total() const { return fp8 + bf16 + mixed; }
};

/// The cost model of one kernel configuration. Every length and index is
/// document-local; parameters are assumed valid (positive tile sizes, a
/// positive safe block, see VarlenScheduleParams).
struct CostModel {
  int32_t blockM = 128;
  int32_t blockN = 128;
  int32_t safeBlock = 128;
  int32_t headDim = 128;
  bool causal = true;
  CostWeights weights;

  /// D / 128.
  double headDimScale() const { return headDim / 128.0; }
  /// Number of key tiles visited by query tile `qTile` of a document of
  /// `docLength` tokens (qTile < ceil(docLength / blockM)).
  int64_t numVisitedKeyTiles(int64_t docLength, int64_t qTile) const;
  /// Kind of visited key tile `keyTile` of query tile `qTile`.
  KeyTileKind classifyKeyTile(int64_t docLength, int64_t qTile,
                              int64_t keyTile) const;
  /// Visited key tiles by kind. Constant time in the document length: tiles
  /// wholly before (or, non-causal, after) the safe blocks the query tile
  /// touches are counted arithmetically, only the few around them classified.
  KeyTileCounts countKeyTiles(int64_t docLength, int64_t qTile) const;
  /// The item cost (file comment); every head of a (document, tile) costs the
  /// same.
  double itemCost(int64_t docLength, int64_t qTile) const;
};

/// Query tile of the backward dK/dV kernel (flamia_attention_dkdv, sm_90a):
/// one consumer warpgroup's 64 query rows per step of its loop over queries.
/// Not in the manifest (its schedule section has the forward's block_m, which
/// the dQ kernel shares): a constant of the kernel set, like the 32-token
/// scale block.
constexpr int32_t kKvTileQueryStep = 64;

/// The cost of one key-tile item of the dK/dV kernel (document, kv head, key
/// tile `keyTile` of `blockN` keys of a document of `docLength` tokens), in
/// units of one (queryStep-query x blockN-key) tile pair of one query head:
///
///   causal:     G * (query tiles of queryStep rows that intersect
///                    [keyTile * blockN, docLength))
///   non-causal: G * ceil(docLength / queryStep)
///
/// with G = queryHeadsPerKVHead (the item loops over the query heads of its
/// GQA group). Causally, the queries before the key tile's first key see none
/// of its keys, so their tiles are skipped; a query tile that straddles that
/// key is visited whole (the MMA runs on the whole tile). The forward's safe
/// block does not change the count: its cost split (bf16 vs FP8 MMA) is left
/// out until the backward kernels are measured. Every length is
/// document-local; keyTile < ceil(docLength / blockN), blockN and queryStep
/// > 0.
double kvTileCost(int64_t docLength, int64_t keyTile, int32_t blockN,
                  int32_t queryStep, bool causal, int32_t queryHeadsPerKVHead);

} // namespace flamia

#endif // FLAMIA_SCHEDULE_COSTMODEL_H
