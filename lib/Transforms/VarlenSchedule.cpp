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
// A function that also holds the attention's backward (a training step,
// returning O, LSE, dQ, dK, dV) gets three more kernels, launched after the
// forward's: the gradient quantizer (dO's 32x32 copy and D = rowsum(dO O),
// one CTA per block and query head), the dQ kernel (persistent, on the
// forward's query-tile items) and the dK/dV kernel (persistent, on key-tile
// items: document, key/value head, key tile).
//
//===----------------------------------------------------------------------===//
#include "flamia/Dialect/GemmRoles.h"
#include "flamia/Numerics/RecipeRegistry.h"
#include "flamia/Schedule/ScheduleParams.h"
#include "flamia/Transforms/PassOrder.h"
#include "flamia/Transforms/Passes.h"
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
/// The manifest symbol of buffer `name`'s head count when it is a runtime
/// value: K, V, their copies and gradients have the key/value heads, the
/// rest (Q, O, dO, LSE, delta and their copies) the query heads.
StringRef headSymbolOf(StringRef name) {
  bool kv = name == "k" || name == "v" || name == "dk" || name == "dv" ||
            name.starts_with("k_") || name.starts_with("v_");
  return kv ? "Hkv" : "Hq";
}

/// The shape of `t` in manifest expressions: a dynamic head axis (axis 1
/// of a packed [T, H, ...] buffer, axis 0 of a head-major [H, T] one) is
/// `headSymbol`, any other dynamic axis `symbol`.
ArrayAttr dimsOf(Builder &b, GlobalType t, StringRef symbol,
                 StringRef headSymbol = "Hq") {
  ArrayRef<int64_t> shape = t.getShape();
  // E2M1 payloads hold two codes per byte: the manifest's shape is in bytes.
  bool packedFp4 = isa<Float4E2M1FNType>(t.getElementType());
  SmallVector<Attribute> dims;
  for (auto [i, size] : llvm::enumerate(shape)) {
    int64_t d = size;
    if (packedFp4 && i + 1 == shape.size() && !ShapedType::isDynamic(d))
      d /= 2;
    bool headAxis = (shape.size() == 3 && i == 1) ||
                    (shape.size() == 2 && i == 0 &&
                     ShapedType::isDynamic(shape[1]));
    std::string text = !ShapedType::isDynamic(d) ? std::to_string(d)
                       : headAxis                ? headSymbol.str()
                                                 : symbol.str();
    dims.push_back(b.getStringAttr(text));
  }
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
  /// The quantizers write the E4M3 (E2M1) payloads: always on sm_100a,
  /// whose MMAs read them; on sm_90a, whose kernels read only the scales'
  /// bf16 dequantized copies, on request (for inspection and checks).
  bool payloads;
  /// sm_90a's forward rounds Q to its per-token MXFP8 copy itself, from the
  /// bf16 original it loads for the safe block anyway
  /// (flamia.attention_tile round_q): the quantizer writes no copy of Q.
  /// A forward-only set whose Q copy is MXFP8 per token, unless payloads
  /// or scale tiles ask the quantizer for Q's other forms.
  bool roundQ = false;
  bool safe;
  int64_t blockM, blockN;
  /// The function arguments that are Q, K, V.
  BlockArgument qArg, kArg, vArg;
  QTensorType qType, kType, vType;
  /// Q once more in 32x32 token blocks (the dK = dS^T Q orientation), the
  /// MXFP8 layout V has in P V under every recipe.
  QTensorType qTbType;
  /// Whether K's copy for S = Q K^T is per token (NVFP4, nvfp4-mixed): the
  /// quantizer writes it as k_pt, not in 32x32 blocks as k_tb.
  bool kPerToken() const { return kType.getLayout().isPerToken(); }
  Type i32, f32;
  GlobalType blockInfoType, itemsType, counterType;
  std::string base;
  /// The backward of the same attention, when the function trains (null
  /// otherwise), and its dO argument.
  mutable AttentionBwdOp bwd;
  BlockArgument gradOArg;
  /// dO's copy for dP = dO V^T.
  QTensorType gradOType;
  /// The backward's second copies, where a recipe quantizes a tensor
  /// differently for its two GEMMs (mxfp8-strict, nvfp4-mixed: per token
  /// where the head dim is contracted, 32x32 token blocks where tokens are):
  /// K's for dQ = dS K, V's for dP = dO V^T, dO's for dV = P^T dO. Null
  /// where one copy serves both uses (mxfp8).
  QTensorType kTbType, vPtType, gradOTbType;

  bool backward() const { return static_cast<bool>(bwd); }
  /// Q's 32x32 copy (dK = dS^T Q's operand): written with a backward, and
  /// with every payload (as the recipe defines the copies).
  bool writesQueryBlocks() const { return backward() || payloads; }
  /// A debug build: the forward and the dQ kernel write S of the first key
  /// tile (s_fwd, s_dq: f32 [T, Hq, block_n]).
  bool debugScores = false;
  /// The quantizer prefetches K and V into L2 before quantizing Q.
  bool prefetchKv = true;
  /// The work order the schedule attribute names (scheduleOrderName).
  std::string order;
  GlobalType debugScoresType() const {
    return GlobalType::get(ctx, {ShapedType::kDynamic, qType.getNumHeads(), blockN},
                           Float32Type::get(ctx));
  }
  /// The head counts are kernel parameters (Hq, Hkv), not constants: one
  /// kernel set serves every head count.
  bool runtimeHeads() const {
    return ShapedType::isDynamic(qType.getNumHeads());
  }
  /// Adds the Hq and Hkv parameters when the head counts are runtime values.
  void addHeadParams(KernelSignature &sig) const {
    if (!runtimeHeads())
      return;
    sig.add("Hq", i32);
    sig.add("Hkv", i32);
  }

  static FailureOr<ForwardPlan> get(func::FuncOp func, AttentionFwdOp fwd,
                                    AttentionBwdOp bwd, StringRef target,
                                    bool scaleTiles, bool payloads,
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
    p.payloads = !p.hopper || payloads;
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
    p.qTbType =
        QTensorType::get(ctx, p.qType.getShape(), p.vType.getElementType(),
                         p.vType.getScaleType(), p.vType.getLayout());
    p.i32 = IntegerType::get(ctx, 32);
    p.f32 = Float32Type::get(ctx);
    p.blockInfoType = GlobalType::get(ctx, {ShapedType::kDynamic, 2}, p.i32);
    p.itemsType = GlobalType::get(ctx, {ShapedType::kDynamic, 8}, p.i32);
    p.counterType = GlobalType::get(ctx, {1}, p.i32);
    p.base = func.getSymName().str();
    if (bwd) {
      p.bwd = bwd;
      p.gradOArg = argOf(bwd.getDovGradO());
      p.gradOType = cast<QTensorType>(bwd.getDovGradO().getType());
      // By type: two flamia.quantize ops of one argument into one layout
      // are the same copy (checkSupported ties each to its argument).
      if (bwd.getDskK().getType() != fwd.getK().getType())
        p.kTbType = cast<QTensorType>(bwd.getDskK().getType());
      if (bwd.getDovV().getType() != fwd.getV().getType())
        p.vPtType = cast<QTensorType>(bwd.getDovV().getType());
      if (bwd.getPdoGradO().getType() != bwd.getDovGradO().getType())
        p.gradOTbType = cast<QTensorType>(bwd.getPdoGradO().getType());
    }
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
    SmallVector<Value> expected = {fwd.getO(), fwd.getLse()};
    if (bwd)
      expected.append({bwd.getGradQ(), bwd.getGradK(), bwd.getGradV()});
    if (retOp.getOperands() != ValueRange(expected))
      return func.emitOpError()
             << "flamia-varlen-schedule: the function must return exactly "
             << (bwd ? "the attention's O and LSE and its backward's dQ, dK "
                       "and dV, in this order"
                     : "the attention's O and LSE");
    return success();
  }

  /// The function results that become output buffers, by buffer name.
  SmallVector<std::pair<StringRef, Type>> outputs() const {
    SmallVector<std::pair<StringRef, Type>> out = {
        {"o", fwd.getO().getType()}, {"lse", fwd.getLse().getType()}};
    if (bwd)
      out.append({{"dq", bwd.getGradQ().getType()},
                  {"dk", bwd.getGradK().getType()},
                  {"dv", bwd.getGradV().getType()}});
    return out;
  }

  /// The buffer name of a function argument (null if it is not an input).
  StringRef inputName(BlockArgument arg) const {
    if (arg == qArg)
      return "q";
    if (arg == kArg)
      return "k";
    if (arg == vArg)
      return "v";
    if (bwd && arg == gradOArg)
      return "grad_o";
    if (arg == fwd.getCuSeqlens())
      return "cu_seqlens";
    return {};
  }

  GlobalType bf16Copy(QTensorType q) const {
    return GlobalType::get(ctx, q.getShape(), BFloat16Type::get(ctx));
  }
  /// sm_100a's scale-factor tiles: one 512-byte slot per (token block,
  /// head) (flamia.quantize_block); an NVFP4 copy's slot has a tile per 64
  /// channels (scale_vec::4X: one scale per 16).
  GlobalType scaleFactorTiles(QTensorType q) const {
    const int64_t bytes = isa<Float4E2M1FNType>(q.getElementType())
                              ? 512 * ((q.getHeadDim() + 63) / 64)
                              : 512;
    return GlobalType::get(ctx, {ShapedType::kDynamic, q.getNumHeads(), bytes},
                           IntegerType::get(ctx, 8));
  }

  /// Every buffer the quantizer writes, in the order of its parameters
  /// (and of the launch plan's workspaces).
  SmallVector<std::pair<StringRef, GlobalType>> quantizedCopies() const {
    SmallVector<std::pair<StringRef, GlobalType>> copies;
    // A copy: its payload (when written) and its scales.
    auto copy = [&](StringRef payload, StringRef scales, QTensorType type) {
      if (payloads)
        copies.push_back({payload, payloadOf(type)});
      copies.push_back({scales, scalesOf(type)});
    };
    if (!roundQ)
      copy("q_pt", "q_pt_scales", qType);
    if (writesQueryBlocks())
      copy("q_tb", "q_tb_scales", qTbType);
    if (kPerToken())
      copy("k_pt", "k_pt_scales", kType);
    // K in 32x32 token blocks: S's copy, or dS K's when S's is per token.
    QTensorType kTb = kTokenBlocksType();
    if (kTb)
      copy("k_tb", "k_tb_scales", kTb);
    copy("v_tb", "v_tb_scales", vType);
    if (vPtType)
      copy("v_pt", "v_pt_scales", vPtType);
    if (hopper && !roundQ)
      copies.push_back({"q_deq", bf16Copy(qType)});
    if (hopper)
      copies.append({{"k_deq", bf16Copy(kType)}, {"v_deq", bf16Copy(vType)}});
    // The backward's dK = dS^T Q reads Q's token-block copy (and dQ = dS K,
    // dP = dO V^T K's and V's second copies, if any).
    if (hopper && backward()) {
      copies.push_back({"q_tb_deq", bf16Copy(qTbType)});
      if (kTbType)
        copies.push_back({"k_tb_deq", bf16Copy(kTbType)});
      if (vPtType)
        copies.push_back({"v_pt_deq", bf16Copy(vPtType)});
    }
    if (tiles)
      copies.append({{"q_sf", scaleFactorTiles(qType)},
                     {"k_sf", scaleFactorTiles(kType)},
                     {"v_sf", scaleFactorTiles(vType)}});
    // sm_100a's backward reads K, V and Q's token blocks in the other
    // orientation too (rowTiles()): K's and Q's with channels as rows (the
    // MN-major B of dQ = dS K and dK = dS^T Q), V's with tokens as rows
    // (the K-major operand of dP = dO V^T). Where the recipe has second
    // copies (nvfp4-mixed) these are the tiles of the copy each GEMM reads:
    // K's token blocks (dQ = dS K) and V's per-token copy (dP = dO V^T).
    if (backwardTiles())
      copies.append({{"q_tb_sf_channels", scaleFactorTiles(qTbType)},
                     {"k_sf_channels", scaleFactorTiles(kTb)},
                     {"v_sf_tokens", scaleFactorTiles(dpValueType())}});
    return copies;
  }

  /// The quantizers write the scale-factor tiles of sm_100a's backward,
  /// whose block-scaled MMAs read every operand as an E4M3 (or E2M1)
  /// payload with its tiles in each orientation a GEMM reads it: on
  /// sm_100a, and on sm_90a with the forward's tiles (scale-tiles), so that
  /// a Hopper GPU checks their layout too.
  bool backwardTiles() const { return backward() && tiles; }
  /// V's copy in dP = dO V^T: its per-token copy where the recipe has one
  /// (nvfp4-mixed, mxfp8-strict), else P V's token blocks.
  QTensorType dpValueType() const { return vPtType ? vPtType : vType; }
  /// K's copy in 32x32 token blocks: S = Q K^T's (mxfp8), or dQ = dS K's
  /// where S reads K per token (null there without a backward).
  QTensorType kTokenBlocksType() const {
    return kPerToken() ? kTbType : kType;
  }
  /// dO's copy in 32x32 token blocks (dV = P^T dO): its second copy where
  /// dP reads dO per token, else its only one.
  QTensorType gradOTokenBlocksType() const {
    return gradOTbType ? gradOTbType : gradOType;
  }

  /// What the gradient quantizer writes: dO's 32x32 copy (and, where dP
  /// reads dO per token, its per-token copy), their bf16 dequantizations
  /// on sm_90a (do_deq: dP's, do_tb_deq: dV's when they differ) and
  /// D = rowsum(dO O), [Hq, T] like LSE.
  SmallVector<std::pair<StringRef, GlobalType>> gradientCopies() const {
    QTensorType tb = gradOTokenBlocksType();
    SmallVector<std::pair<StringRef, GlobalType>> copies;
    if (gradOTbType) {
      if (payloads)
        copies.push_back({"do_pt", payloadOf(gradOType)});
      copies.push_back({"do_pt_scales", scalesOf(gradOType)});
    }
    if (payloads)
      copies.push_back({"do_tb", payloadOf(tb)});
    copies.push_back({"do_tb_scales", scalesOf(tb)});
    // sm_100a: dO's scale-factor tiles for dP = dO V^T and dP^T = V dO^T
    // (rows are tokens: of the per-token copy where there is one) and for
    // dV = P^T dO (rows are channels).
    if (backwardTiles())
      copies.append({{"do_sf", scaleFactorTiles(gradOType)},
                     {"do_sf_channels", scaleFactorTiles(tb)}});
    if (hopper) {
      copies.push_back({"do_deq", bf16Copy(gradOType)});
      if (gradOTbType)
        copies.push_back({"do_tb_deq", bf16Copy(gradOTbType)});
    }
    copies.push_back({"delta", globalOf(fwd.getLse().getType())});
    return copies;
  }
};

