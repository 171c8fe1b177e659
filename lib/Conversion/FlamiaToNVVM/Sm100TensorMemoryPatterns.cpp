//===- Sm100TensorMemoryPatterns.cpp - tensor memory and tcgen05 ----------===//
//
// Lowers the sm_100a block ops to NVVM's tcgen05 ops (PTX ISA 9.0, 9.7.16):
//
//   flamia.tmem.alloc    the allocating warp runs tcgen05.alloc (the address
//                        lands in shared memory) and gives up the permit;
//                        fence / bar.sync / fence; every thread loads it.
//   flamia.tmem.dealloc  bar.sync of the role's warpgroup (all its warps are
//                        done with TMEM), then its first warp deallocates.
//   flamia.tmem.load     tcgen05.ld.32x32b.x<N> at (lane 32 (warp % 4),
//   flamia.tmem.store    column) + tcgen05.wait::ld / ::st.
//   flamia.umma.scales   tcgen05.cp.cta_group::1.32x128b.warpx4 from a
//                        512-byte tile (descriptor: ScaleFactorLayout.h).
//   flamia.umma          K / K_mma tcgen05.mma (kind::f16) or
//                        tcgen05.mma.block_scale (kind::mxf8f6f4, block32)
//                        with descriptors from include/flamia/Target: the
//                        shared-memory descriptors of the tiles TMA wrote
//                        and the instruction descriptor (scale-factor IDs
//                        = K-block).
//   flamia.umma.commit   tcgen05.commit.cta_group::1 on the barrier.
//   flamia.smem.store    16-byte st.shared of each thread's row into the
//                        swizzled K-major layout TMA would write, then
//                        fence.proxy.async (an A operand for flamia.umma).
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"
#include "KernelPlan.h"
#include "Patterns.h"

#include "flamia/Dialect/FlamiaOps.h"
#include "flamia/Target/Sm100InstrDescriptor.h"
#include "flamia/Target/Sm100SmemDescriptor.h"
#include "flamia/Target/SmemMatrixLayout.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <string>

using namespace mlir;
using namespace flamia;

