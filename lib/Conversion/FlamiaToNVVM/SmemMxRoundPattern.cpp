//===- SmemMxRoundPattern.cpp - MXFP8 rounding of a tile in shared memory -===//
//
// flamia.smem.mx_round on one warpgroup: the 64 rows x D/32 blocks of 32
// channels are split over the 128 threads, block t + 128 j to thread t
// (row (t + 128 j) / C, channel block (t + 128 j) % C, C = D / 32), so a
// warp's 16-byte loads cover 8 or 16 whole rows and, with the 128-byte
// swizzle, every bank equally. Each block is read with four 16-byte loads,
// rounded by the contract's rule through the helpers the quantization
// kernel uses (MxScale.h: the same scale, codes and dequantized values, so
// the result is bit for bit the quantizer's per-token copy) and written to
// the same place of the destination tile; then the writes are fenced
// against the matrix units' reads and the warpgroup meets at its own named
// barrier (kMxRoundBarrier + the warpgroup's index in the CTA).
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"
#include "KernelPlan.h"
#include "MxScale.h"
#include "Patterns.h"

#include "flamia/Dialect/FlamiaOps.h"

using namespace mlir;
using namespace flamia;

namespace {

struct SmemMxRoundLowering : OpConversionPattern<SmemMxRoundOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SmemMxRoundOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter e(rewriter, loc);
    SmemType tile = op.getSource().getType();
    const int64_t rows = tile.getRows(), d = tile.getCols();
    const int64_t c = d / 32;              // blocks a row
    const int64_t atomBytes = 128;         // 64 bf16: two blocks an atom
    const int64_t perThread = 64 * c / 128; // blocks a thread
    Value tileBytes = e.i32c(tile.getTileBytes());
    Value src = e.gep(adaptor.getSource(),
                      e.mul(adaptor.getSourceStage(), tileBytes));
    Value dst = e.gep(adaptor.getDest(),
                      e.mul(adaptor.getDestStage(), tileBytes));
    Value t = e.urem(e.tid(), e.i32c(128));
    auto v4 = VectorType::get({4}, e.i32());
    for (int64_t j = 0; j < perThread; ++j) {
      Value blockIndex = e.add(t, e.i32c(128 * j));
      Value row = e.add(adaptor.getRow(), e.udiv(blockIndex, e.i32c(c)));
      Value cb = e.urem(blockIndex, e.i32c(c));
      // Atom cb / 2 of the row; the block's 16-byte chunks are 4 (cb % 2)
      // to 4 (cb % 2) + 3 of the atom's row, XOR-ed by row % 8.
      Value rowBase =
          e.add(e.mul(e.udiv(cb, e.i32c(2)), e.i32c(rows * atomBytes)),
                e.mul(row, e.i32c(atomBytes)));
      Value firstChunk = e.mul(e.urem(cb, e.i32c(2)), e.i32c(4));
      Value swizzle = e.urem(row, e.i32c(8));
      SmallVector<Value> offsets;
      for (int64_t q = 0; q < 4; ++q) {
        Value chunk = e.bxor(e.add(firstChunk, e.i32c(q)), swizzle);
        offsets.push_back(e.add(rowBase, e.mul(chunk, e.i32c(16))));
      }
      // 32 bf16 values -> f32 (bf16 is the upper half of f32).
      SmallVector<Value> x;
      for (Value offset : offsets) {
        Value v = e.load(v4, e.gep(src, offset), 16);
        for (int64_t w = 0; w < 4; ++w) {
          Value word = LLVM::ExtractElementOp::create(rewriter, loc, v, e.i32c(w));
          x.push_back(e.bitcast(e.f32(), e.shl(word, e.i32c(16))));
          x.push_back(e.bitcast(e.f32(), e.band(word, e.i32c(0xFFFF0000))));
        }
      }
      Value amax = e.f32c(0);
      for (Value v : x)
        amax = e.fmax(amax, mxMagnitude(e, v));
      MxScale s = mxScaleOf(e, amax);
      for (int64_t q = 0; q < 4; ++q) {
        Value vec = e.undef(v4);
        for (int64_t w = 0; w < 4; ++w) {
          int64_t i = 8 * q + 2 * w;
          Value word = mxfp8Dequantized(e, mxfp8Codes(e, x[i], x[i + 1], s), s);
          vec = LLVM::InsertElementOp::create(rewriter, loc, vec, word, e.i32c(w));
        }
        e.store(vec, e.gep(dst, offsets[q]), 16);
      }
    }
    NVVM::FenceProxyOp::create(
        rewriter, loc,
        NVVM::ProxyKindAttr::get(getContext(), NVVM::ProxyKind::async_shared),
        NVVM::SharedSpaceAttr::get(getContext(), NVVM::SharedSpace::shared_cta));
    Value barrier =
        e.add(e.i32c(kMxRoundBarrier), e.udiv(e.tid(), e.i32c(128)));
    NVVM::BarrierOp::create(rewriter, loc, TypeRange{}, barrier, e.i32c(128),
                            {}, Value());
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void flamia::populateSmemMxRoundPatterns(const FlamiaTypeConverter &converter,
                                         RewritePatternSet &patterns) {
  patterns.add<SmemMxRoundLowering>(converter, patterns.getContext());
}