/// Query tiles of the dK/dV kernel (64: its two consumer warpgroups hold a
/// 128-key tile's dK and dV in registers).
constexpr int64_t kDkdvQueryTile = 64;

/// Which call of a training step launches the kernel: `forward` (O, LSE)
/// or `backward` (dQ, dK, dV, after the forward's).
void setPhase(KernelOp kernel, StringRef phase) {
  kernel->setAttr("flamia.phase", StringAttr::get(kernel.getContext(), phase));
}

/// The block arguments of `buffers`' parameters.
SmallVector<Value> params(KernelOp kernel,
                          ArrayRef<std::pair<StringRef, GlobalType>> buffers) {
  SmallVector<Value> values;
  for (auto [name, type] : buffers)
    values.push_back(KernelSignature::param(kernel, name));
  return values;
}

/// The body of a persistent kernel: take item indices from `counter` until
/// `numItems`, `item(builder, index)` for each.
void buildWorkLoop(KernelOp kernel, Value counter, Value numItems,
                   function_ref<void(OpBuilder &, Value)> item) {
  MLIRContext *ctx = kernel.getContext();
  Location loc = kernel.getLoc();
  Type i32 = IntegerType::get(ctx, 32);
  OpBuilder b = OpBuilder::atBlockEnd(&kernel.getBody().front());
  Value queue = QueueCreateOp::create(b, loc, QueueType::get(ctx), counter,
                                      numItems);
  Value zero = constI32(b, loc, 0), one = constI32(b, loc, 1);
  auto loop = scf::WhileOp::create(b, loc, TypeRange{i32, i32}, ValueRange{zero});
  {
    Block *before = b.createBlock(&loop.getBefore(), {}, {i32}, {loc});
    OpBuilder bb = OpBuilder::atBlockEnd(before);
    Value it = before->getArgument(0);
    Value index = QueueNextOp::create(bb, loc, i32, queue, it,
                                      QueueSide::fetch);
    Value more = arith::CmpIOp::create(bb, loc, arith::CmpIPredicate::slt,
                                       index, numItems);
    scf::ConditionOp::create(bb, loc, more, ValueRange{it, index});
  }
  {
    Block *after = b.createBlock(&loop.getAfter(), {}, {i32, i32}, {loc, loc});
    OpBuilder ab = OpBuilder::atBlockEnd(after);
    item(ab, after->getArgument(1));
    Value next = arith::AddIOp::create(ab, loc, after->getArgument(0), one);
    scf::YieldOp::create(ab, loc, next);
  }
  b.setInsertionPointAfter(loop);
  ReturnOp::create(b, loc);
}