namespace {

constexpr unsigned kTensorAddressSpace = 6;
constexpr int64_t kLoadChunk = 32;

Value tmemPtr(Emitter &e, Value address) {
  return LLVM::IntToPtrOp::create(
      e.b, e.loc, LLVM::LLVMPointerType::get(e.b.getContext(), kTensorAddressSpace),
      address);
}

/// The TMEM address of the executing warp's 32 lanes at `column` of `base`.
Value warpLanes(Emitter &e, Value base, int64_t column) {
  Value quadrant = e.urem(e.udiv(e.tid(), e.i32c(32)), e.i32c(4));
  Value lane = e.shl(e.mul(quadrant, e.i32c(32)), e.i32c(16));
  return e.add(e.add(base, lane), e.i32c(column));
}

struct TmemAllocLowering : OpConversionPattern<TmemAllocOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TmemAllocOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter e(rewriter, loc);
    int64_t offset = cast<IntegerAttr>(op->getAttr(kSmemOffsetAttr)).getInt();
    Value slot = e.gep(e.smemBase(), offset);
    Value warp = e.udiv(e.tid(), e.i32c(32));
    auto ifOp = scf::IfOp::create(
        rewriter, loc,
        e.icmp(LLVM::ICmpPredicate::eq, warp, e.i32c(4 * op.getByWarpgroup())),
        /*withElse=*/false);
    {
      OpBuilder tb = ifOp.getThenBodyBuilder();
      Emitter te(tb, loc);
      NVVM::Tcgen05AllocOp::create(tb, loc, slot, te.i32c(op.getColumns()));
      NVVM::Tcgen05RelinquishAllocPermitOp::create(tb, loc);
    }
    NVVM::Tcgen05FenceOp::create(rewriter, loc,
                                 NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
    NVVM::Barrier0Op::create(rewriter, loc);
    NVVM::Tcgen05FenceOp::create(rewriter, loc,
                                 NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
    rewriter.replaceOp(op, e.load(e.i32(), slot, 4));
    return success();
  }
};

struct TmemDeallocLowering : OpConversionPattern<TmemDeallocOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TmemDeallocOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter e(rewriter, loc);
    auto roleFirst = op->getAttrOfType<IntegerAttr>(kRoleFirstAttr);
    auto roleThreads = op->getAttrOfType<IntegerAttr>(kRoleThreadsAttr);
    if (!roleFirst || !roleThreads)
      return op.emitOpError() << "is not inside a flamia.role";
    // Named barrier 15 with the role's threads (one or more warpgroups):
    // every warp of the role has finished its tensor-memory loads.
    NVVM::Tcgen05FenceOp::create(rewriter, loc,
                                 NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
    NVVM::BarrierOp::create(rewriter, loc, TypeRange{}, e.i32c(15),
                            e.i32c(roleThreads.getInt()), {}, Value());
    NVVM::Tcgen05FenceOp::create(rewriter, loc,
                                 NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
    // The role's first warp (the one that allocated) frees the columns.
    Value warp = e.udiv(e.tid(), e.i32c(32));
    Value allocatingWarp = e.i32c(4 * roleFirst.getInt());
    Value firstWarp = e.icmp(LLVM::ICmpPredicate::eq, warp, allocatingWarp);
    auto ifOp = scf::IfOp::create(rewriter, loc, firstWarp, /*withElse=*/false);
    OpBuilder tb = ifOp.getThenBodyBuilder();
    Emitter te(tb, loc);
    NVVM::Tcgen05DeallocOp::create(tb, loc, tmemPtr(te, adaptor.getBase()),
                                   te.i32c(op.getColumns()));
    rewriter.eraseOp(op);
    return success();
  }
};

auto shape32x32b(MLIRContext *ctx) {
  return NVVM::Tcgen05LdStShapeAttr::get(ctx, NVVM::Tcgen05LdStShape::SHAPE_32X32B);
}

struct TmemLoadLowering : OpConversionPattern<TmemLoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TmemLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter e(rewriter, loc);
    int64_t n = op.getResult().getType().getCols();
    // Loads of at most kLoadChunk columns: each needs its registers as one
    // contiguous block, which a 128-register load makes hard to place.
    int64_t chunk = std::min<int64_t>(n, kLoadChunk);
    auto vecType = VectorType::get({chunk}, e.i32());
    Value lanes = warpLanes(e, adaptor.getBase(), op.getColumn());
    SmallVector<Value> chunks;
    for (int64_t c = 0; c < n; c += chunk)
      chunks.push_back(NVVM::Tcgen05LdOp::create(
          rewriter, loc, vecType, UnitAttr(), shape32x32b(rewriter.getContext()),
          tmemPtr(e, e.add(lanes, e.i32c(c))), Value()));
    NVVM::Tcgen05WaitOp::create(rewriter, loc, NVVM::Tcgen05WaitKind::LOAD);
    SmallVector<Value> values;
    for (int64_t i = 0; i < n; ++i)
      values.push_back(e.bitcast(
          e.f32(), LLVM::ExtractElementOp::create(rewriter, loc, chunks[i / chunk],
                                                  e.i32c(i % chunk))));
    Type type = getTypeConverter()->convertType(op.getResult().getType());
    rewriter.replaceOp(op, e.pack(type, values));
    return success();
  }
};

/// tcgen05.st.32x32b of `words` (one per column) at the warp's lanes.
void storeWords(Emitter &e, Value base, int64_t column, ArrayRef<Value> words) {
  auto vecType = VectorType::get({static_cast<int64_t>(words.size())}, e.i32());
  Value vec = e.undef(vecType);
  for (auto [i, w] : llvm::enumerate(words))
    vec = LLVM::InsertElementOp::create(e.b, e.loc, vec, w,
                                        e.i32c(static_cast<int64_t>(i)));
  NVVM::Tcgen05StOp::create(e.b, e.loc, UnitAttr(), shape32x32b(e.b.getContext()),
                            tmemPtr(e, warpLanes(e, base, column)), vec, Value());
  NVVM::Tcgen05WaitOp::create(e.b, e.loc, NVVM::Tcgen05WaitKind::STORE);
}

struct TmemStoreLowering : OpConversionPattern<TmemStoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TmemStoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter e(rewriter, op.getLoc());
    SmallVector<Value> words = e.unpack(adaptor.getValue());
    for (Value &w : words)
      if (w.getType().isF32())
        w = e.bitcast(e.i32(), w);
    storeWords(e, adaptor.getBase(), op.getColumn(), words);
    rewriter.eraseOp(op);
    return success();
  }
};

