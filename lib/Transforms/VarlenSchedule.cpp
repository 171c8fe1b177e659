//===- VarlenSchedule.cpp - flamia-varlen-schedule ------------------------===//
//
// Graph-level attention over packed documents -> block-level kernels and a
// launch plan (docs/passes.md, docs/scheduling.md):
//
//   func @f(q, k, v, cu) -> (o, lse)        func @f(q, k, v, cu, o, lse)  // buffers
//     %q8 = flamia.quantize %q ...            workspaces, schedule buffers
//     ...                              ==>    flamia.launch @f_quantize(...)
//     flamia.attention_fwd ...                flamia.launch @f_attention_fwd(...)
//
// The quantization kernel runs one CTA per (document-local 32-token block,
// query head); the attention kernel is persistent and takes scheduled items
// (document, query head, query tile) from a device counter. Documents stay
// where they are in the packed tensors: items carry their offsets.
//
//===----------------------------------------------------------------------===//
#include "flamia/Dialect/GemmRoles.h"
#include "flamia/Numerics/RecipeRegistry.h"
#include "flamia/Transforms/Passes.h"
#include "flamia/Transforms/PassOrder.h"
#include "flamia/Transforms/RecipeLayouts.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace flamia {
#define GEN_PASS_DEF_FLAMIAVARLENSCHEDULE
#include "flamia/Transforms/Passes.h.inc"
} // namespace flamia

using namespace mlir;
using namespace flamia;

namespace {

/// A kernel under construction: named parameters become block arguments.
class KernelSignature {
public:
  Value add(StringRef name, Type type) {
    names.push_back(name.str());
    types.push_back(type);
    return Value(); // bound once the kernel exists
  }
  KernelOp create(OpBuilder &b, Location loc, StringRef symbol,
                  TargetAttr target, LaunchKind launch, int64_t threads) {
    MLIRContext *ctx = b.getContext();
    SmallVector<Attribute> argAttrs;
    for (const std::string &n : names)
      argAttrs.push_back(b.getDictionaryAttr(
          b.getNamedAttr("flamia.param", b.getStringAttr(n))));
    auto kernel = KernelOp::create(
        b, loc, b.getStringAttr(symbol),
        TypeAttr::get(FunctionType::get(ctx, types, {})),
        b.getArrayAttr(argAttrs), ArrayAttr(), target,
        LaunchKindAttr::get(ctx, launch), b.getI64IntegerAttr(threads));
    Block *body = new Block();
    kernel.getBody().push_back(body);
    for (Type t : types)
      body->addArgument(t, loc);
    return kernel;
  }
  /// The block argument of parameter `name`.
  static Value param(KernelOp kernel, StringRef name) {
    for (auto [i, attr] : llvm::enumerate(*kernel.getArgAttrs()))
      if (cast<DictionaryAttr>(attr).getAs<StringAttr>("flamia.param") == name)
        return kernel.getBody().front().getArgument(i);
    return {};
  }
  ArrayRef<std::string> getNames() const { return names; }

private:
  SmallVector<std::string> names;
  SmallVector<Type> types;
};

GlobalType globalOf(Type tensorType) {
  auto t = cast<RankedTensorType>(tensorType);
  return GlobalType::get(t.getContext(), t.getShape(), t.getElementType());
}
GlobalType payloadOf(QTensorType q) { return globalOf(q.getPayloadType()); }
GlobalType scalesOf(QTensorType q) { return globalOf(q.getScalesType()); }

/// A buffer's shape as manifest expressions: static sizes as numbers, the
/// dynamic one as `symbol` (T, NB, NUM_ITEMS, NUM_DOCS + 1).
ArrayAttr dimsOf(Builder &b, GlobalType t, StringRef symbol) {
  SmallVector<Attribute> dims;
  for (int64_t d : t.getShape())
    dims.push_back(b.getStringAttr(ShapedType::isDynamic(d) ? symbol.str()
                                                            : std::to_string(d)));
  return b.getArrayAttr(dims);
}

Value constI32(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
}

/// What the kernels of one forward attention are built from: its operands,
/// the target's choices and the types of every buffer the kernels share.
struct ForwardPlan {
  // Op handles are values whose accessors are not const.
  mutable func::FuncOp func;
  mutable AttentionFwdOp fwd;
  MLIRContext *ctx;
  Location loc;
  std::string target;
  TargetAttr targetAttr;
  /// sm_90a: the consumer reads bf16 copies dequantized by the quantizer.
  bool hopper;
  /// The scale-factor tiles of sm_100a's MMA are written (always on
  /// sm_100a; on sm_90a on request, to check them).
  bool tiles;
  bool safe;
  int64_t blockM, blockN;
  /// The function arguments that are Q, K, V.
  BlockArgument qArg, kArg, vArg;
  QTensorType qType, kType, vType;
  /// Q once more in K's 32x32 token blocks (the dK = dS^T Q orientation).
  QTensorType qTbType;
  Type i32, f32;
  GlobalType blockInfoType, itemsType, counterType;
  std::string base;