/// The quantization kernel: one CTA per (document-local 32-token block,
/// query head) writes every quantized copy of Q, K and V.
KernelOp buildQuantizeKernel(OpBuilder &mb, const ForwardPlan &plan,
                             KernelSignature &sig) {
  Location loc = plan.loc;
  Type i32 = plan.i32;
  if (!plan.roundQ)
    sig.add("q", globalOf(plan.qArg.getType()));
  sig.add("k", globalOf(plan.kArg.getType()));
  sig.add("v", globalOf(plan.vArg.getType()));
  sig.add("block_info", plan.blockInfoType);
  for (auto [name, type] : plan.quantizedCopies())
    sig.add(name, type);
  plan.addHeadParams(sig);
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
  // K and V: only the key/value heads.
  Value kvHeads = plan.runtimeHeads()
                      ? p("Hkv")
                      : constI32(b, loc, plan.kType.getNumHeads());
  Value isKv =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, head, kvHeads);
  // The CTA's K and V rows are asked of L2 before Q is quantized, so that
  // their DRAM reads overlap Q's instead of following them (the kernel
  // waits on its loads: docs/performance.md, runs 38 and 40). Without Q
  // (round_q), V's before K is quantized.
  if (plan.prefetchKv) {
    auto prefetch = scf::IfOp::create(b, loc, isKv, /*withElse=*/false);
    OpBuilder pb = prefetch.getThenBodyBuilder();
    for (StringRef src : {"k", "v"})
      if (!(plan.roundQ && src == "k"))
        PrefetchRowsOp::create(pb, loc, p(src), start, length, head, p("Hkv"));
  }
  // Q: per token (S = Q K^T) and 32x32 (dK = dS^T Q), every query head.
  // Absent parameters (static head counts) are null values: no operand.
  // (sm_100a's backward: Q's token blocks as dK = dS^T Q's MN-major B,
  // rows are channels.)
  // (Not with round_q: the forward rounds Q itself, and the grid covers
  // only the key/value heads.)
  bool bsb = plan.backwardTiles();
  if (!plan.roundQ)
    QuantizeBlockOp::create(
        b, loc, p("q"), start, length, block, head, p("Hq"), p("q_pt"),
        p("q_pt_scales"), hopper ? p("q_deq") : Value(), p("q_tb"),
        p("q_tb_scales"), hopper && plan.backward() ? p("q_tb_deq") : Value(),
        tiles ? p("q_sf") : Value(), bsb ? p("q_tb_sf_channels") : Value(),
        Value(), bsb ? b.getStringAttr("channels") : StringAttr());
  // K and V: 32x32.
  auto ifOp = scf::IfOp::create(b, loc, isKv, /*withElse=*/false);
  OpBuilder tb = ifOp.getThenBodyBuilder();
  // (mxfp8-strict, nvfp4-mixed: K per token instead, for S = Q K^T, and
  // with a backward also in 32x32 blocks, for dQ = dS K.)
  bool kTb = static_cast<bool>(plan.kTbType);
  // (sm_100a's backward: the token blocks as dQ = dS K's MN-major B, rows
  // are channels.)
  if (plan.kPerToken())
    QuantizeBlockOp::create(
        tb, loc, p("k"), start, length, block, head, p("Hkv"), p("k_pt"),
        p("k_pt_scales"), hopper ? p("k_deq") : Value(),
        kTb ? p("k_tb") : Value(), kTb ? p("k_tb_scales") : Value(),
        kTb && hopper ? p("k_tb_deq") : Value(), tiles ? p("k_sf") : Value(),
        kTb && bsb ? p("k_sf_channels") : Value(), Value(),
        kTb && bsb ? tb.getStringAttr("channels") : StringAttr());
  // (The backward of mxfp8-strict, nvfp4-mixed: V per token too, for
  // dP = dO V^T; on sm_100a with its tiles, rows are tokens, instead of
  // the token blocks' second orientation.)
  bool vPt = static_cast<bool>(plan.vPtType);
  for (auto [src, data, scales, deq, sf, rows, otherSf] :
       {std::make_tuple("k", "k_tb", "k_tb_scales", "k_deq", "k_sf", "tokens",
                        "k_sf_channels"),
        std::make_tuple("v", "v_tb", "v_tb_scales", "v_deq", "v_sf",
                        "channels", "v_sf_tokens")}) {
    if (StringRef(src) == "k" && plan.kPerToken())
      continue;
    bool pt = StringRef(src) == "v" && vPt;
    QuantizeBlockOp::create(
        tb, loc, p(src), start, length, block, head, p("Hkv"),
        pt ? p("v_pt") : Value(), pt ? p("v_pt_scales") : Value(),
        pt && hopper ? p("v_pt_deq") : Value(), p(data), p(scales),
        hopper ? p(deq) : Value(), pt && bsb ? p(otherSf) : Value(),
        tiles ? p(sf) : Value(), bsb && !pt ? p(otherSf) : Value(),
        tiles ? tb.getStringAttr(rows) : StringAttr());
  }
  ReturnOp::create(b, loc);
  setPhase(qk, "forward");
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
    // (round_q: the bf16 original, which the kernel rounds.)
    if (plan.roundQ)
      q = {{"q", globalOf(plan.qArg.getType())}};
    else
      q = {{"q_deq", plan.bf16Copy(plan.qType)}};
    k = {{"k_deq", plan.bf16Copy(plan.kType)}};
    v = {{"v_deq", plan.bf16Copy(plan.vType)}};
  } else {
    q = {{"q_pt", payloadOf(plan.qType)}, {"q_sf", plan.scaleFactorTiles(plan.qType)}};
    // (nvfp4-mixed: K per token, E2M1, for S = Q K^T.)
    k = {{plan.kPerToken() ? "k_pt" : "k_tb", payloadOf(plan.kType)},
         {"k_sf", plan.scaleFactorTiles(plan.kType)}};
    v = {{"v_tb", payloadOf(plan.vType)}, {"v_sf", plan.scaleFactorTiles(plan.vType)}};
  }
  for (auto *operand : {&q, &k, &v})
    for (auto [name, type] : *operand)
      sig.add(name, type);
  if (plan.safe) {
    if (!plan.roundQ)
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
  plan.addHeadParams(sig);
  if (plan.debugScores)
    sig.add("s_fwd", plan.debugScoresType());
  KernelOp ak = sig.create(mb, loc, plan.base + "_attention_fwd",
                           plan.targetAttr, LaunchKind::persistent, /*threads=*/128);
  ak->setAttr(
      "schedule",
      mb.getDictionaryAttr(
          {mb.getNamedAttr("block_m", mb.getI64IntegerAttr(plan.blockM)),
           mb.getNamedAttr("block_n", mb.getI64IntegerAttr(plan.blockN)),
           mb.getNamedAttr("safe_block", mb.getI64IntegerAttr(
                                             fwd.getRecipe().getSafeBlock())),
           mb.getNamedAttr("cost_model", mb.getStringAttr(plan.target)),
           mb.getNamedAttr("order", mb.getStringAttr(plan.order))}));
  setPhase(ak, "forward");
  auto p = [&](StringRef n) { return KernelSignature::param(ak, n); };
  SmallVector<Value> safeOps;
  if (plan.safe)
    safeOps = {p("q"), p("k"), p("v")};
  buildWorkLoop(ak, p("counter"), p("num_items"),
                [&](OpBuilder &ab, Value index) {
    auto tile = AttentionTileOp::create(
        ab, loc, p("items"), index, params(ak, q), params(ak, k),
        params(ak, v), safeOps, p("o"), p("lse"), p("softmax_scale_log2"),
        p("T"), p("Hq"), p("Hkv"), p("s_fwd"), fwd.getCausalAttr(),
        fwd.getRecipe(), fwd.getP(), ab.getI64IntegerAttr(plan.blockM),
        ab.getI64IntegerAttr(plan.blockN));
    tile.setRoundQ(plan.roundQ);
  });
  return ak;
}