struct TmemFillLowering : OpConversionPattern<TmemFillOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TmemFillOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter e(rewriter, op.getLoc());
    SmallVector<Value> words(op.getColumns(),
                             e.i32c(static_cast<int32_t>(op.getValue())));
    storeWords(e, adaptor.getBase(), op.getColumn(), words);
    rewriter.eraseOp(op);
    return success();
  }
};

/// Thread t of the warpgroup holds row t of the fragment (the layout of
/// tcgen05.ld.32x32b); it writes the row's 16-byte chunks where a TMA load of
/// the tile with the widest swizzle would put them: boxes of up to 128 bytes
/// of each row side by side (box a at a x rows x box bytes), row r at r x
/// box bytes in its box, the chunk index XORed with the row's position in
/// its 8-row swizzle atom (applySmemSwizzle, from an aligned stage base).
struct SmemStoreLowering : OpConversionPattern<SmemStoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SmemStoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter e(rewriter, loc);
    SmemType tile = op.getTile().getType();
    int64_t rows = tile.getRows();
    int64_t rowBytes = tile.getRowBytes();
    // The box (and swizzle) a TMA load of the tile uses.
    int64_t boxBytes = TensorMapView::of(tile).swizzleBytes;
    SmemSwizzle swizzle = widestSmemSwizzleFor(static_cast<uint32_t>(boxBytes));
    // The swizzle XORs byte-offset bits [4, 4+B) with bits [7, 7+B).
    int64_t swizzleMask = static_cast<int64_t>(smemSwizzleBytes(swizzle)) / 16 - 1;
    if (smemSwizzleRepeatBytes(swizzle) > 1024 ||
        tile.getTileBytes() % smemSwizzleRepeatBytes(swizzle) != 0)
      return op.emitOpError() << "a stage of " << tile
                              << " does not start on the swizzle's repeat";
    SmallVector<Value> words = e.unpack(adaptor.getValue());
    for (Value &w : words)
      if (w.getType().isF32())
        w = e.bitcast(e.i32(), w);
    Value base = e.gep(adaptor.getTile(),
                       e.mul(adaptor.getStage(), e.i32c(tile.getTileBytes())));
    Value row = e.urem(e.tid(), e.i32c(128));
    Value rowOffset = e.mul(row, e.i32c(boxBytes));
    // (offset >> 7) & mask is the row's position in its swizzle atom for
    // every chunk of the row (boxes are whole atoms apart).
    Value rowSwizzle = e.shl(
        e.band(e.lshr(rowOffset, e.i32c(7)), e.i32c(swizzleMask)), e.i32c(4));
    auto v4 = VectorType::get({4}, e.i32());
    for (int64_t chunk = 0; chunk < rowBytes / 16; ++chunk) {
      int64_t box = chunk * 16 / boxBytes, inBox = chunk * 16 % boxBytes;
      Value offset =
          e.add(e.i32c(box * rows * boxBytes),
                e.bxor(e.add(rowOffset, e.i32c(inBox)), rowSwizzle));
      Value vec = e.undef(v4);
      for (int64_t i = 0; i < 4; ++i)
        vec = LLVM::InsertElementOp::create(rewriter, loc, vec,
                                            words[4 * chunk + i], e.i32c(i));
      e.store(vec, e.gep(base, offset), 16);
    }
    NVVM::FenceProxyOp::create(
        rewriter, loc,
        NVVM::ProxyKindAttr::get(getContext(), NVVM::ProxyKind::async_shared),
        NVVM::SharedSpaceAttr::get(getContext(), NVVM::SharedSpace::shared_cta));
    rewriter.eraseOp(op);
    return success();
  }
};

/// The shared-memory address of stage `stage` of a tile buffer.
Value stageAddress(Emitter &e, Value buffer, Value stage, SmemType type) {
  return e.add(e.smemAddress(buffer), e.mul(stage, e.i32c(type.getTileBytes())));
}

/// A descriptor template (start address = offset from the tile) plus the
/// tile's runtime address >> 4.
Value withBase(Emitter &e, uint64_t templ, Value address) {
  return e.add(e.i64c(static_cast<int64_t>(templ)),
               e.zext(e.i64(), e.lshr(address, e.i32c(4))));
}

