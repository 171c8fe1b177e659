//===- QuantizeBlockPattern.cpp - the fused quantization of a block -------===//
//
// flamia.quantize_block on 128 threads: thread t reads the 32 channels of
// channel block t % C (C = D / 32) of row t / C of the token block with
// four 16-byte loads, so every byte of the block is read once. Per-token
// scales need only the thread's own 32 values; the 32x32 token-block amax
// is reduced over the threads of the same channel block (shuffles within a
// warp, shared memory across warps). The scale rule is the contract's
// (docs/numerics.md): e = smallest integer with amax / 2^e <= 448, from the
// bits of amax (exact: e = E - 8, plus 1 when the mantissa exceeds 1.75),
// clamped to [-127, 127]; elements RNE to E4M3 with saturation
// (cvt.rn.satfinite); a block holding Inf or NaN gets scale 0xFF and
// elements 0x7F. Payloads stay in the packed [T, H, D] order.
// An NVFP4 per-token copy (E2M1 payload, recipe nvfp4-mixed) takes the amax
// of each 16-channel half instead: a UE4M3 scale each (nvfp4ScaleOf), the
// elements E2M1 RNE of x / s; the token-block amax is the larger of the two
// halves', so the block copy is the same as without it.
// A copy without its payload operand (sm_90a by default) writes only its
// scales and its dequantized values.
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"
#include "MxScale.h"
#include "KernelPlan.h"
#include "Patterns.h"

#include "flamia/Dialect/FlamiaOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;
using namespace flamia;

namespace {

/// Whether the op's per-token copy is NVFP4 (E2M1 payload; the verifier
/// checks the rest).
bool isNvfp4PerToken(QuantizeBlockOp op) {
  if (Value data = op.getPerTokenData())
    return isa<Float4E2M1FNType>(
        cast<GlobalType>(data.getType()).getElementType());
  // A copy without its payload: NVFP4's scales are (unsigned) E4M3.
  Value scales = op.getPerTokenScales();
  return scales && isa<Float8E4M3FNType>(
                       cast<GlobalType>(scales.getType()).getElementType());
}

/// The 4 threads cb = 0..3 of a row (consecutive lanes) each hold 4 chunks
/// of 4 words, chunk k of thread j being chunk 4 j + k of the row. Returns,
/// for thread cb, the chunks 4 q + cb (q = 0..3): a 4x4 transpose in four
/// shuffle steps. At step s every thread sends its chunk (cb - s) mod 4 and
/// receives from lane (cb + s) mod 4 of its row the chunk that lane holds at
/// index cb, i.e. row chunk 4 ((cb + s) mod 4) + cb; the result for q is
/// then step (q - cb) mod 4. All lanes must execute it.
SmallVector<Value> transposeRowChunks(Emitter &e, ArrayRef<Value> words,
                                      Value cb) {
  auto pick = [&](ArrayRef<Value> options, Value index) {
    Value v = options.back();
    for (int64_t k = static_cast<int64_t>(options.size()) - 2; k >= 0; --k)
      v = e.select(e.icmp(LLVM::ICmpPredicate::eq, index, e.i32c(k)),
                   options[k], v);
    return v;
  };
  Value lane = e.urem(e.tid(), e.i32c(32));
  Value rowLane0 = e.sub(lane, cb);
  // received[s][w]: word w of the chunk received at step s.
  SmallVector<SmallVector<Value>> received(4);
  for (int64_t s = 0; s < 4; ++s) {
    Value send = e.band(e.sub(e.add(cb, e.i32c(4)), e.i32c(s)), e.i32c(3));
    Value src = e.add(rowLane0, e.band(e.add(cb, e.i32c(s)), e.i32c(3)));
    for (int64_t w = 0; w < 4; ++w) {
      Value word = pick({words[w], words[4 + w], words[8 + w], words[12 + w]},
                        send);
      received[s].push_back(e.shflIdx(word, src));
    }
  }
  SmallVector<Value> out;
  for (int64_t q = 0; q < 4; ++q) {
    Value step = e.band(e.sub(e.i32c(q + 4), cb), e.i32c(3));
    for (int64_t w = 0; w < 4; ++w)
      out.push_back(pick({received[0][w], received[1][w], received[2][w],
                          received[3][w]},
                         step));
  }
  return out;
}

/// The 2 threads cb = 0, 1 of a row (consecutive lanes, D = 64) each hold 4
/// chunks of 4 words, chunk k of thread j being chunk 4 j + k of the row.
/// Returns, for thread cb, the row chunks 2 q + cb (q = 0..3): thread 0 keeps
/// its even chunks and takes the other's, thread 1 its odd ones. Each thread
/// sends the two chunks the other needs (k = 2 i + 1 - cb) with one
/// shfl.sync.bfly per word: 8 shuffles for the 16 words. All lanes must
/// execute it.
SmallVector<Value> interleaveRowChunkPairs(Emitter &e, ArrayRef<Value> words,
                                           Value cb) {
  Value first = e.icmp(LLVM::ICmpPredicate::eq, cb, e.i32c(0));
  SmallVector<Value> received;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t w = 0; w < 4; ++w)
      received.push_back(e.shflXor(
          e.select(first, words[4 * (2 * i + 1) + w], words[4 * (2 * i) + w]),
          1));
  // Thread 0: its chunks 0 and 2, then the received ones (row chunks 4, 6);
  // thread 1: the received ones (row chunks 1, 3), then its chunks 1 and 3.
  SmallVector<Value> out;
  for (int64_t q = 0; q < 4; ++q)
    for (int64_t w = 0; w < 4; ++w) {
      Value own = words[4 * (2 * (q % 2) + q / 2) + w];
      Value other = received[4 * (q % 2) + w];
      out.push_back(q < 2 ? e.select(first, own, other)
                          : e.select(first, other, own));
    }
  return out;
}