  static FailureOr<ForwardPlan> get(func::FuncOp func, AttentionFwdOp fwd,
                                    StringRef target, bool scaleTiles,
                                    int64_t blockM, int64_t blockN) {
    MLIRContext *ctx = func.getContext();
    auto chip = symbolizeChip(target);
    if (!chip)
      return fwd.emitOpError() << "flamia-varlen-schedule: unknown target '"
                               << target << "' (expected sm_90a or sm_100a)";
    ForwardPlan p{func, fwd, ctx, fwd.getLoc(), target.str(),
                  TargetAttr::get(ctx, *chip, 1)};
    p.hopper = *chip == Chip::sm_90a;
    p.tiles = !p.hopper || scaleTiles;
    p.safe = fwd.getRecipe().hasSafeBlock();
    p.blockM = blockM;
    p.blockN = blockN;
    auto argOf = [](Value v) {
      return cast<BlockArgument>(v.getDefiningOp<QuantizeOp>().getInput());
    };
    p.qArg = argOf(fwd.getQ());
    p.kArg = argOf(fwd.getK());
    p.vArg = argOf(fwd.getV());
    p.qType = cast<QTensorType>(fwd.getQ().getType());
    p.kType = cast<QTensorType>(fwd.getK().getType());
    p.vType = cast<QTensorType>(fwd.getV().getType());
    p.qTbType = QTensorType::get(ctx, p.qType.getShape(), p.qType.getElementType(),
                                 p.qType.getScaleType(), p.kType.getLayout());
    p.i32 = IntegerType::get(ctx, 32);
    p.f32 = Float32Type::get(ctx);
    p.blockInfoType = GlobalType::get(ctx, {ShapedType::kDynamic, 2}, p.i32);
    p.itemsType = GlobalType::get(ctx, {ShapedType::kDynamic, 8}, p.i32);
    p.counterType = GlobalType::get(ctx, {1}, p.i32);
    p.base = func.getSymName().str();
    return p;
  }

  /// The launch plan replaces the function: its arguments must be the
  /// attention's inputs and it must return exactly O and LSE.
  LogicalResult checkSignature() const {
    Block &entry = func.getBody().front();
    for (BlockArgument arg : entry.getArguments())
      if (inputName(arg).empty())
        return func.emitOpError()
               << "flamia-varlen-schedule: argument " << arg.getArgNumber()
               << " is not an input of the attention";
    auto retOp = cast<func::ReturnOp>(entry.getTerminator());
    if (retOp.getNumOperands() != 2 || retOp.getOperand(0) != fwd.getO() ||
        retOp.getOperand(1) != fwd.getLse())
      return func.emitOpError()
             << "flamia-varlen-schedule: the function must return exactly "
                "the attention's O and LSE";
    return success();
  }

  /// The buffer name of a function argument (null if it is not an input).
  StringRef inputName(BlockArgument arg) const {
    if (arg == qArg)
      return "q";
    if (arg == kArg)
      return "k";
    if (arg == vArg)
      return "v";
    if (arg == fwd.getCuSeqlens())
      return "cu_seqlens";
    return {};
  }