/// The gradient quantizer: one CTA per (document-local 32-token block,
/// query head) writes dO's 32x32 copy and D = rowsum(dO O) of its rows.
KernelOp buildGradQuantizeKernel(OpBuilder &mb, const ForwardPlan &plan,
                                 KernelSignature &sig) {
  Location loc = plan.loc;
  Type i32 = plan.i32;
  sig.add("grad_o", globalOf(plan.gradOArg.getType()));
  sig.add("o", globalOf(plan.fwd.getO().getType()));
  sig.add("block_info", plan.blockInfoType);
  for (auto [name, type] : plan.gradientCopies())
    sig.add(name, type);
  sig.add("T", i32);
  plan.addHeadParams(sig);
  KernelOp qk = sig.create(mb, loc, plan.base + "_quantize_grad",
                           plan.targetAttr, LaunchKind::grid, /*threads=*/128);
  OpBuilder b = OpBuilder::atBlockEnd(&qk.getBody().front());
  auto p = [&](StringRef n) { return KernelSignature::param(qk, n); };
  Value block = arith::IndexCastOp::create(
      b, loc, i32, gpu::BlockIdOp::create(b, loc, gpu::Dimension::x));
  Value head = arith::IndexCastOp::create(
      b, loc, i32, gpu::BlockIdOp::create(b, loc, gpu::Dimension::y));
  auto info = BlockInfoLoadOp::create(b, loc, i32, i32, p("block_info"), block);
  Value start = info.getStart(), length = info.getLength();
  // dO in 32x32 blocks (dP = dO V^T and dV = P^T dO, or only the latter
  // where dP reads dO's per-token copy: mxfp8-strict, nvfp4-mixed). On
  // sm_100a the tiles of dP's copy have tokens as rows (the token blocks'
  // or the per-token copy's), dV's channels.
  bool pt = static_cast<bool>(plan.gradOTbType), hopper = plan.hopper;
  bool bsb = plan.backwardTiles();
  QuantizeBlockOp::create(
      b, loc, p("grad_o"), start, length, block, head, p("Hq"),
      pt ? p("do_pt") : Value(), pt ? p("do_pt_scales") : Value(),
      pt && hopper ? p("do_deq") : Value(), p("do_tb"), p("do_tb_scales"),
      hopper ? p(pt ? "do_tb_deq" : "do_deq") : Value(),
      bsb && pt ? p("do_sf") : Value(),
      bsb ? p(pt ? "do_sf_channels" : "do_sf") : Value(),
      bsb && !pt ? p("do_sf_channels") : Value(),
      bsb ? b.getStringAttr(pt ? "channels" : "tokens") : StringAttr());
  RowDotOp::create(b, loc, p("grad_o"), p("o"), p("delta"), start, length,
                   head, p("T"), p("Hq"));
  ReturnOp::create(b, loc);
  setPhase(qk, "backward");
  return qk;
}

