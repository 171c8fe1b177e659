//===- FlamiaTcgen05Ops.cpp - sm_100a block-level operations ---*- C++ -*-===//
//
// Verifiers of the tensor-memory and tcgen05 ops. The limits are the PTX
// ISA's (9.0): 512 TMEM columns allocated in powers of two from 32
// (9.7.16.7.1), tcgen05.ld/st moving at most 128 32-bit registers per
// thread in powers of two (Table 47), M = 128 with N a multiple of 16 up
// to 256 (Tables 39, 50), K of one MMA 16 (kind::f16) or 32
// (kind::mxf8f6f4).
//
//===----------------------------------------------------------------------===//
#include "flamia/Dialect/FlamiaOps.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::flamia;

namespace {

constexpr int64_t kTmemColumns = 512;

bool isE4M3(Type t) { return isa<Float8E4M3FNType>(t); }

/// 32-bit TMEM columns a row of `cols` elements of `element` occupies.
int64_t columnsOf(int64_t cols, Type element) {
  return cols * element.getIntOrFloatBitWidth() / 32;
}

LogicalResult checkColumns(Operation *op, int64_t column, int64_t columns) {
  if (column < 0 || columns < 1 || column + columns > kTmemColumns)
    return op->emitOpError() << "tensor-memory columns [" << column << ", "
                             << column + columns << ") are outside [0, "
                             << kTmemColumns << ")";
  return success();
}

/// A 128-row fragment whose rows move with one tcgen05.ld/st: a power of two
/// of 32-bit words, at most 128.
LogicalResult checkRowFragment(Operation *op, FragmentType type,
                               bool allowNarrow) {
  if (type.getRows() != 128)
    return op->emitOpError()
           << "moves a 128-row fragment (one row per thread of a warpgroup), "
              "got "
           << type;
  Type element = type.getElementType();
  bool ok = element.isF32() || (allowNarrow && (element.isBF16() || isE4M3(element)));
  if (!ok)
    return op->emitOpError() << "element type " << element << " is not "
                             << (allowNarrow ? "f32, bf16 or f8E4M3FN" : "f32");
  int64_t words = columnsOf(type.getCols(), element);
  if (type.getCols() * element.getIntOrFloatBitWidth() % 32 != 0 || words < 1 ||
      words > 128 || !llvm::isPowerOf2_64(words))
    return op->emitOpError() << "a row of " << type
                             << " must be a power of two of 32-bit columns, "
                                "at most 128 (tcgen05.ld/st), got "
                             << type.getCols() * element.getIntOrFloatBitWidth()
                             << " bits";
  return success();
}

} // namespace

LogicalResult TmemAllocOp::verify() {
  int64_t c = getColumns();
  if (c < 32 || c > kTmemColumns || !llvm::isPowerOf2_64(c))
    return emitOpError() << "allocates a power of two of columns in [32, 512], "
                            "got "
                         << c;
  auto kernel = cast<KernelOp>((*this)->getParentOp());
  if (getByWarpgroup() < 0 || getByWarpgroup() >= kernel.getNumWarpgroups())
    return emitOpError() << "warpgroup " << getByWarpgroup()
                         << " is not one of the kernel's "
                         << kernel.getNumWarpgroups();
  return success();
}

LogicalResult TmemDeallocOp::verify() {
  auto alloc = getBase().getDefiningOp<TmemAllocOp>();
  if (!alloc)
    return emitOpError() << "frees the base that flamia.tmem.alloc returned";
  if (alloc.getColumns() != getColumns())
    return emitOpError() << "frees " << getColumns() << " columns but "
                         << alloc.getColumns() << " were allocated";
  auto role = cast<RoleOp>((*this)->getParentOp());
  if (role.getFirstWarpgroup() != alloc.getByWarpgroup() || role.getSingleThread())
    return emitOpError() << "must run in the role that starts at warpgroup "
                         << alloc.getByWarpgroup()
                         << " (whose first warp allocated), with all its "
                            "threads";
  return success();
}

LogicalResult TmemLoadOp::verify() {
  FragmentType type = getResult().getType();
  if (failed(checkRowFragment(*this, type, /*allowNarrow=*/false)))
    return failure();
  return checkColumns(*this, getColumn(), type.getCols());
}

LogicalResult TmemStoreOp::verify() {
  FragmentType type = getValue().getType();
  if (failed(checkRowFragment(*this, type, /*allowNarrow=*/true)))
    return failure();
  return checkColumns(*this, getColumn(),
                      columnsOf(type.getCols(), type.getElementType()));
}

