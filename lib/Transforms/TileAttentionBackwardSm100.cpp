//===- TileAttentionBackwardSm100.cpp - flamia-tile, the backward on sm_100a ===//
//
// The two backward programs of sm_100a: the same block-level backward as
// sm_90a's (TileAttentionBackward.cpp, docs/lowering.md section 7: a dQ
// kernel on the forward's query-tile items and a dK/dV kernel on key-tile
// items, every gradient row summed in registers of one item in one fixed
// order, so no atomics, no dQ accumulation buffer and bit-identical results
// run to run), written with tcgen05: one thread issues every MMA, the
// accumulators live in tensor memory, the operands are the E4M3 payloads
// the quantizers wrote with their scale-factor tiles (block-scaled
// kind::mxf8f6f4 MMAs; kind::f16 on the bf16 originals inside the safe
// block).
//
// Four warpgroups (512 threads) in four roles:
//   "producer" (warpgroup 0, one thread): TMA of the tiles, bulk copies of
//     their scale-factor tiles;
//   "mma" (warpgroup 1, one thread): scale factors into tensor memory
//     (tcgen05.cp), every tcgen05.mma, commits to the pipelines;
//   "grad" (warpgroups 2-3, 256 threads, one row per thread): the score
//     tiles out of tensor memory, the softmax gradient, P and dS rounded
//     (E4M3 codes with their block scales, or bf16 in the safe block) back
//     into tensor memory, the epilogue. Warpgroup g of the role takes the
//     g-th half of each score tile's columns, so a dS block of 32 columns
//     (the contract's blocks along keys for dQ, along queries for dK) is
//     one thread's own: its amax needs no exchange.
//
// The MMA thread issues the next tile's S and dP (or S^T and dP^T) as soon
// as the gradient role has loaded the current ones into registers, before
// it waits for their dS: the tensor cores run while the softmax gradient is
// computed. Scale factors copied into tensor memory by tcgen05.cp are
// ordered after the MMAs issued before them only when a barrier says those
// have completed (the PTX ISA pipelines cp -> mma, not mma -> cp), so every
// copy below comes after the wait that proves the previous reader done.
//
// Tensor memory (512 columns), dQ kernel (rows are queries):
//     0-127  S = Q K^T        128-255  dP = dO V^T     256-383  dQ (D cols)
//   384-447  dS (32 columns of E4M3 codes or 64 of bf16), A of dQ += dS K
//   448 Q, 452 dO, 456 K (rows tokens), 460 V (rows tokens), 464 dS,
//   468 K (rows channels): 4-column scale-factor chunks.
// dK/dV kernel (rows are keys, query tiles of 64):
//     0-63   S^T = K Q^T       64-127  dP^T = V dO^T
//   128-255  dV (D cols)      256-383  dK (D cols)
//   384-415  P^T (16 columns of E4M3 or 32 of bf16), A of dV += P^T dO
//   416-447  dS^T, A of dK += dS^T Q
//   448 K, 452 V, 456 Q, 460 dO (rows tokens), 464 dO, 468 Q's token
//   blocks (rows channels), 472 dS^T, 476 P's fixed scale (E8M0 1.0).
//
// Recipe nvfp4-mixed: the GEMMs that contract the head dim (S, dP, S^T,
// dP^T) read the E2M1 per-token copies of Q, K, V, dO with their
// unsigned-E4M3 scales per 16 channels (kind::mxf4nvf4, scale_vec::4X, a
// 512-byte tile and a 4-column chunk per 64 channels: 8 columns each at
// D = 128, so the chunks above move up and end at 488 and 496); the
// token-contracted ones (dQ, dV, dK) read K's, dO's and Q's E4M3 token
// blocks, separate copies here (k_tb, grad_o_tb) that share the stage of
// the per-token copy they come with. NVFP4's half-size tiles leave room
// for a second V stage in the dQ kernel at D = 128.
//
// Rows of the next document that a tile reaches into are zeroed in shared
// memory before a token-contracted MMA reads them, and the K steps wholly
// past the document's end re-read the last step that holds its rows
// (flamia.umma k_valid): the next document's NaN payloads or scales never
// meet this document's zero P or dS (L2 for non-finite inputs).
//
//===----------------------------------------------------------------------===//
#include "TileAttention.h"

#include "mlir/IR/Builders.h"

#include <cmath>

using namespace mlir;
using namespace flamia;
using namespace flamia::tile;

namespace {

// Roles and their register budgets: (40 + 168) x 128 + 152 x 256 = 65536 of
// the 65536 (a warp-specialized kernel of 512 threads starts at 128 each).
constexpr int64_t kThreads = 512;
constexpr int64_t kProducerRegisters = 40;
constexpr int64_t kMmaRegisters = 168;
constexpr int64_t kGradRegisters = 152;
constexpr int64_t kGradThreads = 256;
constexpr int64_t kTmemColumns = 512;
/// The dQ kernel's producer with K's second copy (one more tensor map and
/// TMA per key tile) spills at 40 registers (nvfp4-mixed, D = 64, causal):
/// 8 more, taken from the MMA thread, which needs no more than 160 there.
constexpr int64_t kProducerRegistersTwoK = 48;
constexpr int64_t kMmaRegistersTwoK = 160;
static_assert((kProducerRegisters + kMmaRegisters) * 128 +
                      kGradRegisters * kGradThreads ==
                  65536,
              "the roles' registers fill the register file");
static_assert(kProducerRegistersTwoK + kMmaRegistersTwoK ==
                  kProducerRegisters + kMmaRegisters,
              "the same register file, split differently");
/// E8M0 1.0 in each byte: P's codes hold P * 2^8 like the bf16 safe-block P,
/// and the dV epilogue divides by 2^8 once.
constexpr int32_t kUnitScales = 0x7F7F7F7F;

// dQ kernel columns.
constexpr int64_t kDqS = 0, kDqDp = 128, kDqAcc = 256, kDqDs = 384;
/// The first scale-factor chunk (Q's); the rest follow it, 4 columns per
/// tile (DqProgram::sf*Col).
constexpr int64_t kDqSfQ = 448;
// dK/dV kernel columns.
constexpr int64_t kKvS = 0, kKvDp = 64, kKvDv = 128, kKvDk = 256, kKvP = 384,
                  kKvDs = 416;
/// The first scale-factor chunk (K's); the rest follow it
/// (DkdvProgram::sf*Col).
constexpr int64_t kKvSfK = 448;

/// What both programs set up the same way.
struct Sm100BackwardBase {
  KernelOp kernel;
  Location loc;
  MLIRContext *ctx;
  Type i32, f32, bf16, f8, i8;
  int64_t d = 0;

  Sm100BackwardBase(KernelOp kernel, Location loc)
      : kernel(kernel), loc(loc), ctx(kernel.getContext()) {
    i32 = IntegerType::get(ctx, 32);
    f32 = Float32Type::get(ctx);
    bf16 = BFloat16Type::get(ctx);
    f8 = Float8E4M3FNType::get(ctx);
    i8 = IntegerType::get(ctx, 8);
  }