  GlobalType bf16Copy(QTensorType q) const {
    return GlobalType::get(ctx, q.getShape(), BFloat16Type::get(ctx));
  }
  /// sm_100a's scale-factor tiles: one 512-byte slot per (token block,
  /// head) (flamia.quantize_block).
  GlobalType scaleFactorTiles(QTensorType q) const {
    return GlobalType::get(ctx, {ShapedType::kDynamic, q.getNumHeads(), 512},
                           IntegerType::get(ctx, 8));
  }

  /// Every buffer the quantizer writes, in the order of its parameters
  /// (and of the launch plan's workspaces).
  SmallVector<std::pair<StringRef, GlobalType>> quantizedCopies() const {
    SmallVector<std::pair<StringRef, GlobalType>> copies = {
        {"q_pt", payloadOf(qType)},   {"q_pt_scales", scalesOf(qType)},
        {"q_tb", payloadOf(qTbType)}, {"q_tb_scales", scalesOf(qTbType)},
        {"k_tb", payloadOf(kType)},   {"k_tb_scales", scalesOf(kType)},
        {"v_tb", payloadOf(vType)},   {"v_tb_scales", scalesOf(vType)}};
    if (hopper)
      copies.append({{"q_deq", bf16Copy(qType)},
                     {"k_deq", bf16Copy(kType)},
                     {"v_deq", bf16Copy(vType)}});
    if (tiles)
      copies.append({{"q_sf", scaleFactorTiles(qType)},
                     {"k_sf", scaleFactorTiles(kType)},
                     {"v_sf", scaleFactorTiles(vType)}});
    return copies;
  }
};

/// The quantization kernel: one CTA per (document-local 32-token block,
/// query head) writes every quantized copy of Q, K and V.
KernelOp buildQuantizeKernel(OpBuilder &mb, const ForwardPlan &plan,
                             KernelSignature &sig) {
  Location loc = plan.loc;
  Type i32 = plan.i32;
  sig.add("q", globalOf(plan.qArg.getType()));
  sig.add("k", globalOf(plan.kArg.getType()));
  sig.add("v", globalOf(plan.vArg.getType()));
  sig.add("block_info", plan.blockInfoType);
  for (auto [name, type] : plan.quantizedCopies())
    sig.add(name, type);
  KernelOp qk = sig.create(mb, loc, plan.base + "_quantize", plan.targetAttr,
                           LaunchKind::grid, /*threads=*/128);
  bool hopper = plan.hopper, tiles = plan.tiles;
  OpBuilder b = OpBuilder::atBlockEnd(&qk.getBody().front());
  auto p = [&](StringRef n) { return KernelSignature::param(qk, n); };
  Value block = arith::IndexCastOp::create(
      b, loc, i32, gpu::BlockIdOp::create(b, loc, gpu::Dimension::x));
  Value head = arith::IndexCastOp::create(
      b, loc, i32, gpu::BlockIdOp::create(b, loc, gpu::Dimension::y));
  auto info = BlockInfoLoadOp::create(b, loc, i32, i32, p("block_info"), block);
  Value start = info.getStart(), length = info.getLength();
  // Q: per token (S = Q K^T) and 32x32 (dK = dS^T Q), every query head.
  QuantizeBlockOp::create(b, loc, p("q"), start, length, block, head,
                          p("q_pt"), p("q_pt_scales"),
                          hopper ? p("q_deq") : Value(), p("q_tb"),
                          p("q_tb_scales"), Value(),
                          tiles ? p("q_sf") : Value(), Value(), StringAttr());
  // K and V: 32x32, only the key/value heads.
  Value kvHeads = constI32(b, loc, plan.kType.getNumHeads());
  Value isKv = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, head,
                                     kvHeads);
  auto ifOp = scf::IfOp::create(b, loc, isKv, /*withElse=*/false);
  OpBuilder tb = ifOp.getThenBodyBuilder();
  for (auto [src, data, scales, deq, sf, rows] :
       {std::make_tuple("k", "k_tb", "k_tb_scales", "k_deq", "k_sf", "tokens"),
        std::make_tuple("v", "v_tb", "v_tb_scales", "v_deq", "v_sf", "channels")})
    QuantizeBlockOp::create(tb, loc, p(src), start, length, block, head,
                            Value(), Value(), Value(), p(data), p(scales),
                            hopper ? p(deq) : Value(), Value(),
                            tiles ? p(sf) : Value(),
                            tiles ? tb.getStringAttr(rows) : StringAttr());
  ReturnOp::create(b, loc);
  return qk;
}

