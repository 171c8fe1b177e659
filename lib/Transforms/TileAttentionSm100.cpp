//===- TileAttentionSm100.cpp - flamia-tile for sm_100a --------------------===//
//
// The sm_100a attention program: tcgen05 MMAs issued by one thread, S and O
// accumulated in tensor memory, block-scaled E4M3 operands read as the
// quantizer wrote them. Three roles of one warpgroup each:
//
//   "producer" (one thread): per item, TMA Q (E4M3 per-token copy and, with
//     a safe block, the bf16 original) and bulk-copy its scale-factor tile;
//     per key tile, TMA K and V into a ring of E4M3 stages with their
//     scale-factor tiles, or, for tiles inside the queries' safe block, the
//     bf16 K and V into a one-stage ring of their own.
//   "mma" (one thread): per key tile j, S_j = Q K_j^T into S buffer j % 2
//     (kind::mxf8f6f4 with the Q and K scale factors copied to TMEM, or
//     kind::f16 on the safe block), then O += P_{j-1} V_{j-1}: the next S is
//     issued before waiting for the softmax of the current one, so the
//     tensor cores work while the softmax runs. Completion reaches the
//     other roles through tcgen05.commit on the pipelines' barriers.
//   "softmax" (128 threads, one query row each): per key tile, load S from
//     TMEM, mask, online softmax, round P (E4M3 * 2^8, or bf16 on the safe
//     block) into TMEM, rescale O in TMEM once the previous P V is done;
//     at the end of the item, O / l and LSE to global memory.
//
// With p-in-smem the E4M3 P goes to a 16 KiB shared-memory tile instead
// (flamia.smem.store: TMA's swizzled K-major layout, fenced for the async
// proxy) and P V reads A from there, the block-scaled form CUTLASS wraps;
// the bf16 safe-block P stays in TMEM (kind::f16 with A in TMEM is the form
// FlashAttention-4 uses). It costs one K/V stage at D = 128 (not with
// nvfp4-mixed's half-size K tiles).
//
// Tensor memory (512 columns): S buffers at 0 and 128, O at 256 (D
// columns), P at 384 (32 columns of E4M3 or 64 of bf16), scale factors
// from 448 (Q; K and V double-buffered by S buffer; P's fixed scale).
//
// Recipe nvfp4-mixed: Q and K are E2M1 payloads (two a byte) with unsigned
// E4M3 scales per 16 channels, a 512-byte scale-factor tile per 64
// channels; S = Q K^T is kind::mxf4nvf4.block_scale.scale_vec::4X, one
// 4-column scale chunk per K = 64 step (Q 448-455, K 456-463 and 464-471,
// V 472-479, P 480 at D = 128). P V is the same MXFP8 MMA.
//
// Pipelines and who arrives on their barriers:
//   q    (1 stage)  full: producer TMA;  empty: commit after the item's last S
//   kv   (S stages) full: producer TMA;  empty: commit after the tile's P V
//   safe (1 stage)  the same for bf16 K/V tiles
//   s    (2 stages) full: commit after S_j;  empty: 128 softmax threads
//   p    (1 stage)  full: 128 softmax threads (P and rescaled O in TMEM);
//                   empty: commit after P V (also: O complete)
//
//===----------------------------------------------------------------------===//
#include "TileAttention.h"

#include "mlir/IR/Builders.h"

#include <limits>

using namespace mlir;
using namespace flamia;
using namespace flamia::tile;

