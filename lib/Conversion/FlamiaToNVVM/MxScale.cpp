//===- MxScale.cpp - The contract's E8M0 block scale, in IR ---------------===//
#include "MxScale.h"

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
