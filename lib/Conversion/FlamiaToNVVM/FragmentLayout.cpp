//===- FragmentLayout.cpp - sm_90a and sm_100a fragment layouts -----------===//
#include "FragmentLayout.h"

using namespace mlir;
using namespace flamia;

namespace {

class Sm90AccumulatorLayout final : public FragmentLayout {
public:
  int64_t tileRows() const override { return 64; }
  int64_t rowsPerThread() const override { return 2; }
  int64_t rowSlotOf(int64_t i) const override { return (i / 2) % 2; }
  bool holdsWholeRows() const override { return false; }
  int64_t columnSlotOf(int64_t i) const override { return 2 * (i / 4) + i % 2; }
  /// Element i is in columns [8 (i / 4), 8 (i / 4) + 8).
  int64_t columnGroupOf(int64_t i, int64_t width) const override {
    return 8 * (i / 4) / width;
  }

  ThreadPosition position(Emitter &e) const override {
    Value tid = e.tid();
    Value lane = e.urem(tid, e.i32c(32));
    Value warp = e.urem(e.udiv(tid, e.i32c(32)), e.i32c(4));
    // Braced initialization evaluates in order: the row, then the quad.
    return {e.add(e.mul(warp, e.i32c(16)), e.udiv(lane, e.i32c(4))),
            e.urem(lane, e.i32c(4))};
  }
  Value row(Emitter &e, const ThreadPosition &p, int64_t slot) const override {
    return slot == 0 ? p.firstRow : e.add(p.firstRow, e.i32c(8 * slot));
  }
  Value column(Emitter &e, const ThreadPosition &p, int64_t i) const override {
    return e.add(e.mul(p.lane, e.i32c(2)), e.i32c(8 * (i / 4) + i % 2));
  }
  int64_t rowOffsetOf(int64_t slot) const override { return 8 * slot; }
  int64_t columnOffsetOf(int64_t i) const override {
    return 8 * (i / 4) + i % 2;
  }
  /// A row's values are spread over the four threads of a quad.
  Value reduceRow(Emitter &e, Value v, bool isMax) const override {
    for (int64_t m : {1, 2}) {
      Value other = e.shflXor(v, m);
      v = isMax ? e.fmax(v, other) : e.fadd(v, other);
    }
    return v;
  }
  Value isRowWriter(Emitter &e, const ThreadPosition &p) const override {
    return e.icmp(LLVM::ICmpPredicate::eq, p.lane, e.i32c(0));
  }
  /// Consecutive element pairs are adjacent columns: one bf16x2 store each.
  void storeRowAsBF16(Emitter &e, const ThreadPosition &p, ArrayRef<Value> acc,
                      int64_t slot, Value inv, Value base,
                      Value rowElement) const override {
    for (int64_t i = 0, n = acc.size(); i < n; i += 2) {
      if (rowSlotOf(i) != slot)
        continue;
      Value lo = e.fmul(acc[i], inv), hi = e.fmul(acc[i + 1], inv);
      Value packed = e.cvtToBF16x2(hi, lo);
      Value elem = e.add(rowElement, e.zext(e.i64(), column(e, p, i)));
      e.store(packed, e.elementPtr(base, elem, 2), 4);
    }
  }
  /// Consecutive element pairs: one 8-byte store each.
  void storeRowAsF32(Emitter &e, const ThreadPosition &p, ArrayRef<Value> acc,
                     int64_t slot, Value factor, Value base,
                     Value rowElement) const override {
    auto v2 = VectorType::get({2}, e.f32());
    for (int64_t i = 0, n = acc.size(); i < n; i += 2) {
      if (rowSlotOf(i) != slot)
        continue;
      Value vec = e.undef(v2);
      for (int64_t j = 0; j < 2; ++j)
        vec = LLVM::InsertElementOp::create(e.b, e.loc, vec,
                                            e.fmul(acc[i + j], factor),
                                            e.i32c(j));
      Value elem = e.add(rowElement, e.zext(e.i64(), column(e, p, i)));
      e.store(vec, e.elementPtr(base, elem, 4), 8);
    }
  }
};

class Sm100RowPerThreadLayout final : public FragmentLayout {
public:
  int64_t tileRows() const override { return 128; }
  int64_t rowsPerThread() const override { return 1; }
  int64_t rowSlotOf(int64_t) const override { return 0; }
  bool holdsWholeRows() const override { return true; }
  int64_t columnSlotOf(int64_t i) const override { return i; }
  int64_t columnGroupOf(int64_t i, int64_t width) const override {
    return i / width;
  }

  ThreadPosition position(Emitter &e) const override {
    return {e.urem(e.tid(), e.i32c(128)), Value()};
  }
  Value row(Emitter &, const ThreadPosition &p, int64_t) const override {
    return p.firstRow;
  }
  Value column(Emitter &e, const ThreadPosition &, int64_t i) const override {
    return e.i32c(i);
  }
  int64_t rowOffsetOf(int64_t) const override { return 0; }
  int64_t columnOffsetOf(int64_t i) const override { return i; }
  Value reduceRow(Emitter &, Value v, bool) const override { return v; }
  Value isRowWriter(Emitter &, const ThreadPosition &) const override {
    return Value();
  }
  /// The thread writes its whole row: eight bf16 (16 bytes) per store.
  void storeRowAsBF16(Emitter &e, const ThreadPosition &, ArrayRef<Value> acc,
                      int64_t, Value inv, Value base,
                      Value rowElement) const override {
    Value rowPtr = e.elementPtr(base, rowElement, 2);
    auto v4 = VectorType::get({4}, e.i32());
    for (int64_t c = 0, d = acc.size(); c < d; c += 8) {
      Value vec = e.undef(v4);
      for (int64_t j = 0; j < 4; ++j) {
        Value lo = e.fmul(acc[c + 2 * j], inv), hi = e.fmul(acc[c + 2 * j + 1], inv);
        vec = LLVM::InsertElementOp::create(e.b, e.loc, vec, e.cvtToBF16x2(hi, lo),
                                            e.i32c(j));
      }
      e.store(vec, e.gep(rowPtr, 2 * c), 16);
    }
  }
  /// Four f32 (16 bytes) per store.
  void storeRowAsF32(Emitter &e, const ThreadPosition &, ArrayRef<Value> acc,
                     int64_t, Value factor, Value base,
                     Value rowElement) const override {
    Value rowPtr = e.elementPtr(base, rowElement, 4);
    auto v4 = VectorType::get({4}, e.f32());
    for (int64_t c = 0, d = acc.size(); c < d; c += 4) {
      Value vec = e.undef(v4);
      for (int64_t j = 0; j < 4; ++j)
        vec = LLVM::InsertElementOp::create(e.b, e.loc, vec,
                                            e.fmul(acc[c + j], factor),
                                            e.i32c(j));
      e.store(vec, e.gep(rowPtr, 4 * c), 16);
    }
  }
};

} // namespace

const FragmentLayout &flamia::getSm90AccumulatorLayout() {
  static const Sm90AccumulatorLayout layout;
  return layout;
}

const FragmentLayout &flamia::getSm100RowPerThreadLayout() {
  static const Sm100RowPerThreadLayout layout;
  return layout;
}