/// The bf16 copy of V that dP = dO V^T reads on sm_90a: V's per-token copy
/// where the recipe has one (mxfp8-strict, nvfp4-mixed), else P V's.
StringRef dpValueCopy(const ForwardPlan &plan) {
  return plan.vPtType ? "v_pt_deq" : "v_deq";
}

/// The buffers each operand group of a backward tile op reads, by kernel
/// parameter name. On sm_90a one bf16 copy each: the forward's dequantized
/// copies of Q, K, V (S's and dP's), dO's (dP's), the second copies of `dq`
/// (K's for dS K) or of `dkdv` (Q's for dS^T Q, dO's for P^T dO). On sm_100a
/// (block-scaled MMAs) an E4M3 payload followed by its scale-factor tiles in
/// each orientation its kernel reads: rows are tokens where the head dim is
/// contracted (K-major: S, dP, S^T, dP^T), channels where tokens are
/// (MN-major: dQ = dS K, dV = P^T dO, dK = dS^T Q).
enum class BackwardKernel { dq, dkdv };
using BufferList = SmallVector<std::pair<StringRef, GlobalType>>;
struct BackwardOperands {
  BufferList q, k, v, gradO, second;
};
BackwardOperands backwardOperands(const ForwardPlan &plan,
                                  BackwardKernel kernel) {
  BackwardOperands ops;
  bool dq = kernel == BackwardKernel::dq;
  if (plan.hopper) {
    ops.q = {{"q_deq", plan.bf16Copy(plan.qType)}};
    ops.k = {{"k_deq", plan.bf16Copy(plan.kType)}};
    ops.v = {{dpValueCopy(plan),
              plan.bf16Copy(plan.vPtType ? plan.vPtType : plan.vType)}};
    ops.gradO = {{"do_deq", plan.bf16Copy(plan.gradOType)}};
    if (dq && plan.kTbType)
      ops.second = {{"k_tb_deq", plan.bf16Copy(plan.kTbType)}};
    if (!dq) {
      ops.second = {{"q_tb_deq", plan.bf16Copy(plan.qTbType)}};
      if (plan.gradOTbType)
        ops.second.push_back({"do_tb_deq", plan.bf16Copy(plan.gradOTbType)});
    }
    return ops;
  }
  // sm_100a: each group is a payload with the tiles of each orientation
  // its kernel reads it in. mxfp8: one token-block copy of K, V and dO
  // serves both (two tile sets on one payload). Second copies
  // (nvfp4-mixed): the per-token copies where the head dim is contracted,
  // the token blocks in `second` (dQ: K's; dK/dV: Q's, then dO's).
  ops.q = {{"q_pt", payloadOf(plan.qType)},
           {"q_sf", plan.scaleFactorTiles(plan.qType)}};
  ops.k = {{plan.kPerToken() ? "k_pt" : "k_tb", payloadOf(plan.kType)},
           {"k_sf", plan.scaleFactorTiles(plan.kType)}};
  ops.v = {{plan.vPtType ? "v_pt" : "v_tb", payloadOf(plan.dpValueType())},
           {"v_sf_tokens", plan.scaleFactorTiles(plan.dpValueType())}};
  ops.gradO = {
      {plan.gradOTbType ? "do_pt" : "do_tb", payloadOf(plan.gradOType)},
      {"do_sf", plan.scaleFactorTiles(plan.gradOType)}};
  QTensorType kTb = plan.kTokenBlocksType();
  QTensorType gradOTb = plan.gradOTokenBlocksType();
  std::pair<StringRef, GlobalType> kChannels = {"k_sf_channels",
                                                plan.scaleFactorTiles(kTb)};
  std::pair<StringRef, GlobalType> gradOChannels = {
      "do_sf_channels", plan.scaleFactorTiles(gradOTb)};
  if (dq) {
    if (plan.kTbType)
      ops.second = {{"k_tb", payloadOf(kTb)}, kChannels};
    else
      ops.k.push_back(kChannels);
    return ops;
  }
  ops.second = {{"q_tb", payloadOf(plan.qTbType)},
                {"q_tb_sf_channels", plan.scaleFactorTiles(plan.qTbType)}};
  if (plan.gradOTbType)
    ops.second.append({{"do_tb", payloadOf(gradOTb)}, gradOChannels});
  else
    ops.gradO.push_back(gradOChannels);
  return ops;
}

/// Adds a backward kernel's operands to its signature: `ops`, the bf16
/// originals for the safe block, LSE and D.
void addBackwardOperands(const ForwardPlan &plan, KernelSignature &sig,
                         const BackwardOperands &ops) {
  for (const BufferList *group : {&ops.q, &ops.k, &ops.v, &ops.gradO,
                                  &ops.second})
    for (auto [name, type] : *group)
      sig.add(name, type);
  if (plan.safe) {
    sig.add("q", globalOf(plan.qArg.getType()));
    sig.add("k", globalOf(plan.kArg.getType()));
    sig.add("v", globalOf(plan.vArg.getType()));
    sig.add("grad_o", globalOf(plan.gradOArg.getType()));
  }
  sig.add("lse", globalOf(plan.fwd.getLse().getType()));
  sig.add("delta", globalOf(plan.fwd.getLse().getType()));
}

SmallVector<Value> safeOperands(const ForwardPlan &plan, KernelOp kernel) {
  if (!plan.safe)
    return {};
  auto p = [&](StringRef n) { return KernelSignature::param(kernel, n); };
  return {p("q"), p("k"), p("v"), p("grad_o")};
}