struct UmmaScalesLowering : OpConversionPattern<UmmaScalesOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(UmmaScalesOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter e(rewriter, loc);
    uint64_t templ = 0;
    std::string error;
    if (!makeSm100ScaleFactorCopyDescriptor(0, templ, error))
      return op.emitOpError() << "scale-factor copy descriptor: " << error;
    Value tile = stageAddress(e, adaptor.getSource(), adaptor.getStage(),
                              op.getSource().getType());
    if (op.getPart() != 0)
      tile = e.add(tile, e.i32c(512 * op.getPart()));
    Value src = withBase(e, templ, tile);
    Value dst = tmemPtr(e, e.add(adaptor.getBase(), e.i32c(op.getColumn())));
    NVVM::Tcgen05CpOp::create(
        rewriter, loc, NVVM::Tcgen05CpShape::SHAPE_32x128b,
        NVVM::CTAGroupKind::CTA_1, NVVM::Tcgen05CpMulticast::WARPX4,
        NVVM::Tcgen05CpSrcFormatAttr(), dst, src);
    rewriter.eraseOp(op);
    return success();
  }
};

/// The canonical layout TMA leaves a [rows, cols] tile in, as an operand:
/// K-major (rows = M or N) or MN-major (rows = K). Packed 4-bit operands
/// (kind::mxf4nvf4, K-major only) are described as their bytes: the
/// descriptor addresses bytes, two elements each.
SmemOperandTile operandTile(SmemType type, OperandMajor major) {
  SmemOperandTile tile;
  tile.major = major;
  tile.elementBits = type.getElementType().getIntOrFloatBitWidth();
  int64_t cols = type.getCols();
  if (tile.elementBits == 4 && major == OperandMajor::K) {
    tile.elementBits = 8;
    cols /= 2;
  }
  tile.swizzle = widestSmemSwizzleFor(
      static_cast<uint32_t>(std::min<int64_t>(type.getRowBytes(), 128)));
  if (major == OperandMajor::K) {
    tile.mnExtent = type.getRows();
    tile.kExtent = cols;
    tile.order = AtomOrder::MNFastest;
  } else {
    tile.mnExtent = type.getCols();
    tile.kExtent = type.getRows();
    tile.order = AtomOrder::KFastest;
  }
  return tile;
}

Sm100ElementType elementTypeOf(Type t) {
  if (isa<Float4E2M1FNType>(t))
    return Sm100ElementType::E2M1;
  return t.isBF16() ? Sm100ElementType::BF16
                    : Sm100ElementType::E4M3;
}

