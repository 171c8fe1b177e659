//===- MemoryPatterns.cpp - shared memory, pipelines, queue, TMA ----------===//
//
// The synchronization protocols (docs/lowering.md):
//  - pipeline with S stages at `base`: full[s] (count 1: the producer's
//    arrive.expect_tx, then the TMA bytes), empty[s] (count = consumers).
//    Iteration `it` uses stage it % S with phase parity (it / S) % 2; the
//    producer waits for empty with the opposite parity, which a fresh
//    barrier reports as complete (the first lap passes at once).
//  - queue: two slots; the producer thread writes the index into slot
//    it % 2 after the slot's empty barrier and arrives on its full barrier
//    (release); receivers wait on full (acquire), read, arrive on empty.
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"
#include "KernelPlan.h"
#include "Patterns.h"

#include "flamia/Dialect/FlamiaOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace flamia;

namespace {

int64_t smemOffsetOf(Operation *op) {
  return cast<IntegerAttr>(op->getAttr(kSmemOffsetAttr)).getInt();
}

/// stage = it % S, parity = (it / S) % 2.
std::pair<Value, Value> stageAndParity(Emitter &e, Value it, int64_t stages) {
  Value s = e.i32c(stages);
  return {e.urem(it, s), e.band(e.udiv(it, s), e.i32c(1))};
}

/// Whether tensor-memory work on the converter's target needs tcgen05
/// fences around the mbarrier hand-offs.
bool fencesTensorMemory(const TypeConverter *converter) {
  return static_cast<const FlamiaTypeConverter *>(converter)
      ->getTarget()
      .fencesTensorMemoryAtBarriers();
}

/// A barrier at `base + byteOffset(stage)` (byteOffset = 8 * index).
Value barrierAt(Emitter &e, Value base, Value index) {
  return e.gep(base, e.mul(index, e.i32c(8)));
}

struct SmemAllocLowering : OpConversionPattern<SmemAllocOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SmemAllocOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter e(rewriter, op.getLoc());
    rewriter.replaceOp(op, e.gep(e.smemBase(), smemOffsetOf(op)));
    return success();
  }
};

/// Pipelines and queues: their barriers are initialized in the kernel
/// prologue; here they are just addresses.
template <typename OpTy>
struct BarrierBlockLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpTy::Adaptor;
  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter e(rewriter, op.getLoc());
    Value base = e.gep(e.smemBase(), smemOffsetOf(op));
    if constexpr (std::is_same_v<OpTy, QueueCreateOp>) {
      Type type = this->getTypeConverter()->convertType(op.getQueue().getType());
      Value q = e.undef(type);
      q = e.insert(q, adaptor.getCounter(), 0);
      q = e.insert(q, base, 1);
      rewriter.replaceOp(op, q);
    } else {
      rewriter.replaceOp(op, base);
    }
    return success();
  }
};

struct PipelineAcquireLowering : OpConversionPattern<PipelineAcquireOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PipelineAcquireOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter e(rewriter, op.getLoc());
    int64_t stages = op.getPipeline().getType().getStages();
    auto [stage, parity] = stageAndParity(e, adaptor.getIteration(), stages);
    Value bar;
    if (op.getSide() == PipelineSide::producer) {
      bar = barrierAt(e, adaptor.getPipeline(), e.add(stage, e.i32c(stages)));
      parity = e.bxor(parity, e.i32c(1));
    } else {
      bar = barrierAt(e, adaptor.getPipeline(), stage);
    }
    e.mbarrierWait(bar, parity);
    // tcgen05 work after the wait (MMAs, TMEM loads) is ordered after what
    // the barrier published.
    if (fencesTensorMemory(getTypeConverter()))
      NVVM::Tcgen05FenceOp::create(rewriter, op.getLoc(),
                                   NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
    rewriter.replaceOp(op, stage);
    return success();
  }
};

struct PipelineExpectLowering : OpConversionPattern<PipelineExpectOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PipelineExpectOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter e(rewriter, op.getLoc());
    e.mbarrierArriveExpectTx(barrierAt(e, adaptor.getPipeline(), adaptor.getStage()),
                             op.getBytes());
    rewriter.eraseOp(op);
    return success();
  }
};

struct PipelineReleaseLowering : OpConversionPattern<PipelineReleaseOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PipelineReleaseOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter e(rewriter, op.getLoc());
    int64_t stages = op.getPipeline().getType().getStages();
    // The thread's tensor-memory loads are complete (tcgen05.wait::ld in
    // flamia.tmem.load); the fence orders them before the arrival.
    if (fencesTensorMemory(getTypeConverter()))
      NVVM::Tcgen05FenceOp::create(rewriter, op.getLoc(),
                                   NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
    e.mbarrierArrive(barrierAt(e, adaptor.getPipeline(),
                               e.add(adaptor.getStage(), e.i32c(stages))));
    rewriter.eraseOp(op);
    return success();
  }
};