/// The persistent forward kernel: takes scheduled items (document, query
/// head, query tile) from a device counter, one flamia.attention_tile each
/// (flamia-tile writes the target's program for it).
KernelOp buildForwardKernel(OpBuilder &mb, const ForwardPlan &plan,
                            KernelSignature &sig) {
  Location loc = plan.loc;
  Type i32 = plan.i32;
  AttentionFwdOp fwd = plan.fwd;
  // The consumer's operands: sm_90a reads the bf16 dequantized copies,
  // sm_100a the E4M3 payloads with their scale-factor tiles.
  SmallVector<std::pair<StringRef, GlobalType>> q, k, v;
  if (plan.hopper) {
    q = {{"q_deq", plan.bf16Copy(plan.qType)}};
    k = {{"k_deq", plan.bf16Copy(plan.kType)}};
    v = {{"v_deq", plan.bf16Copy(plan.vType)}};
  } else {
    q = {{"q_pt", payloadOf(plan.qType)}, {"q_sf", plan.scaleFactorTiles(plan.qType)}};
    k = {{"k_tb", payloadOf(plan.kType)}, {"k_sf", plan.scaleFactorTiles(plan.kType)}};
    v = {{"v_tb", payloadOf(plan.vType)}, {"v_sf", plan.scaleFactorTiles(plan.vType)}};
  }
  for (auto *operand : {&q, &k, &v})
    for (auto [name, type] : *operand)
      sig.add(name, type);
  if (plan.safe) {
    sig.add("q", globalOf(plan.qArg.getType()));
    sig.add("k", globalOf(plan.kArg.getType()));
    sig.add("v", globalOf(plan.vArg.getType()));
  }
  sig.add("o", globalOf(fwd.getO().getType()));
  sig.add("lse", globalOf(fwd.getLse().getType()));
  sig.add("items", plan.itemsType);
  sig.add("num_items", i32);
  sig.add("counter", plan.counterType);
  sig.add("softmax_scale_log2", plan.f32);
  sig.add("T", i32);
  KernelOp ak = sig.create(mb, loc, plan.base + "_attention_fwd",
                           plan.targetAttr, LaunchKind::persistent, /*threads=*/128);
  ak->setAttr("schedule",
              mb.getDictionaryAttr(
                  {mb.getNamedAttr("block_m", mb.getI64IntegerAttr(plan.blockM)),
                   mb.getNamedAttr("block_n", mb.getI64IntegerAttr(plan.blockN)),
                   mb.getNamedAttr("safe_block", mb.getI64IntegerAttr(
                                                     fwd.getRecipe().getSafeBlock())),
                   mb.getNamedAttr("cost_model", mb.getStringAttr(plan.target))}));
  OpBuilder b = OpBuilder::atBlockEnd(&ak.getBody().front());
  auto p = [&](StringRef n) { return KernelSignature::param(ak, n); };
  Value queue = QueueCreateOp::create(b, loc, QueueType::get(plan.ctx),
                                      p("counter"), p("num_items"));
  Value zero = constI32(b, loc, 0), one = constI32(b, loc, 1);
  auto loop = scf::WhileOp::create(b, loc, TypeRange{i32, i32}, ValueRange{zero});
  {
    Block *before = b.createBlock(&loop.getBefore(), {}, {i32}, {loc});
    OpBuilder bb = OpBuilder::atBlockEnd(before);
    Value it = before->getArgument(0);
    Value index = QueueNextOp::create(bb, loc, i32, queue, it,
                                      QueueSide::fetch);
    Value more = arith::CmpIOp::create(bb, loc, arith::CmpIPredicate::slt,
                                       index, p("num_items"));
    scf::ConditionOp::create(bb, loc, more, ValueRange{it, index});
  }
  {
    Block *after = b.createBlock(&loop.getAfter(), {}, {i32, i32}, {loc, loc});
    OpBuilder ab = OpBuilder::atBlockEnd(after);
    auto params = [&](ArrayRef<std::pair<StringRef, GlobalType>> buffers) {
      SmallVector<Value> values;
      for (auto [name, type] : buffers)
        values.push_back(p(name));
      return values;
    };
    SmallVector<Value> safeOps;
    if (plan.safe)
      safeOps = {p("q"), p("k"), p("v")};
    AttentionTileOp::create(
        ab, loc, p("items"), after->getArgument(1), params(q), params(k),
        params(v), safeOps, p("o"), p("lse"), p("softmax_scale_log2"), p("T"),
        fwd.getCausalAttr(), fwd.getRecipe(), fwd.getP(),
        ab.getI64IntegerAttr(plan.blockM), ab.getI64IntegerAttr(plan.blockN));
    Value next = arith::AddIOp::create(ab, loc, after->getArgument(0), one);
    scf::YieldOp::create(ab, loc, next);
  }
  b.setInsertionPointAfter(loop);
  ReturnOp::create(b, loc);
  return ak;
}