/// The c threads cb = 0..c-1 of a row (consecutive lanes; c divides 32) each
/// hold `localChunks` chunks of 4 words, chunk k of thread j being chunk
/// localChunks * j + k of the row. Returns, for thread cb, the row chunks
/// c * q + cb (q = 0..localChunks-1), so that store q of the row's threads
/// covers c consecutive chunks. For each q, every local chunk is shuffled
/// from the lane that holds the target and the right one picked:
/// localChunks^2 * 4 shuffles (transposeRowChunks does the 4x4 case in 16).
/// All lanes must execute it.
SmallVector<Value> gatherRowChunks(Emitter &e, ArrayRef<Value> words,
                                   int64_t localChunks, int64_t c, Value cb) {
  Value lane = e.urem(e.tid(), e.i32c(32));
  Value rowLane0 = e.sub(lane, cb);
  SmallVector<Value> out;
  for (int64_t q = 0; q < localChunks; ++q) {
    Value target = e.add(e.i32c(c * q), cb);
    Value src = e.add(rowLane0, e.udiv(target, e.i32c(localChunks)));
    Value local = e.urem(target, e.i32c(localChunks));
    for (int64_t w = 0; w < 4; ++w) {
      Value v = e.shflIdx(words[4 * (localChunks - 1) + w], src);
      for (int64_t k = localChunks - 2; k >= 0; --k)
        v = e.select(e.icmp(LLVM::ICmpPredicate::eq, local, e.i32c(k)),
                     e.shflIdx(words[4 * k + w], src), v);
      out.push_back(v);
    }
  }
  return out;
}