/// A producer without TMA: one arrival on the full barrier.
struct PipelineArriveLowering : OpConversionPattern<PipelineArriveOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PipelineArriveOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter e(rewriter, op.getLoc());
    if (fencesTensorMemory(getTypeConverter()))
      NVVM::Tcgen05FenceOp::create(rewriter, op.getLoc(),
                                   NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
    e.mbarrierArrive(barrierAt(e, adaptor.getPipeline(), adaptor.getStage()));
    rewriter.eraseOp(op);
    return success();
  }
};

/// cp.async.bulk of one destination tile's bytes, completing on the stage's
/// full barrier.
struct BulkLoadLowering : OpConversionPattern<BulkLoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BulkLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter e(rewriter, loc);
    int64_t bytes = op.getDest().getType().getTileBytes();
    Value offset = e.mul(e.zext(e.i64(), adaptor.getChunk()), e.i64c(bytes));
    Value src = LLVM::AddrSpaceCastOp::create(
        rewriter, loc, e.ptr(AddressSpace::Global),
        LLVM::GEPOp::create(rewriter, loc, e.ptr(), e.i8(), adaptor.getSource(),
                            ArrayRef<LLVM::GEPArg>{offset}));
    Value tile = e.gep(adaptor.getDest(), e.mul(adaptor.getStage(), e.i32c(bytes)));
    Value dst = LLVM::AddrSpaceCastOp::create(
        rewriter, loc, LLVM::LLVMPointerType::get(rewriter.getContext(), 7), tile);
    Value bar = barrierAt(e, adaptor.getPipeline(), adaptor.getStage());
    NVVM::CpAsyncBulkGlobalToSharedClusterOp::create(
        rewriter, loc, dst, src, bar, e.i32c(bytes), Value(), Value());
    rewriter.eraseOp(op);
    return success();
  }
};

/// One TMA copy per swizzle-atom column of the destination tile (128
/// bytes, or the whole row when it is narrower).
struct TmaLoadLowering : OpConversionPattern<TmaLoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TmaLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter e(rewriter, op.getLoc());
    SmemType dst = op.getDest().getType();
    TensorMapView view = TensorMapView::of(dst);
    int64_t bits = dst.getElementType().getIntOrFloatBitWidth();
    // Packed 4-bit tiles go through a u8 map: columns in bytes.
    int64_t perMapElement = bits < 8 ? 8 / bits : 1;
    int64_t atomCols = view.boxCols;
    int64_t atomBytes = dst.getRows() * view.swizzleBytes;
    Value tile = e.gep(adaptor.getDest(),
                       e.mul(adaptor.getStage(), e.i32c(dst.getTileBytes())));
    Value bar = barrierAt(e, adaptor.getPipeline(), adaptor.getStage());
    Value col0 = adaptor.getCol();
    if (perMapElement > 1)
      col0 = e.udiv(col0, e.i32c(perMapElement));
    int64_t mapCols = dst.getCols() / perMapElement;
    for (int64_t a = 0; a < mapCols / atomCols; ++a) {
      Value col = e.add(col0, e.i32c(a * atomCols));
      // The destination as a shared::cluster address of this CTA.
      Value dst = LLVM::AddrSpaceCastOp::create(
          rewriter, op.getLoc(),
          LLVM::LLVMPointerType::get(rewriter.getContext(), 7),
          e.gep(tile, a * atomBytes));
      NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
          rewriter, op.getLoc(), dst, adaptor.getSource(),
          ValueRange{col, adaptor.getRow()}, bar, ValueRange{}, Value(), Value(),
          NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false,
          NVVM::CTAGroupKindAttr(), Value());
    }
    rewriter.eraseOp(op);
    return success();
  }
};

struct QueueNextLowering : OpConversionPattern<QueueNextOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(QueueNextOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter e(rewriter, op.getLoc());
    Value counter = e.extract(adaptor.getQueue(), 0);
    Value base = e.extract(adaptor.getQueue(), 1);
    auto [slot, parity] = stageAndParity(e, adaptor.getIteration(), 2);
    Value full = e.gep(base, e.mul(slot, e.i32c(8)));
    Value empty = e.gep(base, e.add(e.mul(slot, e.i32c(8)), e.i32c(16)));
    Value slotPtr = e.gep(base, e.add(e.mul(slot, e.i32c(4)), e.i32c(32)));
    Value index;
    if (op.getSide() == QueueSide::fetch) {
      index = LLVM::AtomicRMWOp::create(rewriter, op.getLoc(),
                                        LLVM::AtomicBinOp::add, counter,
                                        e.i32c(1), LLVM::AtomicOrdering::monotonic);
      e.mbarrierWait(empty, e.bxor(parity, e.i32c(1)));
      e.store(index, slotPtr, 4);
      e.mbarrierArrive(full);
    } else {
      e.mbarrierWait(full, parity);
      index = e.load(e.i32(), slotPtr, 4);
      e.mbarrierArrive(empty);
    }
    rewriter.replaceOp(op, index);
    return success();
  }
};