/// A kernel of the launch plan: its signature's names select the plan's
/// buffers, `grid` is its grid in manifest expressions.
struct PlannedLaunch {
  KernelOp kernel;
  const KernelSignature *signature;
  SmallVector<StringRef, 3> grid;
};

/// The launch plan that replaces the function: the inputs and outputs as
/// buffers, the workspaces, schedule buffers and runtime values, then one
/// flamia.launch per kernel, in order.
void buildLaunchPlan(OpBuilder &mb, const ForwardPlan &plan,
                     ArrayRef<PlannedLaunch> launches) {
  MLIRContext *ctx = plan.ctx;
  Location loc = plan.loc;
  func::FuncOp func = plan.func;
  AttentionFwdOp fwd = plan.fwd;
  SmallVector<Type> argTypes;
  SmallVector<Attribute> argAttrs;
  auto bufferAttr = [&](StringRef name, bool output, GlobalType type) {
    SmallVector<NamedAttribute> attrs = {
        mb.getNamedAttr("flamia.buffer", mb.getStringAttr(name)),
        mb.getNamedAttr("flamia.dims",
                        dimsOf(mb, type, name == "cu_seqlens" ? "NUM_DOCS + 1" : "T"))};
    if (output)
      attrs.push_back(mb.getNamedAttr("flamia.output", mb.getUnitAttr()));
    return mb.getDictionaryAttr(attrs);
  };
  Block &entry = func.getBody().front();
  auto newFunc = func::FuncOp::create(mb, func.getLoc(), func.getSymName(),
                                      FunctionType::get(ctx, {}, {}));
  Block *nb = newFunc.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockEnd(nb);
  DenseMap<StringRef, Value> buf;
  for (BlockArgument arg : entry.getArguments()) {
    StringRef name = plan.inputName(arg);
    buf[name] = nb->addArgument(globalOf(arg.getType()), arg.getLoc());
    argTypes.push_back(buf[name].getType());
    argAttrs.push_back(bufferAttr(name, false, globalOf(arg.getType())));
  }
  for (auto [name, type] : {std::make_pair("o", fwd.getO().getType()),
                            std::make_pair("lse", fwd.getLse().getType())}) {
    buf[name] = nb->addArgument(globalOf(type), loc);
    argTypes.push_back(buf[name].getType());
    argAttrs.push_back(bufferAttr(name, true, globalOf(type)));
  }
  newFunc.setFunctionType(FunctionType::get(ctx, argTypes, {}));
  newFunc.setArgAttrsAttr(mb.getArrayAttr(argAttrs));
  auto workspace = [&](WorkspaceKind kind, StringRef name, Type type) {
    // Token-block scales and the block list have one row per scale block.
    StringRef symbol = "T";
    if (name.ends_with("tb_scales") || name.ends_with("_sf") ||
        name == "block_info")
      symbol = "NB";
    else if (name == "items")
      symbol = "NUM_ITEMS";
    buf[name] = WorkspaceOp::create(b, loc, type, b.getStringAttr(name),
                                    WorkspaceKindAttr::get(b.getContext(), kind),
                                    dimsOf(b, cast<GlobalType>(type), symbol));
  };
  for (auto [name, type] : plan.quantizedCopies())
    workspace(WorkspaceKind::workspace, name, type);
  workspace(WorkspaceKind::schedule, "block_info", plan.blockInfoType);
  workspace(WorkspaceKind::schedule, "items", plan.itemsType);
  workspace(WorkspaceKind::schedule, "counter", plan.counterType);
  buf["num_items"] = RuntimeValueOp::create(b, loc, plan.i32, "NUM_ITEMS");
  buf["softmax_scale_log2"] =
      RuntimeValueOp::create(b, loc, plan.f32, "softmax_scale_log2");
  buf["T"] = RuntimeValueOp::create(b, loc, plan.i32, "T");
  for (const PlannedLaunch &launch : launches) {
    SmallVector<Value> args;
    for (const std::string &n : launch.signature->getNames())
      args.push_back(buf.lookup(n));
    KernelOp kernel = launch.kernel;
    LaunchOp::create(b, loc, SymbolRefAttr::get(kernel.getSymNameAttr()),
                     args, b.getStrArrayAttr(launch.grid));
  }
  func::ReturnOp::create(b, loc);
  if (fwd.getSoftmaxScaleAttr())
    newFunc->setAttr("flamia.softmax_scale", fwd.getSoftmaxScaleAttr());
  newFunc->setAttr("flamia.recipe", fwd.getRecipe());
  if (fwd.getCausal())
    newFunc->setAttr("flamia.causal", mb.getUnitAttr());
  newFunc->setAttr("flamia.target", plan.targetAttr);
}