namespace {

// Tensor-memory columns.
constexpr int64_t kTmemColumns = 512;
constexpr int64_t kSColumn = 0;   // two 128-column S buffers
constexpr int64_t kOColumn = 256; // D columns
constexpr int64_t kPColumn = 384; // 32 (E4M3) or 64 (bf16) columns
constexpr int64_t kSfQColumn = 448;
/// Columns of O rescaled per tensor-memory round trip.
constexpr int64_t kRescaleColumns = 32;
/// E8M0 1.0 in each byte: P's E4M3 codes hold P * 2^8 exactly like the
/// bf16 safe-block P, and flamia.attn.store divides by 2^8 once.
constexpr int32_t kUnitScales = 0x7F7F7F7F;

struct Sm100Program {
  KernelOp kernel;
  AttentionTileOp at;
  Location loc;
  MLIRContext *ctx;
  int64_t d, safeBlock;
  bool causal, safe;
  int64_t stages;
  bool pInSmem;
  /// Q's and K's scale-factor tiles per slot: 1 (E4M3, 4 K-blocks of 32
  /// channels), or one per 64 channels (NVFP4, 4 blocks of 16 each).
  int64_t qkTiles = 1;
  /// TMEM columns of the scale-factor chunks: Q's from kSfQColumn, then K's
  /// and V's per S buffer, then P's fixed scale.
  int64_t sfKColumn() const { return kSfQColumn + 4 * qkTiles; }
  int64_t sfVColumn() const { return sfKColumn() + 2 * 4 * qkTiles; }
  int64_t sfPColumn() const { return sfVColumn() + 2 * 4; }
  static constexpr int64_t bm = 128, bn = 128;

  // Parameters and shared state (set up in build()).
  Value items, q8, qSf, k8, kSf, v8, vSf, qSafe, kSafe, vSafe, out, lse, scale,
      numTokens, counter, numItems;
  Value qHeads, kvHeads; // runtime head counts (null when static)
  Value q8s, qSfs, q16s, k8s, kSfs, v8s, vSfs, k16s, v16s, p8s; // smem
  Value qp, kvp, safep, sp, pp, queue, tmem;
  PrecisionAttr pPrecision;
  Type i32;

  Value isSafe(I32Builder &ib, Value kt, const ItemInfo &item) {
    return safe ? isSafeTile(ib, kt, item, safeBlock, bn) : ib.i1(false);
  }

