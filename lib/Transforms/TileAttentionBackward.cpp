//===- TileAttentionBackward.cpp - flamia-tile, the backward on sm_90a ----===//
//
// The two backward programs of sm_90a (docs/lowering.md, "The backward"):
//
//   dQ (flamia.attention_dq_tile, the forward's query-tile items):
//     producer (warpgroup 0, one thread): K and V of each key tile (and
//       K's token-block copy when S reads K per token: `k_tb`), and Q and
//       dO of the item's query tile in the form the key tile needs
//       (quantized or, in the safe block, bf16; at D = 128 one form at a
//       time, reloaded where it switches, so that the key ring has two
//       stages);
//     consumers (warpgroups 1-2, 64 query rows each), per key tile:
//       S = Q K^T, dP = dO V^T, mask, P = exp2(S log2(e) - LSE),
//       dS = P (dP - D) quantized in 32-key blocks, dQ += dS K;
//     then dQ * softmax_scale is written.
//   dK/dV (flamia.attention_dkdv_tile, key-tile items):
//     producer: K and V of the item's key tile, then Q, Q's token-block
//       copy and dO of each 64-query tile of each query head of the group
//       (and dO's token-block copy when dP reads dO per token: `grad_o_tb`);
//     consumers (warpgroups 1-2, 64 key rows each), per query tile:
//       S^T = K Q^T, dP^T = V dO^T, mask, P^T, dS^T = P^T (dP^T - D)
//       quantized in 32-query blocks, dV += P^T dO (P with the fixed scale
//       2^8), dK += dS^T Q_tb; then dK * softmax_scale and dV / 2^8.
//
// No atomics and no dQ accumulation buffer: each gradient row is owned by
// one item, so every sum has a fixed order (deterministic, bit for bit
// across runs), at the price of computing S and dP twice (seven GEMMs
// instead of five).
//
//===----------------------------------------------------------------------===//
#include "TileAttention.h"

#include "flamia/Numerics/RecipeRegistry.h"
#include "flamia/Transforms/RecipeLayouts.h"

#include "mlir/IR/Builders.h"

#include <cmath>

using namespace mlir;
using namespace flamia;
using namespace flamia::tile;

namespace {

/// The register split of both programs: the single-thread producer needs
/// few (24, the least setmaxnreg allows); the consumers hold two 64 x D
/// f32 accumulators (dK, dV) or three 64 x 128 tiles (S, dP, dQ) next to
/// the per-query LSE and D. 24 x 128 + 240 x 256 = 64512 of the 65536.
constexpr int64_t kProducerRegisters = 24;
constexpr int64_t kConsumerRegisters = 240;

/// The kernel's queue (built by flamia-varlen-schedule) and its bounds.
std::pair<Value, Value> queueOperands(KernelOp kernel) {
  auto queueCreate = *kernel.getBody().front().getOps<QueueCreateOp>().begin();
  return {queueCreate.getCounter(), queueCreate.getNumItems()};
}

void clearBody(KernelOp kernel) {
  Block &body = kernel.getBody().front();
  while (!body.empty())
    body.back().erase();
}

/// Loads `quantized` or, when `isSafe`, `safe` (if the recipe has a safe
/// block) into `dest`[`stage`] at (`row`, `col`).
void loadEither(OpBuilder &b, Location loc, Value isSafe, Value safe,
                Value quantized, Value row, Value col, Value dest, Value stage,
                Value pipeline) {
  if (!safe) {
    TmaLoadOp::create(b, loc, quantized, row, col, dest, stage, pipeline);
    return;
  }
  auto ifOp = scf::IfOp::create(b, loc, isSafe, /*withElse=*/true);
  OpBuilder tb = ifOp.getThenBodyBuilder();
  TmaLoadOp::create(tb, loc, safe, row, col, dest, stage, pipeline);
  OpBuilder eb = ifOp.getElseBodyBuilder();
  TmaLoadOp::create(eb, loc, quantized, row, col, dest, stage, pipeline);
}

/// `safeTile ? safe : quantized` as a tile value (both shared-memory tiles).
Value pick(OpBuilder &b, Location loc, Value isSafe, Value safe,
           Value quantized) {
  if (!safe)
    return quantized;
  return arith::SelectOp::create(b, loc, isSafe, safe, quantized);
}

/// Ping-pong (FlashAttention-3's warpgroup scheduling, docs/lowering.md
/// section 7): each consumer warpgroup takes the turn, issues a pair of
/// MMAs asynchronously, gives the turn and only then waits for them. So the
/// tensor cores run one warpgroup's MMAs while the other computes the
/// softmax gradient and quantizes; both warpgroups take the same number of
/// turns (they visit the same tiles). Off: each issues when it is ready.
struct Turns {
  bool on;
  /// Before the work loop: warpgroup 0 has the first turn.
  void start(OpBuilder &b, Location loc, Value wg) const {
    if (!on)
      return;
    I32Builder ib{b, loc};
    auto ifOp =
        scf::IfOp::create(b, loc, ib.cmp(arith::CmpIPredicate::eq, wg, ib.c(1)),
                          /*withElseRegion=*/false);
    OpBuilder tb = ifOp.getThenBodyBuilder();
    TurnOp::create(tb, loc, TurnAction::give, 2);
  }
  void take(OpBuilder &b, Location loc) const {
    if (on)
      TurnOp::create(b, loc, TurnAction::take, 2);
  }
  void give(OpBuilder &b, Location loc) const {
    if (on)
      TurnOp::create(b, loc, TurnAction::give, 2);
  }
};

/// An asynchronous flamia.wg.mma: its result is for flamia.wg.wait only.
Value asyncMma(OpBuilder &b, Location loc, Type type, Value a, Value aStage,
               Value bTile, Value bStage, Value acc, bool bTransposed) {
  return WarpgroupMmaOp::create(b, loc, type, a, aStage, bTile, bStage, acc,
                                bTransposed, /*async=*/true)
      .getResult();
}

/// Issues a group of asynchronous MMAs (`issue` returns them, in order) in
/// one turn, then waits for all of them and returns them complete.
SmallVector<Value> mmaGroup(OpBuilder &b, Location loc, const Turns &turns,
                            function_ref<SmallVector<Value>()> issue) {
  turns.take(b, loc);
  SmallVector<Value> pending = issue();
  turns.give(b, loc);
  return WarpgroupWaitOp::create(b, loc, pending, 0).getResults();
}

} // namespace