struct VarlenSchedulePass
    : public flamia::impl::FlamiaVarlenScheduleBase<VarlenSchedulePass> {
  using Base::Base;

  /// The operands the kernels implement: Q per token, K and V in
  /// document-local 32x32 token blocks, all MXFP8 E4M3 from flamia.quantize
  /// of function arguments; safe-block originals are function arguments.
  LogicalResult checkSupported(AttentionFwdOp fwd) {
    namespace num = ::flamia::numerics;
    // Kernels for the recipe on this target (the recipe registry), and the
    // operand layouts its contract prescribes.
    RecipeAttr recipe = fwd.getRecipe();
    FailureOr<const num::RecipeKind *> kind = getRecipeKind(fwd, recipe);
    FailureOr<num::RecipeConfig> contract = getContractRecipe(fwd, recipe);
    if (failed(kind) || failed(contract))
      return failure();
    if (symbolizeChip(target)) { // else ForwardPlan::get names the target
      int64_t headDim = cast<QTensorType>(fwd.getQ().getType()).getHeadDim();
      if (num::Status s =
              num::checkKernels(**kind, recipe.getStrict(), target, headDim);
          !s)
        return fwd.emitOpError() << "flamia-varlen-schedule: " << s.message;
    }
    auto expect = [&](Value v, StringRef name, int64_t tokenBlock) -> LogicalResult {
      auto q = v.getDefiningOp<QuantizeOp>();
      auto type = dyn_cast<QTensorType>(v.getType());
      if (!q || !type)
        return fwd.emitOpError()
               << "flamia-varlen-schedule: " << name
               << " must come from flamia.quantize (run flamia-graph-pipeline "
                  "first)";
      if (!isa<BlockArgument>(q.getInput()))
        return fwd.emitOpError() << "flamia-varlen-schedule: " << name
                                 << " must quantize a function argument";
      ScaleLayoutAttr layout = type.getLayout();
      if (!isa<Float8E4M3FNType>(type.getElementType()) ||
          !isa<Float8E8M0FNUType>(type.getScaleType()) ||
          layout.getTokenBlock() != tokenBlock ||
          layout.getChannelBlock() != 32 || !layout.isDocumentLocal())
        return fwd.emitOpError()
               << "flamia-varlen-schedule: the kernels implement recipe mxfp8 "
                  "(E4M3 with E8M0 scales; Q 1x32, K and V 32x32, "
                  "document-local), but "
               << name << " is " << type;
      return success();
    };
    if (failed(expect(fwd.getQ(), "q",
                      getContractTokenBlock(*contract, Gemm::QK, AttnTensor::Q))) ||
        failed(expect(fwd.getK(), "k",
                      getContractTokenBlock(*contract, Gemm::QK, AttnTensor::K))) ||
        failed(expect(fwd.getV(), "v",
                      getContractTokenBlock(*contract, Gemm::PV, AttnTensor::V))))
      return failure();
    if (!fwd.getP().getFixedScale() ||
        !isa<Float8E4M3FNType>(fwd.getP().getElementType()))
      return fwd.emitOpError() << "flamia-varlen-schedule: P must be E4M3 "
                                  "with a fixed scale, got "
                               << fwd.getP();
    for (Value s : fwd.getSafe())
      if (!isa<BlockArgument>(s))
        return fwd.emitOpError()
               << "flamia-varlen-schedule: safe-block operands must be "
                  "function arguments";
    if (fwd.getCuSeqlens() && !isa<BlockArgument>(fwd.getCuSeqlens()))
      return fwd.emitOpError()
             << "flamia-varlen-schedule: cu_seqlens must be a function "
                "argument";
    return success();
  }

  LogicalResult lower(func::FuncOp func, AttentionFwdOp fwd,
                      SymbolTable &symbols) {
    if (failed(checkSupported(fwd)))
      return failure();
    FailureOr<ForwardPlan> plan =
        ForwardPlan::get(func, fwd, target, scaleTiles, blockM, blockN);
    if (failed(plan) || failed(plan->checkSignature()))
      return failure();
    OpBuilder mb(func);
    KernelSignature qsig, asig;
    KernelOp qk = buildQuantizeKernel(mb, *plan, qsig);
    KernelOp ak = buildForwardKernel(mb, *plan, asig);
    // The backward kernels (dQ, dK/dV and their preprocessing) are built
    // here the same way, from the same ForwardPlan, when they exist.
    symbols.insert(qk);
    symbols.insert(ak);
    buildLaunchPlan(mb, *plan, {{qk, &qsig, {"NB", "Hq", "1"}},
                                {ak, &asig, {"NUM_SMS", "1", "1"}}});
    func.erase();
    return success();
  }

  void runOnOperation() override {
    if (blockM != 128 || blockN != 128) {
      getOperation().emitError()
          << "flamia-varlen-schedule: only 128 x 128 tiles are implemented, "
             "got block-m = "
          << blockM << ", block-n = " << blockN;
      return signalPassFailure();
    }
    if (failed(requireLoweredTo(getOperation(), "flamia-varlen-schedule",
                                LoweringStage::Quantized)))
      return signalPassFailure();
    SymbolTable symbols(getOperation());
    SmallVector<func::FuncOp> funcs(getOperation().getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      SmallVector<AttentionFwdOp> fwds;
      bool hasBackward = false;
      func.walk([&](Operation *op) {
        if (auto f = dyn_cast<AttentionFwdOp>(op))
          fwds.push_back(f);
        hasBackward |= isa<AttentionBwdOp>(op);
      });
      if (fwds.empty())
        continue;
      if (hasBackward) {
        func.emitOpError() << "flamia-varlen-schedule: backward kernels "
                              "(flamia.attention_bwd) are not implemented; "
                              "compile the forward on its own";
        return signalPassFailure();
      }
      if (fwds.size() != 1) {
        func.emitOpError() << "flamia-varlen-schedule: one attention per "
                              "function is supported, got "
                           << fwds.size();
        return signalPassFailure();
      }
      if (failed(lower(func, fwds.front(), symbols)))
        return signalPassFailure();
    }
  }
};

} // namespace