  Value tile(OpBuilder &b, int64_t stages, int64_t rows, Type element) {
    return SmemAllocOp::create(b, loc,
                               SmemType::get(ctx, {stages, rows, d}, element))
        .getResult();
  }
  /// `stages` slots of `tiles` 512-byte scale-factor tiles (one per 64
  /// channels for an NVFP4 operand, else one).
  Value sfTile(OpBuilder &b, int64_t stages, int64_t tiles = 1) {
    return SmemAllocOp::create(
               b, loc, SmemType::get(ctx, {stages, 8 * tiles, 64}, i8))
        .getResult();
  }
  /// Copies the `tiles` scale-factor tiles of `source`[`stage`] into the
  /// 4-column chunks from `column` on, tile t into chunk t (the chunk K
  /// step t of an NVFP4 MMA reads).
  void copyScales(OpBuilder &b, Value source, Value stage, Value tmem,
                  int64_t column, int64_t tiles) {
    for (int64_t t = 0; t < tiles; ++t)
      UmmaScalesOp::create(b, loc, source, stage, tmem, column + 4 * t, t);
  }
  Value pipeline(OpBuilder &b, int64_t stages, int64_t consumers,
                 int64_t producers) {
    auto p = PipelineCreateOp::create(b, loc, PipelineType::get(ctx, stages),
                                      consumers);
    p.setProducers(producers);
    return p.getResult();
  }
  /// Drops the untiled body (keeps the parameters); returns a builder at
  /// the end of the empty body.
  OpBuilder resetKernel() {
    Block &body = kernel.getBody().front();
    while (!body.empty())
      body.back().erase();
    kernel.setThreads(kThreads);
    return OpBuilder::atBlockEnd(&body);
  }
  /// The TMEM address `column` columns on from `base` (a runtime offset).
  Value at(I32Builder &ib, Value base, Value column) {
    return ib.add(base, column);
  }
  /// flamia.smem.zero_rows of `tile`[`stage`] from row `inDoc` (the rows a
  /// document still has in the tile) to the end of the K step of `kStep`
  /// rows that holds it, when the tile reaches past the document's end: the
  /// rows a token-contracted MMA reads with zero P or dS but the next
  /// document's values. The steps past that one are never read (k_valid).
  void zeroPastEnd(OpBuilder &b, Value tile, Value stage, Value inDoc,
                   int64_t rows, int64_t kStep) {
    I32Builder ib{b, loc};
    auto partial = scf::IfOp::create(
        b, loc, ib.cmp(arith::CmpIPredicate::slt, inDoc, ib.c(rows)),
        /*withElse=*/false);
    OpBuilder pb = partial.getThenBodyBuilder();
    I32Builder pib{pb, loc};
    Value stepEnd = pib.mul(pib.cdiv(inDoc, kStep), pib.c(kStep));
    SmemZeroRowsOp::create(pb, loc, tile, stage, inDoc, stepEnd);
  }
  /// `x % n` of a non-negative i32 (a ring's stage from its iteration).
  Value stageOf(I32Builder &ib, Value iteration, int64_t stages) {
    return arith::RemSIOp::create(ib.b, loc, iteration, ib.c(stages));
  }
};

/// An operand's payload format: E4M3 (MXFP8, one 512-byte scale-factor
/// tile per slot) or E2M1 (NVFP4, a tile per 64 channels).
struct OperandFormat {
  Type element;
  int64_t tiles = 1;
  bool fp4() const { return isa<Float4E2M1FNType>(element); }
};

/// Where an operand group is read: the GEMMs that contract the head dim
/// (K-major: NVFP4 allowed, kind::mxf4nvf4) or tokens (MN-major: MXFP8
/// only, as the recipes define the token-block copies).
enum class Contracted { headDim, tokens };

/// The operand groups an sm_100a backward op must have: a payload and
/// `sets` sets of its scale-factor tiles ([NB, H, 512 x tiles] i8 each).
/// `what` says the rows of each set and names the GEMMs.
FailureOr<OperandFormat> checkOperand(Operation *op, ValueRange group,
                                      StringRef name, size_t sets,
                                      StringRef what, Contracted contracted) {
  if (group.size() != 1 + sets)
    return op->emitOpError()
           << "flamia-tile: sm_100a reads " << name << " as its payload and "
           << sets << " set" << (sets == 1 ? "" : "s")
           << " of scale-factor tiles (" << what << "), got " << group.size()
           << " operand(s)";
  auto payload = cast<GlobalType>(group[0].getType());
  OperandFormat format{payload.getElementType()};
  if (format.fp4() && contracted == Contracted::tokens)
    return op->emitOpError()
           << "flamia-tile: " << name << " is contracted over tokens ("
           << what
           << "): an MN-major operand, which kind::mxf4nvf4 cannot read; "
              "it must be an E4M3 token-block copy, got "
           << payload;
  if (!format.fp4() && !isa<Float8E4M3FNType>(format.element))
    return op->emitOpError() << "flamia-tile: sm_100a reads " << name
                             << " as an E4M3 (or, where the head dim is "
                                "contracted, E2M1) payload, got "
                             << payload;
  if (format.fp4())
    format.tiles = (payload.getShape()[2] + 63) / 64;
  for (Value sf : group.drop_front()) {
    auto t = cast<GlobalType>(sf.getType());
    if (t.getShape().size() != 3 || t.getShape()[2] != 512 * format.tiles ||
        !t.getElementType().isInteger(8))
      return op->emitOpError()
             << "flamia-tile: " << name << "'s scale-factor tiles are [NB, H, "
             << 512 * format.tiles << "] i8, got " << t;
  }
  return format;
}

/// The two operands of one GEMM are of one format (kind::mxf8f6f4 on E4M3
/// or kind::mxf4nvf4 on E2M1).
LogicalResult checkSameFormat(Operation *op, const OperandFormat &a,
                              const OperandFormat &b, StringRef gemm) {
  if (a.element != b.element)
    return op->emitOpError()
           << "flamia-tile: the operands of " << gemm
           << " must have one format (E4M3 or E2M1), got " << a.element
           << " and " << b.element;
  return success();
}

/// The safe blocks sm_100a's backward implements: none, or 128 (one bf16
/// key tile per query tile: the dQ kernel keeps one bf16 K/V stage, and
/// the dK/dV kernel's bf16 query ring two, the two 64-query tiles of a
/// key tile's safe block).
LogicalResult checkSafeBlock(Operation *op, RecipeAttr recipe) {
  if (recipe.getSafeBlock() > 128)
    return op->emitOpError()
           << "flamia-tile: sm_100a's backward keeps one bf16 key tile per "
              "query tile in the safe block, which needs safe_block <= 128, "
              "got "
           << recipe.getSafeBlock();
  return success();
}

//===----------------------------------------------------------------------===//
// dQ: rows are queries
//===----------------------------------------------------------------------===//

struct DqProgram : Sm100BackwardBase {
  AttentionDqTileOp at;
  static constexpr int64_t bm = 128, bn = 128;
  int64_t safeBlock;
  bool causal, safe;
  int64_t kStages = 0, vStages = 0;
  /// The formats of S = Q K^T's and dP = dO V^T's operands.
  OperandFormat qk, dov;
  /// K's token blocks (dQ = dS K) are a copy of their own (kb8), not K's
  /// payload read in the other orientation (recipes with second copies).
  bool secondK = false;

  // Tensor-memory columns of the scale-factor chunks (4 per tile).
  int64_t sfQCol() const { return kDqSfQ; }
  int64_t sfDoCol() const { return sfQCol() + 4 * qk.tiles; }
  int64_t sfKCol() const { return sfDoCol() + 4 * dov.tiles; }
  int64_t sfVCol() const { return sfKCol() + 4 * qk.tiles; }
  int64_t sfDsCol() const { return sfVCol() + 4 * dov.tiles; }
  int64_t sfKcCol() const { return sfDsCol() + 4; }

  Value items, q8, qSf, k8, kSf, kb8, kSfC, v8, vSf, g8, gSf, qSafe, kSafe,
      vSafe, gSafe, lse, delta, dq, scaleLog2, softmaxScale, numTokens, qHeads,
      kvHeads, counter, numItems;
  // Shared memory and pipelines.
  Value q8s, qSfs, g8s, gSfs, q16s, g16s, k8s, kSfs, kb8s, kSfCs, v8s, vSfs,
      k16s, v16s, dsSfs;
  Value qp, kp, vp, safep, sp, dsp, dqp, queue, tmem;

  DqProgram(KernelOp kernel, AttentionDqTileOp at)
      : Sm100BackwardBase(kernel, at.getLoc()), at(at),
        safeBlock(at.getRecipe().getSafeBlock()), causal(at.getCausal()),
        safe(safeBlock > 0) {}

  Value isSafe(I32Builder &ib, Value kt, const ItemInfo &item) {
    return isSafeTile(ib, kt, item, safeBlock, bn);
  }

