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
LogicalResult tileDqSm90(KernelOp kernel, AttentionDqTileOp at,
                         BackwardSchedule schedule) {
  const bool pingPong = schedule.pingPong;
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
  // The key loop rotated (the next tile's S and dP issued behind dQ, one
  // wait a tile) on request and where the registers allow it: at D = 128,
  // with dQ, S, dP and dS in flight at once, ptxas serializes every wgmma
  // of the kernel. Measured slower at D = 64 (run 69): off by default.
  const bool rotate = schedule.rotate && d == 64;
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
      Value qstItem;
      Value qc0 = switchForms ? carried[1] : Value();
      if (switchForms)
        qstItem = eb.c(0);
      else
        qstItem = PipelineAcquireOp::create(ab, loc, i32, qp, it,
                                            PipelineSide::consumer);
      // Key tile kt's stage (ring iteration kv) and query tiles (with
      // switchForms: reacquired where the form switches, query pipeline
      // iteration qc), with dS K's K rows past the document end zeroed:
      // they are the next document's, and dS is 0 there but 0 x Inf or
      // NaN is not (S's columns there are masked by a select). Done before
      // the turn: the zeroing ends with a barrier of both warpgroups.
      struct Prepared {
        Value st, qcNext, qTile, goTile;
      };
      Value dsK = kTb ? ksTb : ks;
      auto prepare = [&](OpBuilder &fb, Value kt, Value kv,
                         Value qc) -> Prepared {
        I32Builder fib{fb, loc};
        Prepared p;
        if (switchForms) {
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
          p.qcNext = ifOp.getResult(0);
        }
        p.st = PipelineAcquireOp::create(fb, loc, i32, kvp, kv,
                                         PipelineSide::consumer);
        zeroRowsPastEnd(fb, loc, dsK, p.st, fib.mul(kt, fib.c(bn)),
                        item.docLen, bn);
        Value isSafe = isSafeTile(fib, kt, item, safeBlock, bn);
        p.qTile = pick(fb, loc, isSafe, qs, qd);
        p.goTile = pick(fb, loc, isSafe, gos, god);
        return p;
      };
      auto issueScores = [&](OpBuilder &fb, const Prepared &p) {
        return SmallVector<Value>{
            asyncMma(fb, loc, sType, p.qTile, qstItem, ks, p.st, Value(),
                     /*bTransposed=*/false),
            asyncMma(fb, loc, sType, p.goTile, qstItem, vs, p.st, Value(),
                     /*bTransposed=*/false)};
      };
      // Once key tile kt's S and dP are in: Q and dO are read by S and dP
      // only, so their stage is freed once the last key tile that reads
      // this form has them, and the producer loads the next ones while the
      // softmax gradient and dQ MMA run (at the item's end, the consumers
      // waited for that load at the next item's start: 6-7% of the
      // kernel's time in run 59's profile).
      auto scoresIn = [&](OpBuilder &fb, Value kt, Value s) {
        I32Builder fib{fb, loc};
        Value lastUse = fib.cmp(arith::CmpIPredicate::eq, kt,
                                fib.sub(item.numKeyTiles, fib.c(1)));
        if (switchForms)
          lastUse = arith::OrIOp::create(
              fb, loc, lastUse,
              formSwitches(fib, fib.add(kt, fib.c(1)), item));
        releaseIf(fb, loc, lastUse, qp, qstItem);
        storeDebugScores(fb, loc, debugScores, kt, s, item, rowBase, qHeads);
      };

      // Key tile kt's softmax gradient: dS, rounded (quantized in 32-key
      // blocks off the safe block). The mask, and the softmax gradient's
      // tests, where the key tile needs one or the warpgroup's query rows
      // reach past the end.
      auto gradient = [&](OpBuilder &fb, Value kt, Value s, Value dp) {
        I32Builder fib{fb, loc};
        Value keyBase = fib.mul(kt, fib.c(bn));
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
        Value isSafe = isSafeTile(fib, kt, item, safeBlock, bn);
        return FragBlockQuantizeOp::create(fb, loc, dsType, ds,
                                           notOf(fb, loc, isSafe))
            .getResult();
      };
      auto dqMma = [&](OpBuilder &mb, Value dsq, Value st, Value acc) {
        return asyncMma(mb, loc, accType, dsq, Value(), dsK, st, acc,
                        /*bTransposed=*/true);
      };

      // Carried through the key tiles: the key ring's iteration, dQ, with
      // switchForms the query pipeline's iteration (its one stage is stage
      // 0), and in the rotated loop tile kt's S, dP and stage.
      Value kvOut, dqOut, qcOut;
      if (!rotate) {
        // Per key tile: S and dP, wait, the softmax gradient, dQ, wait.
        SmallVector<Value> loopInit{carried[0], dq0};
        if (switchForms)
          loopInit.push_back(qc0);
        auto forOp = scf::ForOp::create(ab, loc, eb.c(0), item.numKeyTiles,
                                        eb.c(1), loopInit);
        OpBuilder fb = OpBuilder::atBlockBegin(forOp.getBody());
        I32Builder fib{fb, loc};
        Value kt = forOp.getInductionVar();
        auto args = forOp.getRegionIterArgs();
        Prepared p = prepare(fb, kt, args[0], switchForms ? args[2] : Value());
        SmallVector<Value> sdp =
            mmaGroup(fb, loc, turns, [&]() { return issueScores(fb, p); });
        scoresIn(fb, kt, sdp[0]);
        Value dsq = gradient(fb, kt, sdp[0], sdp[1]);
        Value acc2 = mmaGroup(fb, loc, turns, [&]() -> SmallVector<Value> {
          return {dqMma(fb, dsq, p.st, args[1])};
        })[0];
        PipelineReleaseOp::create(fb, loc, kvp, p.st);
        SmallVector<Value> next{fib.add(args[0], fib.c(1)), acc2};
        if (switchForms)
          next.push_back(p.qcNext);
        scf::YieldOp::create(fb, loc, next);
        kvOut = forOp.getResult(0);
        dqOut = forOp.getResult(1);
        qcOut = switchForms ? forOp.getResult(2) : Value();
      } else {
        // Rotated: iteration kt takes key tile kt's S and dP from the
        // iteration before (or the prologue), computes its softmax
        // gradient, then issues its dQ MMA and, behind it, the next tile's
        // S and dP, and waits once for the three. The tensor cores go from
        // dQ_kt straight on to S_kt+1 instead of idling while the
        // warpgroup wakes from dQ's wait, frees the stage and issues the
        // next pair.
        // Prologue: key tile 0's S and dP (an item has key tiles; one
        // without would skip both the prologue and the loop).
        Value zeroS = FragZeroOp::create(ab, loc, sType);
        SmallVector<Type> headTypes{sType, sType, i32};
        if (switchForms)
          headTypes.push_back(i32);
        auto head = scf::IfOp::create(
            ab, loc, headTypes,
            eb.cmp(arith::CmpIPredicate::sgt, item.numKeyTiles, eb.c(0)),
            /*withElseRegion=*/true);
        {
          OpBuilder tb = head.getThenBodyBuilder();
          Value zero = I32Builder{tb, loc}.c(0);
          Prepared p0 = prepare(tb, zero, carried[0], qc0);
          SmallVector<Value> sdp = mmaGroup(
              tb, loc, turns, [&]() { return issueScores(tb, p0); });
          scoresIn(tb, zero, sdp[0]);
          SmallVector<Value> out{sdp[0], sdp[1], p0.st};
          if (switchForms)
            out.push_back(p0.qcNext);
          scf::YieldOp::create(tb, loc, out);
          OpBuilder elseb = head.getElseBodyBuilder();
          SmallVector<Value> none{zeroS, zeroS, I32Builder{elseb, loc}.c(0)};
          if (switchForms)
            none.push_back(qc0);
          scf::YieldOp::create(elseb, loc, none);
        }
        SmallVector<Value> loopInit{carried[0], dq0};
        loopInit.append(head.getResults().begin(), head.getResults().end());
        auto forOp = scf::ForOp::create(ab, loc, eb.c(0), item.numKeyTiles,
                                        eb.c(1), loopInit);
        OpBuilder fb = OpBuilder::atBlockBegin(forOp.getBody());
        I32Builder fib{fb, loc};
        Value kt = forOp.getInductionVar();
        auto args = forOp.getRegionIterArgs();
        Value kv = args[0], acc = args[1], st = args[4];
        Value qc = switchForms ? args[5] : Value();
        Value dsq = gradient(fb, kt, args[2], args[3]);
        Value ktNext = fib.add(kt, fib.c(1));
        Value kvNext = fib.add(kv, fib.c(1));
        SmallVector<Type> stepTypes{accType, sType, sType, i32};
        if (switchForms)
          stepTypes.push_back(i32);
        auto step = scf::IfOp::create(
            fb, loc, stepTypes,
            fib.cmp(arith::CmpIPredicate::slt, ktNext, item.numKeyTiles),
            /*withElseRegion=*/true);
        {
          // dQ_kt, then tile kt + 1's S and dP. Without turns dQ_kt issues
          // first and runs while the next stage is acquired and zeroed;
          // with turns both happen before the turn is taken (the zeroing's
          // barrier needs both warpgroups).
          OpBuilder tb = step.getThenBodyBuilder();
          SmallVector<Value> done;
          Prepared pn;
          if (pingPong) {
            pn = prepare(tb, ktNext, kvNext, qc);
            done = mmaGroup(tb, loc, turns, [&]() -> SmallVector<Value> {
              SmallVector<Value> group{dqMma(tb, dsq, st, acc)};
              group.append(issueScores(tb, pn));
              return group;
            });
          } else {
            SmallVector<Value> group{dqMma(tb, dsq, st, acc)};
            pn = prepare(tb, ktNext, kvNext, qc);
            group.append(issueScores(tb, pn));
            done = WarpgroupWaitOp::create(tb, loc, group, 0).getResults();
          }
          scoresIn(tb, ktNext, done[1]);
          SmallVector<Value> out{done[0], done[1], done[2], pn.st};
          if (switchForms)
            out.push_back(pn.qcNext);
          scf::YieldOp::create(tb, loc, out);
          // The item's last key tile: dQ_kt alone. (Zeros, not the old S
          // and dP, leave the loop: carrying those through the dQ MMA
          // spilled at both head dims.)
          OpBuilder elseb = step.getElseBodyBuilder();
          Value last = mmaGroup(elseb, loc, turns, [&]() -> SmallVector<Value> {
            return {dqMma(elseb, dsq, st, acc)};
          })[0];
          Value none = FragZeroOp::create(elseb, loc, sType);
          SmallVector<Value> keep{last, none, none, st};
          if (switchForms)
            keep.push_back(qc);
          scf::YieldOp::create(elseb, loc, keep);
        }
        // dQ_kt is complete: tile kt's K (and V) may go.
        PipelineReleaseOp::create(fb, loc, kvp, st);
        SmallVector<Value> next{kvNext, step.getResult(0), step.getResult(1),
                                step.getResult(2), step.getResult(3)};
        if (switchForms)
          next.push_back(step.getResult(4));
        scf::YieldOp::create(fb, loc, next);
        kvOut = forOp.getResult(0);
        dqOut = forOp.getResult(1);
        qcOut = switchForms ? forOp.getResult(5) : Value();
      }
      // An item without key tiles (none is scheduled) still frees the
      // query tiles it acquired (with switchForms it acquired none).
      if (!switchForms)
        releaseIf(ab, loc,
                  eb.cmp(arith::CmpIPredicate::sle, item.numKeyTiles, eb.c(0)),
                  qp, qstItem);
      GradStoreOp::create(ab, loc, dqOut, dq, item.qStart, rowBase,
                          item.qRows, item.qHead, softmaxScale, qHeads,
                          /*columns=*/Value());
      SmallVector<Value> out{kvOut};
      if (switchForms)
        out.push_back(qcOut);
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
                           BackwardSchedule schedule) {
  const bool pingPong = schedule.pingPong;
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
  // The visit loop rotated as the dQ kernel's, on request and where the
  // registers allow it: at D = 128 dK and dV alone take 128 of them.
  const bool rotate = schedule.rotate && d == 64;
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
      QueryVisits vis = QueryVisits::of(eb, item, shape);
      auto [qt0, head0] = vis.start(item);

      // Visit `qi` (query tile qt): its ring-A stage, with the query rows
      // past the document end zeroed in dO (the B operand of dP^T and dV)
      // and Q's token-block copy (dK): they are the next document's, and P
      // and dS are 0 there but 0 x Inf or NaN is not. (With two rings, the
      // ring-B tiles once that ring's stage is in.) Done before any turn:
      // the zeroing ends with a barrier of both warpgroups.
      struct Prepared {
        Value st, kTile, vTile;
      };
      auto prepare = [&](OpBuilder &fb, Value qi, Value qt) -> Prepared {
        I32Builder fib{fb, loc};
        Prepared p;
        p.st = PipelineAcquireOp::create(fb, loc, i32, qring, qi,
                                         PipelineSide::consumer);
        Value queryBase = fib.mul(qt, fib.c(bq));
        zeroRowsPastEnd(fb, loc, go, p.st, queryBase, item.docLen, bq);
        if (!secondGradO)
          zeroRowsPastEnd(fb, loc, qb, p.st, queryBase, item.docLen, bq);
        Value isSafe = vis.isSafe(fib, item, qt);
        p.kTile = pick(fb, loc, isSafe, kS, kd);
        p.vTile = pick(fb, loc, isSafe, vS, vd);
        return p;
      };
      auto issueScores = [&](OpBuilder &fb, const Prepared &p) {
        return SmallVector<Value>{
            asyncMma(fb, loc, sType, p.kTile, kst, qa, p.st, Value(),
                     /*bTransposed=*/false),
            asyncMma(fb, loc, sType, p.vTile, kst, go, p.st, Value(),
                     /*bTransposed=*/false)};
      };
      // K and V are read by S^T and dP^T only: their stage is freed once
      // the last visit's are in, so that the producer loads the next
      // item's key tile (and its first query tiles) while this visit's
      // gradients run, not after the item.
      auto scoresIn = [&](OpBuilder &fb, Value visit) {
        I32Builder fib{fb, loc};
        releaseIf(fb, loc,
                  fib.cmp(arith::CmpIPredicate::eq, visit,
                          fib.sub(vis.total, fib.c(1))),
                  kp, kst);
      };
      // Visit (qt, head)'s P^T and dS^T from its S^T and dP^T, and the
      // stage dV and dK read (ring B's, or ring A's `st`), zeroed.
      struct Gradients {
        Value pq, dsGrad, stB, dvGradO, quantized;
      };
      auto gradients = [&](OpBuilder &fb, Value qt, Value head, Value qi,
                           Value st, Value sT, Value dpT) -> Gradients {
        I32Builder fib{fb, loc};
        Value queryBase = fib.mul(qt, fib.c(bq));
        // Masking: the query tile reaches past the document end, or
        // (causal) it meets the key tile's diagonal.
        Value cond = fib.cmp(arith::CmpIPredicate::sgt,
                             fib.add(queryBase, fib.c(bq)), item.docLen);
        if (causal)
          cond = arith::OrIOp::create(
              fb, loc, cond,
              fib.cmp(arith::CmpIPredicate::slt, queryBase,
                      fib.add(tileKeyBase, fib.c(bn))));
        SoftmaxGradInputs in{lse,       delta,       head,      item.docStart,
                             queryBase, item.docLen, numTokens, scaleLog2};
        auto [gradP, gradDs] = softmaxGradIf(fb, loc, cond, sT, dpT, keyBase,
                                             in, causal, /*transposed=*/true);
        Gradients g{Value(), gradDs, st, go, Value()};
        // Ring B: dV's dO and dK's Q, in their own stage (or ring A's).
        if (secondGradO) {
          PipelineReleaseOp::create(fb, loc, qring, st);
          g.stB = PipelineAcquireOp::create(fb, loc, i32, qringB, qi,
                                            PipelineSide::consumer);
          zeroRowsPastEnd(fb, loc, goTb, g.stB, queryBase, item.docLen, bq);
          zeroRowsPastEnd(fb, loc, qb, g.stB, queryBase, item.docLen, bq);
          g.dvGradO = goTb;
        }
        g.quantized = notOf(fb, loc, vis.isSafe(fib, item, qt));
        g.pq = FragQuantizeOp::create(fb, loc, opType, gradP, g.quantized,
                                      pPrecision);
        return g;
      };
      auto dvMma = [&](OpBuilder &mb, const Gradients &g, Value dvAcc) {
        return asyncMma(mb, loc, accType, g.pq, Value(), g.dvGradO, g.stB,
                        dvAcc, /*bTransposed=*/true);
      };
      auto roundDs = [&](OpBuilder &mb, const Gradients &g) {
        return FragBlockQuantizeOp::create(mb, loc, opType, g.dsGrad,
                                           g.quantized)
            .getResult();
      };
      auto dkMma = [&](OpBuilder &mb, const Gradients &g, Value dsq,
                       Value dkAcc) {
        return asyncMma(mb, loc, accType, dsq, Value(), qb, g.stB, dkAcc,
                        /*bTransposed=*/true);
      };
      // dV and dK of one visit (and `more` MMAs issued behind them), waited
      // for together. With turns both operands are rounded before the
      // turn, so that the MMAs issue together; without, dS is rounded
      // while dV += P^T dO runs.
      auto gradientMmas =
          [&](OpBuilder &mb, const Gradients &g, Value dkAcc, Value dvAcc,
              function_ref<SmallVector<Value>()> more) -> SmallVector<Value> {
        if (pingPong) {
          Value dsq = roundDs(mb, g);
          return mmaGroup(mb, loc, turns, [&]() -> SmallVector<Value> {
            SmallVector<Value> group{dvMma(mb, g, dvAcc),
                                     dkMma(mb, g, dsq, dkAcc)};
            group.append(more());
            return group;
          });
        }
        Value dvPending = dvMma(mb, g, dvAcc);
        SmallVector<Value> group{dvPending, dkMma(mb, g, roundDs(mb, g), dkAcc)};
        group.append(more());
        return WarpgroupWaitOp::create(mb, loc, group, 0).getResults();
      };
      auto none = [] { return SmallVector<Value>{}; };

      Value kvOut, dkOut, dvOut;
      if (!rotate) {
        // Per visit: S^T and dP^T, wait, the softmax gradient, dV and dK,
        // wait. Carried: the ring's iteration, dK, dV and the visit (query
        // tile, head).
        auto forOp =
            scf::ForOp::create(ab, loc, eb.c(0), vis.total, eb.c(1),
                               ValueRange{carried[0], zero, zero, qt0, head0});
        OpBuilder fb = OpBuilder::atBlockBegin(forOp.getBody());
        I32Builder fib{fb, loc};
        auto args = forOp.getRegionIterArgs();
        Value qi = args[0], qt = args[3], head = args[4];
        Prepared p = prepare(fb, qi, qt);
        SmallVector<Value> sdpT =
            mmaGroup(fb, loc, turns, [&]() { return issueScores(fb, p); });
        scoresIn(fb, forOp.getInductionVar());
        Gradients g = gradients(fb, qt, head, qi, p.st, sdpT[0], sdpT[1]);
        SmallVector<Value> dvdk = gradientMmas(fb, g, args[1], args[2], none);
        PipelineReleaseOp::create(fb, loc, secondGradO ? qringB : qring, g.stB);
        auto [qtNext, headNext] = vis.next(fib, qt, head);
        scf::YieldOp::create(fb, loc,
                             ValueRange{fib.add(qi, fib.c(1)), dvdk[1], dvdk[0],
                                        qtNext, headNext});
        kvOut = forOp.getResult(0);
        dkOut = forOp.getResult(1);
        dvOut = forOp.getResult(2);
      } else {
        // Rotated, as the dQ kernel's loop: visit i's dV and dK MMAs, then
        // visit i + 1's S^T and dP^T behind them, one wait for the four.
        // Prologue: visit 0's S^T and dP^T.
        Value zeroS = FragZeroOp::create(ab, loc, sType);
        auto headIf = scf::IfOp::create(
            ab, loc, TypeRange{sType, sType, i32},
            eb.cmp(arith::CmpIPredicate::sgt, vis.total, eb.c(0)),
            /*withElseRegion=*/true);
        {
          OpBuilder tb = headIf.getThenBodyBuilder();
          Prepared p0 = prepare(tb, carried[0], qt0);
          SmallVector<Value> sdpT = mmaGroup(
              tb, loc, turns, [&]() { return issueScores(tb, p0); });
          scoresIn(tb, I32Builder{tb, loc}.c(0));
          scf::YieldOp::create(tb, loc, ValueRange{sdpT[0], sdpT[1], p0.st});
          OpBuilder elseb = headIf.getElseBodyBuilder();
          scf::YieldOp::create(
              elseb, loc, ValueRange{zeroS, zeroS, I32Builder{elseb, loc}.c(0)});
        }
        // Carried: the ring's iteration, dK, dV, the visit (query tile,
        // head), and its S^T, dP^T and ring-A stage.
        auto forOp = scf::ForOp::create(
            ab, loc, eb.c(0), vis.total, eb.c(1),
            ValueRange{carried[0], zero, zero, qt0, head0,
                       headIf.getResult(0), headIf.getResult(1),
                       headIf.getResult(2)});
        OpBuilder fb = OpBuilder::atBlockBegin(forOp.getBody());
        I32Builder fib{fb, loc};
        auto args = forOp.getRegionIterArgs();
        Value i = forOp.getInductionVar();
        Value qi = args[0], dkAcc = args[1], dvAcc = args[2], qt = args[3],
              head = args[4], st = args[7];
        Gradients g = gradients(fb, qt, head, qi, st, args[5], args[6]);
        auto [qtNext, headNext] = vis.next(fib, qt, head);
        Value iNext = fib.add(i, fib.c(1));
        Value qiNext = fib.add(qi, fib.c(1));
        auto step = scf::IfOp::create(
            fb, loc, TypeRange{accType, accType, sType, sType, i32},
            fib.cmp(arith::CmpIPredicate::slt, iNext, vis.total),
            /*withElseRegion=*/true);
        {
          // With turns the next stage is acquired and zeroed before the
          // turn is taken; without, while dV runs.
          OpBuilder tb = step.getThenBodyBuilder();
          Prepared pn;
          if (pingPong)
            pn = prepare(tb, qiNext, qtNext);
          SmallVector<Value> done =
              gradientMmas(tb, g, dkAcc, dvAcc, [&]() -> SmallVector<Value> {
                if (!pingPong)
                  pn = prepare(tb, qiNext, qtNext);
                return issueScores(tb, pn);
              });
          scoresIn(tb, iNext);
          scf::YieldOp::create(
              tb, loc, ValueRange{done[1], done[0], done[2], done[3], pn.st});
          // The item's last visit: dV and dK alone (zeros leave the loop
          // for S^T and dP^T, as in the dQ kernel).
          OpBuilder elseb = step.getElseBodyBuilder();
          SmallVector<Value> last = gradientMmas(elseb, g, dkAcc, dvAcc, none);
          Value noneS = FragZeroOp::create(elseb, loc, sType);
          scf::YieldOp::create(
              elseb, loc, ValueRange{last[1], last[0], noneS, noneS, st});
        }
        // dV and dK of visit i are complete: its query tiles may go.
        PipelineReleaseOp::create(fb, loc, secondGradO ? qringB : qring, g.stB);
        scf::YieldOp::create(fb, loc,
                             ValueRange{qiNext, step.getResult(0),
                                        step.getResult(1), qtNext, headNext,
                                        step.getResult(2), step.getResult(3),
                                        step.getResult(4)});
        kvOut = forOp.getResult(0);
        dkOut = forOp.getResult(1);
        dvOut = forOp.getResult(2);
      }
      // An item without query tiles (none is scheduled) frees them here.
      releaseIf(ab, loc, eb.cmp(arith::CmpIPredicate::sle, vis.total, eb.c(0)),
                kp, kst);
      GradStoreOp::create(ab, loc, dkOut, dk, item.qStart, rowBase,
                          item.qRows, item.kvHead, softmaxScale, kvHeads,
                          /*columns=*/Value());
      Value inv = arith::ConstantOp::create(
          ab, loc, ab.getF32FloatAttr(std::ldexp(1.0f, -fixedScale)));
      GradStoreOp::create(ab, loc, dvOut, dv, item.qStart, rowBase,
                          item.qRows, item.kvHead, inv, kvHeads,
                          /*columns=*/Value());
      return {kvOut};
    });
    ReturnOp::create(rb, loc);
  }
  ReturnOp::create(b, loc);
  kernel->setAttr("tile", tileAttr(b, bq, bn, stages));
  return success();
}

} // namespace flamia::tile
