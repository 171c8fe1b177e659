//===- FlamiaKernelOps.cpp - flamia block-level operations ------*- C++ -*-===//
#include "flamia/Dialect/FlamiaOps.h"

#include "FlamiaVerify.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"

using namespace mlir;
using namespace flamia;

//===----------------------------------------------------------------------===//
// Shared checks
//===----------------------------------------------------------------------===//

namespace {

/// The registers of a multiprocessor's register file (sm_90a, sm_100a): the
/// roles' setmaxnreg budgets must fit in it together.
constexpr int64_t kRegisterFileSize = 64 * 1024;
/// mbarrier arrival and transaction counts are below 2^20.
constexpr int64_t kMbarrierCountLimit = (1 << 20) - 1;
/// A TMA box has at most 256 elements along each dimension.
constexpr int64_t kTmaBoxMaxRows = 256;
/// One wgmma / tcgen05.mma produces at most 256 columns.
constexpr int64_t kMmaMaxN = 256;
/// The K step of a 16-bit MMA instruction.
constexpr int64_t kMmaKStep = 16;

/// `[rows, columns]` i32 schedule arrays (items, block_info).
LogicalResult verifyI32Table(Operation *op, GlobalType type, int64_t columns,
                             StringRef what) {
  if (type.getShape().size() != 2 || type.getShape()[1] != columns ||
      !type.getElementType().isInteger(32))
    return op->emitOpError() << what << " must be an [N, " << columns
                             << "] i32 array, got " << type;
  return success();
}

/// The threads of the kernel around `op` (0 when it is not inside one).
int64_t kernelThreads(Operation *op) {
  auto kernel = op->getParentOfType<KernelOp>();
  return kernel ? static_cast<int64_t>(kernel.getThreads()) : 0;
}

/// A packed [T, H, D] buffer with static D; H is static or a runtime value
/// (one kernel for every head count).
bool isPackedTensor(GlobalType type) {
  ArrayRef<int64_t> shape = type.getShape();
  return shape.size() == 3 && !ShapedType::isDynamic(shape[2]);
}

/// A head count as a diagnostic prints it ("?" when it is a runtime value).
std::string headsString(int64_t heads) {
  return ShapedType::isDynamic(heads) ? "?" : std::to_string(heads);
}

/// The `heads` operand of an op that indexes the packed [T, H, D] tensor
/// `type` is there exactly when H is a runtime value: with a static H the
/// lowering uses the constant, with a runtime one it has nothing else.
LogicalResult verifyHeadsOperand(Operation *op, GlobalType type, Value heads,
                                 StringRef what) {
  bool runtimeHeads = ShapedType::isDynamic(type.getShape()[1]);
  if (runtimeHeads && !heads)
    return op->emitOpError()
           << what << " has a runtime head count (" << type
           << "): give it as the `heads` operand";
  if (!runtimeHeads && heads)
    return op->emitOpError() << what << " has a static head count (" << type
                             << "): the `heads` operand is for runtime ones";
  return success();
}

/// A tile op's `debug_scores` buffer: f32 [T, H, block_n] with q's H.
LogicalResult verifyDebugScores(Operation *op, Value scores, GlobalType q,
                                int64_t blockN) {
  if (!scores)
    return success();
  auto t = cast<GlobalType>(scores.getType());
  if (t.getShape().size() != 3 || !t.getElementType().isF32() ||
      t.getShape()[1] != q.getShape()[1] || t.getShape()[2] != blockN)
    return op->emitOpError()
           << "debug_scores must be an f32 [T, H, block_n] tensor with q's "
           << headsString(q.getShape()[1]) << " heads and " << blockN
           << " columns, got " << t;
  return success();
}

/// The `heads(Hq, Hkv)` operands of a per-item tile op: both or none, and
/// there exactly when q's H is a runtime value.
LogicalResult verifyTileHeads(Operation *op, GlobalType q, Value qHeads,
                              Value kvHeads) {
  if (static_cast<bool>(qHeads) != static_cast<bool>(kvHeads))
    return op->emitOpError() << "heads(Hq, Hkv) takes both head counts";
  return verifyHeadsOperand(op, q, qHeads, "q");
}

/// Ops that need every thread of a warpgroup: they work on warpgroup-wide
/// fragments, synchronize warpgroups, split a block over 128 threads, or
/// move a warpgroup's 128 lanes of tensor memory (tcgen05.ld/st are
/// warp-collective, each warp its 32 lanes). Flamia_WarpgroupWide marks them.
bool isWarpgroupWide(Operation *op) {
  return op->hasTrait<::flamia::OpTrait::WarpgroupWide>();
}

} // namespace