  LogicalResult build();
  void buildProducer(OpBuilder &b);
  void buildMma(OpBuilder &b);
  void buildGrad(OpBuilder &b);
};

LogicalResult DqProgram::build() {
  if (failed(checkBackwardShape(at, at.getRecipe(), at.getBlockM(),
                                at.getBlockN(), bm, bn)) ||
      failed(checkSafeBlock(at, at.getRecipe())))
    return failure();
  // K: one payload in both orientations (mxfp8), or a copy for S (rows
  // tokens) and its token blocks for dQ (rows channels) in k_tb.
  secondK = !at.getKTb().empty();
  FailureOr<OperandFormat> q = checkOperand(
      at, at.getQ(), "q", 1, "rows are tokens, for S = Q K^T",
      Contracted::headDim);
  if (failed(q))
    return failure();
  FailureOr<OperandFormat> k =
      secondK ? checkOperand(at, at.getK(), "k", 1,
                             "rows are tokens, for S = Q K^T",
                             Contracted::headDim)
              : checkOperand(at, at.getK(), "k", 2,
                             "rows are tokens for S = Q K^T, channels for "
                             "dQ = dS K",
                             Contracted::tokens);
  if (failed(k))
    return failure();
  FailureOr<OperandFormat> v = checkOperand(
      at, at.getV(), "v", 1, "rows are tokens, for dP = dO V^T",
      Contracted::headDim);
  if (failed(v))
    return failure();
  FailureOr<OperandFormat> g = checkOperand(
      at, at.getGradO(), "grad_o", 1, "rows are tokens, for dP = dO V^T",
      Contracted::headDim);
  if (failed(g) ||
      (secondK && failed(checkOperand(at, at.getKTb(), "k_tb", 1,
                                      "rows are channels, for dQ = dS K",
                                      Contracted::tokens))) ||
      failed(checkSameFormat(at, *q, *k, "S = Q K^T")) ||
      failed(checkSameFormat(at, *g, *v, "dP = dO V^T")))
    return failure();
  qk = *q;
  dov = *g;
  if (at.getDebugScores())
    return at.emitOpError() << "flamia-tile: debug_scores (the backward's S "
                               "check) is implemented on sm_90a only";
  d = cast<GlobalType>(at.getQ()[0].getType()).getShape()[2];
  if (failed(checkBackwardKernelsExist(at, at.getRecipe(), "sm_100a", d)))
    return failure();

  items = at.getItems();
  q8 = at.getQ()[0];
  qSf = at.getQ()[1];
  k8 = at.getK()[0];
  kSf = at.getK()[1];
  kb8 = secondK ? at.getKTb()[0] : k8;
  kSfC = secondK ? at.getKTb()[1] : at.getK()[2];
  v8 = at.getV()[0];
  vSf = at.getV()[1];
  g8 = at.getGradO()[0];
  gSf = at.getGradO()[1];
  if (safe) {
    qSafe = at.getSafe()[0];
    kSafe = at.getSafe()[1];
    vSafe = at.getSafe()[2];
    gSafe = at.getSafe()[3];
  }
  lse = at.getLse();
  delta = at.getDelta();
  dq = at.getDq();
  scaleLog2 = at.getScaleLog2();
  softmaxScale = at.getSoftmaxScale();
  numTokens = at.getNumTokens();
  qHeads = at.getQHeads();
  kvHeads = at.getKvHeads();
  auto queueCreate = *kernel.getBody().front().getOps<QueueCreateOp>().begin();
  counter = queueCreate.getCounter();
  numItems = queueCreate.getNumItems();

  OpBuilder b = resetKernel();
  // K is read by S_{j+1} while dQ_j still reads K_j: two stages at least
  // (a stage holds both of K's copies where there are two). V's stage
  // frees when dP_j completes, before S_{j+1} is issued. At D = 128 with
  // the bf16 safe-block tiles (Q, dO, K, V: 128 KiB) that is all that fits
  // next to the E4M3 tiles; NVFP4's half-size Q, dO, K and V leave room
  // for a second V stage.
  kStages = d == 128 && safe ? 2 : 3;
  vStages = d == 128 && safe ? (dov.fp4() ? 2 : 1) : 3;
  q8s = tile(b, 1, bm, qk.element);
  qSfs = sfTile(b, 1, qk.tiles);
  g8s = tile(b, 1, bm, dov.element);
  gSfs = sfTile(b, 1, dov.tiles);
  if (safe) {
    q16s = tile(b, 1, bm, bf16);
    g16s = tile(b, 1, bm, bf16);
  }
  k8s = tile(b, kStages, bn, qk.element);
  kSfs = sfTile(b, kStages, qk.tiles);
  kb8s = secondK ? tile(b, kStages, bn, f8) : k8s;
  kSfCs = sfTile(b, kStages);
  v8s = tile(b, vStages, bn, dov.element);
  vSfs = sfTile(b, vStages, dov.tiles);
  if (safe) {
    k16s = tile(b, 1, bn, bf16);
    v16s = tile(b, 1, bn, bf16);
  }
  dsSfs = sfTile(b, 1);
  qp = pipeline(b, 1, 1, 1);
  kp = pipeline(b, kStages, 1, 1);
  vp = pipeline(b, vStages, 1, 1);
  if (safe)
    safep = pipeline(b, 1, 1, 1);
  sp = pipeline(b, 1, kGradThreads, 1);
  dsp = pipeline(b, 1, 1, kGradThreads);
  dqp = pipeline(b, 1, kGradThreads, 1);
  queue = QueueCreateOp::create(b, loc, QueueType::get(ctx), counter, numItems,
                                /*receivers=*/1 + kGradThreads);
  tmem = TmemAllocOp::create(b, loc, i32, kTmemColumns, /*by_warpgroup=*/2);

  buildProducer(b);
  buildMma(b);
  buildGrad(b);
  ReturnOp::create(b, loc);
  kernel->setAttr("tile", tileAttr(b, bm, bn, kStages));
  return success();
}

void DqProgram::buildProducer(OpBuilder &b) {
  OpBuilder rb = createRole(
      b, loc, "producer", 0, 1,
      secondK ? kProducerRegistersTwoK : kProducerRegisters,
      /*singleThread=*/true);
  I32Builder ib{rb, loc};
  // Carried: the K, V and safe rings' iterations.
  workLoop(rb, loc, queue, numItems, QueueSide::fetch,
           ValueRange{ib.c(0), ib.c(0), ib.c(0)},
           [&](OpBuilder &ab, Value it, ValueRange carried, Value index)
               -> SmallVector<Value> {
    I32Builder eb{ab, loc};
    ItemInfo item = loadItem(eb, items, index, causal, bn);
    Value qst = PipelineAcquireOp::create(ab, loc, i32, qp, it,
                                          PipelineSide::producer);
    PipelineExpectOp::create(ab, loc, qp, qst,
                             safe ? stageBytes({q8s, qSfs, g8s, gSfs, q16s, g16s})
                                  : stageBytes({q8s, qSfs, g8s, gSfs}));
    Value qCol = eb.mul(item.qHead, eb.c(d));
    Value qSlot = scaleTileSlot(eb, item, item.qTile, item.qHead,
                                scaleTileHeads(eb, qSf, qHeads));
    TmaLoadOp::create(ab, loc, q8, item.qStart, qCol, q8s, qst, qp);
    BulkLoadOp::create(ab, loc, qSf, qSlot, qSfs, qst, qp);
    TmaLoadOp::create(ab, loc, g8, item.qStart, qCol, g8s, qst, qp);
    BulkLoadOp::create(ab, loc, gSf, qSlot, gSfs, qst, qp);
    if (safe) {
      TmaLoadOp::create(ab, loc, qSafe, item.qStart, qCol, q16s, qst, qp);
      TmaLoadOp::create(ab, loc, gSafe, item.qStart, qCol, g16s, qst, qp);
    }
    Value kvCol = eb.mul(item.kvHead, eb.c(d));
    auto forOp = scf::ForOp::create(ab, loc, eb.c(0), item.numKeyTiles, eb.c(1),
                                    carried);
    {
      OpBuilder fb = OpBuilder::atBlockBegin(forOp.getBody());
      I32Builder fib{fb, loc};
      Value kt = forOp.getInductionVar();
      auto args = forOp.getRegionIterArgs();
      Value kIt = args[0], vIt = args[1], safeIt = args[2];
      Value row = fib.add(item.docStart, fib.mul(kt, fib.c(bn)));
      auto quantized = [&](OpBuilder &lb) -> SmallVector<Value> {
        I32Builder lib{lb, loc};
        Value slot = scaleTileSlot(lib, item, kt, item.kvHead,
                                   scaleTileHeads(lib, kSf, kvHeads));
        Value kst = PipelineAcquireOp::create(lb, loc, i32, kp, kIt,
                                              PipelineSide::producer);
        SmallVector<Value> filled = {k8s, kSfs, kSfCs};
        if (secondK)
          filled.push_back(kb8s);
        PipelineExpectOp::create(lb, loc, kp, kst, stageBytes(filled));
        TmaLoadOp::create(lb, loc, k8, row, kvCol, k8s, kst, kp);
        BulkLoadOp::create(lb, loc, kSf, slot, kSfs, kst, kp);
        if (secondK)
          TmaLoadOp::create(lb, loc, kb8, row, kvCol, kb8s, kst, kp);
        BulkLoadOp::create(lb, loc, kSfC, slot, kSfCs, kst, kp);
        Value vst = PipelineAcquireOp::create(lb, loc, i32, vp, vIt,
                                              PipelineSide::producer);
        PipelineExpectOp::create(lb, loc, vp, vst, stageBytes({v8s, vSfs}));
        TmaLoadOp::create(lb, loc, v8, row, kvCol, v8s, vst, vp);
        BulkLoadOp::create(lb, loc, vSf, slot, vSfs, vst, vp);
        return {lib.add(kIt, lib.c(1)), lib.add(vIt, lib.c(1)), safeIt};
      };
      if (safe) {
        auto ifOp = scf::IfOp::create(fb, loc, TypeRange{i32, i32, i32},
                                      isSafe(fib, kt, item), /*withElse=*/true);
        OpBuilder tb = ifOp.getThenBodyBuilder();
        I32Builder tib{tb, loc};
        Value st = PipelineAcquireOp::create(tb, loc, i32, safep, safeIt,
                                             PipelineSide::producer);
        PipelineExpectOp::create(tb, loc, safep, st, stageBytes({k16s, v16s}));
        TmaLoadOp::create(tb, loc, kSafe, row, kvCol, k16s, st, safep);
        TmaLoadOp::create(tb, loc, vSafe, row, kvCol, v16s, st, safep);
        scf::YieldOp::create(tb, loc,
                             ValueRange{kIt, vIt, tib.add(safeIt, tib.c(1))});
        OpBuilder elseb = ifOp.getElseBodyBuilder();
        scf::YieldOp::create(elseb, loc, quantized(elseb));
        scf::YieldOp::create(fb, loc, ifOp.getResults());
      } else {
        scf::YieldOp::create(fb, loc, quantized(fb));
      }
    }
    return SmallVector<Value>(forOp.getResults());
  });
  ReturnOp::create(rb, loc);
}

void DqProgram::buildMma(OpBuilder &b) {
  OpBuilder rb = createRole(b, loc, "mma", 1, 2,
                            secondK ? kMmaRegistersTwoK : kMmaRegisters,
                            /*singleThread=*/true);
  I32Builder ib{rb, loc};
  TypeAttr dsType8 = TypeAttr::get(f8), dsType16 = TypeAttr::get(bf16);
  Value sfQ = ib.add(tmem, ib.c(sfQCol())),
        sfDo = ib.add(tmem, ib.c(sfDoCol())),
        sfK = ib.add(tmem, ib.c(sfKCol())), sfV = ib.add(tmem, ib.c(sfVCol())),
        sfDs = ib.add(tmem, ib.c(sfDsCol())),
        sfKc = ib.add(tmem, ib.c(sfKcCol()));
  // Carried: the K, V, safe, S and dS pipelines' iterations.
  workLoop(rb, loc, queue, numItems, QueueSide::receive,
           ValueRange{ib.c(0), ib.c(0), ib.c(0), ib.c(0), ib.c(0)},
           [&](OpBuilder &ab, Value it, ValueRange carried, Value index)
               -> SmallVector<Value> {
    I32Builder eb{ab, loc};
    ItemInfo item = loadItem(eb, items, index, causal, bn);
    // Q and dO arrive once the previous item's last S and dP have
    // completed (the producer waited for that commit), so their scale
    // factors may be overwritten now.
    Value qst = PipelineAcquireOp::create(ab, loc, i32, qp, it,
                                          PipelineSide::consumer);
    copyScales(ab, qSfs, qst, tmem, sfQCol(), qk.tiles);
    copyScales(ab, gSfs, qst, tmem, sfDoCol(), dov.tiles);

    // S_kt = Q K_kt^T and dP_kt = dO V_kt^T, once the gradient role has
    // loaded the previous ones; returns the next (kIt, vIt, safeIt) and the
    // stage dQ_kt will read K from (the K ring's or the safe ring's).
    auto issueSdP = [&](OpBuilder &sb, Value kt, Value kIt, Value vIt,
                        Value safeIt, Value sIt) -> SmallVector<Value> {
      I32Builder sib{sb, loc};
      Value sbuf = PipelineAcquireOp::create(sb, loc, i32, sp, sIt,
                                             PipelineSide::producer);
      auto quantized = [&](OpBuilder &lb) -> SmallVector<Value> {
        I32Builder lib{lb, loc};
        Value kst = PipelineAcquireOp::create(lb, loc, i32, kp, kIt,
                                              PipelineSide::consumer);
        Value vst = PipelineAcquireOp::create(lb, loc, i32, vp, vIt,
                                              PipelineSide::consumer);
        copyScales(lb, kSfs, kst, tmem, sfKCol(), qk.tiles);
        copyScales(lb, vSfs, vst, tmem, sfVCol(), dov.tiles);
        UmmaOp::create(lb, loc, tmem, kDqS, q8s, qst, IntegerAttr(), TypeAttr(),
                       k8s, kst, /*b_transposed=*/false, lib.i1(false), sfQ,
                       sfK, /*b_k_block=*/Value(), /*k_valid=*/Value());
        UmmaOp::create(lb, loc, tmem, kDqDp, g8s, qst, IntegerAttr(),
                       TypeAttr(), v8s, vst, /*b_transposed=*/false,
                       lib.i1(false), sfDo, sfV, /*b_k_block=*/Value(),
                       /*k_valid=*/Value());
        // V's last reader is dP: its stage frees when dP completes.
        UmmaCommitOp::create(lb, loc, vp, vst, StageBarrier::empty);
        return {lib.add(kIt, lib.c(1)), lib.add(vIt, lib.c(1)), safeIt, kst};
      };
      SmallVector<Value> next;
      if (safe) {
        auto ifOp = scf::IfOp::create(sb, loc, TypeRange{i32, i32, i32, i32},
                                      isSafe(sib, kt, item), /*withElse=*/true);
        OpBuilder tb = ifOp.getThenBodyBuilder();
        I32Builder tib{tb, loc};
        Value st = PipelineAcquireOp::create(tb, loc, i32, safep, safeIt,
                                             PipelineSide::consumer);
        UmmaOp::create(tb, loc, tmem, kDqS, q16s, qst, IntegerAttr(),
                       TypeAttr(), k16s, st, /*b_transposed=*/false,
                       tib.i1(false), Value(), Value(), /*b_k_block=*/Value(),
                       /*k_valid=*/Value());
        UmmaOp::create(tb, loc, tmem, kDqDp, g16s, qst, IntegerAttr(),
                       TypeAttr(), v16s, st, /*b_transposed=*/false,
                       tib.i1(false), Value(), Value(), /*b_k_block=*/Value(),
                       /*k_valid=*/Value());
        scf::YieldOp::create(
            tb, loc, ValueRange{kIt, vIt, tib.add(safeIt, tib.c(1)), st});
        OpBuilder elseb = ifOp.getElseBodyBuilder();
        scf::YieldOp::create(elseb, loc, quantized(elseb));
        next.assign(ifOp.getResults().begin(), ifOp.getResults().end());
      } else {
        next = quantized(sb);
      }
      UmmaCommitOp::create(sb, loc, sp, sbuf, StageBarrier::full);
      return next; // kIt, vIt, safeIt, K's stage
    };

    SmallVector<Value> first = issueSdP(ab, eb.c(0), carried[0], carried[1],
                                        carried[2], carried[3]);
    // dQ's columns are free once the previous item's epilogue has read
    // them (the first dQ MMA below overwrites them).
    PipelineAcquireOp::create(ab, loc, i32, dqp, it, PipelineSide::producer);
    Value last = eb.sub(item.numKeyTiles, eb.c(1));
    auto forOp = scf::ForOp::create(
        ab, loc, eb.c(0), item.numKeyTiles, eb.c(1),
        ValueRange{first[0], first[1], first[2], eb.add(carried[3], eb.c(1)),
                   carried[4], first[3]});
    {
      OpBuilder fb = OpBuilder::atBlockBegin(forOp.getBody());
      I32Builder fib{fb, loc};
      Value kt = forOp.getInductionVar();
      auto args = forOp.getRegionIterArgs();
      Value kIt = args[0], vIt = args[1], safeIt = args[2], sIt = args[3],
            dsIt = args[4], kst = args[5];
      // The next S and dP first, so that they run during this tile's
      // softmax gradient; after the item's last ones Q and dO are free.
      auto more = scf::IfOp::create(fb, loc, TypeRange{i32, i32, i32, i32, i32},
                                    fib.cmp(arith::CmpIPredicate::slt, kt, last),
                                    /*withElse=*/true);
      {
        OpBuilder tb = more.getThenBodyBuilder();
        I32Builder tib{tb, loc};
        SmallVector<Value> n =
            issueSdP(tb, tib.add(kt, tib.c(1)), kIt, vIt, safeIt, sIt);
        scf::YieldOp::create(
            tb, loc, ValueRange{n[0], n[1], n[2], tib.add(sIt, tib.c(1)), n[3]});
        OpBuilder elseb = more.getElseBodyBuilder();
        UmmaCommitOp::create(elseb, loc, qp, qst, StageBarrier::empty);
        scf::YieldOp::create(elseb, loc, ValueRange{kIt, vIt, safeIt, sIt, kst});
      }
      // dQ += dS K once the gradient role has written dS (and its scales).
      Value dsst = PipelineAcquireOp::create(fb, loc, i32, dsp, dsIt,
                                             PipelineSide::consumer);
      Value accumulate = fib.cmp(arith::CmpIPredicate::sgt, kt, fib.c(0));
      Value keysInDoc = fib.sub(item.docLen, fib.mul(kt, fib.c(bn)));
      auto quantizedDq = [&](OpBuilder &lb) {
        UmmaScalesOp::create(lb, loc, dsSfs, I32Builder{lb, loc}.c(0), tmem,
                             sfDsCol());
        UmmaScalesOp::create(lb, loc, kSfCs, kst, tmem, sfKcCol());
        zeroPastEnd(lb, kb8s, kst, keysInDoc, bn, /*kStep=*/32);
        UmmaOp::create(lb, loc, tmem, kDqAcc, Value(), Value(),
                       lb.getI64IntegerAttr(kDqDs), dsType8, kb8s, kst,
                       /*b_transposed=*/true, accumulate, sfDs, sfKc,
                       /*b_k_block=*/Value(), keysInDoc);
        UmmaCommitOp::create(lb, loc, dsp, dsst, StageBarrier::empty);
        UmmaCommitOp::create(lb, loc, kp, kst, StageBarrier::empty);
      };
      if (safe) {
        auto ifOp = scf::IfOp::create(fb, loc, isSafe(fib, kt, item),
                                      /*withElse=*/true);
        OpBuilder tb = ifOp.getThenBodyBuilder();
        zeroPastEnd(tb, k16s, kst, keysInDoc, bn, /*kStep=*/16);
        UmmaOp::create(tb, loc, tmem, kDqAcc, Value(), Value(),
                       tb.getI64IntegerAttr(kDqDs), dsType16, k16s, kst,
                       /*b_transposed=*/true, accumulate, Value(), Value(),
                       /*b_k_block=*/Value(), keysInDoc);
        UmmaCommitOp::create(tb, loc, dsp, dsst, StageBarrier::empty);
        UmmaCommitOp::create(tb, loc, safep, kst, StageBarrier::empty);
        OpBuilder elseb = ifOp.getElseBodyBuilder();
        quantizedDq(elseb);
      } else {
        quantizedDq(fb);
      }
      scf::YieldOp::create(
          fb, loc,
          ValueRange{more.getResult(0), more.getResult(1), more.getResult(2),
                     more.getResult(3), fib.add(dsIt, fib.c(1)),
                     more.getResult(4)});
    }
    // dQ complete: the epilogue may read it.
    UmmaCommitOp::create(ab, loc, dqp, eb.c(0), StageBarrier::full);
    return {forOp.getResult(0), forOp.getResult(1), forOp.getResult(2),
            forOp.getResult(3), forOp.getResult(4)};
  });
  ReturnOp::create(rb, loc);
}

void DqProgram::buildGrad(OpBuilder &b) {
  OpBuilder rb = createRole(b, loc, "grad", 2, 4, kGradRegisters,
                            /*singleThread=*/false);
  I32Builder ib{rb, loc};
  // Warpgroup g of the role: key columns [64 g, 64 g + 64) of each tile,
  // dQ columns [g D / 2, (g + 1) D / 2) in the epilogue.
  const int64_t half = 64, dHalf = d / 2;
  Value wg = WarpgroupIdOp::create(rb, loc, i32);
  Value colBase = ib.mul(wg, ib.c(half));
  Value sBase = ib.add(tmem, colBase);
  auto sType = FragmentType::get(ctx, {bm, half}, f32);
  auto codesType = FragmentType::get(ctx, {bm, half}, f8);
  auto dsType16 = FragmentType::get(ctx, {bm, half}, bf16);
  auto accType = FragmentType::get(ctx, {bm, dHalf}, f32);
  // Carried: the S and dS pipelines' iterations.
  workLoop(rb, loc, queue, numItems, QueueSide::receive,
           ValueRange{ib.c(0), ib.c(0)},
           [&](OpBuilder &ab, Value it, ValueRange carried, Value index)
               -> SmallVector<Value> {
    I32Builder eb{ab, loc};
    ItemInfo item = loadItem(eb, items, index, causal, bn);
    Value queryBase = eb.mul(item.qTile, eb.c(bm));
    auto forOp = scf::ForOp::create(ab, loc, eb.c(0), item.numKeyTiles, eb.c(1),
                                    carried);
    {
      OpBuilder fb = OpBuilder::atBlockBegin(forOp.getBody());
      I32Builder fib{fb, loc};
      Value kt = forOp.getInductionVar();
      Value sIt = forOp.getRegionIterArgs()[0];
      Value dsIt = forOp.getRegionIterArgs()[1];
      Value sst = PipelineAcquireOp::create(fb, loc, i32, sp, sIt,
                                            PipelineSide::consumer);
      Value s = TmemLoadOp::create(fb, loc, sType, sBase, kDqS);
      Value dp = TmemLoadOp::create(fb, loc, sType, sBase, kDqDp);
      // S and dP are in registers: the next ones may be computed.
      PipelineReleaseOp::create(fb, loc, sp, sst);
      Value keyBase = fib.add(fib.mul(kt, fib.c(bn)), colBase);
      Value masked =
          maskIf(fb, loc, needsMask(fib, kt, keyBase, item, causal, half), s,
                 queryBase, keyBase, item.docLen, causal);
      auto grad = SoftmaxGradOp::create(
          fb, loc, sType, sType, masked, dp, lse, delta, item.qHead,
          item.docStart, queryBase, item.docLen, numTokens, scaleLog2,
          /*lse2=*/Value(), UnitAttr());
      // dS into tensor memory once the previous dQ MMA has read it.
      Value dsst = PipelineAcquireOp::create(fb, loc, i32, dsp, dsIt,
                                             PipelineSide::producer);
      auto quantized = [&](OpBuilder &lb) {
        I32Builder lib{lb, loc};
        // Keys [64 g, 64 g + 64) are the scale tile's K-blocks 2g, 2g + 1.
        Value codes = FragMxQuantizeOp::create(
            lb, loc, codesType, grad.getDs(), dsSfs, lib.c(0),
            lib.mul(wg, lib.c(2)));
        TmemStoreOp::create(lb, loc, codes,
                            lib.add(tmem, lib.mul(wg, lib.c(half / 4))), kDqDs);
      };
      if (safe) {
        auto ifOp = scf::IfOp::create(fb, loc, isSafe(fib, kt, item),
                                      /*withElse=*/true);
        OpBuilder tb = ifOp.getThenBodyBuilder();
        I32Builder tib{tb, loc};
        Value ds16 = FragBlockQuantizeOp::create(tb, loc, dsType16,
                                                 grad.getDs(), tib.i1(false));
        TmemStoreOp::create(tb, loc, ds16,
                            tib.add(tmem, tib.mul(wg, tib.c(half / 2))), kDqDs);
        OpBuilder elseb = ifOp.getElseBodyBuilder();
        quantized(elseb);
      } else {
        quantized(fb);
      }
      PipelineArriveOp::create(fb, loc, dsp, dsst);
      scf::YieldOp::create(fb, loc,
                           ValueRange{fib.add(sIt, fib.c(1)),
                                      fib.add(dsIt, fib.c(1))});
    }
    // The epilogue: this warpgroup's half of dQ's columns.
    Value dqst = PipelineAcquireOp::create(ab, loc, i32, dqp, it,
                                           PipelineSide::consumer);
    Value acc = TmemLoadOp::create(
        ab, loc, accType, eb.add(tmem, eb.mul(wg, eb.c(dHalf))), kDqAcc);
    PipelineReleaseOp::create(ab, loc, dqp, dqst);
    GradStoreOp::create(ab, loc, acc, dq, item.qStart, eb.c(0), item.qRows,
                        item.qHead, softmaxScale, qHeads,
                        eb.mul(wg, eb.c(dHalf)));
    return SmallVector<Value>(forOp.getResults());
  });
  TmemDeallocOp::create(rb, loc, tmem, kTmemColumns);
  ReturnOp::create(rb, loc);
}

//===----------------------------------------------------------------------===//
// dK/dV: rows are keys, query tiles of 64
//===----------------------------------------------------------------------===//

struct DkdvProgram : Sm100BackwardBase {
  AttentionDkdvTileOp at;
  static constexpr int64_t bq = 64, bn = 128;
  int64_t safeBlock, fixedScale = 0;
  bool causal, safe;
  int64_t stages = 0;
  /// The bf16 query ring: the two 64-query tiles of a key tile's safe block
  /// are visited one after the other, and S^T of the second is issued
  /// before dV and dK of the first free its stage.
  static constexpr int64_t kSafeStages = 2;
  QueryVisitShape shape;
  /// The formats of S^T = K Q^T's and dP^T = V dO^T's operands.
  OperandFormat qk, dov;
  /// dO's token blocks (dV = P^T dO) are a copy of their own (gb8), not
  /// dO's payload read in the other orientation (recipes with second
  /// copies).
  bool secondDo = false;