LogicalResult TmemFillOp::verify() {
  if (getColumns() < 1 || getColumns() > 128 ||
      !llvm::isPowerOf2_64(getColumns()))
    return emitOpError() << "fills a power of two of columns, at most 128, got "
                         << getColumns();
  return checkColumns(*this, getColumn(), getColumns());
}

LogicalResult UmmaScalesOp::verify() {
  SmemType t = getSource().getType();
  if (t.getTileBytes() != 512 || !t.getElementType().isInteger(8))
    return emitOpError() << "copies one 512-byte i8 scale-factor tile per "
                            "stage, got "
                         << t;
  if (getColumn() % 4 != 0)
    return emitOpError() << "scale factors occupy a 4-column chunk; column "
                         << getColumn() << " is not a multiple of 4";
  return checkColumns(*this, getColumn(), 4);
}

Type UmmaOp::getAElementType() {
  if (getA())
    return getA().getType().getElementType();
  return getAType() ? *getAType() : Type();
}

int64_t UmmaOp::getN() {
  SmemType b = getB().getType();
  return getBTransposed() ? b.getCols() : b.getRows();
}

int64_t UmmaOp::getK() {
  SmemType b = getB().getType();
  return getBTransposed() ? b.getRows() : b.getCols();
}

LogicalResult UmmaOp::verify() {
  if (static_cast<bool>(getA()) == getAColumn().has_value())
    return emitOpError() << "A is either a shared-memory tile (`a`) or "
                            "tensor memory (`a_column`), exactly one";
  if (getA() && !getAStage())
    return emitOpError() << "a shared-memory A needs its stage";
  if (getAColumn() && !getAType())
    return emitOpError() << "A in tensor memory needs `a_type`";
  Type aElem = getAElementType(), bElem = getB().getType().getElementType();
  if (aElem != bElem)
    return emitOpError() << "A and B have different element types: " << aElem
                         << " and " << bElem;
  bool scaled = isE4M3(aElem);
  if (!scaled && !aElem.isBF16())
    return emitOpError() << "operands are bf16 (kind::f16) or f8E4M3FN "
                            "(kind::mxf8f6f4), got "
                         << aElem;
  if (scaled != static_cast<bool>(getScaleA()) ||
      scaled != static_cast<bool>(getScaleB()))
    return emitOpError() << (scaled ? "block-scaled f8E4M3FN operands need "
                                      "scales(scale_a, scale_b)"
                                    : "bf16 operands take no scale factors");
  int64_t n = getN(), k = getK();
  int64_t kStep = scaled ? 32 : 16;
  if (n < 16 || n > 256 || n % 16 != 0)
    return emitOpError() << "N = " << n
                         << " is not a multiple of 16 in [16, 256] (M = 128)";
  if (k % kStep != 0)
    return emitOpError() << "K = " << k << " is not a multiple of the MMA's K ("
                         << kStep << ")";
  if (scaled && k > 128)
    return emitOpError() << "K = " << k
                         << " needs more than one 4-block scale-factor chunk";
  if (getA()) {
    SmemType a = getA().getType();
    if (a.getRows() != 128 || a.getCols() != k)
      return emitOpError() << "A must be a 128 x " << k << " tile, got " << a;
  }
  if (failed(checkColumns(*this, getDColumn(), n)))
    return failure();
  if (getAColumn() &&
      failed(checkColumns(*this, *getAColumn(), columnsOf(k, aElem))))
    return failure();
  return success();
}

LogicalResult UmmaCommitOp::verify() {
  if (getBarrier() != "full" && getBarrier() != "empty")
    return emitOpError() << "barrier must be \"full\" or \"empty\", got \""
                         << getBarrier() << "\"";
  return success();
}

LogicalResult BulkLoadOp::verify() {
  SmemType dst = getDest().getType();
  int64_t bytes = dst.getTileBytes();
  if (bytes % 16 != 0)
    return emitOpError() << "bulk copies move multiples of 16 bytes, the "
                            "destination tile has "
                         << bytes;
  GlobalType src = getSource().getType();
  int64_t inner = 1;
  for (int64_t d : src.getShape().drop_front())
    inner *= d;
  int64_t innerBytes = inner * src.getElementType().getIntOrFloatBitWidth() / 8;
  if (innerBytes % bytes != 0)
    return emitOpError() << "a row of the source (" << innerBytes
                         << " bytes) is not a whole number of " << bytes
                         << "-byte chunks";
  return success();
}
