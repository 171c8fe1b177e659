//===- FragmentLayout.h - Where fragment elements live ----------*- C++ -*-===//
//
// A !flamia.frag<RxCxT> is a tile shared by the 128 threads of a warpgroup;
// a !flamia.rows<Rxf32> holds one value per tile row. A FragmentLayout says,
// for one target, which rows a thread holds values of, the row and column of
// each of its fragment elements, how a row's values held by several threads
// are combined, and how a thread's part of a row is written to global
// memory. The fragment patterns (FragmentPatterns.cpp) are written once on
// top of it; only the MMAs and tensor memory stay in target files.
//
//  - sm_90a (Sm90AccumulatorLayout): the wgmma m64nNk16 accumulator, 64
//    rows; thread t (warp w = t/32 % 4, lane l) holds two rows, 16w + l/4
//    and 16w + l/4 + 8, and element i sits in row slot (i/2) % 2, column
//    8(i/4) + 2(l%4) + i%2 (PTX ISA 9.0, 9.7.15.5.1.1). A row is spread
//    over the four threads of a quad.
//  - sm_100a (Sm100RowPerThreadLayout): 128 rows, thread t = tid % 128
//    holds all of row t, element i in column i: the lane of tensor memory
//    its warp reads, where an M = 128 tcgen05.mma puts row t of D (PTX ISA
//    9.0, 9.7.16.10.5 "Layout D").
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_LIB_CONVERSION_FLAMIATONVVM_FRAGMENTLAYOUT_H
#define FLAMIA_LIB_CONVERSION_FLAMIATONVVM_FRAGMENTLAYOUT_H

#include "Emitter.h"

#include "flamia/Support/MLIR.h"

namespace flamia {

/// The executing thread's position in a layout, computed once per lowered
/// op from the thread index (what it holds depends on the layout).
struct ThreadPosition {
  Value firstRow; // the tile row of the thread's row slot 0
  Value lane;     // the layout's within-row thread index (null if alone)
};

class FragmentLayout {
public:
  virtual ~FragmentLayout() = default;

  /// Rows of the tile (M of the MMA whose accumulator this is).
  virtual int64_t tileRows() const = 0;
  /// How many rows a thread holds values of: the length of a
  /// !flamia.rows in registers.
  virtual int64_t rowsPerThread() const = 0;
  /// Which of the thread's rows element `i` of a fragment belongs to.
  virtual int64_t rowSlotOf(int64_t i) const = 0;
  /// Whether a thread holds whole rows, element i in column i: columns are
  /// compile-time constants and row reductions need no other thread.
  virtual bool holdsWholeRows() const = 0;
  /// Elements with the same column slot are in the same column (for every
  /// thread): per-column values are computed once per slot.
  virtual int64_t columnSlotOf(int64_t i) const = 0;
  /// Which group of `width` consecutive columns (a multiple of 8, groups
  /// from column 0) element `i` is in: the same for every thread.
  virtual int64_t columnGroupOf(int64_t i, int64_t width) const = 0;

  /// The thread's position.
  virtual ThreadPosition position(Emitter &e) const = 0;
  /// The tile row of the thread's row `slot`.
  virtual Value row(Emitter &e, const ThreadPosition &p, int64_t slot) const = 0;
  /// The tile column of element `i`.
  virtual Value column(Emitter &e, const ThreadPosition &p, int64_t i) const = 0;
  /// row(slot) - row(0) and column(i) - column(0): the same for every
  /// thread, so values indexed by row or column are read at constant
  /// offsets from one address per thread.
  virtual int64_t rowOffsetOf(int64_t slot) const = 0;
  virtual int64_t columnOffsetOf(int64_t i) const = 0;
  /// `v` (this thread's partial max or sum of a row) combined with the
  /// partials of the other threads holding the row.
  virtual Value reduceRow(Emitter &e, Value v, bool isMax) const = 0;
  /// Whether this thread writes per-row results (one thread per row does);
  /// null when every thread holds its rows alone.
  virtual Value isRowWriter(Emitter &e, const ThreadPosition &p) const = 0;
  /// Writes the thread's elements of row `slot` of `acc`, each times `inv`,
  /// as bf16 to the row starting at element `rowElement` (i64) of `base`.
  virtual void storeRowAsBF16(Emitter &e, const ThreadPosition &p,
                              ArrayRef<Value> acc, int64_t slot, Value inv,
                              Value base, Value rowElement) const = 0;
  /// The same as f32.
  virtual void storeRowAsF32(Emitter &e, const ThreadPosition &p,
                             ArrayRef<Value> acc, int64_t slot, Value factor,
                             Value base, Value rowElement) const = 0;
};

/// The wgmma accumulator layout of sm_90a.
const FragmentLayout &getSm90AccumulatorLayout();
/// One row per thread, the tensor-memory load layout of sm_100a.
const FragmentLayout &getSm100RowPerThreadLayout();

} // namespace flamia

#endif // FLAMIA_LIB_CONVERSION_FLAMIATONVVM_FRAGMENTLAYOUT_H
