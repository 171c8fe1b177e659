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
#include "flamia/Transforms/Passes.h"
#include "flamia/Transforms/PassOrder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::flamia {
#define GEN_PASS_DEF_FLAMIAVARLENSCHEDULE
#include "flamia/Transforms/Passes.h.inc"
} // namespace mlir::flamia

using namespace mlir;
using namespace mlir::flamia;

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
                  TargetAttr target, StringRef launch, int64_t threads) {
    MLIRContext *ctx = b.getContext();
    SmallVector<Attribute> argAttrs;
    for (const std::string &n : names)
      argAttrs.push_back(b.getDictionaryAttr(
          b.getNamedAttr("flamia.param", b.getStringAttr(n))));
    auto kernel = KernelOp::create(
        b, loc, b.getStringAttr(symbol),
        TypeAttr::get(FunctionType::get(ctx, types, {})),
        b.getArrayAttr(argAttrs), ArrayAttr(), target,
        b.getStringAttr(launch), b.getI64IntegerAttr(threads));
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

struct VarlenSchedulePass
    : public flamia::impl::FlamiaVarlenScheduleBase<VarlenSchedulePass> {
  using Base::Base;

  /// The operands the kernels implement: Q per token, K and V in
  /// document-local 32x32 token blocks, all MXFP8 E4M3 from flamia.quantize
  /// of function arguments; safe-block originals are function arguments.
  LogicalResult checkSupported(AttentionFwdOp fwd) {
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
    if (fwd.getRecipe().getKind() != RecipeKind::mxfp8 ||
        fwd.getRecipe().getStrict())
      return fwd.emitOpError()
             << "flamia-varlen-schedule: kernels exist for the non-strict "
                "mxfp8 recipe only, got "
             << fwd.getRecipe();
    if (failed(expect(fwd.getQ(), "q", 1)) ||
        failed(expect(fwd.getK(), "k", 32)) ||
        failed(expect(fwd.getV(), "v", 32)))
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
    MLIRContext *ctx = func.getContext();
    Location loc = fwd.getLoc();
    bool hopper = target == "sm_90a";
    // sm_100a's MMA reads the scale-factor tiles; on sm_90a they are only
    // written on request (to check them).
    bool tiles = !hopper || scaleTiles;
    auto chip = symbolizeChip(target);
    if (!chip)
      return fwd.emitOpError() << "flamia-varlen-schedule: unknown target '"
                               << target << "' (expected sm_90a or sm_100a)";
    auto targetAttr = TargetAttr::get(ctx, *chip, 1);

    // Which function arguments are Q, K, V, cu_seqlens.
    auto qArg = cast<BlockArgument>(fwd.getQ().getDefiningOp<QuantizeOp>().getInput());
    auto kArg = cast<BlockArgument>(fwd.getK().getDefiningOp<QuantizeOp>().getInput());
    auto vArg = cast<BlockArgument>(fwd.getV().getDefiningOp<QuantizeOp>().getInput());
    auto qType = cast<QTensorType>(fwd.getQ().getType());
    auto kType = cast<QTensorType>(fwd.getK().getType());
    auto vType = cast<QTensorType>(fwd.getV().getType());
    auto qTbType = QTensorType::get(ctx, qType.getShape(), qType.getElementType(),
                                    qType.getScaleType(), kType.getLayout());
    auto bf16Global = [&](QTensorType q) {
      return GlobalType::get(ctx, q.getShape(), BFloat16Type::get(ctx));
    };
    auto i32 = IntegerType::get(ctx, 32);
    auto f32 = Float32Type::get(ctx);
    auto blockInfoType = GlobalType::get(ctx, {ShapedType::kDynamic, 2}, i32);
    auto itemsType = GlobalType::get(ctx, {ShapedType::kDynamic, 8}, i32);
    auto counterType = GlobalType::get(ctx, {1}, i32);
    std::string base = func.getSymName().str();

    // ---- the quantization kernel ----------------------------------------
    OpBuilder mb(func);
    KernelSignature qsig;
    qsig.add("q", globalOf(qArg.getType()));
    qsig.add("k", globalOf(kArg.getType()));
    qsig.add("v", globalOf(vArg.getType()));
    qsig.add("block_info", blockInfoType);
    qsig.add("q_pt", payloadOf(qType));
    qsig.add("q_pt_scales", scalesOf(qType));
    qsig.add("q_tb", payloadOf(qTbType));
    qsig.add("q_tb_scales", scalesOf(qTbType));
    qsig.add("k_tb", payloadOf(kType));
    qsig.add("k_tb_scales", scalesOf(kType));
    qsig.add("v_tb", payloadOf(vType));
    qsig.add("v_tb_scales", scalesOf(vType));
    // sm_100a: the scales once more as the MMA's scale-factor tiles, one
    // 512-byte slot per (token block, head) (flamia.quantize_block).
    auto sfTiles = [&](QTensorType q) {
      return GlobalType::get(ctx, {ShapedType::kDynamic, q.getNumHeads(), 512},
                             IntegerType::get(ctx, 8));
    };
    if (hopper) {
      qsig.add("q_deq", bf16Global(qType));
      qsig.add("k_deq", bf16Global(kType));
      qsig.add("v_deq", bf16Global(vType));
    }
    if (tiles) {
      qsig.add("q_sf", sfTiles(qType));
      qsig.add("k_sf", sfTiles(kType));
      qsig.add("v_sf", sfTiles(vType));
    }
    KernelOp qk = qsig.create(mb, loc, base + "_quantize", targetAttr, "grid",
                              /*threads=*/128);
    {
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
                              tiles ? p("q_sf") : Value(), Value(),
                              StringAttr());
      // K and V: 32x32, only the key/value heads.
      Value kvHeads = constI32(b, loc, kType.getNumHeads());
      Value isKv = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                         head, kvHeads);
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
    }

    // ---- the persistent attention kernel ---------------------------------
    KernelSignature asig;
    if (hopper) {
      asig.add("q_deq", bf16Global(qType));
      asig.add("k_deq", bf16Global(kType));
      asig.add("v_deq", bf16Global(vType));
    } else {
      asig.add("q_pt", payloadOf(qType));
      asig.add("q_sf", sfTiles(qType));
      asig.add("k_tb", payloadOf(kType));
      asig.add("k_sf", sfTiles(kType));
      asig.add("v_tb", payloadOf(vType));
      asig.add("v_sf", sfTiles(vType));
    }
    bool safe = fwd.getRecipe().hasSafeBlock();
    if (safe) {
      asig.add("q", globalOf(qArg.getType()));
      asig.add("k", globalOf(kArg.getType()));
      asig.add("v", globalOf(vArg.getType()));
    }
    asig.add("o", globalOf(fwd.getO().getType()));
    asig.add("lse", globalOf(fwd.getLse().getType()));
    asig.add("items", itemsType);
    asig.add("num_items", i32);
    asig.add("counter", counterType);
    asig.add("softmax_scale_log2", f32);
    asig.add("T", i32);
    KernelOp ak = asig.create(mb, loc, base + "_attention_fwd", targetAttr,
                              "persistent", /*threads=*/128);
    ak->setAttr("schedule",
                mb.getDictionaryAttr(
                    {mb.getNamedAttr("block_m", mb.getI64IntegerAttr(blockM)),
                     mb.getNamedAttr("block_n", mb.getI64IntegerAttr(blockN)),
                     mb.getNamedAttr("safe_block", mb.getI64IntegerAttr(
                                                       fwd.getRecipe().getSafeBlock())),
                     mb.getNamedAttr("cost_model", mb.getStringAttr(target))}));
    {
      OpBuilder b = OpBuilder::atBlockEnd(&ak.getBody().front());
      auto p = [&](StringRef n) { return KernelSignature::param(ak, n); };
      Value queue = QueueCreateOp::create(b, loc, QueueType::get(ctx),
                                          p("counter"), p("num_items"));
      Value zero = constI32(b, loc, 0), one = constI32(b, loc, 1);
      auto loop = scf::WhileOp::create(b, loc, TypeRange{i32, i32},
                                       ValueRange{zero});
      {
        Block *before = b.createBlock(&loop.getBefore(), {}, {i32}, {loc});
        OpBuilder bb = OpBuilder::atBlockEnd(before);
        Value it = before->getArgument(0);
        Value index = QueueNextOp::create(bb, loc, i32, queue, it,
                                          bb.getStringAttr("fetch"));
        Value more = arith::CmpIOp::create(bb, loc, arith::CmpIPredicate::slt,
                                           index, p("num_items"));
        scf::ConditionOp::create(bb, loc, more, ValueRange{it, index});
      }
      {
        Block *after = b.createBlock(&loop.getAfter(), {}, {i32, i32},
                                     {loc, loc});
        OpBuilder ab = OpBuilder::atBlockEnd(after);
        SmallVector<Value> q, k, v, safeOps;
        if (hopper) {
          q = {p("q_deq")};
          k = {p("k_deq")};
          v = {p("v_deq")};
        } else {
          q = {p("q_pt"), p("q_sf")};
          k = {p("k_tb"), p("k_sf")};
          v = {p("v_tb"), p("v_sf")};
        }
        if (safe)
          safeOps = {p("q"), p("k"), p("v")};
        AttentionTileOp::create(
            ab, loc, p("items"), after->getArgument(1), q, k, v, safeOps,
            p("o"), p("lse"), p("softmax_scale_log2"), p("T"),
            fwd.getCausalAttr(), fwd.getRecipe(), fwd.getP(),
            ab.getI64IntegerAttr(blockM), ab.getI64IntegerAttr(blockN));
        Value next = arith::AddIOp::create(ab, loc, after->getArgument(0), one);
        scf::YieldOp::create(ab, loc, next);
      }
      b.setInsertionPointAfter(loop);
      ReturnOp::create(b, loc);
    }
    symbols.insert(qk);
    symbols.insert(ak);

    // ---- the launch plan -------------------------------------------------
    // New signature: the inputs as buffers, then the outputs (o, lse).
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
    DenseMap<Value, StringRef> names = {{qArg, "q"}, {kArg, "k"}, {vArg, "v"}};
    if (Value cu = fwd.getCuSeqlens())
      names[cu] = "cu_seqlens";
    for (BlockArgument arg : entry.getArguments()) {
      auto it = names.find(arg);
      if (it == names.end())
        return func.emitOpError()
               << "flamia-varlen-schedule: argument " << arg.getArgNumber()
               << " is not an input of the attention";
    }
    auto retOp = cast<func::ReturnOp>(entry.getTerminator());
    if (retOp.getNumOperands() != 2 || retOp.getOperand(0) != fwd.getO() ||
        retOp.getOperand(1) != fwd.getLse())
      return func.emitOpError()
             << "flamia-varlen-schedule: the function must return exactly "
                "the attention's O and LSE";

    // Rebuild the body.
    auto newFunc = func::FuncOp::create(mb, func.getLoc(), func.getSymName(),
                                        FunctionType::get(ctx, {}, {}));
    Block *nb = newFunc.addEntryBlock();
    OpBuilder b = OpBuilder::atBlockEnd(nb);
    DenseMap<StringRef, Value> buf;
    for (BlockArgument arg : entry.getArguments()) {
      StringRef name = names[arg];
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
    auto workspace = [&](StringRef kind, StringRef name, Type type) {
      // Token-block scales and the block list have one row per scale block.
      StringRef symbol = "T";
      if (name.ends_with("tb_scales") || name.ends_with("_sf") ||
          name == "block_info")
        symbol = "NB";
      else if (name == "items")
        symbol = "NUM_ITEMS";
      buf[name] = WorkspaceOp::create(b, loc, type, b.getStringAttr(name),
                                      b.getStringAttr(kind),
                                      dimsOf(b, cast<GlobalType>(type), symbol));
    };
    for (auto &[name, type] :
         SmallVector<std::pair<StringRef, Type>>{
             {"q_pt", payloadOf(qType)}, {"q_pt_scales", scalesOf(qType)},
             {"q_tb", payloadOf(qTbType)}, {"q_tb_scales", scalesOf(qTbType)},
             {"k_tb", payloadOf(kType)}, {"k_tb_scales", scalesOf(kType)},
             {"v_tb", payloadOf(vType)}, {"v_tb_scales", scalesOf(vType)}})
      workspace("workspace", name, type);
    if (hopper) {
      workspace("workspace", "q_deq", bf16Global(qType));
      workspace("workspace", "k_deq", bf16Global(kType));
      workspace("workspace", "v_deq", bf16Global(vType));
    }
    if (tiles) {
      workspace("workspace", "q_sf", sfTiles(qType));
      workspace("workspace", "k_sf", sfTiles(kType));
      workspace("workspace", "v_sf", sfTiles(vType));
    }
    workspace("schedule", "block_info", blockInfoType);
    workspace("schedule", "items", itemsType);
    workspace("schedule", "counter", counterType);
    buf["num_items"] = RuntimeValueOp::create(b, loc, i32, "NUM_ITEMS");
    buf["softmax_scale_log2"] =
        RuntimeValueOp::create(b, loc, f32, "softmax_scale_log2");
    buf["T"] = RuntimeValueOp::create(b, loc, i32, "T");
    auto launch = [&](KernelOp kernel, const KernelSignature &sig,
                      ArrayRef<StringRef> grid) {
      SmallVector<Value> args;
      for (const std::string &n : sig.getNames())
        args.push_back(buf.lookup(n));
      LaunchOp::create(b, loc, SymbolRefAttr::get(kernel.getSymNameAttr()),
                       args, b.getStrArrayAttr(grid));
    };
    launch(qk, qsig, {"NB", "Hq", "1"});
    launch(ak, asig, {"NUM_SMS", "1", "1"});
    func::ReturnOp::create(b, loc);
    if (fwd.getSoftmaxScaleAttr())
      newFunc->setAttr("flamia.softmax_scale", fwd.getSoftmaxScaleAttr());
    newFunc->setAttr("flamia.recipe", fwd.getRecipe());
    if (fwd.getCausal())
      newFunc->setAttr("flamia.causal", mb.getUnitAttr());
    newFunc->setAttr("flamia.target", targetAttr);
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