struct ItemLoadLowering : OpConversionPattern<ItemLoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ItemLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter e(rewriter, op.getLoc());
    Value item = e.elementPtr(adaptor.getItems(), e.zext(e.i64(), adaptor.getIndex()), 32);
    auto v4 = VectorType::get({4}, e.i32());
    SmallVector<Value> fields;
    for (int64_t half = 0; half < 2; ++half) {
      Value v = e.load(v4, e.gep(item, 16 * half), 16);
      for (int64_t i = 0; i < 4; ++i)
        fields.push_back(LLVM::ExtractElementOp::create(rewriter, op.getLoc(), v,
                                                        e.i32c(i)));
    }
    rewriter.replaceOp(op, fields);
    return success();
  }
};

struct BlockInfoLoadLowering : OpConversionPattern<BlockInfoLoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BlockInfoLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter e(rewriter, op.getLoc());
    Value p = e.elementPtr(adaptor.getBlockInfo(), e.zext(e.i64(), adaptor.getBlock()), 8);
    Value v = e.load(VectorType::get({2}, e.i32()), p, 8);
    rewriter.replaceOp(op, {LLVM::ExtractElementOp::create(rewriter, op.getLoc(), v, e.i32c(0)),
                            LLVM::ExtractElementOp::create(rewriter, op.getLoc(), v, e.i32c(1))});
    return success();
  }
};

/// Thread t < length prefetches row start + t of `head` into L2 with one
/// cp.async.bulk.prefetch.L2 of the row's bytes (a multiple of 16: the
/// verifier). The bulk prefetch takes a global-space address, so the
/// generic pointer is cast to address space 1.
struct PrefetchRowsLowering : OpConversionPattern<PrefetchRowsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PrefetchRowsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter e(rewriter, loc);
    GlobalType src = op.getSource().getType();
    int64_t d = src.getShape()[2];
    int64_t elemBytes = src.getElementType().getIntOrFloatBitWidth() / 8;
    Value heads = e.headCount(adaptor.getHeads(), src.getShape()[1]);
    Value tid = e.tid();
    auto ifOp = scf::IfOp::create(
        rewriter, loc,
        e.icmp(LLVM::ICmpPredicate::slt, tid, adaptor.getLength()),
        /*withElse=*/false);
    OpBuilder tb = ifOp.getThenBodyBuilder();
    Emitter te(tb, loc);
    Value index = te.packedIndex(te.add(adaptor.getStart(), tid),
                                 adaptor.getHead(), te.i32c(0), heads, d);
    Value row = te.elementPtr(adaptor.getSource(), index, elemBytes);
    Value global = LLVM::AddrSpaceCastOp::create(
        tb, loc, te.ptr(AddressSpace::Global), row);
    NVVM::CpAsyncBulkPrefetchOp::create(tb, loc, global, te.i32c(d * elemBytes),
                                        Value());
    rewriter.eraseOp(op);
    return success();
  }
};

struct ReturnLowering : OpConversionPattern<ReturnOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReturnOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<LLVM::ReturnOp>(op, ValueRange{});
    return success();
  }
};