namespace flamia::tile {

LogicalResult checkBackwardKernelsExist(Operation *op, RecipeAttr recipe,
                                        StringRef target, int64_t d) {
  namespace num = ::flamia::numerics;
  FailureOr<const num::RecipeKind *> kind = getRecipeKind(op, recipe);
  if (failed(kind))
    return failure();
  if (num::Status s = num::checkBackwardKernels(**kind, recipe.getStrict(),
                                                target.str(), d);
      !s)
    return op->emitOpError() << "flamia-tile: " << s.message;
  return success();
}

LogicalResult checkBackwardShape(Operation *op, RecipeAttr recipe, int64_t bm,
                                 int64_t bn, int64_t wantM, int64_t wantN) {
  if (bm != wantM || bn != wantN)
    return op->emitOpError() << "flamia-tile: " << wantM << " x " << wantN
                             << " tiles only, got " << bm << " x " << bn;
  int64_t safeBlock = recipe.getSafeBlock();
  if (safeBlock % 128 != 0)
    return op->emitOpError()
           << "flamia-tile: safe_block = " << safeBlock
           << " does not cover whole 128-token tiles; tiles that mix the safe "
              "and quantized paths are not implemented (use a multiple of 128)";
  return success();
}

/// The dQ program (sm_90a).
LogicalResult tileDqSm90(KernelOp kernel, AttentionDqTileOp at, bool pingPong) {
  MLIRContext *ctx = kernel.getContext();
  Location loc = at.getLoc();
  const int64_t bm = 128, bn = 128;
  if (failed(checkBackwardShape(at, at.getRecipe(), at.getBlockM(),
                                at.getBlockN(), bm, bn)))
    return failure();
  if (at.getQ().size() != 1 || at.getK().size() != 1 || at.getV().size() != 1 ||
      at.getGradO().size() != 1)
    return at.emitOpError() << "flamia-tile: sm_90a reads dequantized bf16 "
                               "q, k, v, grad_o (one operand each)";
  if (at.getKTb().size() > 1)
    return at.emitOpError() << "flamia-tile: sm_90a reads one dequantized "
                               "bf16 k_tb";
  int64_t d = cast<GlobalType>(at.getQ()[0].getType()).getShape()[2];
  if (failed(checkBackwardKernelsExist(at, at.getRecipe(), "sm_90a", d)))
    return failure();
  int64_t safeBlock = at.getRecipe().getSafeBlock();
  bool safe = safeBlock > 0, causal = at.getCausal();
  Type bf16 = BFloat16Type::get(ctx), f32 = Float32Type::get(ctx);
  Type i32 = IntegerType::get(ctx, 32);
  auto tileType = [&](int64_t stages) {
    return SmemType::get(ctx, {stages, bm, d}, bf16);
  };
  auto sType = FragmentType::get(ctx, {64, bn}, f32);
  auto dsType = FragmentType::get(ctx, {64, bn}, bf16);
  auto accType = FragmentType::get(ctx, {64, d}, f32);
  const int64_t consumerThreads = 256, tileBytes = bm * d * 2;

  Value items = at.getItems(), q = at.getQ()[0], k = at.getK()[0],
        v = at.getV()[0], gradO = at.getGradO()[0], lse = at.getLse(),
        delta = at.getDelta(), dq = at.getDq(), scaleLog2 = at.getScaleLog2(),
        softmaxScale = at.getSoftmaxScale(), numTokens = at.getNumTokens(),
        qHeads = at.getQHeads(), debugScores = at.getDebugScores();
  // K's copy for dQ = dS K when S reads another (per token): a second key
  // buffer. Null: dS K reads the scores' copy.
  Value kTb = at.getKTb().empty() ? Value() : at.getKTb()[0];
  Value qSafe = safe ? at.getSafe()[0] : Value();
  Value kSafe = safe ? at.getSafe()[1] : Value();
  Value vSafe = safe ? at.getSafe()[2] : Value();
  Value gSafe = safe ? at.getSafe()[3] : Value();
  auto [counter, numItems] = queueOperands(kernel);

  clearBody(kernel);
  kernel.setThreads(384);
  OpBuilder b = OpBuilder::atBlockEnd(&kernel.getBody().front());
  // Q and dO of the item, K and V of each key tile. A query tile meets both
  // kinds of key tiles when the recipe has a safe block: the four
  // query-side tiles (both forms of Q and dO) would take 128 KiB at D = 128
  // and leave room for one 64 KiB key stage, so the producer could not load
  // the next K and V while the consumers compute. Instead the query-side
  // buffers hold one form at a time, reloaded where the key tiles switch
  // between safe and quantized (once per causal item, at its diagonal), and
  // the key ring has two stages. With K's second copy (96 KiB a stage) one
  // stage is all that fits either way, so both forms stay resident.
  const bool switchForms = safe && d == 128 && !kTb;
  const bool bothForms = safe && !switchForms;
  const int64_t stages = d == 64 ? 3 : (kTb ? 1 : 2);
  Value qd = SmemAllocOp::create(b, loc, tileType(1));
  Value qs =
      bothForms ? SmemAllocOp::create(b, loc, tileType(1)).getResult() : Value();
  Value god = SmemAllocOp::create(b, loc, tileType(1));
  Value gos =
      bothForms ? SmemAllocOp::create(b, loc, tileType(1)).getResult() : Value();
  Value ks = SmemAllocOp::create(b, loc, tileType(stages));
  Value vs = SmemAllocOp::create(b, loc, tileType(stages));
  Value ksTb =
      kTb ? SmemAllocOp::create(b, loc, tileType(stages)).getResult() : Value();
  Value qp = PipelineCreateOp::create(b, loc, PipelineType::get(ctx, 1),
                                      consumerThreads);
  Value kvp = PipelineCreateOp::create(b, loc, PipelineType::get(ctx, stages),
                                       consumerThreads);
  auto queue = QueueCreateOp::create(b, loc, QueueType::get(ctx), counter,
                                     numItems, consumerThreads);
  // switchForms: true where key tile `kt` takes the other form of Q and dO
  // than tile kt - 1 (always at kt = 0, the item's first load).
  auto formSwitches = [&](I32Builder &ib, Value kt, const ItemInfo &item) {
    Value prev = isSafeTile(ib, ib.sub(kt, ib.c(1)), item, safeBlock, bn);
    Value differs = arith::XOrIOp::create(
        ib.b, loc, isSafeTile(ib, kt, item, safeBlock, bn), prev);
    return arith::OrIOp::create(
        ib.b, loc, ib.cmp(arith::CmpIPredicate::eq, kt, ib.c(0)), differs);
  };

  // ---- producer -----------------------------------------------------------
  {
    OpBuilder rb = createRole(b, loc, "producer", 0, 1, kProducerRegisters,
                                /*singleThread=*/true);
    // Carried: the key ring's iteration, and with switchForms the query
    // pipeline's (one per form switch instead of one per item).
    SmallVector<Value> init{I32Builder{rb, loc}.c(0)};
    if (switchForms)
      init.push_back(I32Builder{rb, loc}.c(0));
    workLoop(rb, loc, queue, numItems, QueueSide::fetch, init,
             [&](OpBuilder &ab, Value it, ValueRange carried, Value index)
                 -> SmallVector<Value> {
      I32Builder eb{ab, loc};
      ItemInfo item = loadItem(eb, items, index, causal, bn);
      Value qCol = eb.mul(item.qHead, eb.c(d));
      if (!switchForms) {
        Value qst = PipelineAcquireOp::create(ab, loc, i32, qp, it,
                                              PipelineSide::producer);
        PipelineExpectOp::create(ab, loc, qp, qst,
                                 (bothForms ? 4 : 2) * tileBytes);
        TmaLoadOp::create(ab, loc, q, item.qStart, qCol, qd, qst, qp);
        TmaLoadOp::create(ab, loc, gradO, item.qStart, qCol, god, qst, qp);
        if (bothForms) {
          TmaLoadOp::create(ab, loc, qSafe, item.qStart, qCol, qs, qst, qp);
          TmaLoadOp::create(ab, loc, gSafe, item.qStart, qCol, gos, qst, qp);
        }
      }
      Value kvCol = eb.mul(item.kvHead, eb.c(d));
      auto forOp = scf::ForOp::create(ab, loc, eb.c(0), item.numKeyTiles,
                                      eb.c(1), carried);
      {
        OpBuilder fb = OpBuilder::atBlockBegin(forOp.getBody());
        I32Builder fib{fb, loc};
        Value kt = forOp.getInductionVar();
        Value kv = forOp.getRegionIterArgs()[0];
        Value row = fib.add(item.docStart, fib.mul(kt, fib.c(bn)));
        Value st = PipelineAcquireOp::create(fb, loc, i32, kvp, kv,
                                             PipelineSide::producer);
        PipelineExpectOp::create(fb, loc, kvp, st, (kTb ? 3 : 2) * tileBytes);
        Value isSafe = isSafeTile(fib, kt, item, safeBlock, bn);
        loadEither(fb, loc, isSafe, kSafe, k, row, kvCol, ks, st, kvp);
        loadEither(fb, loc, isSafe, vSafe, v, row, kvCol, vs, st, kvp);
        // On a safe tile both K buffers hold the bf16 original (loaded
        // twice: one expect count for every tile).
        if (kTb)
          loadEither(fb, loc, isSafe, kSafe, kTb, row, kvCol, ksTb, st, kvp);
        SmallVector<Value> next{fib.add(kv, fib.c(1))};
        if (switchForms) {
          // After this tile's K and V (their stage frees early), so that
          // only the query tiles wait for the consumers to finish tile
          // kt - 1.
          Value qc = forOp.getRegionIterArgs()[1];
          auto ifOp = scf::IfOp::create(fb, loc, TypeRange{i32},
                                        formSwitches(fib, kt, item),
                                        /*withElseRegion=*/true);
          OpBuilder tb = ifOp.getThenBodyBuilder();
          I32Builder tib{tb, loc};
          Value qst = PipelineAcquireOp::create(tb, loc, i32, qp, qc,
                                                PipelineSide::producer);
          PipelineExpectOp::create(tb, loc, qp, qst, 2 * tileBytes);
          loadEither(tb, loc, isSafe, qSafe, q, item.qStart, qCol, qd, qst, qp);
          loadEither(tb, loc, isSafe, gSafe, gradO, item.qStart, qCol, god, qst,
                     qp);
          scf::YieldOp::create(tb, loc, tib.add(qc, tib.c(1)));
          OpBuilder elseb = ifOp.getElseBodyBuilder();
          scf::YieldOp::create(elseb, loc, qc);
          next.push_back(ifOp.getResult(0));
        }
        scf::YieldOp::create(fb, loc, next);
      }
      return SmallVector<Value>(forOp.getResults());
    });
    ReturnOp::create(rb, loc);
  }

  // ---- consumers ----------------------------------------------------------
  {
    OpBuilder rb = createRole(b, loc, "consumer", 1, 3, kConsumerRegisters,
                                /*singleThread=*/false);
    Value wg = WarpgroupIdOp::create(rb, loc, i32);
    const Turns turns{pingPong};
    turns.start(rb, loc, wg);
    SmallVector<Value> init{I32Builder{rb, loc}.c(0)};
    if (switchForms)
      init.push_back(I32Builder{rb, loc}.c(0));
    workLoop(rb, loc, queue, numItems, QueueSide::receive, init,
             [&](OpBuilder &ab, Value it, ValueRange carried, Value index)
                 -> SmallVector<Value> {
      I32Builder eb{ab, loc};
      ItemInfo item = loadItem(eb, items, index, causal, bn);
      Value rowBase = eb.mul(wg, eb.c(64));
      Value queryBase = eb.add(eb.mul(item.qTile, eb.c(bm)), rowBase);
      Value dq0 = FragZeroOp::create(ab, loc, accType);
      // Carried through the key tiles: the key ring's iteration, dQ, and
      // with switchForms the query pipeline's iteration (its one stage is
      // stage 0).
      SmallVector<Value> loopInit{carried[0], dq0};
      Value qstItem;
      if (switchForms) {
        loopInit.push_back(carried[1]);
        qstItem = eb.c(0);
      } else {
        qstItem = PipelineAcquireOp::create(ab, loc, i32, qp, it,
                                            PipelineSide::consumer);
      }
      auto forOp = scf::ForOp::create(ab, loc, eb.c(0), item.numKeyTiles,
                                      eb.c(1), loopInit);
      {
        OpBuilder fb = OpBuilder::atBlockBegin(forOp.getBody());
        I32Builder fib{fb, loc};
        Value kt = forOp.getInductionVar();
        Value kv = forOp.getRegionIterArgs()[0];
        Value acc = forOp.getRegionIterArgs()[1];
        Value qst = qstItem, qcNext;
        if (switchForms) {
          // Where the form switches, wait for the new query tiles (the
          // tile before released the old ones after its S and dP).
          Value qc = forOp.getRegionIterArgs()[2];
          auto ifOp = scf::IfOp::create(fb, loc, TypeRange{i32},
                                        formSwitches(fib, kt, item),
                                        /*withElseRegion=*/true);
          OpBuilder tb = ifOp.getThenBodyBuilder();
          I32Builder tib{tb, loc};
          PipelineAcquireOp::create(tb, loc, i32, qp, qc,
                                    PipelineSide::consumer);
          scf::YieldOp::create(tb, loc, tib.add(qc, tib.c(1)));
          OpBuilder elseb = ifOp.getElseBodyBuilder();
          scf::YieldOp::create(elseb, loc, qc);
          qcNext = ifOp.getResult(0);
        }
        Value st = PipelineAcquireOp::create(fb, loc, i32, kvp, kv,
                                             PipelineSide::consumer);
        Value keyBase = fib.mul(kt, fib.c(bn));
        // K rows past the document end are the next document's: dS is 0
        // there, but 0 x Inf or NaN is not. dS K's copy is zeroed before
        // any MMA reads it (S's columns there are masked by a select).
        Value dsK = kTb ? ksTb : ks;
        zeroRowsPastEnd(fb, loc, dsK, st, keyBase, item.docLen, bn);
        Value isSafe = isSafeTile(fib, kt, item, safeBlock, bn);
        Value qTile = pick(fb, loc, isSafe, qs, qd);
        Value goTile = pick(fb, loc, isSafe, gos, god);
        SmallVector<Value> sdp =
            mmaGroup(fb, loc, turns, [&]() -> SmallVector<Value> {
              return {asyncMma(fb, loc, sType, qTile, qst, ks, st, Value(),
                               /*bTransposed=*/false),
                      asyncMma(fb, loc, sType, goTile, qst, vs, st, Value(),
                               /*bTransposed=*/false)};
            });
        Value s = sdp[0], dp = sdp[1];
        // Q and dO are read by S and dP only: their stage is freed once the
        // last key tile that reads this form has them, so that the producer
        // loads the next ones while this tile's softmax gradient and dQ MMA
        // run (at the item's end, the consumers waited for that load at the
        // next item's start: 6-7% of the kernel's time in run 59's profile).
        Value lastUse = fib.cmp(arith::CmpIPredicate::eq, kt,
                                fib.sub(item.numKeyTiles, fib.c(1)));
        if (switchForms)
          lastUse = arith::OrIOp::create(
              fb, loc, lastUse, formSwitches(fib, fib.add(kt, fib.c(1)), item));
        releaseIf(fb, loc, lastUse, qp, qst);
        storeDebugScores(fb, loc, debugScores, kt, s, item, rowBase, qHeads);
        // The mask, and the softmax gradient's tests, where the key tile
        // needs one or the warpgroup's query rows reach past the end.
        Value rowsPastEnd = fib.cmp(arith::CmpIPredicate::sgt,
                                    fib.add(queryBase, fib.c(64)), item.docLen);
        Value needsTests = arith::OrIOp::create(
            fb, loc, needsMask(fib, kt, keyBase, item, causal, bn),
            rowsPastEnd);
        SoftmaxGradInputs in{lse,       delta,       item.qHead, item.docStart,
                             queryBase, item.docLen, numTokens,  scaleLog2};
        Value ds = softmaxGradIf(fb, loc, needsTests, s, dp, keyBase, in,
                                 causal, /*transposed=*/false)
                       .second;
        Value dsq = FragBlockQuantizeOp::create(fb, loc, dsType, ds,
                                                notOf(fb, loc, isSafe));
        Value acc2 = mmaGroup(fb, loc, turns, [&]() -> SmallVector<Value> {
          return {asyncMma(fb, loc, accType, dsq, Value(), dsK, st, acc,
                           /*bTransposed=*/true)};
        })[0];
        PipelineReleaseOp::create(fb, loc, kvp, st);
        SmallVector<Value> next{fib.add(kv, fib.c(1)), acc2};
        if (switchForms)
          next.push_back(qcNext);
        scf::YieldOp::create(fb, loc, next);
      }
      // An item without key tiles (none is scheduled) still frees the
      // query tiles it acquired (with switchForms it acquired none).
      if (!switchForms)
        releaseIf(ab, loc,
                  eb.cmp(arith::CmpIPredicate::sle, item.numKeyTiles, eb.c(0)),
                  qp, qstItem);
      GradStoreOp::create(ab, loc, forOp.getResult(1), dq, item.qStart, rowBase,
                          item.qRows, item.qHead, softmaxScale, qHeads,
                          /*columns=*/Value());
      SmallVector<Value> out{forOp.getResult(0)};
      if (switchForms)
        out.push_back(forOp.getResult(2));
      return out;
    });
    ReturnOp::create(rb, loc);
  }
  ReturnOp::create(b, loc);
  kernel->setAttr("tile", tileAttr(b, bm, bn, stages));
  return success();
}

/// The dK/dV program (sm_90a).
LogicalResult tileDkdvSm90(KernelOp kernel, AttentionDkdvTileOp at,
                           bool pingPong) {
  MLIRContext *ctx = kernel.getContext();
  Location loc = at.getLoc();
  // Key tiles of 128 (two warpgroups of 64 key rows), query tiles of 64.
  const int64_t bn = 128, bq = 64;
  if (failed(checkBackwardShape(at, at.getRecipe(), at.getBlockM(),
                                at.getBlockN(), bq, bn)))
    return failure();
  if (at.getQ().size() != 1 || at.getK().size() != 1 || at.getV().size() != 1 ||
      at.getGradO().size() != 1 || at.getQTb().size() != 1)
    return at.emitOpError() << "flamia-tile: sm_90a reads dequantized bf16 "
                               "q, k, v, grad_o, q_tb (one operand each)";
  if (at.getGradOTb().size() > 1)
    return at.emitOpError() << "flamia-tile: sm_90a reads one dequantized "
                               "bf16 grad_o_tb";
  auto qType = cast<GlobalType>(at.getQ()[0].getType());
  auto kType = cast<GlobalType>(at.getK()[0].getType());
  int64_t d = qType.getShape()[2];
  if (failed(checkBackwardKernelsExist(at, at.getRecipe(), "sm_90a", d)))
    return failure();
  // The query heads per key/value head: a constant, or Hq / Hkv when the
  // head counts are runtime values (the runtime checks Hkv divides Hq).
  bool runtimeHeads = ShapedType::isDynamic(qType.getShape()[1]);
  int64_t group = runtimeHeads ? 0 : qType.getShape()[1] / kType.getShape()[1];
  int64_t safeBlock = at.getRecipe().getSafeBlock();
  bool safe = safeBlock > 0, causal = at.getCausal();
  Type bf16 = BFloat16Type::get(ctx), f32 = Float32Type::get(ctx);
  Type i32 = IntegerType::get(ctx, 32);
  auto keyTile = SmemType::get(ctx, {1, bn, d}, bf16);
  // dO's copy for dV = P^T dO when dP reads another (per token): a fourth
  // query-side buffer, and the query tiles in two rings. Ring A holds what
  // S^T and dP^T read (Q, dO per token), released once the softmax
  // gradient has their results; ring B what dV and dK read (dO's and Q's
  // token blocks), released after them. So the next tile's ring-A pair
  // loads during the current dV and dK MMAs and its ring-B pair during the
  // next S^T and dP^T, even with one ring-B stage: at D = 128 with a safe
  // block the key tiles take 128 KiB, two A stages and one B stage 96 KiB.
  // Without a second copy one ring holds Q, Q's token blocks and dO.
  const bool secondGradO = !at.getGradOTb().empty();
  const int64_t stages = d == 64 ? 3 : 2;
  const int64_t stagesB = d == 64 ? 3 : (safe ? 1 : 2);
  auto queryTile = SmemType::get(ctx, {stages, bq, d}, bf16);
  auto queryTileB = SmemType::get(ctx, {stagesB, bq, d}, bf16);
  auto sType = FragmentType::get(ctx, {64, bq}, f32);
  auto opType = FragmentType::get(ctx, {64, bq}, bf16);
  auto accType = FragmentType::get(ctx, {64, d}, f32);
  const int64_t consumerThreads = 256;
  const int64_t keyBytes = bn * d * 2, queryBytes = bq * d * 2;
  PrecisionAttr pPrecision = at.getP();
  if (!pPrecision.getFixedScale())
    return at.emitOpError() << "flamia-tile: P needs a fixed scale, got "
                            << pPrecision;
  int64_t fixedScale = *pPrecision.getFixedScale();

  Value items = at.getItems(), q = at.getQ()[0], k = at.getK()[0],
        v = at.getV()[0], gradO = at.getGradO()[0], qTb = at.getQTb()[0],
        lse = at.getLse(), delta = at.getDelta(), dk = at.getDk(),
        dv = at.getDv(), scaleLog2 = at.getScaleLog2(),
        softmaxScale = at.getSoftmaxScale(), numTokens = at.getNumTokens(),
        qHeads = at.getQHeads(), kvHeads = at.getKvHeads();
  Value gradOTb = secondGradO ? at.getGradOTb()[0] : Value();
  Value qSafe = safe ? at.getSafe()[0] : Value();
  Value kSafe = safe ? at.getSafe()[1] : Value();
  Value vSafe = safe ? at.getSafe()[2] : Value();
  Value gSafe = safe ? at.getSafe()[3] : Value();
  auto [counter, numItems] = queueOperands(kernel);

  clearBody(kernel);
  kernel.setThreads(384);
  OpBuilder b = OpBuilder::atBlockEnd(&kernel.getBody().front());
  // The key tile's K and V stay for the whole item, quantized and safe
  // (its query tiles are of both kinds); each query tile brings Q for S,
  // Q's token-block copy for dK and dO, each either quantized or the bf16
  // original (a 64 x 128 tile pair is wholly inside or outside the safe
  // block).
  Value kd = SmemAllocOp::create(b, loc, keyTile);
  Value kS = safe ? SmemAllocOp::create(b, loc, keyTile).getResult() : Value();
  Value vd = SmemAllocOp::create(b, loc, keyTile);
  Value vS = safe ? SmemAllocOp::create(b, loc, keyTile).getResult() : Value();
  Value qa = SmemAllocOp::create(b, loc, queryTile);
  Value qb = SmemAllocOp::create(b, loc, secondGradO ? queryTileB : queryTile);
  Value go = SmemAllocOp::create(b, loc, queryTile);
  Value goTb = secondGradO ? SmemAllocOp::create(b, loc, queryTileB).getResult()
                           : Value();
  Value kp = PipelineCreateOp::create(b, loc, PipelineType::get(ctx, 1),
                                      consumerThreads);
  Value qring = PipelineCreateOp::create(b, loc, PipelineType::get(ctx, stages),
                                         consumerThreads);
  Value qringB =
      secondGradO
          ? PipelineCreateOp::create(b, loc, PipelineType::get(ctx, stagesB),
                                     consumerThreads)
                .getResult()
          : Value();
  auto queue = QueueCreateOp::create(b, loc, QueueType::get(ctx), counter,
                                     numItems, consumerThreads);

  QueryVisitShape shape{causal, bq, bn, safeBlock, group, qHeads, kvHeads};

  // ---- producer -----------------------------------------------------------
  {
    OpBuilder rb = createRole(b, loc, "producer", 0, 1, kProducerRegisters,
                                /*singleThread=*/true);
    workLoop(rb, loc, queue, numItems, QueueSide::fetch,
             ValueRange{I32Builder{rb, loc}.c(0)},
             [&](OpBuilder &ab, Value it, ValueRange carried, Value index)
                 -> SmallVector<Value> {
      I32Builder eb{ab, loc};
      ItemInfo item = loadItem(eb, items, index, causal, bn);
      Value kst = PipelineAcquireOp::create(ab, loc, i32, kp, it,
                                            PipelineSide::producer);
      PipelineExpectOp::create(ab, loc, kp, kst, (safe ? 4 : 2) * keyBytes);
      Value kvCol = eb.mul(item.kvHead, eb.c(d));
      TmaLoadOp::create(ab, loc, k, item.qStart, kvCol, kd, kst, kp);
      TmaLoadOp::create(ab, loc, v, item.qStart, kvCol, vd, kst, kp);
      if (safe) {
        TmaLoadOp::create(ab, loc, kSafe, item.qStart, kvCol, kS, kst, kp);
        TmaLoadOp::create(ab, loc, vSafe, item.qStart, kvCol, vS, kst, kp);
      }
      // Carried: the ring's iteration and the visit (query tile, head).
      QueryVisits vis = QueryVisits::of(eb, item, shape);
      auto [qt0, head0] = vis.start(item);
      auto forOp = scf::ForOp::create(ab, loc, eb.c(0), vis.total, eb.c(1),
                                      ValueRange{carried[0], qt0, head0});
      {
        OpBuilder fb = OpBuilder::atBlockBegin(forOp.getBody());
        I32Builder fib{fb, loc};
        auto args = forOp.getRegionIterArgs();
        Value qi = args[0], qt = args[1], head = args[2];
        Value row = fib.add(item.docStart, fib.mul(qt, fib.c(bq)));
        Value col = fib.mul(head, fib.c(d));
        Value st = PipelineAcquireOp::create(fb, loc, i32, qring, qi,
                                             PipelineSide::producer);
        PipelineExpectOp::create(fb, loc, qring, st,
                                 (secondGradO ? 2 : 3) * queryBytes);
        Value isSafe = vis.isSafe(fib, item, qt);
        loadEither(fb, loc, isSafe, qSafe, q, row, col, qa, st, qring);
        if (!secondGradO)
          loadEither(fb, loc, isSafe, qSafe, qTb, row, col, qb, st, qring);
        loadEither(fb, loc, isSafe, gSafe, gradO, row, col, go, st, qring);
        if (secondGradO) {
          Value stB = PipelineAcquireOp::create(fb, loc, i32, qringB, qi,
                                                PipelineSide::producer);
          PipelineExpectOp::create(fb, loc, qringB, stB, 2 * queryBytes);
          loadEither(fb, loc, isSafe, qSafe, qTb, row, col, qb, stB, qringB);
          loadEither(fb, loc, isSafe, gSafe, gradOTb, row, col, goTb, stB,
                     qringB);
        }
        auto [qtNext, headNext] = vis.next(fib, qt, head);
        scf::YieldOp::create(fb, loc,
                             ValueRange{fib.add(qi, fib.c(1)), qtNext, headNext});
      }
      return {forOp.getResult(0)};
    });
    ReturnOp::create(rb, loc);
  }

  // ---- consumers ----------------------------------------------------------
  {
    OpBuilder rb = createRole(b, loc, "consumer", 1, 3, kConsumerRegisters,
                                /*singleThread=*/false);
    Value wg = WarpgroupIdOp::create(rb, loc, i32);
    const Turns turns{pingPong};
    turns.start(rb, loc, wg);
    workLoop(rb, loc, queue, numItems, QueueSide::receive,
             ValueRange{I32Builder{rb, loc}.c(0)},
             [&](OpBuilder &ab, Value it, ValueRange carried, Value index)
                 -> SmallVector<Value> {
      I32Builder eb{ab, loc};
      ItemInfo item = loadItem(eb, items, index, causal, bn);
      Value kst = PipelineAcquireOp::create(ab, loc, i32, kp, it,
                                            PipelineSide::consumer);
      Value rowBase = eb.mul(wg, eb.c(64));
      Value keyBase = eb.add(eb.mul(item.qTile, eb.c(bn)), rowBase);
      Value tileKeyBase = eb.mul(item.qTile, eb.c(bn));
      Value zero = FragZeroOp::create(ab, loc, accType);
      // Carried: the ring's iteration, dK, dV and the visit (query tile,
      // head).
      QueryVisits vis = QueryVisits::of(eb, item, shape);
      auto [qt0, head0] = vis.start(item);
      auto forOp =
          scf::ForOp::create(ab, loc, eb.c(0), vis.total, eb.c(1),
                             ValueRange{carried[0], zero, zero, qt0, head0});
      {
        OpBuilder fb = OpBuilder::atBlockBegin(forOp.getBody());
        I32Builder fib{fb, loc};
        auto args = forOp.getRegionIterArgs();
        Value qi = args[0], dkAcc = args[1], dvAcc = args[2], qt = args[3],
              head = args[4];
        Value st = PipelineAcquireOp::create(fb, loc, i32, qring, qi,
                                             PipelineSide::consumer);
        Value queryBase = fib.mul(qt, fib.c(bq));
        // Query rows past the document end are the next document's: P and
        // dS are 0 there, but 0 x Inf or NaN is not. dO (the B operand of
        // dP^T and dV) and Q's token-block copy (dK) are zeroed before any
        // MMA reads them.
        // (With two rings, the ring-B tiles once that ring's stage is in.)
        zeroRowsPastEnd(fb, loc, go, st, queryBase, item.docLen, bq);
        if (!secondGradO)
          zeroRowsPastEnd(fb, loc, qb, st, queryBase, item.docLen, bq);
        Value isSafe = vis.isSafe(fib, item, qt);
        Value kTile = pick(fb, loc, isSafe, kS, kd);
        Value vTile = pick(fb, loc, isSafe, vS, vd);
        // Masking: the query tile reaches past the document end, or
        // (causal) it meets the key tile's diagonal.
        Value pastEnd = fib.cmp(arith::CmpIPredicate::sgt,
                                fib.add(queryBase, fib.c(bq)), item.docLen);
        SmallVector<Value> sdpT = mmaGroup(
            fb, loc, turns,
            [&]() -> SmallVector<Value> {
              return {asyncMma(fb, loc, sType, kTile, kst, qa, st, Value(),
                               /*bTransposed=*/false),
                      asyncMma(fb, loc, sType, vTile, kst, go, st, Value(),
                               /*bTransposed=*/false)};
            });
        Value sT = sdpT[0], dpT = sdpT[1];
        // K and V are read by S^T and dP^T only: their stage is freed after
        // the last query tile's, so that the producer loads the next item's
        // key tile (and its first query tiles) while this tile's gradients
        // run, not after the item.
        Value lastVisit = fib.cmp(arith::CmpIPredicate::eq,
                                  forOp.getInductionVar(),
                                  fib.sub(vis.total, fib.c(1)));
        releaseIf(fb, loc, lastVisit, kp, kst);
        Value cond = pastEnd;
        if (causal)
          cond = arith::OrIOp::create(
              fb, loc, pastEnd,
              fib.cmp(arith::CmpIPredicate::slt, queryBase,
                      fib.add(tileKeyBase, fib.c(bn))));
        SoftmaxGradInputs in{lse,       delta,       head,      item.docStart,
                             queryBase, item.docLen, numTokens, scaleLog2};
        auto [gradP, gradDs] = softmaxGradIf(fb, loc, cond, sT, dpT, keyBase,
                                             in, causal, /*transposed=*/true);
        Value pGrad = gradP, dsGrad = gradDs; // captured below
        // Ring B: dV's dO and dK's Q, in their own stage (or ring A's).
        Value stB = st, dvGradO = go;
        if (secondGradO) {
          PipelineReleaseOp::create(fb, loc, qring, st);
          stB = PipelineAcquireOp::create(fb, loc, i32, qringB, qi,
                                          PipelineSide::consumer);
          zeroRowsPastEnd(fb, loc, goTb, stB, queryBase, item.docLen, bq);
          zeroRowsPastEnd(fb, loc, qb, stB, queryBase, item.docLen, bq);
          dvGradO = goTb;
        }
        Value quantized = notOf(fb, loc, isSafe);
        Value pq = FragQuantizeOp::create(fb, loc, opType, pGrad,
                                          quantized, pPrecision);
        auto dvMma = [&] {
          return asyncMma(fb, loc, accType, pq, Value(), dvGradO, stB, dvAcc,
                          /*bTransposed=*/true);
        };
        auto roundDs = [&] {
          return FragBlockQuantizeOp::create(fb, loc, opType, dsGrad,
                                             quantized)
              .getResult();
        };
        auto dkMma = [&](Value dsq) {
          return asyncMma(fb, loc, accType, dsq, Value(), qb, stB, dkAcc,
                          /*bTransposed=*/true);
        };
        SmallVector<Value> dvdk;
        if (pingPong) {
          // Both operands rounded before the turn: the MMAs issue together.
          Value dsq = roundDs();
          dvdk = mmaGroup(fb, loc, turns, [&]() -> SmallVector<Value> {
            return {dvMma(), dkMma(dsq)};
          });
        } else {
          // dS is rounded while dV += P^T dO runs.
          Value dvPending = dvMma();
          Value dkPending = dkMma(roundDs());
          dvdk = WarpgroupWaitOp::create(fb, loc,
                                         ValueRange{dvPending, dkPending}, 0)
                     .getResults();
        }
        Value dv2 = dvdk[0], dk2 = dvdk[1];
        PipelineReleaseOp::create(fb, loc, secondGradO ? qringB : qring, stB);
        auto [qtNext, headNext] = vis.next(fib, qt, head);
        scf::YieldOp::create(fb, loc,
                             ValueRange{fib.add(qi, fib.c(1)), dk2, dv2,
                                        qtNext, headNext});
      }
      // An item without query tiles (none is scheduled) frees them here.
      releaseIf(ab, loc, eb.cmp(arith::CmpIPredicate::sle, vis.total, eb.c(0)),
                kp, kst);
      GradStoreOp::create(ab, loc, forOp.getResult(1), dk, item.qStart,
                          rowBase, item.qRows, item.kvHead, softmaxScale,
                          kvHeads, /*columns=*/Value());
      Value inv = arith::ConstantOp::create(
          ab, loc, ab.getF32FloatAttr(std::ldexp(1.0f, -fixedScale)));
      GradStoreOp::create(ab, loc, forOp.getResult(2), dv, item.qStart,
                          rowBase, item.qRows, item.kvHead, inv, kvHeads,
                          /*columns=*/Value());
      return {forOp.getResult(0)};
    });
    ReturnOp::create(rb, loc);
  }
  ReturnOp::create(b, loc);
  kernel->setAttr("tile", tileAttr(b, bq, bn, stages));
  return success();
}

} // namespace flamia::tile