  // Tensor-memory columns of the scale-factor chunks (4 per tile).
  int64_t sfKCol() const { return kKvSfK; }
  int64_t sfVCol() const { return sfKCol() + 4 * qk.tiles; }
  int64_t sfQCol() const { return sfVCol() + 4 * dov.tiles; }
  int64_t sfDoCol() const { return sfQCol() + 4 * qk.tiles; }
  int64_t sfDoCCol() const { return sfDoCol() + 4 * dov.tiles; }
  int64_t sfQbCCol() const { return sfDoCCol() + 4; }
  int64_t sfDsCol() const { return sfQbCCol() + 4; }
  int64_t sfPCol() const { return sfDsCol() + 4; }

  Value items, q8, qSf, k8, kSf, v8, vSf, g8, gSf, gb8, gSfC, qb8, qbSfC,
      qSafe, kSafe, vSafe, gSafe, lse, delta, dk, dv, scaleLog2, softmaxScale,
      numTokens, qHeads, kvHeads, counter, numItems;
  PrecisionAttr pPrecision;
  Value k8s, kSfs, v8s, vSfs, k16s, v16s, qa8s, qaSfs, g8s, gSfs, gb8s, gSfCs,
      qb8s, qbSfCs, q16s, g16s, dsSfs;
  Value kp, qr, qs, sp, pdsp, accp, queue, tmem;