// See FlamiaVerify.h.
LogicalResult flamia::verifyStage(Operation *op, Value stage,
                                  int64_t stages, StringRef what) {
  APInt value;
  if (matchPattern(stage, m_ConstantInt(&value)) &&
      (value.isNegative() || value.getSExtValue() >= stages))
    return op->emitOpError() << "stage " << value.getSExtValue()
                             << " is out of range: " << what << " has "
                             << stages << " stage(s)";
  if (auto acquire = stage.getDefiningOp<PipelineAcquireOp>()) {
    int64_t from = acquire.getPipeline().getType().getStages();
    if (from != stages)
      return op->emitOpError() << "the stage comes from a pipeline of " << from
                               << " stage(s) but " << what << " has "
                               << stages;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// flamia.kernel
//===----------------------------------------------------------------------===//

ParseResult KernelOp::parse(OpAsmParser &parser, OperationState &result) {
  auto buildFuncType = [](Builder &builder, ArrayRef<Type> argTypes,
                          ArrayRef<Type> results,
                          function_interface_impl::VariadicFlag,
                          std::string &) {
    return builder.getFunctionType(argTypes, results);
  };
  llvm::SMLoc loc = parser.getCurrentLocation();
  if (failed(function_interface_impl::parseFunctionOp(
          parser, result, /*allowVariadic=*/false,
          getFunctionTypeAttrName(result.name), buildFuncType,
          getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name))))
    return failure();
  // `launch = "persistent"` (the spelling before LaunchKind) still reads; any
  // other string is an error that names the choices.
  StringAttr launchName = getLaunchAttrName(result.name);
  if (auto str = dyn_cast_or_null<StringAttr>(result.attributes.get(launchName))) {
    std::optional<LaunchKind> kind = symbolizeLaunchKind(str.getValue());
    if (!kind)
      return parser.emitError(loc)
             << "'flamia.kernel' op launch must be #flamia.launch<persistent> "
                "or #flamia.launch<grid>, got \""
             << str.getValue() << "\"";
    result.attributes.set(launchName,
                          LaunchKindAttr::get(parser.getContext(), *kind));
  }
  return success();
}

void KernelOp::print(OpAsmPrinter &p) {
  function_interface_impl::printFunctionOp(
      p, *this, /*isVariadic=*/false, getFunctionTypeAttrName(),
      getArgAttrsAttrName(), getResAttrsAttrName());
}

LogicalResult KernelOp::verify() {
  if (!getFunctionType().getResults().empty())
    return emitOpError() << "a kernel returns nothing; it writes its outputs "
                            "to global parameters";
  // I64Attr getters are unsigned: read the attributes as signed values.
  int64_t threads = getThreadsAttr().getInt();
  if (threads <= 0 || threads % 128 != 0 || threads > 1024)
    return emitOpError() << "threads must be whole warpgroups (a multiple of "
                            "128) up to 1024, got "
                         << threads;
  // The body's arguments match the parameters: FunctionOpInterface checks
  // it, and the region holds exactly one block (SizedRegion<1>).
  // Roles cover disjoint warpgroups inside the CTA.
  SmallVector<std::pair<int64_t, int64_t>> taken;
  int64_t registers = 0;
  for (auto role : getBody().front().getOps<RoleOp>()) {
    int64_t first = role.getFirstWarpgroupAttr().getInt();
    int64_t end = role.getEndWarpgroupAttr().getInt();
    if (end > getNumWarpgroups())
      return role.emitOpError() << "warpgroups [" << first << ", " << end
                                << ") exceed the kernel's "
                                << getNumWarpgroups() << " warpgroups";
    for (auto [f, e] : taken)
      if (first < e && f < end)
        return role.emitOpError() << "warpgroups [" << first << ", " << end
                                  << ") overlap another role's [" << f << ", "
                                  << e << ")";
    taken.push_back({first, end});
    registers += role.getRegistersAttr().getInt() * 128 * (end - first);
  }
  if (registers > kRegisterFileSize)
    return emitOpError() << "the roles ask for " << registers
                         << " registers (registers x 128 threads per "
                            "warpgroup), more than the "
                         << kRegisterFileSize << " of a multiprocessor";
  return success();
}

//===----------------------------------------------------------------------===//
// Roles, pipelines, queue
//===----------------------------------------------------------------------===//

LogicalResult RoleOp::verify() {
  int64_t first = getFirstWarpgroupAttr().getInt();
  int64_t end = getEndWarpgroupAttr().getInt();
  if (first < 0)
    return emitOpError() << "the first warpgroup must be 0 or more, got "
                         << first;
  if (end <= first)
    return emitOpError() << "warpgroup range [" << first << ", " << end
                         << ") is empty";
  int64_t regs = getRegistersAttr().getInt();
  if (regs < 24 || regs > 256 || regs % 8 != 0)
    return emitOpError() << "registers must be a multiple of 8 in [24, 256] "
                            "(setmaxnreg), got "
                         << regs;
  if (getSingleThread()) {
    if (end - first != 1)
      return emitOpError() << "a single_thread role runs on one thread of one "
                              "warpgroup, got warpgroups ["
                           << first << ", " << end << ")";
    WalkResult walk = getBody().walk([&](Operation *op) {
      if (!isWarpgroupWide(op))
        return WalkResult::advance();
      op->emitOpError() << "needs every thread of a warpgroup but is in the "
                           "single_thread role \""
                        << getRoleName() << "\"";
      return WalkResult::interrupt();
    });
    if (walk.wasInterrupted())
      return failure();
  }
  return success();
}

LogicalResult TurnOp::verify() {
  if (getWarpgroups() < 2 || getWarpgroups() > 7)
    return emitOpError() << "turns are taken among 2 to 7 warpgroups (one "
                            "named barrier each), got "
                         << getWarpgroupsAttr().getInt();
  auto role = (*this)->getParentOfType<RoleOp>();
  if (!role)
    return emitOpError() << "takes turns among the warpgroups of a "
                            "flamia.role but is not inside one";
  int64_t roleWarpgroups =
      role.getEndWarpgroupAttr().getInt() - role.getFirstWarpgroupAttr().getInt();
  if (static_cast<int64_t>(getWarpgroups()) != roleWarpgroups)
    return emitOpError() << "is taken among " << getWarpgroups()
                         << " warpgroups but role \"" << role.getRoleName()
                         << "\" has " << roleWarpgroups;
  return success();
}

LogicalResult PipelineCreateOp::verify() {
  int64_t consumers = getConsumersAttr().getInt();
  if (consumers < 1 || consumers > kMbarrierCountLimit)
    return emitOpError() << "consumers must be in [1, " << kMbarrierCountLimit
                         << "] (an mbarrier's arrival count), got "
                         << consumers;
  int64_t threads = kernelThreads(*this);
  if (threads && consumers > threads)
    return emitOpError() << consumers << " consumers exceed the kernel's "
                         << threads << " threads";
  int64_t producers = getProducersAttr().getInt();
  if (producers < 1 || producers > kMbarrierCountLimit)
    return emitOpError() << "producers must be in [1, " << kMbarrierCountLimit
                         << "] (an mbarrier's arrival count), got "
                         << producers;
  if (threads && producers > threads)
    return emitOpError() << producers << " producers exceed the kernel's "
                         << threads << " threads";
  return success();
}

LogicalResult PipelineExpectOp::verify() {
  int64_t bytes = getBytesAttr().getInt();
  if (bytes < 1 || bytes > kMbarrierCountLimit)
    return emitOpError() << "bytes must be in [1, " << kMbarrierCountLimit
                         << "] (an mbarrier's transaction count), got "
                         << bytes;
  return verifyStage(*this, getStage(), getPipeline().getType().getStages(),
                     "the pipeline");
}

LogicalResult PipelineReleaseOp::verify() {
  return verifyStage(*this, getStage(), getPipeline().getType().getStages(),
                     "the pipeline");
}

LogicalResult QueueCreateOp::verify() {
  GlobalType counter = getCounter().getType();
  if (counter.getShape() != ArrayRef<int64_t>{1} ||
      !counter.getElementType().isInteger(32))
    return emitOpError() << "the counter must be a one-element i32 buffer "
                            "(!flamia.global<1xi32>), got "
                         << counter;
  int64_t receivers = getReceiversAttr().getInt();
  int64_t threads = kernelThreads(*this);
  if (receivers < 0 || (threads && receivers > threads))
    return emitOpError() << "receivers must be in [0, " << threads
                         << "] (the kernel's threads), got " << receivers;
  auto kernel = (*this)->getParentOfType<KernelOp>();
  if (kernel && kernel.getLaunch() != LaunchKind::persistent)
    return emitOpError() << "a work queue belongs to a persistent kernel, but "
                            "the kernel's launch is \""
                         << stringifyLaunchKind(kernel.getLaunch()) << "\"";
  return success();
}

LogicalResult ItemLoadOp::verify() {
  return verifyI32Table(*this, getItems().getType(), 8, "the item array");
}

LogicalResult BlockInfoLoadOp::verify() {
  return verifyI32Table(*this, getBlockInfo().getType(), 2,
                        "the block list");
}

LogicalResult TmaLoadOp::verify() {
  GlobalType src = getSource().getType();
  SmemType dst = getDest().getType();
  if (src.getElementType() != dst.getElementType())
    return emitOpError() << "element types differ: source "
                         << src.getElementType() << ", destination "
                         << dst.getElementType();
  if (!isPackedTensor(src))
    return emitOpError() << "the source must be a packed [T, H, D] tensor "
                            "with static D";
  // With a runtime H, a row is known to hold at least one head's D.
  int64_t rowElems = ShapedType::isDynamic(src.getShape()[1])
                         ? src.getShape()[2]
                         : src.getShape()[1] * src.getShape()[2];
  if (dst.getCols() > rowElems)
    return emitOpError() << "tile columns " << dst.getCols()
                         << " exceed a row of the source (H * D = "
                         << rowElems << ")";
  if (dst.getRows() > kTmaBoxMaxRows)
    return emitOpError() << "tile rows " << dst.getRows()
                         << " exceed a TMA box (" << kTmaBoxMaxRows
                         << " rows)";
  int64_t pipelineStages = getPipeline().getType().getStages();
  if (dst.getStages() != pipelineStages)
    return emitOpError() << "the destination has " << dst.getStages()
                         << " stage(s) but its pipeline has "
                         << pipelineStages;
  return verifyStage(*this, getStage(), dst.getStages(), "the destination");
}

//===----------------------------------------------------------------------===//
// Fragment ops
//===----------------------------------------------------------------------===//

LogicalResult WarpgroupMmaOp::verify() {
  FragmentType result = getResult().getType();
  SmemType b = getB().getType();
  int64_t m = result.getRows(), n = result.getCols();
  int64_t bN = getBTransposed() ? b.getCols() : b.getRows();
  int64_t bK = getBTransposed() ? b.getRows() : b.getCols();
  if (bN != n)
    return emitOpError() << "B provides N = " << bN << " but the result has "
                         << n << " columns";
  if (n > kMmaMaxN)
    return emitOpError() << "N = " << n << " exceeds the " << kMmaMaxN
                         << " columns of one MMA";
  if (failed(verifyStage(*this, getBStage(), b.getStages(), "B")))
    return failure();
  int64_t aK;
  if (auto aSmem = dyn_cast<SmemType>(getA().getType())) {
    if (!getAStage())
      return emitOpError() << "a shared-memory A operand needs a stage";
    if (aSmem.getElementType() != b.getElementType())
      return emitOpError() << "A and B element types differ";
    if (aSmem.getRows() % m != 0)
      return emitOpError() << "A tiles of " << aSmem.getRows()
                           << " rows do not split into warpgroup rows of " << m;
    // Warpgroup w of the role reads rows [m * w, m * (w + 1)).
    if (auto role = (*this)->getParentOfType<RoleOp>()) {
      int64_t warpgroups = role.getEndWarpgroupAttr().getInt() -
                           role.getFirstWarpgroupAttr().getInt();
      if (warpgroups * m > aSmem.getRows())
        return emitOpError()
               << "the " << warpgroups << " warpgroups of role \""
               << role.getRoleName() << "\" read rows [0, " << warpgroups * m
               << ") of A tiles of " << aSmem.getRows() << " rows";
    }
    if (failed(verifyStage(*this, getAStage(), aSmem.getStages(), "A")))
      return failure();
    aK = aSmem.getCols();
  } else {
    auto aFrag = cast<FragmentType>(getA().getType());
    if (getAStage())
      return emitOpError() << "a fragment A operand takes no stage";
    if (aFrag.getRows() != m)
      return emitOpError() << "A has " << aFrag.getRows()
                           << " rows but the result " << m;
    if (!aFrag.getElementType().isBF16())
      return emitOpError() << "a fragment A operand is bf16 (the MMA's "
                              "A-operand layout), got "
                           << aFrag.getElementType();
    if (aFrag.getElementType() != b.getElementType())
      return emitOpError() << "A fragment element type "
                           << aFrag.getElementType() << " differs from B's "
                           << b.getElementType();
    aK = aFrag.getCols();
  }
  if (aK != bK)
    return emitOpError() << "contraction mismatch: A has K = " << aK
                         << ", B has K = " << bK;
  if (aK % kMmaKStep != 0)
    return emitOpError() << "K = " << aK << " is not a multiple of "
                         << kMmaKStep << " (the MMA's K step)";
  if (getAcc() && getAcc().getType() != result)
    return emitOpError() << "the accumulator must have the result type";
  if (!result.getElementType().isF32())
    return emitOpError() << "the accumulator is f32";
  if (getAsync()) {
    // A pending fragment's registers are still being written: nothing but
    // the wait may read them.
    for (Operation *user : getResult().getUsers())
      if (!isa<WarpgroupWaitOp>(user))
        return emitOpError()
               << "the result of an async MMA is pending: only flamia.wg.wait "
                  "may use it, not '"
               << user->getName() << "'";
  }
  return success();
}

LogicalResult SmemZeroRowsOp::verify() {
  SmemType tile = getTile().getType();
  int64_t rowBytes = tile.getRowBytes();
  if (rowBytes % 128 != 0 && rowBytes != 64)
    return emitOpError() << "zeroes rows of a multiple of 128 bytes (whole "
                            "swizzle atoms) or of 64 bytes (one atom), got "
                         << rowBytes << "-byte rows";
  if (!(*this)->getParentOfType<RoleOp>())
    return emitOpError() << "is executed by the threads of a flamia.role "
                            "(it ends with the role's barrier)";
  APInt from, to;
  bool constFrom = matchPattern(getFrom(), m_ConstantInt(&from));
  if (constFrom &&
      (from.getSExtValue() < 0 || from.getSExtValue() > tile.getRows()))
    return emitOpError() << "from = " << from.getSExtValue()
                         << " is outside [0, " << tile.getRows() << "]";
  if (getTo() && matchPattern(getTo(), m_ConstantInt(&to))) {
    if (to.getSExtValue() < 0 || to.getSExtValue() > tile.getRows())
      return emitOpError() << "to = " << to.getSExtValue()
                           << " is outside [0, " << tile.getRows() << "]";
    if (constFrom && to.getSExtValue() < from.getSExtValue())
      return emitOpError() << "to = " << to.getSExtValue()
                           << " is before from = " << from.getSExtValue();
  }
  return verifyStage(*this, getStage(), tile.getStages(), "the tile");
}

LogicalResult WarpgroupWaitOp::verify() {
  if (getFragments().empty())
    return emitOpError() << "waits for at least one fragment";
  // The generated getter is unsigned: read the attribute as signed.
  int64_t pending = getPendingAttr().getInt();
  if (pending < 0)
    return emitOpError() << "pending must be >= 0, got " << pending;
  for (auto [i, fragment] : llvm::enumerate(getFragments())) {
    auto mma = fragment.getDefiningOp<WarpgroupMmaOp>();
    if (!mma || !mma.getAsync())
      return emitOpError() << "operand #" << i
                           << " is not the result of an async flamia.wg.mma";
    if (mma->getBlock() != (*this)->getBlock() ||
        !mma->isBeforeInBlock(*this))
      return emitOpError() << "operand #" << i
                           << " must come from an async MMA earlier in the "
                              "same block";
    // Groups complete in issue order: the MMA is done once `pending` or
    // more asynchronous MMAs were issued after it.
    int64_t later = 0;
    for (Operation *op = mma->getNextNode(); op != getOperation();
         op = op->getNextNode())
      if (auto other = dyn_cast<WarpgroupMmaOp>(op); other && other.getAsync())
        ++later;
    if (later < pending)
      return emitOpError() << "operand #" << i << " may still be running: "
                           << later << " async MMA(s) were issued after it, "
                           << "but pending " << pending << " lets the last "
                           << pending << " run on";
  }
  return success();
}

LogicalResult FragMaskOp::verify() {
  if (!getScores().getType().getElementType().isF32())
    return emitOpError() << "masks f32 scores, got " << getScores().getType();
  return success();
}

LogicalResult SoftmaxUpdateOp::verify() {
  FragmentType scores = getScores().getType();
  if (!scores.getElementType().isF32())
    return emitOpError() << "the scores must be f32, got " << scores;
  if (getMax().getType().getRows() != scores.getRows())
    return emitOpError() << "the per-row values have "
                         << getMax().getType().getRows()
                         << " rows but the scores " << scores.getRows();
  // P x 2^k stays finite and its sum exact to scale back: k in [0, 64].
  if (getPScale() < 0 || getPScale() > 64)
    return emitOpError() << "p_scale must be in [0, 64], got " << getPScale();
  return success();
}

LogicalResult FragScaleRowsOp::verify() {
  FragmentType frag = getFrag().getType();
  if (!frag.getElementType().isF32())
    return emitOpError() << "scales an f32 fragment, got " << frag;
  if (getFactors().getType().getRows() != frag.getRows())
    return emitOpError() << "the factors have "
                         << getFactors().getType().getRows()
                         << " rows but the fragment " << frag.getRows();
  return success();
}

LogicalResult AttnStoreOp::verify() {
  FragmentType acc = getAcc().getType();
  if (!acc.getElementType().isF32())
    return emitOpError() << "the accumulator must be f32, got " << acc;
  if (getMax().getType().getRows() != acc.getRows())
    return emitOpError() << "the per-row values have "
                         << getMax().getType().getRows()
                         << " rows but the accumulator " << acc.getRows();
  GlobalType o = getO().getType();
  if (!isPackedTensor(o) || !o.getElementType().isBF16())
    return emitOpError() << "O must be a bf16 [T, H, D] tensor with static "
                            "D, got "
                         << o;
  if (failed(verifyHeadsOperand(*this, o, getHeads(), "O")))
    return failure();
  if (o.getShape()[2] != acc.getCols())
    return emitOpError() << "the accumulator has " << acc.getCols()
                         << " columns but O's head dim is " << o.getShape()[2];
  GlobalType lse = getLse().getType();
  if (lse.getShape().size() != 2 || !lse.getElementType().isF32() ||
      lse.getShape()[0] != o.getShape()[1])
    return emitOpError() << "LSE must be an f32 [H, T] tensor with O's "
                         << headsString(o.getShape()[1]) << " heads, got "
                         << lse;
  return success();
}

LogicalResult FragQuantizeOp::verify() {
  FragmentType in = getP().getType(), out = getResult().getType();
  bool toE4M3 = isa<Float8E4M3FNType>(out.getElementType());
  if (in.getShape() != out.getShape() ||
      !(out.getElementType().isBF16() || toE4M3) ||
      !in.getElementType().isF32())
    return emitOpError() << "rounds an f32 fragment into a bf16 or f8E4M3FN "
                            "fragment of the same shape";
  if (toE4M3) {
    if (getPrecision().getElementType() != out.getElementType())
      return emitOpError() << "an " << out.getElementType()
                           << " result needs P's precision to be "
                           << out.getElementType() << ", got "
                           << getPrecision();
    if (matchPattern(getQuantized(), m_Zero()))
      return emitOpError() << "an " << out.getElementType()
                           << " result holds quantized P: `quantized` must "
                              "be true";
  }
  if (toE4M3 && getNanViaRowSum())
    return emitOpError() << "`nan_via_row_sum` chooses how E4M3 codes become "
                            "bf16: it needs a bf16 result, got "
                         << out.getElementType();
  if (!getPrecision().getFixedScale())
    return emitOpError() << "P is quantized with a fixed scale (P <= 1), got "
                         << getPrecision();
  // A P that comes straight from the online softmax carries its factor:
  // `prescaled` must say so, with the same exponent.
  if (auto softmax = getP().getDefiningOp<SoftmaxUpdateOp>()) {
    int64_t k = softmax.getPScale(), fixed = *getPrecision().getFixedScale();
    if (getPrescaled() ? k != fixed : k != 0)
      return emitOpError()
             << "P comes from flamia.softmax.update with p_scale " << k
             << ": `prescaled` needs p_scale = fixed_scale (" << fixed
             << "), and without it p_scale must be 0";
  } else if (getPrescaled() &&
             getP().getDefiningOp<SoftmaxGradOp>()) {
    return emitOpError() << "`prescaled` P from flamia.softmax.grad, which "
                            "returns P unscaled";
  }
  return success();
}

LogicalResult PrefetchRowsOp::verify() {
  GlobalType src = getSource().getType();
  if (!isPackedTensor(src))
    return emitOpError() << "the source must be a [T, H, D] tensor with "
                            "static D, got "
                         << src;
  int64_t rowBytes =
      src.getShape()[2] * (src.getElementType().getIntOrFloatBitWidth() / 8);
  if (rowBytes == 0 || rowBytes % 16 != 0)
    return emitOpError() << "a row of " << src << " is " << rowBytes
                         << " bytes; the bulk prefetch needs a positive "
                            "multiple of 16";
  return verifyHeadsOperand(*this, src, getHeads(), "the source");
}

LogicalResult QuantizeBlockOp::verify() {
  // A copy is its scales, with or without its payload (sm_90a's kernels
  // read only the dequantized copies).
  if (getPerTokenData() && !getPerTokenScales())
    return emitOpError() << "a per-token payload needs its scales";
  if (getTokenBlockData() && !getTokenBlockScales())
    return emitOpError() << "a token-block payload needs its scales";
  if (!getPerTokenScales() && !getTokenBlockScales())
    return emitOpError() << "writes no copy: give per_token(...) or "
                            "per_token_scales(...) and/or token_block(...) or "
                            "token_block_scales(...)";
  if (getPerTokenDequant() && !getPerTokenScales())
    return emitOpError() << "a per-token dequantized copy needs the per-token "
                            "quantization";
  if (getTokenBlockDequant() && !getTokenBlockScales())
    return emitOpError() << "a token-block dequantized copy needs the "
                            "token-block quantization";
  GlobalType src = getSource().getType();
  if (!isPackedTensor(src) || !src.getElementType().isBF16() ||
      src.getShape()[2] % 32 != 0)
    return emitOpError() << "the source must be a bf16 [T, H, D] tensor with "
                            "static D a multiple of 32, got "
                         << src;
  if (failed(verifyHeadsOperand(*this, src, getHeads(), "the source")))
    return failure();
  int64_t heads = src.getShape()[1], d = src.getShape()[2];
  // Every output: [rows, H, cols] of the given element type.
  auto isE4M3 = [](Type t) { return isa<Float8E4M3FNType>(t); };
  auto isE8M0 = [](Type t) { return isa<Float8E8M0FNUType>(t); };
  auto isBF16 = [](Type t) { return t.isBF16(); };
  auto check = [&](Value v, StringRef what, int64_t cols,
                   function_ref<bool(Type)> isElement,
                   StringRef element) -> LogicalResult {
    if (!v)
      return success();
    auto type = cast<GlobalType>(v.getType());
    ArrayRef<int64_t> shape = type.getShape();
    if (shape.size() != 3 || shape[1] != heads || shape[2] != cols ||
        !isElement(type.getElementType()))
      return emitOpError() << what << " must be [N, " << headsString(heads)
                           << ", " << cols
                           << "] of " << element << ", got " << type;
    return success();
  };
  // The per-token copy is MXFP8 (E4M3, E8M0 per 32 channels) or NVFP4
  // (E2M1, unsigned E4M3 per 16 channels), as its payload's type says.
  auto isE2M1 = [](Type t) { return isa<Float4E2M1FNType>(t); };
  // Without a payload, the scales' type says: E4M3 (unsigned) is NVFP4's.
  bool nvfp4 = false;
  if (Value data = getPerTokenData())
    nvfp4 = isE2M1(cast<GlobalType>(data.getType()).getElementType());
  else if (Value scales = getPerTokenScales())
    nvfp4 = isE4M3(cast<GlobalType>(scales.getType()).getElementType());
  if (failed(check(getPerTokenData(), "the per-token payload", d,
                   nvfp4 ? isE2M1 : isE4M3, nvfp4 ? "f4E2M1FN" : "f8E4M3FN")) ||
      failed(check(getPerTokenScales(), "the per-token scales",
                   nvfp4 ? d / 16 : d / 32, nvfp4 ? isE4M3 : isE8M0,
                   nvfp4 ? "f8E4M3FN (unsigned E4M3, NVFP4)" : "f8E8M0FNU")) ||
      failed(check(getPerTokenDequant(), "the per-token dequantized copy", d,
                   isBF16, "bf16")) ||
      failed(check(getTokenBlockData(), "the token-block payload", d, isE4M3,
                   "f8E4M3FN")) ||
      failed(check(getTokenBlockScales(), "the token-block scales", d / 32,
                   isE8M0, "f8E8M0FNU")) ||
      failed(check(getTokenBlockDequant(), "the token-block dequantized copy",
                   d, isBF16, "bf16")))
    return failure();
  if (getPerTokenTiles() && !getPerTokenScales())
    return emitOpError() << "per-token scale tiles need the per-token "
                            "quantization";
  if (getTokenBlockTiles() && !getTokenBlockScales())
    return emitOpError() << "token-block scale tiles need the token-block "
                            "quantization";
  if (getTokenBlockTransposedTiles() && !getTokenBlockTiles())
    return emitOpError() << "transposed scale tiles are the token-block "
                            "tiles' second orientation: they need "
                            "token_block_tiles";
  if (getTokenBlockTiles() != Value() && !getTokenBlockTileRows())
    return emitOpError() << "token-block scale tiles need "
                            "token_block_tile_rows = \"tokens\" or "
                            "\"channels\"";
  if (auto rows = getTokenBlockTileRows()) {
    if (!getTokenBlockTiles())
      return emitOpError() << "token_block_tile_rows without token-block "
                              "scale tiles";
    if (*rows != "tokens" && *rows != "channels")
      return emitOpError() << "token_block_tile_rows must be \"tokens\" or "
                              "\"channels\", got \"" << *rows << "\"";
  }
  // A 512-byte tile holds 128 rows x 4 K-blocks: 4 channel blocks per
  // token ("tokens") or 128 channel rows ("channels").
  if ((getPerTokenTiles() || getTokenBlockTiles()) && d > 128)
    return emitOpError() << "scale tiles hold at most 128 channels (4 "
                            "32-channel K-blocks, or 128 channel rows), the "
                            "source has D = "
                         << d;
  // NVFP4 (kind::mxf4nvf4, scale_vec::4X): one scale per 16 channels, so a
  // slot holds a tile per 64 channels (the same 128x4 layout).
  for (Value tiles : {getPerTokenTiles(), getTokenBlockTiles(),
                      getTokenBlockTransposedTiles()}) {
    if (!tiles)
      continue;
    const int64_t bytes =
        tiles == getPerTokenTiles() && nvfp4 ? 512 * ((d + 63) / 64) : 512;
    auto type = cast<GlobalType>(tiles.getType());
    ArrayRef<int64_t> shape = type.getShape();
    if (shape.size() != 3 || !type.getElementType().isInteger(8) ||
        shape[2] != bytes || shape[1] != heads)
      return emitOpError() << "scale tiles are [NB, H, " << bytes
                           << "] i8 with H = " << headsString(heads)
                           << " (the source's heads)"
                           << (bytes > 512 ? ", a 512-byte tile per 64 "
                                             "channels of NVFP4"
                                           : "")
                           << ", got " << type;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Per-item and host ops
//===----------------------------------------------------------------------===//

LogicalResult AttentionTileOp::verify() {
  if (getQ().empty() || getK().empty() || getV().empty())
    return emitOpError() << "needs the q, k and v operands";
  if (getRecipe().hasSafeBlock() && getSafe().size() != 3)
    return emitOpError() << "the recipe has safe_block = "
                         << getRecipe().getSafeBlock()
                         << ": give the bf16 q, k, v in safe(...)";
  if (!getRecipe().hasSafeBlock() && !getSafe().empty())
    return emitOpError() << "the recipe has no safe block but safe(...) has "
                         << getSafe().size() << " operand(s)";
  if (!getP().getFixedScale())
    return emitOpError() << "P is quantized with a fixed scale (P <= 1), got "
                         << getP();
  if (failed(verifyI32Table(*this, getItems().getType(), 8, "the item array")))
    return failure();
  auto q = cast<GlobalType>(getQ().front().getType());
  GlobalType o = getO().getType(), lse = getLse().getType();
  if (!isPackedTensor(q) || !isPackedTensor(o) ||
      o.getShape()[1] != q.getShape()[1] || o.getShape()[2] != q.getShape()[2])
    return emitOpError() << "q and o must be [T, H, D] tensors of the same H "
                            "and D, got "
                         << q << " and " << o;
  if (lse.getShape().size() != 2 || !lse.getElementType().isF32() ||
      lse.getShape()[0] != o.getShape()[1])
    return emitOpError() << "LSE must be an f32 [H, T] tensor with O's "
                         << headsString(o.getShape()[1]) << " heads, got "
                         << lse;
  if (failed(verifyTileHeads(*this, q, getQHeads(), getKvHeads())) ||
      failed(verifyDebugScores(*this, getDebugScores(), q, getBlockN())))
    return failure();
  if (getBlockM() <= 0 || getBlockN() <= 0 || getBlockM() % 64 != 0 ||
      getBlockN() % 64 != 0)
    return emitOpError() << "tile sizes must be positive multiples of 64, got "
                         << getBlockM() << " x " << getBlockN();
  if (getRoundQ()) {
    if (getRecipe().getKind() != RecipeKind::mxfp8)
      return emitOpError() << "round_q rounds Q to per-token MXFP8; recipe "
                           << getRecipe() << " quantizes Q otherwise";
    if (getQ().size() != 1 || !q.getElementType().isBF16())
      return emitOpError() << "round_q takes Q as one bf16 tensor (the "
                              "original), got "
                           << getQ().size() << " operand(s) of type " << q;
    if (q.getShape()[2] % 32 != 0)
      return emitOpError() << "round_q needs a head dim that is a multiple "
                              "of 32 (one scale per 32 channels), got "
                           << q.getShape()[2];
    if (!getSafe().empty() && getSafe()[0] != getQ()[0])
      return emitOpError() << "with round_q, q and the safe block's q are "
                              "the same bf16 original";
  }
  return success();
}

LogicalResult SmemMxRoundOp::verify() {
  SmemType source = getSource().getType(), dest = getDest().getType();
  if (!source.getElementType().isBF16() || !dest.getElementType().isBF16())
    return emitOpError() << "rounds a bf16 tile into a bf16 tile, got "
                         << source << " and " << dest;
  if (source.getRows() != dest.getRows() || source.getCols() != dest.getCols())
    return emitOpError() << "source and dest tiles must have the same rows "
                            "and columns, got "
                         << source << " and " << dest;
  if (source.getCols() % 64 != 0 || source.getRows() % 64 != 0)
    return emitOpError() << "rounds 64-row slices of tiles of whole 128-byte "
                            "swizzle atoms (a multiple of 64 bf16 columns), "
                            "got "
                         << source;
  APInt row;
  if (matchPattern(getRow(), m_ConstantInt(&row)) &&
      (row.getSExtValue() < 0 || row.getSExtValue() % 64 != 0 ||
       row.getSExtValue() >= source.getRows()))
    return emitOpError() << "row = " << row.getSExtValue()
                         << " is not a multiple of 64 below "
                         << source.getRows();
  if (!(*this)->getParentOfType<RoleOp>())
    return emitOpError() << "is executed by the warpgroups of a flamia.role "
                            "(it ends with the warpgroup's barrier)";
  if (failed(verifyStage(*this, getSourceStage(), source.getStages(),
                         "the source tile")))
    return failure();
  return verifyStage(*this, getDestStage(), dest.getStages(), "the dest tile");
}

LogicalResult WorkspaceOp::verify() {
  if (getDims().size() != getBuffer().getType().getShape().size())
    return emitOpError() << "dims has " << getDims().size()
                         << " expressions for a rank-"
                         << getBuffer().getType().getShape().size() << " buffer";
  if (getKind() == WorkspaceKind::schedule && getBufferName() != "items" &&
      getBufferName() != "kv_items" && getBufferName() != "block_info" &&
      getBufferName() != "counter")
    return emitOpError() << "schedule buffers are items, kv_items, "
                            "block_info and counter, got \""
                         << getBufferName() << "\"";
  return success();
}

LogicalResult RuntimeValueOp::verify() {
  StringRef name = getValueName();
  bool isFloat = name == "softmax_scale" || name == "softmax_scale_log2";
  bool isInt = llvm::is_contained(
      {"T", "Hq", "Hkv", "D", "NUM_DOCS", "NB", "NUM_ITEMS", "NUM_KV_ITEMS",
       "NUM_SMS"},
      name);
  if (!isFloat && !isInt)
    return emitOpError() << "unknown runtime value \"" << name << "\"";
  if (isFloat != getValue().getType().isF32())
    return emitOpError() << "\"" << name << "\" is "
                         << (isFloat ? "an f32" : "an i32");
  return success();
}

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbols) {
  if (getGrid().size() != 3)
    return emitOpError() << "grid takes 3 expressions, got "
                         << getGrid().size();
  // A lowered kernel lives in a gpu.module (or, serialized, a gpu.binary).
  if (!getKernelAttr().getNestedReferences().empty()) {
    Operation *root = symbols.lookupNearestSymbolFrom(
        *this, getKernelAttr().getRootReference());
    if (!root || !(root->getName().getStringRef() == "gpu.module" ||
                   root->getName().getStringRef() == "gpu.binary"))
      return emitOpError() << "'" << getKernel()
                           << "' does not name a kernel in a gpu.module or "
                              "gpu.binary";
    return success();
  }
  auto kernel = symbols.lookupNearestSymbolFrom<KernelOp>(
      *this, getKernelAttr().getRootReference());
  if (!kernel)
    return emitOpError() << "'" << getKernel()
                         << "' does not name a flamia.kernel";
  ArrayRef<Type> params = kernel.getArgumentTypes();
  if (params.size() != getArgs().size())
    return emitOpError() << "'" << getKernel() << "' takes " << params.size()
                         << " parameters, got " << getArgs().size();
  for (auto [i, pair] : llvm::enumerate(llvm::zip(params, getArgs())))
    if (std::get<0>(pair) != std::get<1>(pair).getType())
      return emitOpError() << "parameter " << i << " of '" << getKernel()
                           << "' is " << std::get<0>(pair) << ", got "
                           << std::get<1>(pair).getType();
  return success();
}

//===----------------------------------------------------------------------===//
// The backward's fragment ops and per-item ops
//===----------------------------------------------------------------------===//

/// An f32 [H, T] tensor (LSE, D) of `heads` heads.
static LogicalResult verifyHeadMajor(Operation *op, GlobalType t,
                                     int64_t heads, StringRef what) {
  if (t.getShape().size() != 2 || !t.getElementType().isF32() ||
      t.getShape()[0] != heads)
    return op->emitOpError() << what << " must be an f32 [H, T] tensor with "
                             << headsString(heads) << " heads, got " << t;
  return success();
}

LogicalResult SoftmaxGradOp::verify() {
  FragmentType scores = getScores().getType();
  if (!scores.getElementType().isF32())
    return emitOpError() << "the scores must be f32, got " << scores;
  GlobalType lse = getLse().getType();
  if (lse.getShape().size() != 2 || !lse.getElementType().isF32())
    return emitOpError() << "LSE and delta must be f32 [H, T] tensors, got "
                         << lse;
  if (getLse2() && getLse2().getType() != scores)
    return emitOpError() << "the preloaded LSE must have the scores' type "
                         << scores << ", got " << getLse2().getType();
  return success();
}

LogicalResult FragLoadLse2Op::verify() {
  FragmentType result = getResult().getType();
  if (!result.getElementType().isF32())
    return emitOpError() << "loads f32 values, got " << result;
  GlobalType lse = getLse().getType();
  if (lse.getShape().size() != 2 || !lse.getElementType().isF32())
    return emitOpError() << "LSE must be an f32 [H, T] tensor, got " << lse;
  return success();
}

LogicalResult FragBlockQuantizeOp::verify() {
  FragmentType in = getValues().getType(), out = getResult().getType();
  if (!in.getElementType().isF32() || !out.getElementType().isBF16() ||
      in.getShape() != out.getShape())
    return emitOpError() << "quantizes an f32 fragment into a bf16 one of the "
                            "same shape, got "
                         << in << " -> " << out;
  if (in.getCols() % 32 != 0)
    return emitOpError() << "blocks of 32 columns need a multiple of 32 "
                            "columns, got "
                         << in.getCols();
  return success();
}

LogicalResult GradStoreOp::verify() {
  FragmentType acc = getAcc().getType();
  if (!acc.getElementType().isF32())
    return emitOpError() << "the accumulator must be f32, got " << acc;
  GlobalType out = getOut().getType();
  if (!isPackedTensor(out) ||
      !(out.getElementType().isBF16() || out.getElementType().isF32()))
    return emitOpError() << "the gradient must be a bf16 or f32 [T, H, D] "
                            "tensor with static D, got "
                         << out;
  if (failed(verifyHeadsOperand(*this, out, getHeads(), "the gradient")))
    return failure();
  int64_t d = out.getShape()[2];
  if (!getColumns()) {
    if (d != acc.getCols())
      return emitOpError() << "the accumulator has " << acc.getCols()
                           << " columns but the gradient's head dim is " << d;
    return success();
  }
  if (acc.getCols() % 8 != 0 || acc.getCols() > d)
    return emitOpError() << "a part of the rows is a multiple of 8 columns, "
                            "at most the head dim "
                         << d << ", got " << acc.getCols();
  APInt first;
  if (matchPattern(getColumns(), m_ConstantInt(&first)) &&
      (first.getSExtValue() < 0 || first.getSExtValue() % 8 != 0 ||
       first.getSExtValue() + acc.getCols() > d))
    return emitOpError() << "columns [" << first.getSExtValue() << ", "
                         << first.getSExtValue() + acc.getCols()
                         << ") are not a part of the head dim " << d
                         << " starting at a multiple of 8";
  return success();
}

LogicalResult RowDotOp::verify() {
  GlobalType a = getA().getType(), b = getB().getType();
  if (!isPackedTensor(a) || !a.getElementType().isBF16() || a != b)
    return emitOpError() << "a and b must be bf16 [T, H, D] tensors of one "
                            "type, got "
                         << a << " and " << b;
  if (failed(verifyHeadsOperand(*this, a, getHeads(), "a")))
    return failure();
  return verifyHeadMajor(*this, getOut().getType(), a.getShape()[1], "out");
}

/// What the two per-item backward ops share: the operands, the safe block,
/// the item table, LSE and D.
template <typename OpTy>
static LogicalResult verifyBackwardTile(OpTy op, ArrayRef<ValueRange> operands) {
  for (ValueRange r : operands)
    if (r.empty())
      return op.emitOpError() << "needs the q, k, v and grad_o operands";
  RecipeAttr recipe = op.getRecipe();
  if (recipe.hasSafeBlock() && op.getSafe().size() != 4)
    return op.emitOpError() << "the recipe has safe_block = "
                            << recipe.getSafeBlock()
                            << ": give the bf16 q, k, v, grad_o in safe(...)";
  if (!recipe.hasSafeBlock() && !op.getSafe().empty())
    return op.emitOpError() << "the recipe has no safe block but safe(...) has "
                            << op.getSafe().size() << " operand(s)";
  if (failed(verifyI32Table(op, op.getItems().getType(), 8, "the item array")))
    return failure();
  auto q = cast<GlobalType>(op.getQ().front().getType());
  if (!isPackedTensor(q))
    return op.emitOpError() << "q must be a [T, H, D] tensor, got " << q;
  int64_t heads = q.getShape()[1];
  if (failed(verifyTileHeads(op, q, op.getQHeads(), op.getKvHeads())))
    return failure();
  if (failed(verifyHeadMajor(op, op.getLse().getType(), heads, "LSE")) ||
      failed(verifyHeadMajor(op, op.getDelta().getType(), heads, "delta")))
    return failure();
  if (op.getBlockM() <= 0 || op.getBlockN() <= 0 || op.getBlockM() % 64 != 0 ||
      op.getBlockN() % 64 != 0)
    return op.emitOpError() << "tile sizes must be positive multiples of 64, "
                               "got "
                            << op.getBlockM() << " x " << op.getBlockN();
  return success();
}

/// A gradient of `like`'s H and D.
static LogicalResult verifyGradient(Operation *op, GlobalType grad,
                                    GlobalType like, StringRef what) {
  if (!isPackedTensor(grad) || grad.getShape()[1] != like.getShape()[1] ||
      grad.getShape()[2] != like.getShape()[2] ||
      !(grad.getElementType().isBF16() || grad.getElementType().isF32()))
    return op->emitOpError() << what << " must be a bf16 or f32 [T, H, D] "
                                        "tensor with the H and D of "
                             << like << ", got " << grad;
  return success();
}

/// A second copy of a tensor for its other GEMM (`k_tb`, `grad_o_tb`):
/// absent, or as many operands as the first copy, the first of them a
/// packed tensor with the same heads.
static LogicalResult verifySecondCopy(Operation *op, ValueRange second,
                                      ValueRange first, StringRef secondName,
                                      StringRef firstName) {
  if (second.empty())
    return success();
  auto a = cast<GlobalType>(first.front().getType());
  auto b = cast<GlobalType>(second.front().getType());
  if (second.size() != first.size() || !isPackedTensor(b) ||
      a.getShape()[1] != b.getShape()[1])
    return op->emitOpError()
           << secondName << " must be a copy of the same tensor as "
           << firstName << " (as many operands, a [T, H, D] tensor with "
           << firstName << "'s heads), got " << second.size()
           << " operand(s) of type " << b << " for " << a;
  return success();
}

LogicalResult AttentionDqTileOp::verify() {
  if (failed(verifyBackwardTile(*this, {getQ(), getK(), getV(), getGradO()})) ||
      failed(verifySecondCopy(*this, getKTb(), getK(), "k_tb", "k")) ||
      failed(verifyDebugScores(*this, getDebugScores(),
                               cast<GlobalType>(getQ().front().getType()),
                               getBlockN())))
    return failure();
  return verifyGradient(*this, getDq().getType(),
                        cast<GlobalType>(getQ().front().getType()), "dq");
}

LogicalResult AttentionDkdvTileOp::verify() {
  if (failed(verifyBackwardTile(
          *this, {getQ(), getK(), getV(), getGradO(), getQTb()})) ||
      failed(verifySecondCopy(*this, getGradOTb(), getGradO(), "grad_o_tb",
                              "grad_o")))
    return failure();
  if (!getP().getFixedScale())
    return emitOpError() << "P is quantized with a fixed scale (P <= 1), got "
                         << getP();
  auto k = cast<GlobalType>(getK().front().getType());
  auto q = cast<GlobalType>(getQ().front().getType());
  // A runtime GQA ratio is the runtime's check (Hq % Hkv == 0).
  bool runtimeHeads = ShapedType::isDynamic(q.getShape()[1]);
  if (!isPackedTensor(k) ||
      runtimeHeads != ShapedType::isDynamic(k.getShape()[1]) ||
      (!runtimeHeads && q.getShape()[1] % k.getShape()[1] != 0))
    return emitOpError() << "k must be a [T, Hkv, D] tensor whose Hkv divides "
                            "q's heads, got "
                         << k << " for " << q;
  if (failed(verifyGradient(*this, getDk().getType(), k, "dk")) ||
      failed(verifyGradient(*this, getDv().getType(), k, "dv")))
    return failure();
  return success();
}