struct QuantizeBlockLowering : OpConversionPattern<QuantizeBlockOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(QuantizeBlockOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Emitter e(rewriter, loc);
    GlobalType src = op.getSource().getType();
    if (!src.getElementType().isBF16())
      return op.emitOpError() << "quantizes bf16 sources";
    int64_t d = src.getShape()[2];
    Value heads = e.headCount(adaptor.getHeads(), src.getShape()[1]);
    if (d % 32 != 0 || d > 128)
      return op.emitOpError() << "head dim " << d
                              << " is not implemented (a multiple of 32 up to "
                                 "128: one pass of 128 threads per block)";
    int64_t c = d / 32;
    Value tid = e.tid();
    Value row = e.udiv(tid, e.i32c(c));
    Value cb = e.urem(tid, e.i32c(c));
    Value length = adaptor.getLength();
    Value valid = e.icmp(LLVM::ICmpPredicate::slt, row, length);
    Value clamped = e.select(valid, row, e.sub(length, e.i32c(1)));
    Value token = e.add(adaptor.getStart(), clamped);
    // Element index of the thread's 32 channels, in 64 bits (Emitter::packedIndex).
    Value elem = e.packedIndex(token, adaptor.getHead(), e.mul(cb, e.i32c(32)),
                               heads, d);

    // 32 bf16 values -> f32 (bf16 is the upper half of f32).
    auto v4 = VectorType::get({4}, e.i32());
    SmallVector<Value> x;
    Value srcPtr = e.elementPtr(adaptor.getSource(), elem, 2);
    for (int64_t q = 0; q < 4; ++q) {
      Value v = e.load(v4, e.gep(srcPtr, 16 * q), 16);
      for (int64_t j = 0; j < 4; ++j) {
        Value w = LLVM::ExtractElementOp::create(rewriter, loc, v, e.i32c(j));
        x.push_back(e.bitcast(e.f32(), e.shl(w, e.i32c(16))));
        x.push_back(e.bitcast(e.f32(), e.band(w, e.i32c(0xFFFF0000))));
      }
    }
    // |x| with NaN as +inf, so that amax = +inf marks a non-finite block;
    // rows past the block's end count as zeros.
    // The amax of each 16-channel half (NVFP4's groups) and of all 32.
    Value halfAmax[2] = {e.f32c(0), e.f32c(0)};
    for (auto [i, v] : llvm::enumerate(x))
      halfAmax[i / 16] = e.fmax(halfAmax[i / 16], mxMagnitude(e, v));
    for (Value &h : halfAmax)
      h = e.select(valid, h, e.f32c(0));
    Value amax = e.fmax(halfAmax[0], halfAmax[1]);

    auto storeCopy = [&](const MxScale &s, Value data, Value dequant) {
      // Payload: 32 E4M3 codes = two 16-byte stores.
      SmallVector<Value> words;
      SmallVector<Value> deqWords;
      for (int64_t i = 0; i < 32; i += 2) {
        Value f8 = mxfp8Codes(e, x[i], x[i + 1], s);
        if (data) {
          Value half = e.zext(e.i32(), e.bitcast(e.i16(), f8));
          words.push_back(e.select(s.nonFinite, e.i32c(0x7F7F), half));
        }
        if (dequant)
          deqWords.push_back(mxfp8Dequantized(e, f8, s));
      }
      // The C = D / 32 threads of a row hold 32 channels each: 32 payload
      // bytes (2 chunks of 16) and 64 dequantized bytes (4 chunks). Stored
      // as they are, each store instruction writes half of every 32-byte
      // sector it touches, so every sector takes two L2 writes. At D = 128
      // (C = 4) the row's threads first exchange chunks (shuffles), so that
      // store q of thread cb writes row chunk C q + cb: whole sectors (runs
      // 41 and 42 in docs/performance.md: 2.41 -> 3.1 TB/s). At D = 64
      // (C = 2) the generic exchange (gatherRowChunks, 64 shuffles) cost more
      // than it saved (72 -> 96 registers, 2.45 -> 2.2-2.35 TB/s in run 42);
      // a copy without its payload (sm_90a's default) exchanges only its
      // dequantized chunks, pairwise (interleaveRowChunkPairs: 8 shuffles;
      // run 58). Other head dims, and D = 64 with payloads, store as they are.
      SmallVector<Value> payload;
      if (data)
        for (int64_t q = 0; q < 2; ++q)
          for (int64_t j = 0; j < 4; ++j)
            payload.push_back(
                e.bor(words[8 * q + 2 * j],
                      e.shl(words[8 * q + 2 * j + 1], e.i32c(16))));
      const bool wholeSectors = c == 4 || (c == 2 && !data);
      Value rowIndex;
      if (wholeSectors) {
        if (data)
          payload = gatherRowChunks(e, payload, 2, c, cb);
        if (dequant)
          deqWords = c == 4 ? transposeRowChunks(e, deqWords, cb)
                            : interleaveRowChunkPairs(e, deqWords, cb);
        rowIndex = e.packedIndex(token, adaptor.getHead(), e.i32c(0), heads, d);
      }
      auto ifOp = scf::IfOp::create(rewriter, loc, valid, /*withElse=*/false);
      OpBuilder tb = ifOp.getThenBodyBuilder();
      Emitter te(tb, loc);
      // Byte offset of store q from the pointer: the thread's q-th chunk,
      // or row chunk C q + cb.
      auto chunkOffset = [&](int64_t q) {
        return wholeSectors
                   ? te.zext(te.i64(), te.mul(te.add(te.i32c(c * q), cb),
                                              te.i32c(16)))
                   : te.i64c(16 * q);
      };
      auto storeChunks = [&](Value base, ArrayRef<Value> chunkWords) {
        for (int64_t q = 0; q < static_cast<int64_t>(chunkWords.size()) / 4;
             ++q) {
          Value vec = te.undef(v4);
          for (int64_t j = 0; j < 4; ++j)
            vec = LLVM::InsertElementOp::create(tb, loc, vec,
                                                chunkWords[4 * q + j],
                                                te.i32c(j));
          te.store(vec, te.gep(base, chunkOffset(q)), 16);
        }
      };
      if (data)
        storeChunks(te.gep(data, wholeSectors ? rowIndex : elem), payload);
      if (dequant)
        storeChunks(te.elementPtr(dequant, wholeSectors ? rowIndex : elem, 2),
                    deqWords);
    };

    // Scale-factor tiles (ScaleFactorLayout.h): the tile of the 128 rows
    // from block b0 = block - j (j = 0..3) holds this block at position j.
    // "tokens" (Q per token, K per block): row 32 j + r, K-block = channel
    // block cb: byte r * 16 + j * 4 + cb. "channels" (V): rows are the
    // channels 32 cb + r, K-block j: byte r * 16 + cb * 4 + j. Thread (r, cb)
    // writes its byte into each of the four tiles.
    // The CTA of the last block writes scale 1 (127) where blocks past the
    // end would go, so that no MMA reads an uninitialized (possibly NaN)
    // scale for the zero rows TMA fills in there. Below D = 128 the columns
    // of the missing channel blocks are written as 0.
    auto writeTiles = [&](Value tiles, Value byte, bool channelRows) {
      auto rowOk = scf::IfOp::create(
          rewriter, loc, e.icmp(LLVM::ICmpPredicate::ult, row, e.i32c(32)),
          /*withElse=*/false);
      OpBuilder tb = rowOk.getThenBodyBuilder();
      Emitter te(tb, loc);
      // `column` is the channel block the byte belongs to (cb, or a padding
      // column >= C).
      auto store = [&](Emitter &se, Value b0, int64_t j, Value column,
                       Value value) {
        Value offsetInTile =
            channelRows ? se.add(se.add(se.mul(row, se.i32c(16)),
                                        se.mul(column, se.i32c(4))),
                                 se.i32c(j))
                        : se.add(se.add(se.mul(row, se.i32c(16)), se.i32c(4 * j)),
                                 column);
        Value slot = se.packedIndex(b0, adaptor.getHead(), se.i32c(0), heads, 1);
        Value offset = se.add(se.mul(slot, se.i64c(512)),
                              se.zext(se.i64(), offsetInTile));
        Value ptr = LLVM::GEPOp::create(se.b, loc, tiles.getType(), se.i8(), tiles,
                                        ArrayRef<LLVM::GEPArg>{offset});
        se.store(value, ptr, 1);
      };
      auto forEachTile = [&](Emitter &fe, int64_t firstJ, int64_t blockShift,
                             Value value) {
        for (int64_t j = firstJ; j < 4; ++j) {
          Value b0 = fe.sub(fe.add(adaptor.getBlock(), fe.i32c(blockShift)),
                            fe.i32c(j));
          auto inside = scf::IfOp::create(
              fe.b, loc, fe.icmp(LLVM::ICmpPredicate::sge, b0, fe.i32c(0)),
              /*withElse=*/false);
          OpBuilder ib = inside.getThenBodyBuilder();
          Emitter ie(ib, loc);
          store(ie, b0, j, cb, value);
          // Below D = 128 a tile row has 4 - C channel-block columns that no
          // block fills, but tcgen05.cp copies all 4 into tensor memory:
          // thread (r, cb) zeroes columns cb + C, cb + 2C, ... < 4, so
          // nothing the MMA unit loads is uninitialized.
          for (int64_t extra = c; extra < 4; extra += c) {
            Value column = ie.add(cb, ie.i32c(extra));
            if (4 % c == 0) {
              store(ie, b0, j, column, ie.trunc(ie.i8(), ie.i32c(0)));
              continue;
            }
            auto fits = scf::IfOp::create(
                ib, loc, ie.icmp(LLVM::ICmpPredicate::ult, column, ie.i32c(4)),
                /*withElse=*/false);
            OpBuilder pb = fits.getThenBodyBuilder();
            Emitter pe(pb, loc);
            store(pe, b0, j, column, pe.trunc(pe.i8(), pe.i32c(0)));
          }
        }
      };
      forEachTile(te, 0, 0, byte);
      Value numBlocks = NVVM::GridDimXOp::create(tb, loc, te.i32());
      auto lastBlock = scf::IfOp::create(
          tb, loc,
          te.icmp(LLVM::ICmpPredicate::eq, adaptor.getBlock(),
                  te.sub(numBlocks, te.i32c(1))),
          /*withElse=*/false);
      OpBuilder lb = lastBlock.getThenBodyBuilder();
      Emitter le(lb, loc);
      Value one = le.trunc(le.i8(), le.i32c(127));
      for (int64_t past = 1; past < 4; ++past)
        forEachTile(le, past, past, one);
    };

    // NVFP4 scale tiles (kind::mxf4nvf4, scale_vec::4X): the same 128x4
    // layout with one scale per 16 channels, so a slot of 4 blocks holds one
    // 512-byte tile per 64 channels. Thread (r, cb) owns scales 2 cb and
    // 2 cb + 1: tile cb / 2, columns 2 (cb % 2) and the next, adjacent bytes
    // (one 2-byte store per slot). When D / 16 is not a multiple of 4 the
    // last thread of a row zeroes the last tile's two unused columns; past
    // the last block the tiles hold UE4M3 1.0 (0x38), as MXFP8's hold 127.
    auto writeNvfp4Tiles = [&](Value tiles, Value pair) {
      const int64_t numTiles = (d + 63) / 64;
      const bool padColumns = (d / 16) % 4 != 0;
      auto rowOk = scf::IfOp::create(
          rewriter, loc, e.icmp(LLVM::ICmpPredicate::ult, row, e.i32c(32)),
          /*withElse=*/false);
      OpBuilder tb = rowOk.getThenBodyBuilder();
      Emitter te(tb, loc);
      Value tile = te.udiv(cb, te.i32c(2));
      Value column = te.mul(te.urem(cb, te.i32c(2)), te.i32c(2));
      Value lastThread = te.icmp(LLVM::ICmpPredicate::eq, cb, te.i32c(c - 1));
      auto store = [&](Emitter &se, Value b0, int64_t j, Value col,
                       Value value) {
        Value offsetInSlot =
            se.add(se.add(se.mul(tile, se.i32c(512)), se.mul(row, se.i32c(16))),
                   se.add(se.i32c(4 * j), col));
        Value slot =
            se.packedIndex(b0, adaptor.getHead(), se.i32c(0), heads, 1);
        Value offset = se.add(se.mul(slot, se.i64c(512 * numTiles)),
                              se.zext(se.i64(), offsetInSlot));
        Value ptr = LLVM::GEPOp::create(se.b, loc, tiles.getType(), se.i8(),
                                        tiles, ArrayRef<LLVM::GEPArg>{offset});
        se.store(value, ptr, 2);
      };
      auto forEachTile = [&](Emitter &fe, int64_t firstJ, int64_t blockShift,
                             Value value) {
        for (int64_t j = firstJ; j < 4; ++j) {
          Value b0 = fe.sub(fe.add(adaptor.getBlock(), fe.i32c(blockShift)),
                            fe.i32c(j));
          auto inside = scf::IfOp::create(
              fe.b, loc, fe.icmp(LLVM::ICmpPredicate::sge, b0, fe.i32c(0)),
              /*withElse=*/false);
          OpBuilder ib = inside.getThenBodyBuilder();
          Emitter ie(ib, loc);
          store(ie, b0, j, column, value);
          if (!padColumns)
            continue;
          auto pad = scf::IfOp::create(ib, loc, lastThread, /*withElse=*/false);
          OpBuilder pb = pad.getThenBodyBuilder();
          Emitter pe(pb, loc);
          store(pe, b0, j, pe.add(column, pe.i32c(2)),
                pe.trunc(pe.i16(), pe.i32c(0)));
        }
      };
      forEachTile(te, 0, 0, pair);
      Value numBlocks = NVVM::GridDimXOp::create(tb, loc, te.i32());
      auto lastBlock =
          scf::IfOp::create(tb, loc,
                            te.icmp(LLVM::ICmpPredicate::eq, adaptor.getBlock(),
                                    te.sub(numBlocks, te.i32c(1))),
                            /*withElse=*/false);
      OpBuilder lb = lastBlock.getThenBodyBuilder();
      Emitter le(lb, loc);
      Value one = le.trunc(le.i16(), le.i32c(0x3838));
      for (int64_t past = 1; past < 4; ++past)
        forEachTile(le, past, past, one);
    };

    // NVFP4 per token (recipe nvfp4-mixed): two 16-channel groups per
    // thread, one UE4M3 scale each; the 32 E2M1 codes packed two per byte
    // (element 2i in the low nibble, as the FP4 MMA reads them K-major):
    // one 16-byte store at byte elem / 2.
    auto storeNvfp4Copy = [&](Value data, Value scales, Value dequant,
                              Value tiles) {
      SmallVector<Value> bytes, deqWords, scaleBytes;
      for (int64_t g = 0; g < 2; ++g) {
        Nvfp4Scale s = nvfp4ScaleOf(e, halfAmax[g]);
        scaleBytes.push_back(s.byte);
        SmallVector<Value> deq;
        for (int64_t i = 16 * g; i < 16 * g + 16; i += 2) {
          auto [lo, loDeq] = e2m1Quantize(e, x[i], s);
          auto [hi, hiDeq] = e2m1Quantize(e, x[i + 1], s);
          if (data) {
            Value byte = e.bor(lo, e.shl(hi, e.i32c(4)));
            bytes.push_back(e.select(s.nonFinite, e.i32c(0), byte));
          }
          if (dequant)
            deqWords.push_back(e.select(s.nonFinite, e.i32c(0x7FC07FC0),
                                        e.cvtToBF16x2(hiDeq, loDeq)));
        }
      }
      auto ifOp = scf::IfOp::create(rewriter, loc, valid, /*withElse=*/false);
      OpBuilder tb = ifOp.getThenBodyBuilder();
      Emitter te(tb, loc);
      if (data) {
        Value vec = te.undef(v4);
        for (int64_t j = 0; j < 4; ++j) {
          Value w = bytes[4 * j];
          for (int64_t k = 1; k < 4; ++k)
            w = te.bor(w, te.shl(bytes[4 * j + k], te.i32c(8 * k)));
          vec = LLVM::InsertElementOp::create(tb, loc, vec, w, te.i32c(j));
        }
        te.store(vec, te.gep(data, te.lshr(elem, te.i64c(1))), 16);
      }
      if (dequant) {
        Value deqPtr = te.elementPtr(dequant, elem, 2);
        for (int64_t q = 0; q < 4; ++q) {
          Value dv = te.undef(v4);
          for (int64_t j = 0; j < 4; ++j)
            dv = LLVM::InsertElementOp::create(tb, loc, dv, deqWords[4 * q + j],
                                               te.i32c(j));
          te.store(dv, te.gep(deqPtr, 16 * q), 16);
        }
      }
      // Scales [T, H, D / 16]: this thread's two, as one 2-byte store.
      Value idx = te.packedIndex(token, adaptor.getHead(),
                                 te.mul(cb, te.i32c(2)), heads, 2 * c);
      Value pair = te.bor(te.zext(te.i32(), scaleBytes[0]),
                          te.shl(te.zext(te.i32(), scaleBytes[1]), te.i32c(8)));
      te.store(te.trunc(te.i16(), pair), te.elementPtr(scales, idx, 1), 2);
      if (tiles)
        writeNvfp4Tiles(
            tiles, e.trunc(e.i16(), e.bor(e.zext(e.i32(), scaleBytes[0]),
                                          e.shl(e.zext(e.i32(), scaleBytes[1]),
                                                e.i32c(8)))));
    };

    // A copy is written when its scales are; its payload (data) may be
    // absent (sm_90a's kernels read only the dequantized copies).
    Value perTokenData = adaptor.getPerTokenData();
    if (adaptor.getPerTokenScales() && isNvfp4PerToken(op)) {
      storeNvfp4Copy(perTokenData, adaptor.getPerTokenScales(),
                     adaptor.getPerTokenDequant(), adaptor.getPerTokenTiles());
    } else if (adaptor.getPerTokenScales()) {
      MxScale s = mxScaleOf(e, amax);
      storeCopy(s, perTokenData, adaptor.getPerTokenDequant());
      if (Value tiles = adaptor.getPerTokenTiles())
        writeTiles(tiles, s.byte, /*channelRows=*/false);
      auto ifOp = scf::IfOp::create(rewriter, loc, valid, /*withElse=*/false);
      OpBuilder tb = ifOp.getThenBodyBuilder();
      Emitter te(tb, loc);
      Value idx = te.packedIndex(token, adaptor.getHead(), cb, heads, c);
      te.store(s.byte, te.elementPtr(adaptor.getPerTokenScales(), idx, 1), 1);
    }

    if (adaptor.getTokenBlockScales()) {
      Value data = adaptor.getTokenBlockData();
      // amax over the 32 x 32 block: threads with the same channel block.
      Value blockMax = amax;
      for (int64_t m = c; m < 32; m *= 2)
        blockMax = e.fmax(blockMax, e.shflXor(blockMax, m));
      int64_t scratch =
          cast<IntegerAttr>(op->getAttr(kSmemOffsetAttr)).getInt();
      Value base = e.gep(e.smemBase(), scratch);
      Value lane = e.urem(tid, e.i32c(32));
      Value warp = e.udiv(tid, e.i32c(32));
      auto writeIf = scf::IfOp::create(
          rewriter, loc, e.icmp(LLVM::ICmpPredicate::ult, lane, e.i32c(c)),
          /*withElse=*/false);
      {
        OpBuilder tb = writeIf.getThenBodyBuilder();
        Emitter te(tb, loc);
        Value slot = te.add(te.mul(warp, te.i32c(c)), lane);
        te.store(blockMax, te.gep(base, te.mul(slot, te.i32c(4))), 4);
      }
      NVVM::Barrier0Op::create(rewriter, loc);
      blockMax = e.f32c(0);
      for (int64_t w = 0; w < 4; ++w)
        blockMax = e.fmax(blockMax,
                          e.load(e.f32(), e.gep(base, e.mul(e.add(e.i32c(w * c), cb),
                                                            e.i32c(4))),
                                 4));
      NVVM::Barrier0Op::create(rewriter, loc);
      MxScale s = mxScaleOf(e, blockMax);
      storeCopy(s, data, adaptor.getTokenBlockDequant());
      if (Value tiles = adaptor.getTokenBlockTiles()) {
        bool channelRows = *op.getTokenBlockTileRows() == "channels";
        writeTiles(tiles, s.byte, channelRows);
        if (Value other = adaptor.getTokenBlockTransposedTiles())
          writeTiles(other, s.byte, !channelRows);
      }
      auto firstRow = scf::IfOp::create(
          rewriter, loc, e.icmp(LLVM::ICmpPredicate::eq, row, e.i32c(0)),
          /*withElse=*/false);
      OpBuilder tb = firstRow.getThenBodyBuilder();
      Emitter te(tb, loc);
      Value idx = te.packedIndex(adaptor.getBlock(), adaptor.getHead(), cb, heads, c);
      te.store(s.byte, te.elementPtr(adaptor.getTokenBlockScales(), idx, 1), 1);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void flamia::populateQuantizeBlockPatterns(
    const FlamiaTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<QuantizeBlockLowering>(converter, patterns.getContext());
}