  DkdvProgram(KernelOp kernel, AttentionDkdvTileOp at)
      : Sm100BackwardBase(kernel, at.getLoc()), at(at),
        safeBlock(at.getRecipe().getSafeBlock()), causal(at.getCausal()),
        safe(safeBlock > 0) {}

  LogicalResult build();
  void buildProducer(OpBuilder &b);
  void buildMma(OpBuilder &b);
  void buildGrad(OpBuilder &b);
};

LogicalResult DkdvProgram::build() {
  if (failed(checkBackwardShape(at, at.getRecipe(), at.getBlockM(),
                                at.getBlockN(), bq, bn)) ||
      failed(checkSafeBlock(at, at.getRecipe())))
    return failure();
  // dO: one payload in both orientations (mxfp8), or a copy for dP^T (rows
  // tokens) and its token blocks for dV (rows channels) in grad_o_tb.
  secondDo = !at.getGradOTb().empty();
  FailureOr<OperandFormat> q = checkOperand(
      at, at.getQ(), "q", 1, "rows are tokens, for S^T = K Q^T",
      Contracted::headDim);
  if (failed(q))
    return failure();
  FailureOr<OperandFormat> k = checkOperand(
      at, at.getK(), "k", 1, "rows are tokens, for S^T = K Q^T",
      Contracted::headDim);
  if (failed(k))
    return failure();
  FailureOr<OperandFormat> v = checkOperand(
      at, at.getV(), "v", 1, "rows are tokens, for dP^T = V dO^T",
      Contracted::headDim);
  if (failed(v))
    return failure();
  FailureOr<OperandFormat> g =
      secondDo ? checkOperand(at, at.getGradO(), "grad_o", 1,
                              "rows are tokens, for dP^T = V dO^T",
                              Contracted::headDim)
               : checkOperand(at, at.getGradO(), "grad_o", 2,
                              "rows are tokens for dP^T = V dO^T, channels "
                              "for dV = P^T dO",
                              Contracted::tokens);
  if (failed(g) ||
      (secondDo && failed(checkOperand(at, at.getGradOTb(), "grad_o_tb", 1,
                                       "rows are channels, for dV = P^T dO",
                                       Contracted::tokens))) ||
      failed(checkOperand(at, at.getQTb(), "q_tb", 1,
                          "rows are channels, for dK = dS^T Q",
                          Contracted::tokens)) ||
      failed(checkSameFormat(at, *k, *q, "S^T = K Q^T")) ||
      failed(checkSameFormat(at, *v, *g, "dP^T = V dO^T")))
    return failure();
  qk = *q;
  dov = *g;
  pPrecision = at.getP();
  if (!pPrecision.getFixedScale() ||
      !isa<Float8E4M3FNType>(pPrecision.getElementType()))
    return at.emitOpError() << "flamia-tile: sm_100a rounds P to E4M3 with a "
                               "fixed scale, got "
                            << pPrecision;
  fixedScale = *pPrecision.getFixedScale();
  auto qType = cast<GlobalType>(at.getQ()[0].getType());
  auto kType = cast<GlobalType>(at.getK()[0].getType());
  d = qType.getShape()[2];
  if (failed(checkBackwardKernelsExist(at, at.getRecipe(), "sm_100a", d)))
    return failure();

  items = at.getItems();
  q8 = at.getQ()[0];
  qSf = at.getQ()[1];
  k8 = at.getK()[0];
  kSf = at.getK()[1];
  v8 = at.getV()[0];
  vSf = at.getV()[1];
  g8 = at.getGradO()[0];
  gSf = at.getGradO()[1];
  gb8 = secondDo ? at.getGradOTb()[0] : g8;
  gSfC = secondDo ? at.getGradOTb()[1] : at.getGradO()[2];
  qb8 = at.getQTb()[0];
  qbSfC = at.getQTb()[1];
  if (safe) {
    qSafe = at.getSafe()[0];
    kSafe = at.getSafe()[1];
    vSafe = at.getSafe()[2];
    gSafe = at.getSafe()[3];
  }
  lse = at.getLse();
  delta = at.getDelta();
  dk = at.getDk();
  dv = at.getDv();
  scaleLog2 = at.getScaleLog2();
  softmaxScale = at.getSoftmaxScale();
  numTokens = at.getNumTokens();
  qHeads = at.getQHeads();
  kvHeads = at.getKvHeads();
  bool runtimeHeads = ShapedType::isDynamic(qType.getShape()[1]);
  int64_t group = runtimeHeads ? 0 : qType.getShape()[1] / kType.getShape()[1];
  shape = QueryVisitShape{causal, bq, bn, safeBlock, group, qHeads, kvHeads};
  auto queueCreate = *kernel.getBody().front().getOps<QueueCreateOp>().begin();
  counter = queueCreate.getCounter();
  numItems = queueCreate.getNumItems();

  OpBuilder b = resetKernel();
  // The key tile's K and V stay for the item in both forms; the query
  // tiles stream through a ring as deep as shared memory allows (S^T of a
  // tile is issued before dV and dK of the one before free theirs: two
  // stages at least).
  // (NVFP4: a stage holds dO twice, E2M1 and E4M3, which a third stage
  // at D = 128 would take past 227 KiB.)
  stages = d == 128 ? (safe ? 2 : 4) : 4;
  k8s = tile(b, 1, bn, qk.element);
  kSfs = sfTile(b, 1, qk.tiles);
  v8s = tile(b, 1, bn, dov.element);
  vSfs = sfTile(b, 1, dov.tiles);
  if (safe) {
    k16s = tile(b, 1, bn, bf16);
    v16s = tile(b, 1, bn, bf16);
  }
  qa8s = tile(b, stages, bq, qk.element);
  qaSfs = sfTile(b, stages, qk.tiles);
  g8s = tile(b, stages, bq, dov.element);
  gSfs = sfTile(b, stages, dov.tiles);
  gb8s = secondDo ? tile(b, stages, bq, f8) : g8s;
  gSfCs = sfTile(b, stages);
  qb8s = tile(b, stages, bq, f8);
  qbSfCs = sfTile(b, stages);
  if (safe) {
    q16s = tile(b, kSafeStages, bq, bf16);
    g16s = tile(b, kSafeStages, bq, bf16);
  }
  dsSfs = sfTile(b, 1);
  kp = pipeline(b, 1, 1, 1);
  qr = pipeline(b, stages, 1, 1);
  if (safe)
    qs = pipeline(b, kSafeStages, 1, 1);
  sp = pipeline(b, 1, kGradThreads, 1);
  pdsp = pipeline(b, 1, 1, kGradThreads);
  accp = pipeline(b, 1, kGradThreads, 1);
  queue = QueueCreateOp::create(b, loc, QueueType::get(ctx), counter, numItems,
                                /*receivers=*/1 + kGradThreads);
  tmem = TmemAllocOp::create(b, loc, i32, kTmemColumns, /*by_warpgroup=*/2);

  buildProducer(b);
  buildMma(b);
  buildGrad(b);
  ReturnOp::create(b, loc);
  kernel->setAttr("tile", tileAttr(b, bq, bn, stages));
  return success();
}

void DkdvProgram::buildProducer(OpBuilder &b) {
  OpBuilder rb = createRole(b, loc, "producer", 0, 1, kProducerRegisters,
                            /*singleThread=*/true);
  I32Builder ib{rb, loc};
  // Carried: the quantized and bf16 query rings' iterations.
  workLoop(rb, loc, queue, numItems, QueueSide::fetch,
           ValueRange{ib.c(0), ib.c(0)},
           [&](OpBuilder &ab, Value it, ValueRange carried, Value index)
               -> SmallVector<Value> {
    I32Builder eb{ab, loc};
    ItemInfo item = loadItem(eb, items, index, causal, bn);
    Value kst = PipelineAcquireOp::create(ab, loc, i32, kp, it,
                                          PipelineSide::producer);
    PipelineExpectOp::create(ab, loc, kp, kst,
                             safe ? stageBytes({k8s, kSfs, v8s, vSfs, k16s, v16s})
                                  : stageBytes({k8s, kSfs, v8s, vSfs}));
    Value kvCol = eb.mul(item.kvHead, eb.c(d));
    Value kSlot = scaleTileSlot(eb, item, item.qTile, item.kvHead,
                                scaleTileHeads(eb, kSf, kvHeads));
    TmaLoadOp::create(ab, loc, k8, item.qStart, kvCol, k8s, kst, kp);
    BulkLoadOp::create(ab, loc, kSf, kSlot, kSfs, kst, kp);
    TmaLoadOp::create(ab, loc, v8, item.qStart, kvCol, v8s, kst, kp);
    BulkLoadOp::create(ab, loc, vSf, kSlot, vSfs, kst, kp);
    if (safe) {
      TmaLoadOp::create(ab, loc, kSafe, item.qStart, kvCol, k16s, kst, kp);
      TmaLoadOp::create(ab, loc, vSafe, item.qStart, kvCol, v16s, kst, kp);
    }
    QueryVisits vis = QueryVisits::of(eb, item, shape);
    auto forOp = scf::ForOp::create(ab, loc, eb.c(0), vis.total, eb.c(1),
                                    carried);
    {
      OpBuilder fb = OpBuilder::atBlockBegin(forOp.getBody());
      I32Builder fib{fb, loc};
      Value i = forOp.getInductionVar();
      Value qIt = forOp.getRegionIterArgs()[0];
      Value safeIt = forOp.getRegionIterArgs()[1];
      auto [qt, head] = vis.at(fib, item, i);
      Value row = fib.add(item.docStart, fib.mul(qt, fib.c(bq)));
      Value col = fib.mul(head, fib.c(d));
      auto quantized = [&](OpBuilder &lb) -> SmallVector<Value> {
        I32Builder lib{lb, loc};
        // The 128-token tile holding the 64 queries: its scale slot.
        Value slot =
            scaleTileSlot(lib, item, lib.div(qt, lib.c(bn / bq)), head,
                          scaleTileHeads(lib, qSf, qHeads));
        Value st = PipelineAcquireOp::create(lb, loc, i32, qr, qIt,
                                             PipelineSide::producer);
        SmallVector<Value> filled = {qa8s, qaSfs, g8s, gSfs, gSfCs, qb8s,
                                     qbSfCs};
        if (secondDo)
          filled.push_back(gb8s);
        PipelineExpectOp::create(lb, loc, qr, st, stageBytes(filled));
        TmaLoadOp::create(lb, loc, q8, row, col, qa8s, st, qr);
        BulkLoadOp::create(lb, loc, qSf, slot, qaSfs, st, qr);
        TmaLoadOp::create(lb, loc, g8, row, col, g8s, st, qr);
        BulkLoadOp::create(lb, loc, gSf, slot, gSfs, st, qr);
        if (secondDo)
          TmaLoadOp::create(lb, loc, gb8, row, col, gb8s, st, qr);
        BulkLoadOp::create(lb, loc, gSfC, slot, gSfCs, st, qr);
        TmaLoadOp::create(lb, loc, qb8, row, col, qb8s, st, qr);
        BulkLoadOp::create(lb, loc, qbSfC, slot, qbSfCs, st, qr);
        return {lib.add(qIt, lib.c(1)), safeIt};
      };
      if (safe) {
        auto ifOp = scf::IfOp::create(fb, loc, TypeRange{i32, i32},
                                      vis.isSafe(fib, item, qt),
                                      /*withElse=*/true);
        OpBuilder tb = ifOp.getThenBodyBuilder();
        I32Builder tib{tb, loc};
        Value st = PipelineAcquireOp::create(tb, loc, i32, qs, safeIt,
                                             PipelineSide::producer);
        PipelineExpectOp::create(tb, loc, qs, st, stageBytes({q16s, g16s}));
        TmaLoadOp::create(tb, loc, qSafe, row, col, q16s, st, qs);
        TmaLoadOp::create(tb, loc, gSafe, row, col, g16s, st, qs);
        scf::YieldOp::create(tb, loc,
                             ValueRange{qIt, tib.add(safeIt, tib.c(1))});
        OpBuilder elseb = ifOp.getElseBodyBuilder();
        scf::YieldOp::create(elseb, loc, quantized(elseb));
        scf::YieldOp::create(fb, loc, ifOp.getResults());
      } else {
        scf::YieldOp::create(fb, loc, quantized(fb));
      }
    }
    return SmallVector<Value>(forOp.getResults());
  });
  ReturnOp::create(rb, loc);
}

void DkdvProgram::buildMma(OpBuilder &b) {
  OpBuilder rb = createRole(b, loc, "mma", 1, 2, kMmaRegisters,
                            /*singleThread=*/true);
  I32Builder ib{rb, loc};
  TypeAttr type8 = TypeAttr::get(f8), type16 = TypeAttr::get(bf16);
  Value sfK = ib.add(tmem, ib.c(sfKCol())), sfV = ib.add(tmem, ib.c(sfVCol())),
        sfDoC = ib.add(tmem, ib.c(sfDoCCol())),
        sfQbC = ib.add(tmem, ib.c(sfQbCCol())),
        sfDs = ib.add(tmem, ib.c(sfDsCol())),
        sfP = ib.add(tmem, ib.c(sfPCol()));
  // Carried: the quantized and bf16 query rings', S's and P/dS's iterations.
  workLoop(rb, loc, queue, numItems, QueueSide::receive,
           ValueRange{ib.c(0), ib.c(0), ib.c(0), ib.c(0)},
           [&](OpBuilder &ab, Value it, ValueRange carried, Value index)
               -> SmallVector<Value> {
    I32Builder eb{ab, loc};
    ItemInfo item = loadItem(eb, items, index, causal, bn);
    // K and V arrive once the previous item's last S^T and dP^T have
    // completed: their scale factors may be overwritten now.
    Value kst = PipelineAcquireOp::create(ab, loc, i32, kp, it,
                                          PipelineSide::consumer);
    copyScales(ab, kSfs, kst, tmem, sfKCol(), qk.tiles);
    copyScales(ab, vSfs, kst, tmem, sfVCol(), dov.tiles);
    QueryVisits vis = QueryVisits::of(eb, item, shape);

    // S^T_i = K Q_i^T and dP^T_i = V dO_i^T (N = 64 queries), once the
    // gradient role has loaded the previous ones; returns the next (qIt,
    // safeIt) and the query tile's stage.
    auto issueS = [&](OpBuilder &sb, Value i, Value qIt, Value safeIt,
                      Value sIt) -> SmallVector<Value> {
      I32Builder sib{sb, loc};
      auto [qt, head] = vis.at(sib, item, i);
      (void)head;
      Value sbuf = PipelineAcquireOp::create(sb, loc, i32, sp, sIt,
                                             PipelineSide::producer);
      auto quantized = [&](OpBuilder &lb) -> SmallVector<Value> {
        I32Builder lib{lb, loc};
        Value st = PipelineAcquireOp::create(lb, loc, i32, qr, qIt,
                                             PipelineSide::consumer);
        copyScales(lb, qaSfs, st, tmem, sfQCol(), qk.tiles);
        copyScales(lb, gSfs, st, tmem, sfDoCol(), dov.tiles);
        // The 64 queries are rows 64 (qt % 2) of their 128-token scale
        // tile: the B scale factors start 2 (qt % 2) columns on (a
        // 4-column chunk holds rows 32 c + r in column c; an NVFP4 MMA's
        // K step t reads chunk t from there, 4 t columns on).
        Value odd = arith::RemSIOp::create(lb, loc, qt, lib.c(2));
        Value rowShift = lib.mul(odd, lib.c(2));
        Value sfQ = lib.add(tmem, lib.add(lib.c(sfQCol()), rowShift));
        Value sfDo = lib.add(tmem, lib.add(lib.c(sfDoCol()), rowShift));
        UmmaOp::create(lb, loc, tmem, kKvS, k8s, kst, IntegerAttr(),
                       TypeAttr(), qa8s, st, /*b_transposed=*/false,
                       lib.i1(false), sfK, sfQ, /*b_k_block=*/Value(),
                       /*k_valid=*/Value());
        UmmaOp::create(lb, loc, tmem, kKvDp, v8s, kst, IntegerAttr(),
                       TypeAttr(), g8s, st, /*b_transposed=*/false,
                       lib.i1(false), sfV, sfDo, /*b_k_block=*/Value(),
                       /*k_valid=*/Value());
        return {lib.add(qIt, lib.c(1)), safeIt, st};
      };
      SmallVector<Value> next;
      if (safe) {
        auto ifOp = scf::IfOp::create(sb, loc, TypeRange{i32, i32, i32},
                                      vis.isSafe(sib, item, qt),
                                      /*withElse=*/true);
        OpBuilder tb = ifOp.getThenBodyBuilder();
        I32Builder tib{tb, loc};
        Value st = PipelineAcquireOp::create(tb, loc, i32, qs, safeIt,
                                             PipelineSide::consumer);
        UmmaOp::create(tb, loc, tmem, kKvS, k16s, kst, IntegerAttr(),
                       TypeAttr(), q16s, st, /*b_transposed=*/false,
                       tib.i1(false), Value(), Value(), /*b_k_block=*/Value(),
                       /*k_valid=*/Value());
        UmmaOp::create(tb, loc, tmem, kKvDp, v16s, kst, IntegerAttr(),
                       TypeAttr(), g16s, st, /*b_transposed=*/false,
                       tib.i1(false), Value(), Value(), /*b_k_block=*/Value(),
                       /*k_valid=*/Value());
        scf::YieldOp::create(tb, loc,
                             ValueRange{qIt, tib.add(safeIt, tib.c(1)), st});
        OpBuilder elseb = ifOp.getElseBodyBuilder();
        scf::YieldOp::create(elseb, loc, quantized(elseb));
        next.assign(ifOp.getResults().begin(), ifOp.getResults().end());
      } else {
        next = quantized(sb);
      }
      UmmaCommitOp::create(sb, loc, sp, sbuf, StageBarrier::full);
      return next; // qIt, safeIt, stage
    };

    SmallVector<Value> first =
        issueS(ab, eb.c(0), carried[0], carried[1], carried[2]);
    // dV's and dK's columns are free once the previous item's epilogue has
    // read them (the first MMAs below overwrite them).
    PipelineAcquireOp::create(ab, loc, i32, accp, it, PipelineSide::producer);
    Value last = eb.sub(vis.total, eb.c(1));
    auto forOp = scf::ForOp::create(
        ab, loc, eb.c(0), vis.total, eb.c(1),
        ValueRange{first[0], first[1], eb.add(carried[2], eb.c(1)), carried[3],
                   first[2]});
    {
      OpBuilder fb = OpBuilder::atBlockBegin(forOp.getBody());
      I32Builder fib{fb, loc};
      Value i = forOp.getInductionVar();
      auto args = forOp.getRegionIterArgs();
      Value qIt = args[0], safeIt = args[1], sIt = args[2], pdsIt = args[3],
            st = args[4];
      auto [qt, head] = vis.at(fib, item, i);
      (void)head;
      // The next S^T and dP^T first; after the item's last ones K and V
      // are free.
      auto more = scf::IfOp::create(fb, loc, TypeRange{i32, i32, i32, i32},
                                    fib.cmp(arith::CmpIPredicate::slt, i, last),
                                    /*withElse=*/true);
      {
        OpBuilder tb = more.getThenBodyBuilder();
        I32Builder tib{tb, loc};
        SmallVector<Value> n =
            issueS(tb, tib.add(i, tib.c(1)), qIt, safeIt, sIt);
        scf::YieldOp::create(
            tb, loc, ValueRange{n[0], n[1], tib.add(sIt, tib.c(1)), n[2]});
        OpBuilder elseb = more.getElseBodyBuilder();
        UmmaCommitOp::create(elseb, loc, kp, kst, StageBarrier::empty);
        scf::YieldOp::create(elseb, loc, ValueRange{qIt, safeIt, sIt, st});
      }
      // dV += P^T dO and dK += dS^T Q once P^T, dS^T (and dS^T's scales)
      // are in place and the rows past the document's end are zeroed.
      Value pst = PipelineAcquireOp::create(fb, loc, i32, pdsp, pdsIt,
                                            PipelineSide::consumer);
      Value accumulate = fib.cmp(arith::CmpIPredicate::sgt, i, fib.c(0));
      Value queriesInDoc = fib.sub(item.docLen, fib.mul(qt, fib.c(bq)));
      auto quantized = [&](OpBuilder &lb) {
        I32Builder lib{lb, loc};
        UmmaScalesOp::create(lb, loc, gSfCs, st, tmem, sfDoCCol());
        UmmaScalesOp::create(lb, loc, qbSfCs, st, tmem, sfQbCCol());
        UmmaScalesOp::create(lb, loc, dsSfs, lib.c(0), tmem, sfDsCol());
        // dO's and Q's scales along the queries: K-blocks 2 (qt % 2) and
        // 2 (qt % 2) + 1 of the 128-token tile.
        Value kBlock = lib.mul(arith::RemSIOp::create(lb, loc, qt, lib.c(2)),
                               lib.c(2));
        UmmaOp::create(lb, loc, tmem, kKvDv, Value(), Value(),
                       lb.getI64IntegerAttr(kKvP), type8, gb8s, st,
                       /*b_transposed=*/true, accumulate, sfP, sfDoC, kBlock,
                       queriesInDoc);
        UmmaOp::create(lb, loc, tmem, kKvDk, Value(), Value(),
                       lb.getI64IntegerAttr(kKvDs), type8, qb8s, st,
                       /*b_transposed=*/true, accumulate, sfDs, sfQbC, kBlock,
                       queriesInDoc);
        UmmaCommitOp::create(lb, loc, pdsp, pst, StageBarrier::empty);
        UmmaCommitOp::create(lb, loc, qr, st, StageBarrier::empty);
      };
      if (safe) {
        auto ifOp = scf::IfOp::create(fb, loc, vis.isSafe(fib, item, qt),
                                      /*withElse=*/true);
        OpBuilder tb = ifOp.getThenBodyBuilder();
        UmmaOp::create(tb, loc, tmem, kKvDv, Value(), Value(),
                       tb.getI64IntegerAttr(kKvP), type16, g16s, st,
                       /*b_transposed=*/true, accumulate, Value(), Value(),
                       /*b_k_block=*/Value(), queriesInDoc);
        UmmaOp::create(tb, loc, tmem, kKvDk, Value(), Value(),
                       tb.getI64IntegerAttr(kKvDs), type16, q16s, st,
                       /*b_transposed=*/true, accumulate, Value(), Value(),
                       /*b_k_block=*/Value(), queriesInDoc);
        UmmaCommitOp::create(tb, loc, pdsp, pst, StageBarrier::empty);
        UmmaCommitOp::create(tb, loc, qs, st, StageBarrier::empty);
        OpBuilder elseb = ifOp.getElseBodyBuilder();
        quantized(elseb);
      } else {
        quantized(fb);
      }
      scf::YieldOp::create(fb, loc,
                           ValueRange{more.getResult(0), more.getResult(1),
                                      more.getResult(2),
                                      fib.add(pdsIt, fib.c(1)),
                                      more.getResult(3)});
    }
    // dK and dV complete: the epilogue may read them.
    UmmaCommitOp::create(ab, loc, accp, eb.c(0), StageBarrier::full);
    return {forOp.getResult(0), forOp.getResult(1), forOp.getResult(2),
            forOp.getResult(3)};
  });
  ReturnOp::create(rb, loc);
}

void DkdvProgram::buildGrad(OpBuilder &b) {
  OpBuilder rb = createRole(b, loc, "grad", 2, 4, kGradRegisters,
                            /*singleThread=*/false);
  I32Builder ib{rb, loc};
  // Warpgroup g of the role: query columns [32 g, 32 g + 32) of each S^T
  // tile (dS^T's K-block g along the queries), dK and dV columns
  // [g D / 2, (g + 1) D / 2) in the epilogue.
  const int64_t half = 32, dHalf = d / 2;
  Value wg = WarpgroupIdOp::create(rb, loc, i32);
  Value colBase = ib.mul(wg, ib.c(half));
  Value sBase = ib.add(tmem, colBase);
  auto sType = FragmentType::get(ctx, {bn, half}, f32);
  auto codesType = FragmentType::get(ctx, {bn, half}, f8);
  auto type16 = FragmentType::get(ctx, {bn, half}, bf16);
  auto accType = FragmentType::get(ctx, {bn, dHalf}, f32);
  // P's scale factors: the fixed 2^8 stays in the codes (kUnitScales).
  TmemFillOp::create(rb, loc, tmem, sfPCol(), 4, kUnitScales);
  // Carried: the S and P/dS pipelines' iterations, and the quantized and
  // bf16 query rings' (to find the stage whose rows past the end it zeroes).
  workLoop(rb, loc, queue, numItems, QueueSide::receive,
           ValueRange{ib.c(0), ib.c(0), ib.c(0), ib.c(0)},
           [&](OpBuilder &ab, Value it, ValueRange carried, Value index)
               -> SmallVector<Value> {
    I32Builder eb{ab, loc};
    ItemInfo item = loadItem(eb, items, index, causal, bn);
    Value keyBase = eb.mul(item.qTile, eb.c(bn));
    QueryVisits vis = QueryVisits::of(eb, item, shape);
    auto forOp = scf::ForOp::create(ab, loc, eb.c(0), vis.total, eb.c(1),
                                    carried);
    {
      OpBuilder fb = OpBuilder::atBlockBegin(forOp.getBody());
      I32Builder fib{fb, loc};
      Value i = forOp.getInductionVar();
      auto args = forOp.getRegionIterArgs();
      Value sIt = args[0], pdsIt = args[1], qIt = args[2], safeIt = args[3];
      auto [qt, head] = vis.at(fib, item, i);
      Value isSafe = vis.isSafe(fib, item, qt);
      Value sst = PipelineAcquireOp::create(fb, loc, i32, sp, sIt,
                                            PipelineSide::consumer);
      Value sT = TmemLoadOp::create(fb, loc, sType, sBase, kKvS);
      Value dpT = TmemLoadOp::create(fb, loc, sType, sBase, kKvDp);
      PipelineReleaseOp::create(fb, loc, sp, sst);
      Value tileQueryBase = fib.mul(qt, fib.c(bq));
      Value queryBase = fib.add(tileQueryBase, colBase);
      // Masking: this half reaches past the document end, or (causal) it
      // meets the key tile's diagonal.
      Value cond = fib.cmp(arith::CmpIPredicate::sgt,
                           fib.add(queryBase, fib.c(half)), item.docLen);
      if (causal)
        cond = arith::OrIOp::create(
            fb, loc, cond,
            fib.cmp(arith::CmpIPredicate::slt, queryBase,
                    fib.add(keyBase, fib.c(bn))));
      Value masked = maskIf(fb, loc, cond, sT, queryBase, keyBase, item.docLen,
                            causal, /*transposed=*/true);
      auto grad = SoftmaxGradOp::create(
          fb, loc, sType, sType, masked, dpT, lse, delta, head, item.docStart,
          queryBase, item.docLen, numTokens, scaleLog2, /*lse2=*/Value(),
          fb.getUnitAttr());
      Value pst = PipelineAcquireOp::create(fb, loc, i32, pdsp, pdsIt,
                                            PipelineSide::producer);
      // The query tile's rows past the document's end (the next
      // document's dO and Q) meet zero P^T and dS^T in dV and dK: zeroed
      // here, after S^T and dP^T (which read them) and before the pds
      // hand-off that lets dV and dK read them.
      Value queriesInDoc = fib.sub(item.docLen, tileQueryBase);
      auto quantized = [&](OpBuilder &lb) -> SmallVector<Value> {
        I32Builder lib{lb, loc};
        Value st = stageOf(lib, qIt, stages);
        zeroPastEnd(lb, gb8s, st, queriesInDoc, bq, /*kStep=*/32);
        zeroPastEnd(lb, qb8s, st, queriesInDoc, bq, /*kStep=*/32);
        Value p8 = FragQuantizeOp::create(lb, loc, codesType, grad.getP(),
                                          lib.i1(true), pPrecision);
        TmemStoreOp::create(lb, loc, p8,
                            lib.add(tmem, lib.mul(wg, lib.c(half / 4))), kKvP);
        Value ds8 = FragMxQuantizeOp::create(lb, loc, codesType, grad.getDs(),
                                             dsSfs, lib.c(0), wg);
        TmemStoreOp::create(lb, loc, ds8,
                            lib.add(tmem, lib.mul(wg, lib.c(half / 4))), kKvDs);
        return {lib.add(qIt, lib.c(1)), safeIt};
      };
      SmallVector<Value> rings;
      if (safe) {
        auto ifOp = scf::IfOp::create(fb, loc, TypeRange{i32, i32}, isSafe,
                                      /*withElse=*/true);
        OpBuilder tb = ifOp.getThenBodyBuilder();
        I32Builder tib{tb, loc};
        Value st = stageOf(tib, safeIt, kSafeStages);
        zeroPastEnd(tb, g16s, st, queriesInDoc, bq, /*kStep=*/16);
        zeroPastEnd(tb, q16s, st, queriesInDoc, bq, /*kStep=*/16);
        Value p16 = FragQuantizeOp::create(tb, loc, type16, grad.getP(),
                                           tib.i1(false), pPrecision);
        TmemStoreOp::create(tb, loc, p16,
                            tib.add(tmem, tib.mul(wg, tib.c(half / 2))), kKvP);
        Value ds16 = FragBlockQuantizeOp::create(tb, loc, type16, grad.getDs(),
                                                 tib.i1(false));
        TmemStoreOp::create(tb, loc, ds16,
                            tib.add(tmem, tib.mul(wg, tib.c(half / 2))), kKvDs);
        scf::YieldOp::create(tb, loc,
                             ValueRange{qIt, tib.add(safeIt, tib.c(1))});
        OpBuilder elseb = ifOp.getElseBodyBuilder();
        scf::YieldOp::create(elseb, loc, quantized(elseb));
        rings.assign(ifOp.getResults().begin(), ifOp.getResults().end());
      } else {
        rings = quantized(fb);
      }
      PipelineArriveOp::create(fb, loc, pdsp, pst);
      scf::YieldOp::create(fb, loc,
                           ValueRange{fib.add(sIt, fib.c(1)),
                                      fib.add(pdsIt, fib.c(1)), rings[0],
                                      rings[1]});
    }
    // The epilogue: this warpgroup's half of dK's and dV's columns.
    Value ast = PipelineAcquireOp::create(ab, loc, i32, accp, it,
                                          PipelineSide::consumer);
    // One accumulator at a time: half the registers of both at once.
    Value accBase = eb.add(tmem, eb.mul(wg, eb.c(dHalf)));
    Value column = eb.mul(wg, eb.c(dHalf));
    Value dkAcc = TmemLoadOp::create(ab, loc, accType, accBase, kKvDk);
    GradStoreOp::create(ab, loc, dkAcc, dk, item.qStart, eb.c(0), item.qRows,
                        item.kvHead, softmaxScale, kvHeads, column);
    Value dvAcc = TmemLoadOp::create(ab, loc, accType, accBase, kKvDv);
    PipelineReleaseOp::create(ab, loc, accp, ast);
    Value inv = arith::ConstantOp::create(
        ab, loc, ab.getF32FloatAttr(std::ldexp(1.0f, -fixedScale)));
    GradStoreOp::create(ab, loc, dvAcc, dv, item.qStart, eb.c(0), item.qRows,
                        item.kvHead, inv, kvHeads, column);
    return SmallVector<Value>(forOp.getResults());
  });
  TmemDeallocOp::create(rb, loc, tmem, kTmemColumns);
  ReturnOp::create(rb, loc);
}

} // namespace

namespace flamia::tile {

LogicalResult tileDqSm100(KernelOp kernel, AttentionDqTileOp at) {
  DqProgram program(kernel, at);
  return program.build();
}

LogicalResult tileDkdvSm100(KernelOp kernel, AttentionDkdvTileOp at) {
  DkdvProgram program(kernel, at);
  return program.build();
}

} // namespace flamia::tile