struct UmmaLowering : OpConversionPattern<UmmaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(UmmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter e(rewriter, loc);
    MLIRContext *ctx = rewriter.getContext();
    Type element = op.getAElementType();
    // NVFP4 (kind::mxf4nvf4, scale_vec::4X): K = 64 a step, its four
    // unsigned-E4M3 scales per row in one 32-bit cell of the step's own
    // 4-column chunk (scale-factor ID 0).
    bool fp4 = isa<Float4E2M1FNType>(element);
    bool scaled = isa<Float8E4M3FNType>(element) || fp4;
    int64_t n = op.getN(), k = op.getK();
    int64_t kStep = fp4 ? 64 : scaled ? 32 : 16;
    SmemType bType = op.getB().getType();
    OperandMajor bMajor = op.getBTransposed() ? OperandMajor::MN : OperandMajor::K;

    Sm100MmaConfig config;
    config.kind = fp4      ? Sm100MmaKind::MXF4NVF4
                  : scaled ? Sm100MmaKind::MXF8F6F4
                           : Sm100MmaKind::F16;
    config.aType = config.bType = elementTypeOf(element);
    config.dType = Sm100AccumType::F32;
    config.aMajor = OperandMajor::K;
    config.bMajor = bMajor;
    config.m = 128;
    config.n = static_cast<uint32_t>(n);
    config.scaleType = fp4 ? Sm100ScaleType::UE4M3 : Sm100ScaleType::UE8M0;
    config.scaleVec = fp4 ? Sm100ScaleVec::X4 : Sm100ScaleVec::X1;

    std::string error;
    Value dAddr = tmemPtr(e, e.add(adaptor.getTmem(), e.i32c(op.getDColumn())));
    Value bBase = stageAddress(e, adaptor.getB(), adaptor.getBStage(), bType);
    Value aBase;
    if (op.getA())
      aBase = stageAddress(e, adaptor.getA(), adaptor.getAStage(),
                           op.getA().getType());
    Value accumulate = adaptor.getAccumulate();
    const int64_t steps = k / kStep;
    // Per K step: the B (and shared-memory A) descriptor templates and the
    // instruction descriptor (the scale-factor IDs select the step's byte).
    SmallVector<uint64_t> bTempl(steps), aTempl(steps);
    SmallVector<uint32_t> idescs(steps);
    for (int64_t kk = 0; kk < steps; ++kk) {
      // (In the tile's descriptor units: bytes for packed 4-bit operands.)
      uint32_t k0 = static_cast<uint32_t>(kk * (fp4 ? kStep / 2 : kStep));
      if (!makeSm100OperandDescriptor(operandTile(bType, bMajor), 0, k0,
                                      bTempl[kk], error))
        return op.emitOpError() << "B descriptor: " << error;
      if (op.getA() &&
          !makeSm100OperandDescriptor(
              operandTile(op.getA().getType(), OperandMajor::K), 0, k0,
              aTempl[kk], error))
        return op.emitOpError() << "A descriptor: " << error;
      config.aScaleFactorId = config.bScaleFactorId =
          scaled && !fp4 ? static_cast<uint8_t>(kk) : 0;
      if (!encodeSm100InstrDescriptor(config, idescs[kk], error))
        return op.emitOpError() << "instruction descriptor: " << error;
    }
    // A in TMEM: K-step kk starts kk * K_mma * bits / 32 columns on.
    const int64_t aColumnStep = kStep * element.getIntOrFloatBitWidth() / 32;
    // b_k_block: B's scale-factor ID (bits 4-5 of the instruction
    // descriptor, kk for step kk) starts at that K-block instead; the
    // verifier keeps the sum below 4, so the add does not carry.
    Value bKBlockBits;
    if (Value kb = adaptor.getBKBlock())
      bKBlockBits = e.shl(kb, e.i32c(4));
    // The scale-factor chunks of step kk: the same chunk for every step of
    // an E4M3 MMA (the ID picks the byte), chunk kk for NVFP4.
    auto scaleOfStep = [&](Value scale, int64_t kk) {
      return tmemPtr(e, fp4 && kk > 0 ? e.add(scale, e.i32c(4 * kk)) : scale);
    };
    auto issue = [&](Value bDesc, Value a, Value idesc, Value enableD,
                     int64_t kk) {
      if (bKBlockBits)
        idesc = e.add(idesc, bKBlockBits);
      if (scaled)
        NVVM::Tcgen05MMABlockScaleOp::create(
            rewriter, loc,
            NVVM::MMABlockScaleKindAttr::get(
                ctx, fp4 ? NVVM::MMABlockScaleKind::MXF4NVF4
                         : NVVM::MMABlockScaleKind::MXF8F6F4),
            NVVM::CTAGroupKindAttr::get(ctx, NVVM::CTAGroupKind::CTA_1),
            NVVM::Tcgen05MMABlockScaleAttr::get(
                ctx, fp4 ? NVVM::Tcgen05MMABlockScale::BLOCK16
                         : NVVM::Tcgen05MMABlockScale::BLOCK32),
            NVVM::Tcgen05MMACollectorOpAttr::get(ctx, NVVM::Tcgen05MMACollectorOp::DISCARD),
            dAddr, a, bDesc, idesc, enableD,
            scaleOfStep(adaptor.getScaleA(), kk),
            scaleOfStep(adaptor.getScaleB(), kk));
      else
        NVVM::Tcgen05MMAOp::create(
            rewriter, loc,
            NVVM::Tcgen05MMAKindAttr::get(ctx, NVVM::Tcgen05MMAKind::F16),
            NVVM::CTAGroupKindAttr::get(ctx, NVVM::CTAGroupKind::CTA_1),
            NVVM::Tcgen05MMACollectorOpAttr::get(ctx, NVVM::Tcgen05MMACollectorOp::DISCARD),
            UnitAttr(), dAddr, a, bDesc, idesc, enableD, Value(), Value());
    };
    auto aOfStep = [&](int64_t kk) {
      if (op.getA())
        return withBase(e, aTempl[kk], aBase);
      return tmemPtr(e, e.add(adaptor.getTmem(),
                              e.i32c(*op.getAColumn() + kk * aColumnStep)));
    };
    // (Locals, so that the IR order does not depend on the C++ compiler's
    // argument evaluation order.)
    auto stepConstants = [&](int64_t kk) {
      Value bDesc = withBase(e, bTempl[kk], bBase);
      Value a = aOfStep(kk);
      Value enableD = kk == 0 ? accumulate : e.i1c(true);
      Value idesc = e.i32c(static_cast<int32_t>(idescs[kk]));
      issue(bDesc, a, idesc, enableD, kk);
    };

    Value kValid = adaptor.getKValid();
    if (!kValid || steps == 1) {
      for (int64_t kk = 0; kk < steps; ++kk)
        stepConstants(kk);
      rewriter.eraseOp(op);
      return success();
    }
    // k_valid: step kk reads B's rows and scale factors of step
    // min(kk, last), last = ceil(k_valid / K_mma) - 1, the last step that
    // holds valid rows; A (zero past k_valid) is its own. Selects, not
    // branches: control flow around the MMAs made ptxas spill the MMA
    // thread. Both descriptors are affine in the step (checked here), so the
    // last step's are computed from step 0's.
    uint64_t bDelta = bTempl[1] - bTempl[0];
    uint32_t iDelta = idescs[1] - idescs[0];
    for (int64_t kk = 0; kk < steps; ++kk)
      if (bTempl[kk] != bTempl[0] + kk * bDelta ||
          idescs[kk] != idescs[0] + static_cast<uint32_t>(kk) * iDelta)
        return op.emitOpError()
               << "k_valid needs B and instruction descriptors that advance "
                  "by a constant per K step, but step "
               << kk << "'s do not";
    Value last = e.sub(e.udiv(e.add(kValid, e.i32c(kStep - 1)), e.i32c(kStep)),
                       e.i32c(1));
    last = e.select(e.icmp(LLVM::ICmpPredicate::slt, last, e.i32c(steps - 1)),
                    last, e.i32c(steps - 1));
    // No valid row at all (k_valid <= 0; the schedules never visit such a
    // tile, but the op allows it): every step reads step 0's B, whose
    // descriptor is in the tile, against an A that is all zero, instead of a
    // "step -1" outside it.
    last = e.select(e.icmp(LLVM::ICmpPredicate::sgt, last, e.i32c(0)), last,
                    e.i32c(0));
    Value bLast = e.add(withBase(e, bTempl[0], bBase),
                        e.mul(e.zext(e.i64(), last),
                              e.i64c(static_cast<int64_t>(bDelta))));
    Value iLast = e.add(e.i32c(static_cast<int32_t>(idescs[0])),
                        e.mul(last, e.i32c(static_cast<int32_t>(iDelta))));
    for (int64_t kk = 0; kk < steps; ++kk) {
      Value own = e.icmp(LLVM::ICmpPredicate::sge, last, e.i32c(kk));
      Value bOwn = withBase(e, bTempl[kk], bBase);
      Value bDesc = e.select(own, bOwn, bLast);
      Value a = aOfStep(kk);
      Value idescOwn = e.i32c(static_cast<int32_t>(idescs[kk]));
      Value idesc = e.select(own, idescOwn, iLast);
      Value enableD = kk == 0 ? accumulate : e.i1c(true);
      issue(bDesc, a, idesc, enableD, kk);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

struct UmmaCommitLowering : OpConversionPattern<UmmaCommitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(UmmaCommitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Emitter e(rewriter, op.getLoc());
    int64_t stages = op.getPipeline().getType().getStages();
    Value index = adaptor.getStage();
    if (op.getBarrier() == StageBarrier::empty)
      index = e.add(index, e.i32c(stages));
    Value bar = e.gep(adaptor.getPipeline(), e.mul(index, e.i32c(8)));
    NVVM::Tcgen05CommitOp::create(rewriter, op.getLoc(), bar, Value(),
                                  NVVM::CTAGroupKind::CTA_1);
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void flamia::populateSm100TensorMemoryPatterns(
    const FlamiaTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<TmemAllocLowering, TmemDeallocLowering, TmemLoadLowering,
               TmemStoreLowering, TmemFillLowering, UmmaScalesLowering,
               UmmaLowering, UmmaCommitLowering, SmemStoreLowering>(
      converter, patterns.getContext());
}
