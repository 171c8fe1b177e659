//===- TmemAddress.h - sm_100a tensor-memory addresses and access rules -*- C++ -*-===//
//
// Tensor memory (TMEM) of one CTA on sm_100a: 128 lanes x 512 columns of
// 32-bit cells (PTX ISA 9.0, 9.7.16.1 "Tensor Memory").
//
//   address (9.7.16.1.1): bits 31-16 lane, bits 15-0 column.
//   allocation (9.7.16.1.2, 9.7.16.7.1 tcgen05.alloc): in columns, all 128
//     lanes; unit 32 columns; a power of two in [32, 512].
//   access (9.7.16.8.1, Table "Access restrictions"): warp w of a warpgroup
//     (w = warp rank % 4, 9.7.15.1) reaches lanes 32w..32w+31 with
//     tcgen05.ld/st; every warp reaches every column.
//   tcgen05.ld/st .num (9.7.16.8.3, Table 47): registers = num x {1 for
//     .32x32b/.16x64b/.16x32bx2, 2 for .16x128b, 4 for .16x256b}, at most 128.
//
// The accumulator mapping (M = 128, cta_group::1: row i of D in lane i, 32-bit
// column j of D in column base + j, "Layout D", 9.7.16.10.5.4) is given by a
// figure in the ISA, not by text; see docs/descriptors.md.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_TARGET_TMEMADDRESS_H
#define FLAMIA_TARGET_TMEMADDRESS_H

#include <cstdint>
#include <string>

namespace flamia {

constexpr uint32_t kTmemLanes = 128;
constexpr uint32_t kTmemColumns = 512;
constexpr uint32_t kTmemAllocationUnit = 32;

/// lane << 16 | column.
constexpr uint32_t encodeTmemAddress(uint32_t lane, uint32_t column) {
  return (lane << 16) | (column & 0xFFFF);
}
constexpr uint32_t tmemAddressLane(uint32_t address) { return address >> 16; }
constexpr uint32_t tmemAddressColumn(uint32_t address) {
  return address & 0xFFFF;
}
/// `base` moved by (lanes, columns): base + (lane << 16 | column).
constexpr uint32_t tmemAddressAt(uint32_t base, uint32_t lane,
                                 uint32_t column) {
  return base + encodeTmemAddress(lane, column);
}

/// Checks that `lane` < 128 and `column` < 512 (a cell inside the CTA's TMEM).
bool validateTmemCell(uint32_t lane, uint32_t column, std::string &error);

/// tcgen05.alloc/dealloc nCols: a power of two in [32, 512].
bool validateTmemAllocation(uint32_t columns, std::string &error);
/// The smallest legal allocation holding `columns` columns, or 0 if more than
/// 512 are needed.
uint32_t tmemAllocationFor(uint32_t columns);

/// The warp's index within its warpgroup, warpRank % 4 (9.7.15.1, 9.7.16.8.1).
constexpr unsigned tmemLaneQuadrant(unsigned warpRank) { return warpRank % 4; }
/// The first of the 32 lanes warp `warpRank` may access with tcgen05.ld/st.
constexpr uint32_t tmemFirstLaneOfWarp(unsigned warpRank) {
  return 32 * (warpRank % 4);
}
/// Whether warp `warpRank` may access lanes [lane, lane + count).
bool tmemWarpCanAccessLanes(unsigned warpRank, uint32_t lane, uint32_t count);

/// The data-movement shapes of tcgen05.ld/st (9.7.16.2.3).
enum class TmemLdStShape : uint8_t { S32x32b, S16x64b, S16x128b, S16x256b, S16x32bx2 };
/// "32x32b", ...
const char *tmemLdStShapeName(TmemLdStShape shape);
/// Registers of `.shape.x<num>` (Table 47), or 0 when the pair is illegal
/// (num not a power of two in [1, 128], or more than 128 registers).
unsigned tmemLdStRegisters(TmemLdStShape shape, unsigned num);

/// A (row, column) of a matrix in TMEM.
struct TmemElement {
  uint32_t row = 0;
  uint32_t column = 0;
  bool operator==(const TmemElement &o) const {
    return row == o.row && column == o.column;
  }
};

/// `tcgen05.ld.sync.aligned.32x32b.x<num>.b32` at address (lane
/// 32 * (warpRank % 4), column `firstColumn`) executed by warp `warpRank`:
/// lane `laneId` receives, in register `reg`, the cell at lane
/// 32 * (warpRank % 4) + laneId, column firstColumn + reg. For the f32
/// accumulator of an M = 128, cta_group::1 MMA (Layout D) that cell is
/// D[row = lane][col = column - accumulator base column].
TmemElement tmemLoad32x32bElement(unsigned warpRank, unsigned laneId,
                                  unsigned reg, uint32_t firstColumn);

/// Columns one 128-row scale-factor chunk occupies after
/// `tcgen05.cp.cta_group::1.32x128b.warpx4`: 32 rows x 128 bits = 4 columns,
/// replicated into the four 32-lane quadrants (9.7.16.9.2, .warpx4 multicasts
/// to all four warps). The MMA then selects the byte of each 32-bit cell with
/// the scale-factor ID (9.7.16.10.7.2).
constexpr uint32_t kTmemColumnsPerScaleFactorChunk = 4;

} // namespace flamia

#endif // FLAMIA_TARGET_TMEMADDRESS_H