  LogicalResult build();
  void buildProducer(OpBuilder &b);
  void buildMma(OpBuilder &b);
  void buildSoftmax(OpBuilder &b);
};

LogicalResult Sm100Program::build() {
  if (failed(checkTileShape(at, bm, bn)))
    return failure();
  if (safeBlock > bn)
    return at.emitOpError()
           << "flamia-tile: sm_100a keeps one bf16 K/V stage for the safe "
              "block, which needs safe_block <= 128, got "
           << safeBlock;
  if (at.getQ().size() != 2 || at.getK().size() != 2 || at.getV().size() != 2)
    return at.emitOpError()
           << "flamia-tile: sm_100a reads each of q, k, v as its payload and "
              "its [NB, H, 512 x tiles] scale-factor tiles (two operands each)";
  auto payload = cast<GlobalType>(at.getQ()[0].getType());
  auto kPayload = cast<GlobalType>(at.getK()[0].getType());
  auto vPayload = cast<GlobalType>(at.getV()[0].getType());
  bool fp4 = isa<Float4E2M1FNType>(payload.getElementType());
  if ((!fp4 && !isa<Float8E4M3FNType>(payload.getElementType())) ||
      kPayload.getElementType() != payload.getElementType() ||
      !isa<Float8E4M3FNType>(vPayload.getElementType()))
    return at.emitOpError()
           << "flamia-tile: sm_100a reads Q and K as E4M3 (mxfp8) or E2M1 "
              "(nvfp4-mixed) payloads of one format and V as E4M3, got "
           << payload << ", " << kPayload << ", " << vPayload;
  d = payload.getShape()[2];
  if (failed(checkKernelsExist(at, "sm_100a", d)))
    return failure();
  qkTiles = fp4 ? (d + 63) / 64 : 1;
  for (auto [sf, tiles] : {std::make_pair(at.getQ()[1], qkTiles),
                           std::make_pair(at.getK()[1], qkTiles),
                           std::make_pair(at.getV()[1], int64_t{1})}) {
    auto t = cast<GlobalType>(sf.getType());
    if (t.getShape().size() != 3 || t.getShape()[2] != 512 * tiles ||
        !t.getElementType().isInteger(8))
      return at.emitOpError() << "flamia-tile: scale-factor tiles are [NB, H, "
                              << 512 * tiles << "] i8, got " << t;
  }
  if (at.getP().getElementType() != vPayload.getElementType() ||
      !at.getP().getFixedScale())
    return at.emitOpError() << "flamia-tile: sm_100a rounds P to E4M3 with a "
                               "fixed scale, got "
                            << at.getP();

  items = at.getItems();
  q8 = at.getQ()[0];
  qSf = at.getQ()[1];
  k8 = at.getK()[0];
  kSf = at.getK()[1];
  v8 = at.getV()[0];
  vSf = at.getV()[1];
  if (safe) {
    qSafe = at.getSafe()[0];
    kSafe = at.getSafe()[1];
    vSafe = at.getSafe()[2];
  }
  out = at.getO();
  lse = at.getLse();
  scale = at.getScaleLog2();
  numTokens = at.getNumTokens();
  if (at.getDebugScores())
    return at.emitOpError() << "flamia-tile: debug_scores (the backward's S "
                               "check) is implemented on sm_90a only";
  qHeads = at.getQHeads();
  kvHeads = at.getKvHeads();
  pPrecision = at.getP();
  auto queueCreate = *kernel.getBody().front().getOps<QueueCreateOp>().begin();
  counter = queueCreate.getCounter();
  numItems = queueCreate.getNumItems();
  i32 = IntegerType::get(ctx, 32);

  // Drop the untiled body (keep the parameters).
  Block &body = kernel.getBody().front();
  while (!body.empty())
    body.back().erase();
  kernel.setThreads(384);

  OpBuilder b = OpBuilder::atBlockEnd(&body);
  Type qk = payload.getElementType(), f8 = vPayload.getElementType(),
       bf16 = BFloat16Type::get(ctx);
  Type i8 = IntegerType::get(ctx, 8);
  auto tile = [&](int64_t n, Type t) {
    return SmemAllocOp::create(b, loc, SmemType::get(ctx, {n, bm, d}, t))
        .getResult();
  };
  auto sfTile = [&](int64_t n, int64_t tiles) {
    return SmemAllocOp::create(b, loc,
                               SmemType::get(ctx, {n, 8 * tiles, 64}, i8))
        .getResult();
  };
  // The E4M3 ring is as deep as shared memory allows next to the bf16
  // safe-block buffers.
  // (NVFP4's K tiles are half as large: 4 stages fit at D = 128 too, with
  // P in shared memory as well.)
  stages = d == 128 && safe && !fp4 ? (pInSmem ? 2 : 3) : 4;
  q8s = tile(1, qk);
  qSfs = sfTile(1, qkTiles);
  k8s = tile(stages, qk);
  v8s = tile(stages, f8);
  kSfs = sfTile(stages, qkTiles);
  vSfs = sfTile(stages, 1);
  if (safe) {
    q16s = tile(1, bf16);
    k16s = tile(1, bf16);
    v16s = tile(1, bf16);
  }
  if (pInSmem)
    p8s = SmemAllocOp::create(b, loc, SmemType::get(ctx, {1, bm, bn}, f8))
              .getResult();
  auto pipeline = [&](int64_t n, int64_t consumers, int64_t producers) {
    auto p = PipelineCreateOp::create(b, loc, PipelineType::get(ctx, n),
                                      consumers);
    p.setProducers(producers);
    return p.getResult();
  };
  qp = pipeline(1, 1, 1);
  kvp = pipeline(stages, 1, 1);
  if (safe)
    safep = pipeline(1, 1, 1);
  sp = pipeline(2, 128, 1);
  pp = pipeline(1, 1, 128);
  // Receivers: the MMA thread and the 128 softmax threads.
  queue = QueueCreateOp::create(b, loc, QueueType::get(ctx), counter, numItems,
                                /*receivers=*/129);
  tmem = TmemAllocOp::create(b, loc, i32, kTmemColumns, /*by_warpgroup=*/2);

  buildProducer(b);
  buildMma(b);
  buildSoftmax(b);
  ReturnOp::create(b, loc);
  kernel->setAttr("tile",
                  b.getDictionaryAttr(
                      {b.getNamedAttr("block_m", b.getI64IntegerAttr(bm)),
                       b.getNamedAttr("block_n", b.getI64IntegerAttr(bn)),
                       b.getNamedAttr("stages", b.getI64IntegerAttr(stages)),
                       b.getNamedAttr("tmem_columns",
                                      b.getI64IntegerAttr(kTmemColumns))}));
  return success();
}

void Sm100Program::buildProducer(OpBuilder &b) {
  OpBuilder rb = createRole(b, loc, "producer", 0, 1, 40, /*singleThread=*/true);
  I32Builder ib{rb, loc};
  workLoop(rb, loc, queue, numItems, QueueSide::fetch, ValueRange{ib.c(0), ib.c(0)},
           [&](OpBuilder &ab, Value it, ValueRange carried, Value index)
               -> SmallVector<Value> {
    I32Builder eb{ab, loc};
    ItemInfo item = loadItem(eb, items, index, causal, bn);
    Value qst = PipelineAcquireOp::create(ab, loc, i32, qp, it,
                                          PipelineSide::producer);
    PipelineExpectOp::create(
        ab, loc, qp, qst,
        safe ? stageBytes({q8s, qSfs, q16s}) : stageBytes({q8s, qSfs}));
    Value qCol = eb.mul(item.qHead, eb.c(d));
    TmaLoadOp::create(ab, loc, q8, item.qStart, qCol, q8s, qst, qp);
    BulkLoadOp::create(ab, loc, qSf,
                       scaleTileSlot(eb, item, item.qTile, item.qHead,
                              scaleTileHeads(eb, qSf, qHeads)),
                       qSfs, qst, qp);
    if (safe)
      TmaLoadOp::create(ab, loc, qSafe, item.qStart, qCol, q16s, qst, qp);
    Value kvCol = eb.mul(item.kvHead, eb.c(d));
    auto forOp = scf::ForOp::create(ab, loc, eb.c(0), item.numKeyTiles, eb.c(1),
                                    ValueRange{carried[0], carried[1]});
    {
      OpBuilder fb = OpBuilder::atBlockBegin(forOp.getBody());
      I32Builder fib{fb, loc};
      Value kt = forOp.getInductionVar();
      Value kvIt = forOp.getRegionIterArgs()[0];
      Value safeIt = forOp.getRegionIterArgs()[1];
      Value row = fib.add(item.docStart, fib.mul(kt, fib.c(bn)));
      auto scaled = [&](OpBuilder &lb) -> SmallVector<Value> {
        I32Builder lib{lb, loc};
        Value st = PipelineAcquireOp::create(lb, loc, i32, kvp, kvIt,
                                             PipelineSide::producer);
        PipelineExpectOp::create(lb, loc, kvp, st,
                                 stageBytes({k8s, v8s, kSfs, vSfs}));
        TmaLoadOp::create(lb, loc, k8, row, kvCol, k8s, st, kvp);
        TmaLoadOp::create(lb, loc, v8, row, kvCol, v8s, st, kvp);
        Value slot =
            scaleTileSlot(lib, item, kt, item.kvHead, scaleTileHeads(lib, kSf, kvHeads));
        BulkLoadOp::create(lb, loc, kSf, slot, kSfs, st, kvp);
        BulkLoadOp::create(lb, loc, vSf, slot, vSfs, st, kvp);
        return {lib.add(kvIt, lib.c(1)), safeIt};
      };
      if (safe) {
        auto ifOp = scf::IfOp::create(fb, loc, TypeRange{i32, i32},
                                      isSafe(fib, kt, item), /*withElse=*/true);
        OpBuilder tb = ifOp.getThenBodyBuilder();
        I32Builder tib{tb, loc};
        Value st = PipelineAcquireOp::create(tb, loc, i32, safep, safeIt,
                                             PipelineSide::producer);
        PipelineExpectOp::create(tb, loc, safep, st, stageBytes({k16s, v16s}));
        TmaLoadOp::create(tb, loc, kSafe, row, kvCol, k16s, st, safep);
        TmaLoadOp::create(tb, loc, vSafe, row, kvCol, v16s, st, safep);
        scf::YieldOp::create(tb, loc, ValueRange{kvIt, tib.add(safeIt, tib.c(1))});
        OpBuilder eb2 = ifOp.getElseBodyBuilder();
        scf::YieldOp::create(eb2, loc, scaled(eb2));
        scf::YieldOp::create(fb, loc, ifOp.getResults());
      } else {
        scf::YieldOp::create(fb, loc, scaled(fb));
      }
    }
    return {forOp.getResult(0), forOp.getResult(1)};
  });
  ReturnOp::create(rb, loc);
}

void Sm100Program::buildMma(OpBuilder &b) {
  OpBuilder rb = createRole(b, loc, "mma", 1, 2, 104, /*singleThread=*/true);
  I32Builder ib{rb, loc};
  Type f8 = cast<GlobalType>(v8.getType()).getElementType();
  Type bf16 = BFloat16Type::get(ctx);
  TypeAttr pType8 = TypeAttr::get(f8), pType16 = TypeAttr::get(bf16);
  Value sfP = ib.add(tmem, ib.c(sfPColumn()));
  // Carried: kv iteration, safe iteration, S iteration, P iteration.
  workLoop(rb, loc, queue, numItems, QueueSide::receive,
           ValueRange{ib.c(0), ib.c(0), ib.c(0), ib.c(0)},
           [&](OpBuilder &ab, Value it, ValueRange carried, Value index)
               -> SmallVector<Value> {
    I32Builder eb{ab, loc};
    ItemInfo item = loadItem(eb, items, index, causal, bn);
    Value qst = PipelineAcquireOp::create(ab, loc, i32, qp, it,
                                          PipelineSide::consumer);
    Value sfQ = eb.add(tmem, eb.c(kSfQColumn));
    for (int64_t t = 0; t < qkTiles; ++t)
      UmmaScalesOp::create(ab, loc, qSfs, qst, tmem, kSfQColumn + 4 * t, t);

    // S_kt = Q K_kt^T into S buffer sIt % 2; returns the next (kvIt,
    // safeIt) and the K/V stage it read.
    auto issueS = [&](OpBuilder &sb, Value kt, Value kvIt, Value safeIt,
                      Value sIt) -> SmallVector<Value> {
      I32Builder sib{sb, loc};
      Value sbuf = PipelineAcquireOp::create(sb, loc, i32, sp, sIt,
                                             PipelineSide::producer);
      Value sAddr = sib.add(tmem, sib.mul(sbuf, sib.c(bn)));
      auto scaled = [&](OpBuilder &lb) -> SmallVector<Value> {
        I32Builder lib{lb, loc};
        Value st = PipelineAcquireOp::create(lb, loc, i32, kvp, kvIt,
                                             PipelineSide::consumer);
        // K's scale factors alternate with the S buffer (the copy for
        // S_{j+2} must not overwrite those S_j may still read).
        Value sfK = lib.add(
            tmem, lib.add(lib.c(sfKColumn()), lib.mul(sbuf, lib.c(4 * qkTiles))));
        for (int64_t t = 0; t < qkTiles; ++t)
          UmmaScalesOp::create(lb, loc, kSfs, st, sfK, 4 * t, t);
        UmmaOp::create(lb, loc, sAddr, kSColumn, q8s, qst, IntegerAttr(),
                       TypeAttr(), k8s, st, /*b_transposed=*/false,
                       lib.i1(false), sfQ, sfK, /*b_k_block=*/Value(),
                       /*k_valid=*/Value());
        return {lib.add(kvIt, lib.c(1)), safeIt, st};
      };
      SmallVector<Value> next;
      if (safe) {
        auto ifOp = scf::IfOp::create(sb, loc, TypeRange{i32, i32, i32},
                                      isSafe(sib, kt, item), /*withElse=*/true);
        OpBuilder tb = ifOp.getThenBodyBuilder();
        I32Builder tib{tb, loc};
        Value st = PipelineAcquireOp::create(tb, loc, i32, safep, safeIt,
                                             PipelineSide::consumer);
        UmmaOp::create(tb, loc, sAddr, kSColumn, q16s, qst, IntegerAttr(),
                       TypeAttr(), k16s, st, /*b_transposed=*/false,
                       tib.i1(false), Value(), Value(), /*b_k_block=*/Value(),
                       /*k_valid=*/Value());
        scf::YieldOp::create(tb, loc,
                             ValueRange{kvIt, tib.add(safeIt, tib.c(1)), st});
        OpBuilder eb2 = ifOp.getElseBodyBuilder();
        scf::YieldOp::create(eb2, loc, scaled(eb2));
        next.assign(ifOp.getResults().begin(), ifOp.getResults().end());
      } else {
        next = scaled(sb);
      }
      UmmaCommitOp::create(sb, loc, sp, sbuf, StageBarrier::full);
      next.push_back(sbuf);
      return next; // kvIt, safeIt, stage, sbuf
    };

    SmallVector<Value> first =
        issueS(ab, eb.c(0), carried[0], carried[1], carried[2]);
    Value last = eb.sub(item.numKeyTiles, eb.c(1));
    auto forOp = scf::ForOp::create(
        ab, loc, eb.c(0), item.numKeyTiles, eb.c(1),
        ValueRange{first[0], first[1], eb.add(carried[2], eb.c(1)), carried[3],
                   first[2], first[3]});
    {
      OpBuilder fb = OpBuilder::atBlockBegin(forOp.getBody());
      I32Builder fib{fb, loc};
      Value kt = forOp.getInductionVar();
      auto args = forOp.getRegionIterArgs();
      Value kvIt = args[0], safeIt = args[1], sIt = args[2], pIt = args[3],
            st = args[4], sbuf = args[5];
      // The next S first, so that it runs during this tile's softmax.
      auto more = scf::IfOp::create(fb, loc, TypeRange{i32, i32, i32, i32, i32},
                                    fib.cmp(arith::CmpIPredicate::slt, kt, last),
                                    /*withElse=*/true);
      {
        OpBuilder tb = more.getThenBodyBuilder();
        I32Builder tib{tb, loc};
        SmallVector<Value> n =
            issueS(tb, tib.add(kt, tib.c(1)), kvIt, safeIt, sIt);
        scf::YieldOp::create(tb, loc,
                             ValueRange{n[0], n[1], tib.add(sIt, tib.c(1)), n[2], n[3]});
        // After the item's last S: Q is free once it completes.
        OpBuilder eb2 = more.getElseBodyBuilder();
        UmmaCommitOp::create(eb2, loc, qp, qst, StageBarrier::empty);
        scf::YieldOp::create(eb2, loc, ValueRange{kvIt, safeIt, sIt, st, sbuf});
      }
      // O += P V once the softmax has written P (and rescaled O).
      Value pst = PipelineAcquireOp::create(fb, loc, i32, pp, pIt,
                                            PipelineSide::consumer);
      Value accumulate = fib.cmp(arith::CmpIPredicate::sgt, kt, fib.c(0));
      // Keys of this tile inside the document. The document's last tile
      // also holds the next document's first keys: P is 0 there, but
      // 0 x NaN is NaN, so those V rows (and their 32-key blocks' scale
      // factors) must not reach the MMA. The rows past the end inside the
      // last K step that holds keys are zeroed, and the K steps wholly past
      // the end read that step's rows and scales again (k_valid), against
      // their zero P.
      Value keysInDoc = fib.sub(item.docLen, fib.mul(kt, fib.c(bn)));
      auto zeroPastEnd = [&](OpBuilder &zb, Value tile, Value stage,
                             int64_t kStep) {
        I32Builder zib{zb, loc};
        auto partial = scf::IfOp::create(
            zb, loc, zib.cmp(arith::CmpIPredicate::slt, keysInDoc, zib.c(bn)),
            /*withElse=*/false);
        OpBuilder pb = partial.getThenBodyBuilder();
        I32Builder pib{pb, loc};
        Value stepEnd = pib.mul(pib.cdiv(keysInDoc, kStep), pib.c(kStep));
        SmemZeroRowsOp::create(pb, loc, tile, stage, keysInDoc, stepEnd);
      };
      auto pvScaled = [&](OpBuilder &lb) {
        I32Builder lib{lb, loc};
        Value sfV = lib.add(tmem, lib.add(lib.c(sfVColumn()), lib.mul(sbuf, lib.c(4))));
        UmmaScalesOp::create(lb, loc, vSfs, st, sfV, 0);
        zeroPastEnd(lb, v8s, st, /*kStep=*/32);
        if (pInSmem)
          UmmaOp::create(lb, loc, tmem, kOColumn, p8s, lib.c(0), IntegerAttr(),
                         TypeAttr(), v8s, st, /*b_transposed=*/true, accumulate,
                         sfP, sfV, /*b_k_block=*/Value(), keysInDoc);
        else
          UmmaOp::create(lb, loc, tmem, kOColumn, Value(), Value(),
                         lb.getI64IntegerAttr(kPColumn), pType8, v8s, st,
                         /*b_transposed=*/true, accumulate, sfP, sfV,
                         /*b_k_block=*/Value(), keysInDoc);
        UmmaCommitOp::create(lb, loc, pp, pst, StageBarrier::empty);
        UmmaCommitOp::create(lb, loc, kvp, st, StageBarrier::empty);
      };
      if (safe) {
        auto ifOp = scf::IfOp::create(fb, loc, isSafe(fib, kt, item),
                                      /*withElse=*/true);
        OpBuilder tb = ifOp.getThenBodyBuilder();
        zeroPastEnd(tb, v16s, st, /*kStep=*/16);
        UmmaOp::create(tb, loc, tmem, kOColumn, Value(), Value(),
                       tb.getI64IntegerAttr(kPColumn), pType16, v16s, st,
                       /*b_transposed=*/true, accumulate, Value(), Value(),
                       /*b_k_block=*/Value(), keysInDoc);
        UmmaCommitOp::create(tb, loc, pp, pst, StageBarrier::empty);
        UmmaCommitOp::create(tb, loc, safep, st, StageBarrier::empty);
        OpBuilder eb2 = ifOp.getElseBodyBuilder();
        pvScaled(eb2);
      } else {
        pvScaled(fb);
      }
      SmallVector<Value> yielded = {more.getResult(0), more.getResult(1),
                                    more.getResult(2), fib.add(pIt, fib.c(1)),
                                    more.getResult(3), more.getResult(4)};
      scf::YieldOp::create(fb, loc, yielded);
    }
    return {forOp.getResult(0), forOp.getResult(1), forOp.getResult(2),
            forOp.getResult(3)};
  });
  ReturnOp::create(rb, loc);
}

void Sm100Program::buildSoftmax(OpBuilder &b) {
  OpBuilder rb = createRole(b, loc, "softmax", 2, 3, 240, /*singleThread=*/false);
  I32Builder ib{rb, loc};
  Type f32 = Float32Type::get(ctx), bf16 = BFloat16Type::get(ctx);
  Type f8 = cast<GlobalType>(v8.getType()).getElementType();
  auto sType = FragmentType::get(ctx, {bm, bn}, f32);
  auto oType = FragmentType::get(ctx, {bm, d}, f32);
  auto rowsType = RowsType::get(ctx, bm, f32);
  // P's scale factors: the fixed 2^8 stays in the codes (see kUnitScales).
  TmemFillOp::create(rb, loc, tmem, sfPColumn(), 4, kUnitScales);
  workLoop(rb, loc, queue, numItems, QueueSide::receive, ValueRange{ib.c(0), ib.c(0)},
           [&](OpBuilder &ab, Value it, ValueRange carried, Value index)
               -> SmallVector<Value> {
    I32Builder eb{ab, loc};
    ItemInfo item = loadItem(eb, items, index, causal, bn);
    Value queryBase = eb.mul(item.qTile, eb.c(bm));
    Value m0 = RowsFillOp::create(
        ab, loc, rowsType,
        ab.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
    Value l0 = RowsFillOp::create(ab, loc, rowsType, ab.getF32FloatAttr(0));
    auto forOp = scf::ForOp::create(ab, loc, eb.c(0), item.numKeyTiles, eb.c(1),
                                    ValueRange{carried[0], carried[1], m0, l0});
    {
      OpBuilder fb = OpBuilder::atBlockBegin(forOp.getBody());
      I32Builder fib{fb, loc};
      Value kt = forOp.getInductionVar();
      auto args = forOp.getRegionIterArgs();
      Value sIt = args[0], pIt = args[1], m = args[2], l = args[3];
      Value sbuf = PipelineAcquireOp::create(fb, loc, i32, sp, sIt,
                                             PipelineSide::consumer);
      Value s = TmemLoadOp::create(fb, loc, sType,
                                   fib.add(tmem, fib.mul(sbuf, fib.c(bn))),
                                   kSColumn);
      PipelineReleaseOp::create(fb, loc, sp, sbuf);
      Value keyBase = fib.mul(kt, fib.c(bn));
      SoftmaxUpdateOp sm = maskedSoftmaxStep(fb, loc, s, kt, keyBase, queryBase,
                                             item, m, l, scale, causal, bn,
                                             *pPrecision.getFixedScale());
      // Round P (packed, so that fewer registers wait), then put it where
      // the previous P was once that P V is done (which also completes O
      // for the rescale below).
      auto storeP = [&](OpBuilder &pb, Type element, bool quantized) {
        I32Builder pib{pb, loc};
        Value p = FragQuantizeOp::create(
            pb, loc, FragmentType::get(ctx, {bm, bn}, element), sm.getP(),
            pib.i1(quantized), pPrecision, /*nan_via_row_sum=*/false,
            /*prescaled=*/true);
        Value pst = PipelineAcquireOp::create(pb, loc, i32, pp, pIt,
                                              PipelineSide::producer);
        if (pInSmem && quantized)
          SmemStoreOp::create(pb, loc, p, p8s, pib.c(0));
        else
          TmemStoreOp::create(pb, loc, p, tmem, kPColumn);
        return pst;
      };
      Value pst;
      if (safe) {
        auto ifOp = scf::IfOp::create(fb, loc, TypeRange{i32},
                                      isSafe(fib, kt, item), /*withElse=*/true);
        OpBuilder tb = ifOp.getThenBodyBuilder();
        scf::YieldOp::create(tb, loc, storeP(tb, bf16, /*quantized=*/false));
        OpBuilder eb2 = ifOp.getElseBodyBuilder();
        scf::YieldOp::create(eb2, loc, storeP(eb2, f8, /*quantized=*/true));
        pst = ifOp.getResult(0);
      } else {
        pst = storeP(fb, f8, /*quantized=*/true);
      }
      // O *= alpha (the first tile's P V overwrites O), 32 columns at a
      // time: a whole row in and a whole row out would need two blocks of
      // D contiguous registers.
      auto rescale = scf::IfOp::create(
          fb, loc, fib.cmp(arith::CmpIPredicate::sgt, kt, fib.c(0)),
          /*withElse=*/false);
      {
        OpBuilder tb = rescale.getThenBodyBuilder();
        auto chunkType = FragmentType::get(ctx, {bm, kRescaleColumns}, f32);
        for (int64_t c = 0; c < d; c += kRescaleColumns) {
          Value o = TmemLoadOp::create(tb, loc, chunkType, tmem, kOColumn + c);
          Value scaled =
              FragScaleRowsOp::create(tb, loc, chunkType, o, sm.getAlpha());
          TmemStoreOp::create(tb, loc, scaled, tmem, kOColumn + c);
        }
      }
      PipelineArriveOp::create(fb, loc, pp, pst);
      scf::YieldOp::create(fb, loc,
                           ValueRange{fib.add(sIt, fib.c(1)), fib.add(pIt, fib.c(1)),
                                      sm.getNewMax(), sm.getNewSum()});
    }
    // The last P V: wait for it without taking the stage (the next item's
    // first tile acquires the same iteration again).
    Value pIt = forOp.getResult(1);
    PipelineAcquireOp::create(ab, loc, i32, pp, pIt, PipelineSide::producer);
    Value o = TmemLoadOp::create(ab, loc, oType, tmem, kOColumn);
    AttnStoreOp::create(ab, loc, o, forOp.getResult(2), forOp.getResult(3), out,
                        lse, item.qStart, eb.c(0), item.qRows, item.qHead,
                        numTokens, qHeads, *pPrecision.getFixedScale(),
                        /*sum_prescaled=*/true);
    return {forOp.getResult(0), pIt};
  });
  TmemDeallocOp::create(rb, loc, tmem, kTmemColumns);
  ReturnOp::create(rb, loc);
}

} // namespace

LogicalResult flamia::tile::tileSm100(KernelOp kernel, AttentionTileOp at,
                                      bool pInSmem) {
  Sm100Program program{kernel,
                       at,
                       at.getLoc(),
                       kernel.getContext(),
                       /*d=*/0,
                       at.getRecipe().getSafeBlock(),
                       at.getCausal(),
                       at.getRecipe().getSafeBlock() > 0,
                       /*stages=*/0,
                       pInSmem};
  return program.build();
}
