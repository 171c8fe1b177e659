//===- MxScale.cpp - The contract's E8M0 block scale, in IR ---------------===//
#include "MxScale.h"

#include <limits>

using namespace mlir;
using namespace flamia;

MxScale flamia::mxScaleOf(Emitter &e, Value amax) {
  Value bits = e.bitcast(e.i32(), amax);
  Value expField = e.band(e.lshr(bits, e.i32c(23)), e.i32c(0xFF));
  Value mant = e.band(bits, e.i32c(0x7FFFFF));
  Value bump = e.zext(e.i32(), e.icmp(LLVM::ICmpPredicate::ugt, mant,
                                      e.i32c(0x600000)));
  Value ex = e.add(e.sub(expField, e.i32c(127 + 8)), bump);
  // amax = 0 or subnormal: the smallest exponent.
  ex = e.select(e.icmp(LLVM::ICmpPredicate::eq, expField, e.i32c(0)),
                e.i32c(-127), ex);
  ex = e.select(e.icmp(LLVM::ICmpPredicate::slt, ex, e.i32c(-127)), e.i32c(-127), ex);
  ex = e.select(e.icmp(LLVM::ICmpPredicate::sgt, ex, e.i32c(127)), e.i32c(127), ex);
  Value nonFinite = e.icmp(LLVM::ICmpPredicate::eq, expField, e.i32c(0xFF));
  Value byte = e.select(nonFinite, e.i32c(0xFF), e.add(ex, e.i32c(127)));
  // 2^-e and 2^e as float bits; the one subnormal case of each (2^-127,
  // bits 0x00400000) is explicit. (e = 127 needs amax > 2^134, beyond f32:
  // only clamping could reach it.)
  Value invBits = e.select(e.icmp(LLVM::ICmpPredicate::eq, ex, e.i32c(127)),
                           e.i32c(0x00400000),
                           e.shl(e.sub(e.i32c(127), ex), e.i32c(23)));
  Value facBits = e.select(e.icmp(LLVM::ICmpPredicate::eq, ex, e.i32c(-127)),
                           e.i32c(0x00400000),
                           e.shl(e.add(ex, e.i32c(127)), e.i32c(23)));
  return {e.trunc(e.i8(), byte), e.bitcast(e.f32(), invBits),
          e.bitcast(e.f32(), facBits), nonFinite};
}

Value flamia::mxMagnitude(Emitter &e, Value x) {
  Value a = LLVM::FAbsOp::create(e.b, e.loc, x);
  return e.select(e.fcmp(LLVM::FCmpPredicate::uno, x, x),
                  e.f32c(std::numeric_limits<float>::infinity()), a);
}

Value flamia::mxfp8Codes(Emitter &e, Value lo, Value hi, const MxScale &s) {
  Value scaledLo = e.fmul(lo, s.inverse);
  Value scaledHi = e.fmul(hi, s.inverse);
  return e.cvtToE4M3x2(scaledHi, scaledLo);
}

Value flamia::mxfp8Dequantized(Emitter &e, Value codes, const MxScale &s) {
  auto [flo, fhi] = e.cvtE4M3x2ToF32(codes);
  Value scaledLo = e.fmul(flo, s.factor);
  Value scaledHi = e.fmul(fhi, s.factor);
  Value packed = e.cvtToBF16x2(scaledHi, scaledLo);
  return e.select(s.nonFinite, e.i32c(0x7FC07FC0), packed);
}

namespace {
/// E2M1's rounding boundaries, in units of the scale: |x| / s past `at`
/// (at or past it when `inclusive`) rounds to `value` or above. Ties (0.25,
/// 1.25, 2.5, 5) stay at the even code below, the others (0.75, 1.75, 3.5)
/// go up to the even code above.
struct E2M1Boundary {
  double at;
  bool inclusive;
  double value; // the E2M1 value of the code above it
};
constexpr E2M1Boundary kE2M1Boundaries[kNumE2M1Boundaries] = {
    {0.25, false, 0.5}, {0.75, true, 1.0}, {1.25, false, 1.5},
    {1.75, true, 2.0},  {2.5, false, 3.0}, {3.5, true, 4.0},
    {5.0, false, 6.0}};
} // namespace

Nvfp4Scale flamia::nvfp4ScaleOf(Emitter &e, Value amax) {
  // c = RNE(amax / 6) to E4M3, saturated to 448. c is never above the
  // answer: amax / 6 <= s_k implies fl32(amax / 6) <= s_k, s_k being an f32
  // value. It is at most one code below it (RNE picks a neighbour of the
  // quotient), so one check of 6 s_c < amax (6 s_c is exact in f32)
  // finds it; past 6 * 448 the code stays 0x7E and the elements saturate.
  Value pair = e.cvtToE4M3x2(e.f32c(0), e.fdiv(amax, e.f32c(6)));
  Value code = e.zext(e.i32(), e.bitcast(e.i16(), pair));
  code = e.band(code, e.i32c(0xFF));
  Value sc = e.cvtE4M3x2ToF32(pair).first;
  Value below = e.fcmp(LLVM::FCmpPredicate::olt, e.fmul(sc, e.f32c(6)), amax);
  Value bump =
      e.band(below, e.icmp(LLVM::ICmpPredicate::ult, code, e.i32c(0x7E)));
  code = e.select(bump, e.add(code, e.i32c(1)), code);
  Value i16 = e.trunc(e.i16(), code);
  Value decoded =
      e.cvtE4M3x2ToF32(e.bitcast(VectorType::get({2}, e.i8()), i16)).first;
  Value nonFinite = e.fcmp(LLVM::FCmpPredicate::oeq, amax,
                           e.f32c(std::numeric_limits<float>::infinity()));
  Value zero = e.icmp(LLVM::ICmpPredicate::eq, code, e.i32c(0));
  Value byte = e.select(nonFinite, e.i32c(0xFF), code);
  Nvfp4Scale s{e.trunc(e.i8(), byte), decoded, nonFinite, {}};
  // The boundaries times s, exact in f32 (at most 3 significant bits times
  // E4M3's 4, and s >= 2^-9): |x| against b s is exactly |x| / s against
  // b, without a division. An all-zero group (s = 0) compares against
  // b x 1, so that |x| = 0 stays code 0.
  Value unit = e.select(zero, e.f32c(1), decoded);
  for (auto [i, bd] : llvm::enumerate(kE2M1Boundaries))
    s.thresholds[i] = e.fmul(unit, e.f32c(bd.at));
  return s;
}

std::pair<Value, Value> flamia::e2m1Quantize(Emitter &e, Value x,
                                             const Nvfp4Scale &s) {
  // RNE of |x| / s: the code is the number of rounding boundaries it
  // passes.
  Value a = LLVM::FAbsOp::create(e.b, e.loc, x);
  Value code = e.i32c(0);
  Value value = e.f32c(0);
  for (auto [i, bd] : llvm::enumerate(kE2M1Boundaries)) {
    Value past = e.fcmp(bd.inclusive ? LLVM::FCmpPredicate::oge
                                     : LLVM::FCmpPredicate::ogt,
                        a, s.thresholds[i]);
    code = e.add(code, e.zext(e.i32(), past));
    value = e.select(past, e.f32c(bd.value), value);
  }
  Value sign = e.band(e.bitcast(e.i32(), x), e.i32c(0x80000000));
  code = e.bor(code, e.lshr(sign, e.i32c(28)));
  Value dequant = e.bitcast(
      e.f32(), e.bor(e.bitcast(e.i32(), e.fmul(value, s.value)), sign));
  return {code, dequant};
}
