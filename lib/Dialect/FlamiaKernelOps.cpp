//===- FlamiaKernelOps.cpp - flamia block-level operations ------*- C++ -*-===//
#include "flamia/Dialect/FlamiaOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"

using namespace mlir;
using namespace mlir::flamia;

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
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false,
      getFunctionTypeAttrName(result.name), buildFuncType,
      getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name));
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
  if (getThreads() <= 0 || getThreads() % 128 != 0 || getThreads() > 1024)
    return emitOpError() << "threads must be whole warpgroups (a multiple of "
                            "128) up to 1024, got "
                         << getThreads();
  if (getLaunch() != "persistent" && getLaunch() != "grid")
    return emitOpError() << "launch must be \"persistent\" or \"grid\", got \""
                         << getLaunch() << "\"";
  if (getBody().empty() || getBody().front().getNumArguments() !=
                               getFunctionType().getNumInputs())
    return emitOpError() << "the body must take the kernel parameters as "
                            "block arguments";
  // Roles cover disjoint warpgroups inside the CTA.
  SmallVector<std::pair<int64_t, int64_t>> taken;
  for (auto role : getBody().front().getOps<RoleOp>()) {
    int64_t first = role.getFirstWarpgroup(), end = role.getEndWarpgroup();
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
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Roles, pipelines, queue
//===----------------------------------------------------------------------===//

LogicalResult RoleOp::verify() {
  if (getFirstWarpgroup() < 0 || getEndWarpgroup() <= getFirstWarpgroup())
    return emitOpError() << "warpgroup range [" << getFirstWarpgroup() << ", "
                         << getEndWarpgroup() << ") is empty";
  int64_t regs = getRegisters();
  if (regs < 24 || regs > 256 || regs % 8 != 0)
    return emitOpError() << "registers must be a multiple of 8 in [24, 256] "
                            "(setmaxnreg), got "
                         << regs;
  return success();
}

LogicalResult TurnOp::verify() {
  if (getAction() != "take" && getAction() != "give")
    return emitOpError() << "action must be \"take\" or \"give\", got \""
                         << getAction() << "\"";
  if (getWarpgroups() < 2 || getWarpgroups() > 7)
    return emitOpError() << "turns are taken among 2 to 7 warpgroups (one "
                            "named barrier each), got "
                         << getWarpgroups();
  return success();
}

LogicalResult PipelineAcquireOp::verify() {
  if (getSide() != "producer" && getSide() != "consumer")
    return emitOpError() << "side must be \"producer\" or \"consumer\", got \""
                         << getSide() << "\"";
  return success();
}

LogicalResult QueueNextOp::verify() {
  if (getSide() != "fetch" && getSide() != "receive")
    return emitOpError() << "side must be \"fetch\" or \"receive\", got \""
                         << getSide() << "\"";
  return success();
}

LogicalResult TmaLoadOp::verify() {
  GlobalType src = getSource().getType();
  SmemType dst = getDest().getType();
  if (src.getElementType() != dst.getElementType())
    return emitOpError() << "element types differ: source "
                         << src.getElementType() << ", destination "
                         << dst.getElementType();
  if (src.getShape().size() != 3 || ShapedType::isDynamic(src.getShape()[1]) ||
      ShapedType::isDynamic(src.getShape()[2]))
    return emitOpError() << "the source must be a packed [T, H, D] tensor "
                            "with static H and D";
  if (dst.getCols() > src.getShape()[1] * src.getShape()[2])
    return emitOpError() << "tile columns " << dst.getCols()
                         << " exceed a row of the source (H * D = "
                         << src.getShape()[1] * src.getShape()[2] << ")";
  return success();
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
  int64_t aK;
  if (auto aSmem = dyn_cast<SmemType>(getA().getType())) {
    if (!getAStage())
      return emitOpError() << "a shared-memory A operand needs a stage";
    if (aSmem.getElementType() != b.getElementType())
      return emitOpError() << "A and B element types differ";
    if (aSmem.getRows() % m != 0)
      return emitOpError() << "A tiles of " << aSmem.getRows()
                           << " rows do not split into warpgroup rows of " << m;
    aK = aSmem.getCols();
  } else {
    auto aFrag = cast<FragmentType>(getA().getType());
    if (getAStage())
      return emitOpError() << "a fragment A operand takes no stage";
    if (aFrag.getRows() != m)
      return emitOpError() << "A has " << aFrag.getRows()
                           << " rows but the result " << m;
    if (aFrag.getElementType() != b.getElementType())
      return emitOpError() << "A fragment element type "
                           << aFrag.getElementType() << " differs from B's "
                           << b.getElementType();
    aK = aFrag.getCols();
  }
  if (aK != bK)
    return emitOpError() << "contraction mismatch: A has K = " << aK
                         << ", B has K = " << bK;
  if (getAcc() && getAcc().getType() != result)
    return emitOpError() << "the accumulator must have the result type";
  if (!result.getElementType().isF32())
    return emitOpError() << "the accumulator is f32";
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
  if (!getPrecision().getFixedScale())
    return emitOpError() << "P is quantized with a fixed scale (P <= 1), got "
                         << getPrecision();
  return success();
}

LogicalResult QuantizeBlockOp::verify() {
  if (!getPerTokenData() && !getTokenBlockData())
    return emitOpError() << "writes no copy: give per_token(...) and/or "
                            "token_block(...)";
  if (getPerTokenDequant() && !getPerTokenData())
    return emitOpError() << "a per-token dequantized copy needs the per-token "
                            "quantization";
  if (getTokenBlockDequant() && !getTokenBlockData())
    return emitOpError() << "a token-block dequantized copy needs the "
                            "token-block quantization";
  if (getPerTokenTiles() && !getPerTokenData())
    return emitOpError() << "per-token scale tiles need the per-token "
                            "quantization";
  if (getTokenBlockTiles() && !getTokenBlockData())
    return emitOpError() << "token-block scale tiles need the token-block "
                            "quantization";
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
  GlobalType source = getSource().getType();
  for (Value tiles : {getPerTokenTiles(), getTokenBlockTiles()}) {
    if (!tiles)
      continue;
    auto type = cast<GlobalType>(tiles.getType());
    ArrayRef<int64_t> shape = type.getShape();
    if (shape.size() != 3 || !type.getElementType().isInteger(8) ||
        shape[2] != 512 || shape[1] != source.getShape()[1])
      return emitOpError() << "scale tiles are [NB, H, 512] i8 with H = "
                           << source.getShape()[1] << " (the source's heads), got "
                           << type;
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
  if (getBlockM() <= 0 || getBlockN() <= 0 || getBlockM() % 64 != 0 ||
      getBlockN() % 64 != 0)
    return emitOpError() << "tile sizes must be positive multiples of 64, got "
                         << getBlockM() << " x " << getBlockN();
  return success();
}

LogicalResult WorkspaceOp::verify() {
  if (getKind() != "workspace" && getKind() != "schedule")
    return emitOpError() << "kind must be \"workspace\" or \"schedule\", got \""
                         << getKind() << "\"";
  if (static_cast<int64_t>(getDims().size()) != getBuffer().getType().getShape().size())
    return emitOpError() << "dims has " << getDims().size()
                         << " expressions for a rank-"
                         << getBuffer().getType().getShape().size() << " buffer";
  if (getKind() == "schedule" && getBufferName() != "items" &&
      getBufferName() != "block_info" && getBufferName() != "counter")
    return emitOpError() << "schedule buffers are items, block_info and "
                            "counter, got \""
                         << getBufferName() << "\"";
  return success();
}

LogicalResult RuntimeValueOp::verify() {
  StringRef name = getValueName();
  bool isFloat = name == "softmax_scale" || name == "softmax_scale_log2";
  bool isInt = llvm::is_contained(
      {"T", "Hq", "Hkv", "D", "NUM_DOCS", "NB", "NUM_ITEMS", "NUM_SMS"}, name);
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
