//===- TmemAddress.cpp - sm_100a tensor-memory addresses and access rules -===//
#include "flamia/Target/TmemAddress.h"

namespace flamia {

bool validateTmemCell(uint32_t lane, uint32_t column, std::string &error) {
  if (lane >= kTmemLanes || column >= kTmemColumns) {
    error = "tensor-memory cell (lane " + std::to_string(lane) + ", column " +
            std::to_string(column) +
            ") is outside the 128 lanes x 512 columns of a CTA (PTX ISA "
            "9.7.16.1)";
    return false;
  }
  return true;
}

bool validateTmemAllocation(uint32_t columns, std::string &error) {
  if (columns < 32 || columns > 512 || (columns & (columns - 1))) {
    error = "tcgen05.alloc of " + std::to_string(columns) +
            " columns: the column count must be a power of two in [32, 512] "
            "(PTX ISA 9.7.16.7.1)";
    return false;
  }
  return true;
}

uint32_t tmemAllocationFor(uint32_t columns) {
  if (columns > kTmemColumns)
    return 0;
  uint32_t n = kTmemAllocationUnit;
  while (n < columns)
    n *= 2;
  return n;
}

bool tmemWarpCanAccessLanes(unsigned warpRank, uint32_t lane, uint32_t count) {
  uint32_t first = tmemFirstLaneOfWarp(warpRank);
  return count > 0 && lane >= first && lane + count <= first + 32;
}

const char *tmemLdStShapeName(TmemLdStShape shape) {
  switch (shape) {
  case TmemLdStShape::S32x32b:
    return "32x32b";
  case TmemLdStShape::S16x64b:
    return "16x64b";
  case TmemLdStShape::S16x128b:
    return "16x128b";
  case TmemLdStShape::S16x256b:
    return "16x256b";
  case TmemLdStShape::S16x32bx2:
    return "16x32bx2";
  }
  return "?";
}

unsigned tmemLdStRegisters(TmemLdStShape shape, unsigned num) {
  if (num == 0 || num > 128 || (num & (num - 1)))
    return 0;
  unsigned perNum = shape == TmemLdStShape::S16x128b   ? 2
                    : shape == TmemLdStShape::S16x256b ? 4
                                                       : 1;
  unsigned regs = num * perNum;
  return regs <= 128 ? regs : 0;
}

TmemElement tmemLoad32x32bElement(unsigned warpRank, unsigned laneId,
                                  unsigned reg, uint32_t firstColumn) {
  TmemElement e;
  e.row = tmemFirstLaneOfWarp(warpRank) + laneId;
  e.column = firstColumn + reg;
  return e;
}

} // namespace flamia