/// The persistent dQ kernel: the forward's items (document, query head,
/// query tile), one flamia.attention_dq_tile each.
KernelOp buildDqKernel(OpBuilder &mb, const ForwardPlan &plan,
                       KernelSignature &sig) {
  Location loc = plan.loc;
  BackwardOperands ops = backwardOperands(plan, BackwardKernel::dq);
  addBackwardOperands(plan, sig, ops);
  sig.add("dq", globalOf(plan.bwd.getGradQ().getType()));
  sig.add("items", plan.itemsType);
  sig.add("num_items", plan.i32);
  sig.add("counter", plan.counterType);
  sig.add("softmax_scale_log2", plan.f32);
  sig.add("softmax_scale", plan.f32);
  sig.add("T", plan.i32);
  plan.addHeadParams(sig);
  if (plan.debugScores)
    sig.add("s_dq", plan.debugScoresType());
  KernelOp kernel = sig.create(mb, loc, plan.base + "_attention_dq",
                               plan.targetAttr, LaunchKind::persistent,
                               /*threads=*/128);
  auto p = [&](StringRef n) { return KernelSignature::param(kernel, n); };
  buildWorkLoop(
      kernel, p("counter"), p("num_items"), [&](OpBuilder &ab, Value index) {
        AttentionDqTileOp::create(
            ab, loc, p("items"), index, params(kernel, ops.q),
            params(kernel, ops.k), params(kernel, ops.v),
            params(kernel, ops.gradO), params(kernel, ops.second),
            safeOperands(plan, kernel), p("lse"), p("delta"), p("dq"),
            p("softmax_scale_log2"), p("softmax_scale"), p("T"), p("Hq"),
            p("Hkv"), p("s_dq"), plan.fwd.getCausalAttr(),
            plan.fwd.getRecipe(), ab.getI64IntegerAttr(plan.blockM),
            ab.getI64IntegerAttr(plan.blockN));
      });
  setPhase(kernel, "backward");
  return kernel;
}

/// The persistent dK/dV kernel: key-tile items (document, key/value head,
/// key tile), one flamia.attention_dkdv_tile each.
KernelOp buildDkdvKernel(OpBuilder &mb, const ForwardPlan &plan,
                         KernelSignature &sig) {
  Location loc = plan.loc;
  BackwardOperands ops = backwardOperands(plan, BackwardKernel::dkdv);
  addBackwardOperands(plan, sig, ops);
  sig.add("dk", globalOf(plan.bwd.getGradK().getType()));
  sig.add("dv", globalOf(plan.bwd.getGradV().getType()));
  sig.add("kv_items", plan.itemsType);
  sig.add("num_kv_items", plan.i32);
  sig.add("counter", plan.counterType);
  sig.add("softmax_scale_log2", plan.f32);
  sig.add("softmax_scale", plan.f32);
  sig.add("T", plan.i32);
  plan.addHeadParams(sig);
  KernelOp kernel = sig.create(mb, loc, plan.base + "_attention_dkdv",
                               plan.targetAttr, LaunchKind::persistent,
                               /*threads=*/128);
  auto p = [&](StringRef n) { return KernelSignature::param(kernel, n); };
  // (sm_90a: Q's token-block copy, then dO's when dV reads another copy
  // than dP; sm_100a: Q's token-block payload and its channel-row tiles.)
  BufferList qTb(ops.second.begin(),
                 ops.second.begin() + (plan.hopper ? 1 : 2));
  BufferList gradOTb(ops.second.begin() + qTb.size(), ops.second.end());
  buildWorkLoop(
      kernel, p("counter"), p("num_kv_items"), [&](OpBuilder &ab, Value index) {
        AttentionDkdvTileOp::create(
            ab, loc, p("kv_items"), index, params(kernel, ops.q),
            params(kernel, ops.k), params(kernel, ops.v),
            params(kernel, ops.gradO), params(kernel, qTb),
            params(kernel, gradOTb), safeOperands(plan, kernel), p("lse"),
            p("delta"), p("dk"), p("dv"), p("softmax_scale_log2"),
            p("softmax_scale"), p("T"), p("Hq"), p("Hkv"),
            plan.fwd.getCausalAttr(), plan.fwd.getRecipe(), plan.bwd.getP(),
            ab.getI64IntegerAttr(kDkdvQueryTile),
            ab.getI64IntegerAttr(plan.blockN));
      });
  setPhase(kernel, "backward");
  return kernel;
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
                        dimsOf(mb, type, name == "cu_seqlens" ? "NUM_DOCS + 1" : "T",
                               headSymbolOf(name)))};
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
  for (auto [name, type] : plan.outputs()) {
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
        name.contains("_sf_") || name == "block_info")
      symbol = "NB";
    else if (name == "items")
      symbol = "NUM_ITEMS";
    else if (name == "kv_items")
      symbol = "NUM_KV_ITEMS";
    buf[name] = WorkspaceOp::create(b, loc, type, b.getStringAttr(name),
                                    WorkspaceKindAttr::get(b.getContext(), kind),
                                    dimsOf(b, cast<GlobalType>(type), symbol,
                                           headSymbolOf(name)));
  };
  for (auto [name, type] : plan.quantizedCopies())
    workspace(WorkspaceKind::workspace, name, type);
  if (plan.backward())
    for (auto [name, type] : plan.gradientCopies())
      workspace(WorkspaceKind::workspace, name, type);
  if (plan.debugScores) {
    workspace(WorkspaceKind::workspace, "s_fwd", plan.debugScoresType());
    workspace(WorkspaceKind::workspace, "s_dq", plan.debugScoresType());
  }
  workspace(WorkspaceKind::schedule, "block_info", plan.blockInfoType);
  workspace(WorkspaceKind::schedule, "items", plan.itemsType);
  if (plan.backward())
    workspace(WorkspaceKind::schedule, "kv_items", plan.itemsType);
  workspace(WorkspaceKind::schedule, "counter", plan.counterType);
  buf["num_items"] = RuntimeValueOp::create(b, loc, plan.i32, "NUM_ITEMS");
  buf["softmax_scale_log2"] =
      RuntimeValueOp::create(b, loc, plan.f32, "softmax_scale_log2");
  if (plan.backward()) {
    buf["num_kv_items"] =
        RuntimeValueOp::create(b, loc, plan.i32, "NUM_KV_ITEMS");
    buf["softmax_scale"] =
        RuntimeValueOp::create(b, loc, plan.f32, "softmax_scale");
  }
  buf["T"] = RuntimeValueOp::create(b, loc, plan.i32, "T");
  if (plan.runtimeHeads()) {
    buf["Hq"] = RuntimeValueOp::create(b, loc, plan.i32, "Hq");
    buf["Hkv"] = RuntimeValueOp::create(b, loc, plan.i32, "Hkv");
  }
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

/// The recipe's spelling in messages: its strict preset's name when strict.
std::string recipeName(const numerics::RecipeKind &kind, RecipeAttr recipe) {
  return recipe.getStrict() ? kind.strictPreset : kind.name;
}