/// Zeroes rows [from, to) of a stage: with rows of whole 128-byte swizzle
/// atoms (or rows that are one 64-byte atom), the rows of each atom are
/// contiguous (the swizzle permutes the 16-byte chunks within a row), so
/// the role's threads store 16 zero bytes each per step over
/// (to - from) * atom bytes of every atom. Then the async proxy (the MMA's
/// reads) is fenced against these generic-proxy writes and the role waits
/// on a named barrier (a single-thread role has nobody to wait for).
struct SmemZeroRowsLowering : OpConversionPattern<SmemZeroRowsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SmemZeroRowsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto roleFirst = op->getAttrOfType<IntegerAttr>(kRoleFirstAttr);
    auto roleThreads = op->getAttrOfType<IntegerAttr>(kRoleThreadsAttr);
    if (!roleFirst || !roleThreads)
      return op.emitOpError() << "is not inside a flamia.role";
    Location loc = op.getLoc();
    Emitter e(rewriter, loc);
    SmemType tile = op.getTile().getType();
    int64_t rows = tile.getRows();
    int64_t rowBytes = tile.getRowBytes();
    int64_t atomBytes = std::min<int64_t>(rowBytes, 128);
    int64_t atoms = rowBytes / atomBytes;
    int64_t threads = roleThreads.getInt();
    Value base = e.gep(adaptor.getTile(),
                       e.mul(adaptor.getStage(), e.i32c(tile.getTileBytes())));
    Value from = adaptor.getFrom();
    Value to = adaptor.getTo() ? adaptor.getTo() : e.i32c(rows);
    Value chunksPerAtom = e.mul(e.sub(to, from), e.i32c(atomBytes / 16));
    Value total = e.mul(chunksPerAtom, e.i32c(atoms));
    Value first = e.sub(e.tid(), e.i32c(128 * roleFirst.getInt()));
    scf::ForOp::create(
        rewriter, loc, first, total, e.i32c(threads), ValueRange{},
        [&](OpBuilder &b, Location l, Value chunk, ValueRange) {
          Emitter f(b, l);
          Value atom = f.udiv(chunk, chunksPerAtom);
          Value inAtom = f.urem(chunk, chunksPerAtom);
          Value offset = f.add(f.mul(atom, f.i32c(rows * atomBytes)),
                               f.add(f.mul(from, f.i32c(atomBytes)),
                                     f.mul(inAtom, f.i32c(16))));
          auto v4 = VectorType::get({4}, f.i32());
          Value zero = LLVM::ZeroOp::create(b, l, v4);
          f.store(zero, f.gep(base, offset), 16);
          scf::YieldOp::create(b, l);
        });
    NVVM::FenceProxyOp::create(
        rewriter, loc,
        NVVM::ProxyKindAttr::get(getContext(), NVVM::ProxyKind::async_shared),
        NVVM::SharedSpaceAttr::get(getContext(), NVVM::SharedSpace::shared_cta));
    if (threads > 1)
      NVVM::BarrierOp::create(rewriter, loc, TypeRange{},
                              e.i32c(kZeroRowsBarrier), e.i32c(threads), {},
                              Value());
    rewriter.eraseOp(op);
    return success();
  }
};

/// Turns: named barrier 1 + w belongs to warpgroup w of the role. "take"
/// is bar.sync on one's own barrier, "give" bar.arrive on the next one's;
/// each completes with both warpgroups' 128 threads.
struct TurnLowering : OpConversionPattern<TurnOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TurnOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto roleFirst = op->getAttrOfType<IntegerAttr>(kRoleFirstAttr);
    if (!roleFirst)
      return op.emitOpError() << "is not inside a flamia.role";
    Emitter e(rewriter, op.getLoc());
    int64_t n = op.getWarpgroups();
    Value wg = e.sub(e.udiv(e.tid(), e.i32c(128)), e.i32c(roleFirst.getInt()));
    Value threads = e.i32c(256);
    if (op.getAction() == TurnAction::take) {
      NVVM::BarrierOp::create(rewriter, op.getLoc(), TypeRange{},
                              e.add(wg, e.i32c(1)), threads, {}, Value());
    } else {
      Value next = e.urem(e.add(wg, e.i32c(1)), e.i32c(n));
      NVVM::BarrierArriveOp::create(rewriter, op.getLoc(),
                                    e.add(next, e.i32c(1)), threads);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// gpu.block_id in a kernel body (upstream's gpu-to-nvvm would also turn
/// LLVM math intrinsics into libdevice calls, which these kernels avoid).
struct BlockIdLowering : OpConversionPattern<gpu::BlockIdOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(gpu::BlockIdOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type i32 = rewriter.getI32Type();
    Value id;
    switch (op.getDimension()) {
    case gpu::Dimension::x:
      id = NVVM::BlockIdXOp::create(rewriter, loc, i32);
      break;
    case gpu::Dimension::y:
      id = NVVM::BlockIdYOp::create(rewriter, loc, i32);
      break;
    case gpu::Dimension::z:
      id = NVVM::BlockIdZOp::create(rewriter, loc, i32);
      break;
    }
    rewriter.replaceOpWithNewOp<arith::IndexCastOp>(op, rewriter.getIndexType(), id);
    return success();
  }
};

struct AttentionTileRejection : OpConversionPattern<AttentionTileOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AttentionTileOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    return op.emitOpError() << "is not tiled: run flamia-tile before "
                               "convert-flamia-to-nvvm";
  }
};

} // namespace

void flamia::populateFlamiaMemoryPatterns(
    const FlamiaTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<SmemAllocLowering, SmemZeroRowsLowering, PrefetchRowsLowering,
               BarrierBlockLowering<PipelineCreateOp>,
               BarrierBlockLowering<QueueCreateOp>, PipelineAcquireLowering,
               PipelineExpectLowering, PipelineReleaseLowering,
               PipelineArriveLowering, BulkLoadLowering, TmaLoadLowering,
               QueueNextLowering, ItemLoadLowering, BlockInfoLoadLowering,
               ReturnLowering, BlockIdLowering, TurnLowering,
               AttentionTileRejection>(converter, patterns.getContext());
}
