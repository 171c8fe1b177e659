//===- FlamiaTcgen05Ops.cpp - sm_100a block-level operations ---*- C++ -*-===//
//
// Verifiers of the tensor-memory and tcgen05 ops. The limits are the PTX
// ISA's (9.0): 512 TMEM columns allocated in powers of two from 32
// (9.7.16.7.1), tcgen05.ld/st moving at most 128 32-bit registers per
// thread in powers of two (Table 47), M = 128 with N a multiple of 16 up
// to 256 (Tables 39, 50), K of one MMA 16 (kind::f16) or 32
// (kind::mxf8f6f4). I64Attr getters are unsigned: the verifiers read the
// attributes as signed values, so that a negative one is reported as such.
//
//===----------------------------------------------------------------------===//
#include "flamia/Dialect/FlamiaOps.h"

#include "FlamiaVerify.h"

#include "llvm/Support/MathExtras.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace flamia;

namespace {

constexpr int64_t kTmemColumns = 512;

bool isE4M3(Type t) { return isa<Float8E4M3FNType>(t); }

/// 32-bit TMEM columns a row of `cols` elements of `element` occupies.
int64_t columnsOf(int64_t cols, Type element) {
  return cols * element.getIntOrFloatBitWidth() / 32;
}

/// Columns `[column, column + columns)` from the TMEM address `base`: inside
/// the allocation when `base` is flamia.tmem.alloc's result, inside the 512
/// columns of tensor memory otherwise (a computed address).
LogicalResult checkColumns(Operation *op, Value base, int64_t column,
                           int64_t columns) {
  auto alloc = base.getDefiningOp<TmemAllocOp>();
  int64_t limit = alloc ? alloc.getColumnsAttr().getInt() : kTmemColumns;
  if (column >= 0 && columns >= 1 && column + columns <= limit)
    return success();
  InFlightDiagnostic diag = op->emitOpError()
                            << "tensor-memory columns [" << column << ", "
                            << column + columns << ") are outside ";
  if (alloc)
    diag << "the " << limit << " columns flamia.tmem.alloc allocated";
  else
    diag << "[0, " << kTmemColumns << ")";
  return diag;
}

/// tcgen05.mma, .cp and .commit are issued by one thread: every thread that
/// runs them issues its own. Inside a kernel that is a single_thread role.
LogicalResult checkSingleThread(Operation *op) {
  if (!op->getParentOfType<KernelOp>())
    return success();
  auto role = op->getParentOfType<RoleOp>();
  if (role && role.getSingleThread())
    return success();
  InFlightDiagnostic diag = op->emitOpError()
                            << "is issued by one thread and belongs in a "
                               "single_thread flamia.role, but ";
  if (role)
    diag << "role \"" << role.getRoleName()
         << "\" runs it on every thread of its warpgroups";
  else
    diag << "every thread of the kernel runs it";
  return diag;
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
  int64_t c = getColumnsAttr().getInt();
  if (c < 32 || c > kTmemColumns || !llvm::isPowerOf2_64(c))
    return emitOpError() << "allocates a power of two of columns in [32, 512], "
                            "got "
                         << c;
  auto kernel = cast<KernelOp>((*this)->getParentOp());
  int64_t warpgroup = getByWarpgroupAttr().getInt();
  if (warpgroup < 0 || warpgroup >= kernel.getNumWarpgroups())
    return emitOpError() << "warpgroup " << warpgroup
                         << " is not one of the kernel's "
                         << kernel.getNumWarpgroups();
  // Every allocation happens before the roles start and is freed at the
  // end: together they must fit, or tcgen05.alloc waits forever.
  int64_t total = 0;
  for (auto alloc : kernel.getBody().front().getOps<TmemAllocOp>()) {
    total += alloc.getColumnsAttr().getInt();
    if (alloc == *this)
      break;
  }
  if (total > kTmemColumns)
    return emitOpError() << "the kernel's tensor-memory allocations take "
                         << total << " columns up to this one, more than the "
                         << kTmemColumns << " of a multiprocessor";
  return success();
}

LogicalResult TmemDeallocOp::verify() {
  auto alloc = getBase().getDefiningOp<TmemAllocOp>();
  if (!alloc)
    return emitOpError() << "the base must be the result of the "
                            "flamia.tmem.alloc it frees";
  if (alloc.getColumns() != getColumns())
    return emitOpError() << "frees " << getColumnsAttr().getInt()
                         << " columns but " << alloc.getColumnsAttr().getInt()
                         << " were allocated";
  auto role = cast<RoleOp>((*this)->getParentOp());
  if (role.getFirstWarpgroup() != alloc.getByWarpgroup() ||
      role.getSingleThread())
    return emitOpError() << "must run in the role that starts at warpgroup "
                         << alloc.getByWarpgroupAttr().getInt()
                         << " (whose first warp allocated), with all its "
                            "threads";
  return success();
}

LogicalResult TmemLoadOp::verify() {
  FragmentType type = getResult().getType();
  if (failed(checkRowFragment(*this, type, /*allowNarrow=*/false)))
    return failure();
  return checkColumns(*this, getBase(), getColumnAttr().getInt(),
                      type.getCols());
}

LogicalResult TmemStoreOp::verify() {
  FragmentType type = getValue().getType();
  if (failed(checkRowFragment(*this, type, /*allowNarrow=*/true)))
    return failure();
  return checkColumns(*this, getBase(), getColumnAttr().getInt(),
                      columnsOf(type.getCols(), type.getElementType()));
}

LogicalResult SmemStoreOp::verify() {
  FragmentType value = getValue().getType();
  SmemType tile = getTile().getType();
  Type element = value.getElementType();
  if (!isE4M3(element) && !element.isBF16())
    return emitOpError() << "stores f8E4M3FN or bf16 MMA operands, got "
                         << value;
  if (value.getRows() != 128)
    return emitOpError() << "stores 128-row fragments (one row per thread of "
                            "a warpgroup), got "
                         << value;
  if (tile.getRows() != value.getRows() || tile.getCols() != value.getCols() ||
      tile.getElementType() != element)
    return emitOpError() << "stores " << value << " into a tile of the same "
                         << "rows, columns and element type, got " << tile;
  // (The tile type already has rows of 32, 64 or a multiple of 128 bytes,
  // the swizzled layouts flamia.umma reads.)
  return verifyStage(*this, getStage(), tile.getStages(), "the tile");
}

LogicalResult TmemFillOp::verify() {
  int64_t columns = getColumnsAttr().getInt();
  if (columns < 1 || columns > 128 || !llvm::isPowerOf2_64(columns))
    return emitOpError() << "fills a power of two of columns, at most 128, got "
                         << columns;
  return checkColumns(*this, getBase(), getColumnAttr().getInt(), columns);
}

LogicalResult FragMxQuantizeOp::verify() {
  FragmentType in = getValues().getType(), out = getCodes().getType();
  if (!in.getElementType().isF32() || !isE4M3(out.getElementType()) ||
      in.getShape() != out.getShape())
    return emitOpError() << "quantizes an f32 fragment into f8E4M3FN codes of "
                            "the same shape, got "
                         << in << " -> " << out;
  if (in.getRows() != 128)
    return emitOpError() << "quantizes 128-row fragments (one row per thread "
                            "of a warpgroup, the block amax a thread's own), "
                            "got "
                         << in;
  if (in.getCols() % 32 != 0)
    return emitOpError() << "blocks of 32 columns need a multiple of 32 "
                            "columns, got "
                         << in.getCols();
  SmemType t = getScales().getType();
  if (t.getTileBytes() != 512 || !t.getElementType().isInteger(8))
    return emitOpError() << "writes one 512-byte i8 scale-factor tile per "
                            "stage, got "
                         << t;
  int64_t blocks = in.getCols() / 32;
  APInt kBlock;
  if (matchPattern(getKBlock(), m_ConstantInt(&kBlock)) &&
      (kBlock.getSExtValue() < 0 || kBlock.getSExtValue() + blocks > 4))
    return emitOpError() << "k_block = " << kBlock.getSExtValue() << " with "
                         << blocks << " block(s) per row writes K-blocks "
                         << "outside the 4 of a scale-factor tile";
  return verifyStage(*this, getStage(), t.getStages(), "the scale tile");
}

LogicalResult UmmaScalesOp::verify() {
  SmemType t = getSource().getType();
  if (t.getTileBytes() % 512 != 0 || !t.getElementType().isInteger(8))
    return emitOpError() << "copies from stages of 512-byte i8 scale-factor "
                            "tiles, got "
                         << t;
  int64_t part = getPart();
  if (part < 0 || part >= t.getTileBytes() / 512)
    return emitOpError() << "part " << part << " is outside the "
                         << t.getTileBytes() / 512
                         << " scale-factor tile(s) of a stage";
  int64_t column = getColumnAttr().getInt();
  if (column % 4 != 0)
    return emitOpError() << "scale factors occupy a 4-column chunk; column "
                         << column << " is not a multiple of 4";
  if (failed(checkColumns(*this, getBase(), column, 4)) ||
      failed(verifyStage(*this, getStage(), t.getStages(), "the source")))
    return failure();
  return checkSingleThread(*this);
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
  if (!getA() && getAStage())
    return emitOpError() << "A in tensor memory takes no stage";
  if (getAColumn() && !getAType())
    return emitOpError() << "A in tensor memory needs `a_type`";
  if (getA() && getAType())
    return emitOpError() << "`a_type` is for A in tensor memory; a "
                            "shared-memory A has its tile's element type";
  Type aElem = getAElementType(), bElem = getB().getType().getElementType();
  if (aElem != bElem)
    return emitOpError() << "A and B have different element types: " << aElem
                         << " and " << bElem;
  bool fp4 = isa<Float4E2M1FNType>(aElem);
  bool scaled = isE4M3(aElem) || fp4;
  if (!scaled && !aElem.isBF16())
    return emitOpError() << "operands are bf16 (kind::f16), f8E4M3FN "
                            "(kind::mxf8f6f4) or f4E2M1FN (kind::mxf4nvf4), got "
                         << aElem;
  if (fp4 && (!getA() || getBTransposed()))
    return emitOpError() << "kind::mxf4nvf4 reads both f4E2M1FN operands "
                            "K-major from shared memory (no A in tensor memory, "
                            "no transposed B)";
  if (fp4 && (getBKBlock() || getKValid()))
    return emitOpError() << "f4E2M1FN operands take no b_k_block or k_valid "
                            "(one scale chunk per 64-wide K step)";
  if (scaled != static_cast<bool>(getScaleA()) ||
      scaled != static_cast<bool>(getScaleB()))
    return emitOpError() << (scaled ? "block-scaled operands (f8E4M3FN, "
                                      "f4E2M1FN) need scales(scale_a, scale_b)"
                                    : "bf16 operands take no scale factors");
  int64_t n = getN(), k = getK();
  int64_t kStep = fp4 ? 64 : scaled ? 32 : 16;
  if (n < 16 || n > 256 || n % 16 != 0)
    return emitOpError() << "N = " << n
                         << " is not a multiple of 16 in [16, 256] (M = 128)";
  if (k % kStep != 0)
    return emitOpError() << "K = " << k << " is not a multiple of the MMA's K ("
                         << kStep << ")";
  if (scaled && !fp4 && k > 128)
    return emitOpError() << "K = " << k
                         << " needs more than one 4-block scale-factor chunk";
  if (fp4 && k > 128)
    return emitOpError() << "K = " << k
                         << " needs more than two scale-factor chunks";
  if (getBKBlock() && !scaled)
    return emitOpError() << "b_k_block selects block scale factors; bf16 "
                            "operands have none";
  APInt kBlock;
  if (getBKBlock() && matchPattern(getBKBlock(), m_ConstantInt(&kBlock))) {
    int64_t first = kBlock.getSExtValue();
    if (first < 0 || first + k / 32 > 4)
      return emitOpError() << "b_k_block = " << first << " with K = " << k
                           << " reads scale-factor K-blocks [" << first << ", "
                           << first + k / 32
                           << "), outside the 4 of a scale-factor tile";
  }
  APInt kValid;
  if (getKValid() && matchPattern(getKValid(), m_ConstantInt(&kValid)) &&
      kValid.getSExtValue() < 1)
    return emitOpError() << "k_valid = " << kValid.getSExtValue()
                         << " issues no K step (it must be at least 1)";
  if (getA()) {
    SmemType a = getA().getType();
    if (a.getRows() != 128 || a.getCols() != k)
      return emitOpError() << "A must be a 128 x " << k << " tile, got " << a;
  }
  if (failed(checkColumns(*this, getTmem(), getDColumnAttr().getInt(), n)))
    return failure();
  if (getAColumn() &&
      failed(checkColumns(*this, getTmem(), getAColumnAttr().getInt(),
                          columnsOf(k, aElem))))
    return failure();
  if (getA() && failed(verifyStage(*this, getAStage(),
                                   getA().getType().getStages(), "A")))
    return failure();
  if (failed(verifyStage(*this, getBStage(), getB().getType().getStages(),
                         "B")))
    return failure();
  return checkSingleThread(*this);
}

LogicalResult UmmaCommitOp::verify() {
  if (failed(verifyStage(*this, getStage(),
                         getPipeline().getType().getStages(), "the pipeline")))
    return failure();
  return checkSingleThread(*this);
}

LogicalResult PipelineArriveOp::verify() {
  return verifyStage(*this, getStage(), getPipeline().getType().getStages(),
                     "the pipeline");
}

LogicalResult BulkLoadOp::verify() {
  SmemType dst = getDest().getType();
  int64_t bytes = dst.getTileBytes();
  if (bytes % 16 != 0)
    return emitOpError() << "bulk copies move multiples of 16 bytes, the "
                            "destination tile has "
                         << bytes;
  GlobalType src = getSource().getType();
  // The chunks split the static innermost dimensions; a dynamic one before
  // them (a runtime head count) multiplies whole chunks.
  int64_t inner = 1;
  for (int64_t d : llvm::reverse(src.getShape().drop_front())) {
    if (ShapedType::isDynamic(d))
      break;
    inner *= d;
  }
  if (ShapedType::isDynamic(src.getShape().back()))
    return emitOpError() << "the source's innermost dimension must be static "
                            "(its rows are split into chunks), got "
                         << src;
  int64_t innerBytes = inner * src.getElementType().getIntOrFloatBitWidth() / 8;
  if (innerBytes % bytes != 0)
    return emitOpError() << "a row of the source (" << innerBytes
                         << " bytes) is not a whole number of " << bytes
                         << "-byte chunks";
  // The stage indexes both the destination's tiles and the pipeline's
  // barriers.
  int64_t pipelineStages = getPipeline().getType().getStages();
  if (dst.getStages() != pipelineStages)
    return emitOpError() << "the destination has " << dst.getStages()
                         << " stage(s) but its pipeline has "
                         << pipelineStages;
  return verifyStage(*this, getStage(), dst.getStages(), "the destination");
}