/// `v`, operand `name` of `op` for `tensor` in `gemm`, is the qtensor the
/// recipe's contract prescribes there, quantized from a function argument.
LogicalResult expectContractOperand(Operation *op, StringRef recipeName,
                                    const numerics::RecipeConfig &contract,
                                    Value v, StringRef name, Gemm gemm,
                                    AttnTensor tensor) {
  auto q = v.getDefiningOp<QuantizeOp>();
  auto type = dyn_cast<QTensorType>(v.getType());
  if (!q || !type)
    return op->emitOpError()
           << "flamia-varlen-schedule: " << name
           << " must come from flamia.quantize (run flamia-graph-pipeline "
              "first)";
  if (!isa<BlockArgument>(q.getInput()))
    return op->emitOpError() << "flamia-varlen-schedule: " << name
                             << " must quantize a function argument";
  const numerics::OperandQuantization &use =
      contract.operands[static_cast<int>(getOperandUse(gemm, tensor))];
  if (!isContractQTensorLayout(use))
    return op->emitOpError()
           << "flamia-varlen-schedule: recipe " << recipeName << " quantizes "
           << name << " in a layout no kernel reads";
  QTensorType expected = getContractQTensorType(
      cast<RankedTensorType>(q.getInput().getType()), use);
  if (type != expected)
    return op->emitOpError()
           << "flamia-varlen-schedule: the kernels implement recipe "
           << recipeName << "'s contract, where " << name << " is " << expected
           << ", but it is " << type;
  return success();
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
    // Each operand is the qtensor the contract prescribes for its use.
    auto expect = [&](Value v, StringRef name, Gemm gemm, AttnTensor tensor) {
      return expectContractOperand(fwd, recipeName(**kind, recipe), *contract,
                                   v, name, gemm, tensor);
    };
    if (failed(expect(fwd.getQ(), "q", Gemm::QK, AttnTensor::Q)) ||
        failed(expect(fwd.getK(), "k", Gemm::QK, AttnTensor::K)) ||
        failed(expect(fwd.getV(), "v", Gemm::PV, AttnTensor::V)))
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

  /// The backward the kernels implement: where the recipe registry lists
  /// backward kernels (sm_90a); S recomputed from the forward's own Q and K
  /// copies (flamia-fwd-bwd-consistency); every other operand the copy the
  /// recipe's contract prescribes for its GEMM, of the right argument: V's
  /// and K's the forward's where the layouts agree (mxfp8), second copies
  /// where they differ (mxfp8-strict, nvfp4-mixed: V per token in dP, K in
  /// 32x32 blocks in dS K), dO one copy or two likewise, Q's 32x32 copy in
  /// dK; O, LSE, cu_seqlens and the attributes those of the forward; P
  /// with the forward's fixed scale, dS E4M3 in online blocks of 32.
  LogicalResult checkSupported(AttentionBwdOp bwd, AttentionFwdOp fwd) {
    auto fail = [&](const Twine &message) {
      return bwd.emitOpError() << "flamia-varlen-schedule: " << message;
    };
    namespace num = ::flamia::numerics;
    RecipeAttr recipe = fwd.getRecipe();
    FailureOr<const num::RecipeKind *> kind = getRecipeKind(bwd, recipe);
    if (failed(kind))
      return failure();
    int64_t headDim = cast<QTensorType>(fwd.getQ().getType()).getHeadDim();
    if (num::Status s = num::checkBackwardKernels(**kind, recipe.getStrict(),
                                                  target, headDim);
        !s)
      return fail(s.message);
    if (bwd.getQ() != fwd.getQ() || bwd.getK() != fwd.getK())
      return fail("the backward must recompute S from the forward's own "
                  "quantized Q and K (run flamia-graph-pipeline, whose "
                  "flamia-fwd-bwd-consistency links them)");
    auto quantizedArg = [&](Value v) -> BlockArgument {
      auto q = v.getDefiningOp<QuantizeOp>();
      return q ? dyn_cast<BlockArgument>(q.getInput()) : BlockArgument();
    };
    // The operands of the other GEMMs: the contract's copies (one copy of
    // a tensor where two uses agree: flamia-reuse-scale-layouts shares it).
    FailureOr<num::RecipeConfig> contract = getContractRecipe(bwd, recipe);
    if (failed(contract))
      return failure();
    auto expect = [&](Value v, StringRef name, Gemm gemm, AttnTensor tensor) {
      return expectContractOperand(bwd, recipeName(**kind, recipe), *contract,
                                   v, name, gemm, tensor);
    };
    if (failed(expect(bwd.getDovGradO(), "dO in dP = dO V^T", Gemm::DOV,
                      AttnTensor::GradO)) ||
        failed(expect(bwd.getDovV(), "V in dP = dO V^T", Gemm::DOV,
                      AttnTensor::V)) ||
        failed(expect(bwd.getDskK(), "K in dQ = dS K", Gemm::DSK,
                      AttnTensor::K)) ||
        failed(expect(bwd.getDsqQ(), "Q in dK = dS^T Q", Gemm::DSQ,
                      AttnTensor::Q)) ||
        failed(expect(bwd.getPdoGradO(), "dO in dV = P^T dO", Gemm::PDO,
                      AttnTensor::GradO)))
      return failure();
    if (quantizedArg(bwd.getDovV()) != quantizedArg(fwd.getV()) ||
        quantizedArg(bwd.getDskK()) != quantizedArg(fwd.getK()) ||
        quantizedArg(bwd.getPdoGradO()) != quantizedArg(bwd.getDovGradO()))
      return fail("dP = dO V^T, dQ = dS K and dV = P^T dO must read copies of "
                  "the forward's V and K and of one dO argument");
    // The kernels' second copies: V per token in dP (a per-token copy of
    // V), K and dO in 32x32 token blocks in dS K and P^T dO.
    if (bwd.getDovV().getType() != fwd.getV().getType() &&
        !cast<QTensorType>(bwd.getDovV().getType()).getLayout().isPerToken())
      return fail("a second copy of V for dP = dO V^T must be per token");
    if (bwd.getDskK().getType() != fwd.getK().getType() &&
        cast<QTensorType>(bwd.getDskK().getType()).getLayout().isPerToken())
      return fail("a second copy of K for dQ = dS K must be in token blocks");
    if (bwd.getDskK().getType() != fwd.getK().getType() &&
        !cast<QTensorType>(fwd.getK().getType()).getLayout().isPerToken())
      return fail("dQ = dS K reads a second copy of K only where S = Q K^T "
                  "reads K per token");
    if (bwd.getDovGradO().getType() != bwd.getPdoGradO().getType() &&
        cast<QTensorType>(bwd.getPdoGradO().getType()).getLayout().isPerToken())
      return fail("a second copy of dO for dV = P^T dO must be in token "
                  "blocks");
    auto isTokenBlock32 = [](Value v) {
      auto type = cast<QTensorType>(v.getType());
      ScaleLayoutAttr layout = type.getLayout();
      return isa<Float8E4M3FNType>(type.getElementType()) &&
             isa<Float8E8M0FNUType>(type.getScaleType()) &&
             layout.getTokenBlock() == 32 && layout.getChannelBlock() == 32 &&
             layout.isDocumentLocal();
    };
    BlockArgument gradO = quantizedArg(bwd.getDovGradO());
    if (!gradO || !isTokenBlock32(bwd.getPdoGradO()))
      return fail("dO must be a function argument quantized in "
                  "document-local 32x32 token blocks (E4M3, E8M0 scales) "
                  "for dV = P^T dO");
    if (quantizedArg(bwd.getDsqQ()) != quantizedArg(fwd.getQ()) ||
        !isTokenBlock32(bwd.getDsqQ()))
      return fail("dK = dS^T Q must read Q quantized in document-local 32x32 "
                  "token blocks");
    if (bwd.getO() != fwd.getO() || bwd.getLse() != fwd.getLse() ||
        bwd.getCuSeqlens() != fwd.getCuSeqlens())
      return fail("O, LSE and cu_seqlens must be the forward's");
    if (bwd.getCausal() != fwd.getCausal() || bwd.getRecipe() != fwd.getRecipe() ||
        bwd.getSoftmaxScaleAttr() != fwd.getSoftmaxScaleAttr())
      return fail("causal, recipe and softmax_scale must be the forward's");
    if (bwd.getP() != fwd.getP())
      return fail("P must be rounded as in the forward");
    PrecisionAttr ds = bwd.getDs();
    if (!isa<Float8E4M3FNType>(ds.getElementType()) || ds.getOnlineBlock() != 32)
      return fail("the kernels quantize dS to E4M3 in online blocks of 32, "
                  "got ") << ds;
    SmallVector<Value> safe(bwd.getSafe());
    if (fwd.getRecipe().hasSafeBlock()) {
      SmallVector<Value> fwdSafe(fwd.getSafe());
      if (safe.size() != 4 || fwdSafe.size() != 3 ||
          !std::equal(fwdSafe.begin(), fwdSafe.end(), safe.begin()) ||
          safe[3] != gradO)
        return fail("the safe-block operands must be the bf16 arguments Q, "
                    "K, V (the forward's) and dO");
    }
    for (Value g : {bwd.getGradQ(), bwd.getGradK(), bwd.getGradV()}) {
      Type e = cast<RankedTensorType>(g.getType()).getElementType();
      if (!e.isF32() && !e.isBF16())
        return fail("gradients are written as f32 or bf16");
    }
    return success();
  }

  LogicalResult lower(func::FuncOp func, AttentionFwdOp fwd,
                      AttentionBwdOp bwd, SymbolTable &symbols) {
    if (failed(checkSupported(fwd)) ||
        (bwd && failed(checkSupported(bwd, fwd))))
      return failure();
    FailureOr<ForwardPlan> plan = ForwardPlan::get(
        func, fwd, bwd, target, scaleTiles, payloads, blockM, blockN);
    if (failed(plan) || failed(plan->checkSignature()))
      return failure();
    // The target's default order, or the option's.
    ScheduleOrder scheduleOrder = defaultScheduleOrder(
        plan->hopper ? ScheduleTarget::Sm90a : ScheduleTarget::Sm100a);
    std::string why;
    if (!order.empty() && !parseKernelScheduleOrder(order, scheduleOrder, why))
      return fwd.emitOpError() << "flamia-varlen-schedule: " << why;
    plan->order = scheduleOrderName(scheduleOrder);
    if (debugScores && (!bwd || !plan->hopper))
      return fwd.emitOpError()
             << "flamia-varlen-schedule: debug-scores compares the forward's "
                "S with the dQ kernel's: it needs a training step on sm_90a";
    plan->debugScores = debugScores;
    plan->prefetchKv = prefetchKv;
    plan->roundQ = roundQ && plan->hopper && !bwd && !plan->payloads &&
                   !plan->tiles &&
                   fwd.getRecipe().getKind() == RecipeKind::mxfp8 &&
                   plan->qType.getLayout().isPerToken() &&
                   isa<Float8E4M3FNType>(plan->qType.getElementType());
    OpBuilder mb(func);
    KernelSignature qsig, asig;
    KernelOp qk = buildQuantizeKernel(mb, *plan, qsig);
    KernelOp ak = buildForwardKernel(mb, *plan, asig);
    symbols.insert(qk);
    symbols.insert(ak);
    SmallVector<PlannedLaunch> launches = {
        {qk, &qsig, {"NB", plan->roundQ ? "Hkv" : "Hq", "1"}},
                                           {ak, &asig, {"NUM_SMS", "1", "1"}}};
    KernelSignature gsig, dqsig, dkvsig;
    if (plan->backward()) {
      KernelOp gk = buildGradQuantizeKernel(mb, *plan, gsig);
      KernelOp dqk = buildDqKernel(mb, *plan, dqsig);
      KernelOp dkvk = buildDkdvKernel(mb, *plan, dkvsig);
      for (KernelOp k : {gk, dqk, dkvk})
        symbols.insert(k);
      launches.append({{gk, &gsig, {"NB", "Hq", "1"}},
                       {dqk, &dqsig, {"NUM_SMS", "1", "1"}},
                       {dkvk, &dkvsig, {"NUM_SMS", "1", "1"}}});
    }
    buildLaunchPlan(mb, *plan, launches);
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
      SmallVector<AttentionBwdOp> bwds;
      func.walk([&](Operation *op) {
        if (auto f = dyn_cast<AttentionFwdOp>(op))
          fwds.push_back(f);
        if (auto b = dyn_cast<AttentionBwdOp>(op))
          bwds.push_back(b);
      });
      if (fwds.empty() && bwds.empty())
        continue;
      if (fwds.empty()) {
        bwds.front().emitOpError()
            << "flamia-varlen-schedule: a backward is compiled with its "
               "forward (a training step returning O, LSE, dQ, dK, dV): the "
               "forward's kernels write the quantized copies and LSE it reads";
        return signalPassFailure();
      }
      if (bwds.size() > 1) {
        func.emitOpError() << "flamia-varlen-schedule: one backward per "
                              "function is supported, got "
                           << bwds.size();
        return signalPassFailure();
      }
      if (fwds.size() != 1) {
        func.emitOpError() << "flamia-varlen-schedule: one attention per "
                              "function is supported, got "
                           << fwds.size();
        return signalPassFailure();
      }
      if (failed(lower(func, fwds.front(),
                       bwds.empty() ? AttentionBwdOp() : bwds.front(),
                       symbols)))
        return signalPassFailure();
    }
  }
};

} // namespace
