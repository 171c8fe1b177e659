//===- TileAttention.h - Pieces shared by the flamia-tile programs -*- C++ -*-===//
//
// flamia-tile writes one program per target (TileAttention.cpp: sm_90a,
// TileAttentionSm100.cpp: sm_100a). Both read the scheduled items the same
// way and run the same persistent work loop in every role.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_LIB_TRANSFORMS_TILEATTENTION_H
#define FLAMIA_LIB_TRANSFORMS_TILEATTENTION_H

#include "flamia/Dialect/FlamiaOps.h"
#include "flamia/Support/MLIR.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace flamia::tile {

/// Small arith helpers on i32 values.
struct I32Builder {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) { return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivSIOp::create(b, loc, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value cdiv(Value x, int64_t d) { return div(add(x, c(d - 1)), c(d)); }
  Value i1(bool v) { return arith::ConstantIntOp::create(b, loc, b.getI1Type(), v); }
};

/// The item fields every role needs, and the derived key-tile bounds.
struct ItemInfo {
  Value qStart, qRows, docStart, docEnd, qHead, kvHead, docBlockBase, qTile;
  Value docLen, numKeyTiles;
};

/// Reads item `index`; causal items visit the key tiles up to their own.
ItemInfo loadItem(I32Builder &ib, Value items, Value index, bool causal,
                  int64_t blockN);

/// True when key tile `kt` lies in the safe block of the item's queries
/// (`safeBlock` a multiple of `tile`; 0: never).
Value isSafeTile(I32Builder &ib, Value kt, const ItemInfo &item,
                 int64_t safeBlock, int64_t tile);

/// True for the key tiles that need masking: past the document end or
/// (causal) the diagonal tile. `keyBase` is kt * blockN.
Value needsMask(I32Builder &ib, Value kt, Value keyBase, const ItemInfo &item,
                bool causal, int64_t blockN);

/// `s` through flamia.frag.mask where `cond` holds (an scf.if), else
/// unchanged; `transposed` for S^T (rows are keys).
Value maskIf(OpBuilder &b, Location loc, Value cond, Value s, Value queryBase,
             Value keyBase, Value limit, bool causal, bool transposed = false);

/// What flamia.softmax.grad reads besides the scores and dP: the [H, T]
/// LSE and D, and where the tile's queries are.
struct SoftmaxGradInputs {
  Value lse, delta, head, docStart, queryBase, queryLimit, numTokens,
      scaleLog2;
};

/// P and dS of the scores `s` (flamia.softmax.grad): where `cond` holds
/// (the tile needs a mask) after flamia.frag.mask with key base `keyBase`,
/// otherwise marked `unmasked` (no test per entry), in the two branches of
/// an scf.if. `cond` must hold for every tile that reaches past the
/// document end or (causal) has a key after a query. `transposed` for S^T.
std::pair<Value, Value> softmaxGradIf(OpBuilder &b, Location loc, Value cond,
                                      Value s, Value dp, Value keyBase,
                                      const SoftmaxGradInputs &in, bool causal,
                                      bool transposed);

/// The i1 `!x` (the "quantized" flag of a tile that is not safe).
Value notOf(OpBuilder &b, Location loc, Value x);

/// The kernel's `tile` attribute: its tile shape and ring depth.
mlir::DictionaryAttr tileAttr(OpBuilder &b, int64_t blockM, int64_t blockN,
                              int64_t stages);

/// The step every consumer program takes on the scores `s` of key tile `kt`
/// (first key `keyBase` = kt * blockN in the document): mask them where the
/// tile needs it (flamia.frag.mask under needsMask), then one online-softmax
/// update from the running max `m` and sum `l`, its p and sums scaled by
/// 2^pScale (P's fixed scale: the caller rounds P with `prescaled`, and
/// flamia.attn.store takes the sum with `sum_prescaled`). Rounding P is the
/// caller's: the targets keep it in different places.
SoftmaxUpdateOp maskedSoftmaxStep(OpBuilder &b, Location loc, Value s, Value kt,
                                  Value keyBase, Value queryBase,
                                  const ItemInfo &item, Value m, Value l,
                                  Value scaleLog2, bool causal, int64_t blockN,
                                  int64_t pScale);

/// The checks of every program: `blockM` x `blockN` tiles (the programs
/// implement 128 x 128) and a safe block of whole key tiles.
LogicalResult checkTileShape(AttentionTileOp at, int64_t blockM, int64_t blockN);

/// That the recipe registry lists kernels for the tile's recipe on `target`
/// at head dim `d` (else an error saying what is missing).
LogicalResult checkKernelsExist(AttentionTileOp at, StringRef target, int64_t d);

/// Releases `stage` of `pipeline` where `cond` holds (an scf.if): a stage
/// freed after its last reader, inside a loop.
void releaseIf(OpBuilder &b, Location loc, Value cond, Value pipeline,
               Value stage);

/// flamia.smem.zero_rows of the rows of `tile`[`stage`] (key rows
/// `keyBase` + r) at or past `docLen`, when the tile reaches past it: those
/// rows hold the next document's values, where P is 0 but 0 x Inf or NaN is
/// not.
void zeroRowsPastEnd(OpBuilder &b, Location loc, Value tile, Value stage,
                     Value keyBase, Value docLen, int64_t blockN);

/// A debug build's S check: writes the raw scores `s` of key tile `kt` to
/// rows [item.qStart + rowBase, ...) of head item.qHead of `scores` when
/// `kt` is 0 (the first key tile of the document, which every query tile
/// visits). Nothing when `scores` is null (the normal build).
void storeDebugScores(OpBuilder &b, Location loc, Value scores, Value kt,
                      Value s, const ItemInfo &item, Value rowBase,
                      Value qHeads);

/// The persistent work loop of one role: takes item indices from `queue`
/// (`side` fetch or receive) until `numItems`, carrying `carried` i32
/// values; `body(builder, iteration, carried, index)` returns their next
/// values.
using ItemBody = function_ref<SmallVector<Value>(OpBuilder &, Value, ValueRange, Value)>;
void workLoop(OpBuilder &b, Location loc, Value queue, Value numItems,
              QueueSide side, ValueRange carried, ItemBody body);

/// A role with an empty body; returns a builder at its end.
OpBuilder createRole(OpBuilder &b, Location loc, StringRef name, int64_t first,
                     int64_t end, int64_t registers, bool singleThread);

/// The query tiles a key-tile item of the dK/dV programs visits, and the
/// numbers that fix them.
struct QueryVisitShape {
  bool causal;
  int64_t queryTile, keyTile, safeBlock;
  /// The query heads per key/value head (0: Hq / Hkv at run time).
  int64_t group;
  Value qHeads, kvHeads; // the runtime head counts (null when static)
};
/// For each query head of the item's GQA group, the query tiles from the
/// key tile's first key (causal) or the document's start to its end:
/// iteration i is head i / perHead, tile first + i % perHead.
struct QueryVisits {
  const QueryVisitShape *shape;
  /// The first visited tile, the tiles per head, the visits in all, and the
  /// document's query tiles (first + perHead: where a head's visits end).
  Value first, perHead, total, end;
  static QueryVisits of(I32Builder &ib, const ItemInfo &item,
                        const QueryVisitShape &shape);
  /// The query tile and query head of iteration 0, and of the iteration
  /// after (qt, head): qt + 1, or `first` of the next head after the
  /// document's last tile. Carried through the loop, they replace `at`'s
  /// division by `perHead`, an integer division in the vector pipes (about
  /// 30 dependent instructions) before each iteration's first MMA can
  /// pick its operands (docs/performance.md, run 60).
  std::pair<Value, Value> start(const ItemInfo &item) const {
    return {first, item.qHead};
  }
  std::pair<Value, Value> next(I32Builder &ib, Value qt, Value head) const;
  /// The query tile (document-local index) and query head of iteration i.
  std::pair<Value, Value> at(I32Builder &ib, const ItemInfo &item,
                             Value i) const;
  /// Whether query tile `qt` and the item's key tile lie in one safe block
  /// (always false without one): a query tile is wholly inside or outside
  /// it, since the safe block is a multiple of both tiles.
  Value isSafe(I32Builder &ib, const ItemInfo &item, Value qt) const;
};

/// The sm_100a program (TileAttentionSm100.cpp).
/// `pInSmem`: P V reads P from shared memory (flamia.smem.store) instead
/// of tensor memory.
LogicalResult tileSm100(KernelOp kernel, AttentionTileOp at, bool pInSmem);

/// That the recipe registry lists backward kernels for `recipe` on
/// `target` at head dim `d` (else an error on `op` saying what is missing).
LogicalResult checkBackwardKernelsExist(Operation *op, RecipeAttr recipe,
                                        StringRef target, int64_t d);

/// The tile shape of a backward program (`wantM` x `wantN`, else an error
/// naming the shape asked for) and a safe block of whole 128-token tiles.
LogicalResult checkBackwardShape(Operation *op, RecipeAttr recipe, int64_t bm,
                                 int64_t bn, int64_t wantM, int64_t wantN);

/// sm_100a's scale-factor tiles: the slot of the 128 rows that start at the
/// document-local 128-token tile `tile` (token blocks doc_block_base + 4
/// tile ...), for head `head` of `heads`: (doc_block_base + 4 tile) * heads
/// + head (flamia.quantize_block writes every slot a tile may start at).
Value scaleTileSlot(I32Builder &ib, const ItemInfo &item, Value tile,
                    Value head, Value heads);
/// The head count of the scale tiles `tiles`: its static H, or `runtime`.
Value scaleTileHeads(I32Builder &ib, Value tiles, Value runtime);
/// The bytes one stage of each shared-memory buffer in `buffers` holds: what
/// the TMA and bulk copies that fill a stage of them bring in, i.e. the count
/// the stage's flamia.pipeline.expect names.
int64_t stageBytes(ArrayRef<Value> buffers);

/// How the sm_90a backward's consumer warpgroups issue their MMAs.
struct BackwardSchedule {
  /// The consumer warpgroups take turns issuing their MMAs.
  bool pingPong = false;
  /// At D = 64, each tile's gradient MMAs and the next tile's score MMAs
  /// issue as one group with one wait (flamia-tile{backward-rotate}).
  bool rotate = false;
};

/// The sm_90a backward programs (TileAttentionBackward.cpp).
LogicalResult tileDqSm90(KernelOp kernel, AttentionDqTileOp at,
                         BackwardSchedule schedule);
LogicalResult tileDkdvSm90(KernelOp kernel, AttentionDkdvTileOp at,
                           BackwardSchedule schedule);

/// The sm_100a backward programs (TileAttentionBackwardSm100.cpp).
LogicalResult tileDqSm100(KernelOp kernel, AttentionDqTileOp at);
LogicalResult tileDkdvSm100(KernelOp kernel, AttentionDkdvTileOp at);

} // namespace flamia::tile

#endif // FLAMIA_LIB_TRANSFORMS_TILEATTENTION_H
