//===- AttentionOps.cpp - Attention ops on the CPU reference --------------===//
//
// How an attention op's attributes and operands become one call of the CPU
// reference (numerics::referenceForward / referenceBackward):
//
//   recipe       the kind's numerics preset from the recipe registry
//                (flamia/Numerics/RecipeRegistry.h);
//                safe_block -> RecipeConfig::safeBlock (absent: 0, none);
//                strict -> RecipeConfig::strict (bf16 ops: makeStrict)
//   causal, softmax_scale, cu_seqlens -> AttentionInputs (documents from
//                cu_seqlens, one document without)
//   operands     flamia.attention(_grad): the kind's preset.
//                attention_fwd/bwd: each GEMM use (numerics::OperandUse)
//                reads a bf16 tensor (OperandQuantization::bf16) or a
//                flamia.quantize result: element format and layout from its
//                type (1xC per token, TxC document-local or packed token
//                blocks, tensor); document-local blocks quantized without
//                cu_seqlens are packed blocks of the op's documents
//   p            bf16, or E4M3 with the fixed scale 2^8 (quantizeP)
//   ds           bf16, or online blocks of N along the contraction axis,
//                document-local (DsQuantization)
//
// The reference reads one Q, K, V (and dO) for every use and for the safe
// block; every operand standing for Q must therefore hold (or quantize) the
// same values, else the op is reported as not interpretable.
//
//===----------------------------------------------------------------------===//
#include "Environment.h"

#include "flamia/Numerics/Formats.h"
#include "flamia/Numerics/RecipeConfig.h"
#include "flamia/Numerics/RecipeRegistry.h"
#include "flamia/Numerics/ReferenceAttention.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cstring>

using namespace mlir;
using namespace flamia;
using namespace flamia::interp;
namespace num = ::flamia::numerics;

namespace {

/// One tensor the reference reads (Q, K, V or dO) and the operands of the op
/// that stand for it.
struct Role {
  struct Member {
    std::string what;
    TensorPtr tensor;
  };
  const char *name;
  SmallVector<Member, 4> members;
};

std::string describeIndex(ArrayRef<int64_t> shape, int64_t index) {
  SmallVector<int64_t, 4> idx(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    idx[d] = index % shape[d];
    index /= shape[d];
  }
  std::string s = "[";
  for (auto [i, v] : llvm::enumerate(idx))
    s += (i ? ", " : "") + std::to_string(v);
  return s + "]";
}

/// The one tensor every member of `role` holds (bitwise, bf16 or f32 kind
/// alike), holding bf16 values only (the reference rounds its inputs to
/// bf16 before quantizing them).
FailureOr<TensorPtr> resolveRole(Operation *op, const Role &role) {
  for (const Role::Member &m : role.members)
    if (!m.tensor)
      return op->emitOpError()
             << "cannot be interpreted: " << m.what << " is not a tensor value";
  const Role::Member &first = role.members.front();
  const HostTensor &a = *first.tensor;
  for (const Role::Member &m : ArrayRef(role.members).drop_front()) {
    const HostTensor &b = *m.tensor;
    if (&a == &b)
      continue;
    if (a.shape != b.shape)
      return op->emitOpError()
             << "cannot be interpreted: the reference reads one " << role.name
             << " for every use, but " << first.what << " has shape "
             << a.describe() << " and " << m.what << " has shape "
             << b.describe();
    for (size_t i = 0; i < a.values.size(); ++i)
      if (num::bitsOf(a.values[i]) != num::bitsOf(b.values[i]))
        return op->emitOpError()
               << "cannot be interpreted: the reference reads one " << role.name
               << " for every use, but " << first.what << " and " << m.what
               << " hold different values (first at "
               << describeIndex(a.shape, static_cast<int64_t>(i)) << ": "
               << a.values[i] << " vs " << b.values[i] << ")";
  }
  for (size_t i = 0; i < a.values.size(); ++i)
    if ((num::bitsOf(a.values[i]) & 0xffffu) != 0)
      return op->emitOpError()
             << "cannot be interpreted: " << first.what
             << " holds values that are not bf16 (first at "
             << describeIndex(a.shape, static_cast<int64_t>(i)) << ": "
             << a.values[i]
             << "); the reference quantizes the bf16 inputs of attention";
  return first.tensor;
}

/// The reference's copy for one GEMM use of an attention_fwd/bwd operand.
LogicalResult mapUse(Operation *op, const Environment &env, Value operand,
                     StringRef what, num::OperandUse use,
                     ArrayRef<int64_t> opStarts, num::RecipeConfig &recipe,
                     Role &role) {
  if (TensorPtr t = env.getTensor(operand)) {
    recipe.operand(use) = num::OperandQuantization::bf16();
    role.members.push_back({("'" + what + "'").str(), t});
    return success();
  }
  QTensorPtr q = env.getQTensor(operand);
  if (!q)
    return op->emitOpError() << "cannot be interpreted: '" << what
                             << "' is not made by flamia.quantize in this "
                                "function";
  std::optional<num::QuantFormat> format = getQuantFormat(q->type);
  if (!format)
    return op->emitOpError()
           << "cannot be interpreted: '" << what << "' is " << q->type
           << "; the reference attention reads MX (E8M0 scales) and NVFP4 "
              "(E2M1 with E4M3 scales) operands";
  num::ScaleLayout layout = getNumericsLayout(q->type.getLayout());
  if (layout.blocking == num::TokenBlocking::DocumentLocal &&
      layout.tokenBlock > 1 &&
      ArrayRef<int64_t>(q->documentStarts) != opStarts) {
    if (q->documentStarts.size() != 2) {
      InFlightDiagnostic diag =
          op->emitOpError()
          << "cannot be interpreted: '" << what
          << "' was quantized in token blocks of other documents than this "
             "op's (its flamia.quantize has other cu_seqlens); the reference "
             "quantizes every operand over the attention's documents";
      diag.attachNote(q->producer->getLoc()) << "quantized here";
      return diag;
    }
    // Quantized as one document: blocks aligned to the packed tensor.
    layout.blocking = num::TokenBlocking::Packed;
  }
  recipe.operand(use) = {true, layout, format->element, format->scale};
  role.members.push_back(
      {("the input of the flamia.quantize of '" + what + "'").str(),
       q->source});
  return success();
}

/// Adds `safe` operands (q, k, v[, grad_o]) to their roles.
void addSafeOperands(const Environment &env, OperandRange safe,
                     ArrayRef<Role *> roles) {
  static const char *names[] = {"safe q", "safe k", "safe v", "safe grad_o"};
  for (auto [i, v] : llvm::enumerate(safe))
    if (i < roles.size())
      roles[i]->members.push_back(
          {("'" + StringRef(names[i]) + "'").str(), env.getTensor(v)});
}

/// The registry's numerics preset of `recipe` (kind, strict, safe block):
/// an error when the numerics library does not implement the kind.
FailureOr<num::RecipeConfig> registryRecipe(Operation *op, RecipeAttr recipe) {
  const num::RecipeKind *kind = nullptr;
  num::RecipeConfig r;
  num::Status s = num::lookupRecipeKindByDialectName(
      stringifyRecipeKind(recipe.getKind()).str(), kind);
  if (s)
    s = num::contractRecipe(*kind, recipe.getStrict(), recipe.getSafeBlock(), r);
  if (!s)
    return op->emitOpError() << "cannot be interpreted: " << s.message;
  return r;
}

LogicalResult mapRecipeKind(Operation *op, RecipeAttr recipe) {
  return success(succeeded(registryRecipe(op, recipe)));
}

/// An attention_fwd/bwd recipe attribute: the safe block and strict flag;
/// the operands are mapped one by one.
FailureOr<num::RecipeConfig> mapLoweredRecipe(Operation *op,
                                              RecipeAttr recipe) {
  if (failed(mapRecipeKind(op, recipe)))
    return failure();
  num::RecipeConfig r;
  r.name = "ir";
  r.safeBlock = recipe.getSafeBlock();
  r.strict = recipe.getStrict();
  return r;
}

/// flamia.attention(_grad): the contract's preset of the op's recipe kind
/// (the recipe registry) with its safe block (none when absent) and strict
/// flag.
FailureOr<num::RecipeConfig> mapContractRecipe(Operation *op,
                                               RecipeAttr recipe) {
  return registryRecipe(op, recipe);
}

/// P in P V and P^T dO: bf16, or E4M3 of P * 2^8.
LogicalResult mapP(Operation *op, PrecisionAttr p, num::RecipeConfig &r) {
  if (p.getElementType().isBF16()) {
    r.quantizeP = false;
    return success();
  }
  if (isa<Float8E4M3FNType>(p.getElementType()) && p.getFixedScale() &&
      *p.getFixedScale() == 8 && !p.getOnlineBlock()) {
    r.quantizeP = true;
    return success();
  }
  return op->emitOpError()
         << "cannot be interpreted: p = " << p
         << "; the reference rounds P to bf16 or to E4M3 with the fixed "
            "scale 2^8 (#flamia.precision<f8E4M3FN, fixed_scale = 8>)";
}

/// dS in the dS GEMMs: bf16, or online blocks along the contraction axis.
LogicalResult mapDs(Operation *op, PrecisionAttr ds, num::RecipeConfig &r) {
  Type e = ds.getElementType();
  if (e.isBF16()) {
    r.dS = {};
    return success();
  }
  std::optional<num::ElementFormat> element;
  if (isa<Float8E4M3FNType>(e))
    element = num::ElementFormat::E4M3;
  else if (isa<Float8E5M2Type>(e))
    element = num::ElementFormat::E5M2;
  else if (isa<Float4E2M1FNType>(e))
    element = num::ElementFormat::E2M1;
  if (!element || !ds.getOnlineBlock() || ds.getFixedScale())
    return op->emitOpError()
           << "cannot be interpreted: ds = " << ds
           << "; the reference quantizes dS to bf16 or online (E8M0 scale "
              "per block along the contraction axis, e.g. "
              "#flamia.precision<f8E4M3FN, online = 32>)";
  r.dS = {true, *ds.getOnlineBlock(), num::TokenBlocking::DocumentLocal,
          *element};
  return success();
}

/// Shapes, documents and scalars of one attention call.
struct Problem {
  DocumentLayout docs;
  num::AttentionInputs in;
  std::vector<int64_t> starts;
};

/// Fills `p` from the resolved Q, K, V (checking the shapes at run time; the
/// verifier cannot when T is dynamic) and the op's attributes.
LogicalResult makeProblem(Operation *op, const HostTensor &q,
                          const HostTensor &k, const HostTensor &v,
                          ArrayRef<int64_t> starts, bool causal,
                          std::optional<APFloat> softmaxScale, Problem &p) {
  if (q.shape.size() != 3 || k.shape.size() != 3 || k.shape != v.shape ||
      k.shape[0] != q.shape[0] || k.shape[2] != q.shape[2] || k.shape[1] < 1 ||
      q.shape[1] % k.shape[1] != 0)
    return op->emitOpError()
           << "cannot be interpreted: Q " << q.describe() << ", K "
           << k.describe() << " and V " << v.describe()
           << " are not [T, Hq, D], [T, Hkv, D], [T, Hkv, "
              "D] with Hkv dividing Hq";
  p.starts.assign(starts.begin(), starts.end());
  p.docs = makeDocumentLayout(p.starts);
  p.in.numTokens = q.shape[0];
  p.in.numHeads = q.shape[1];
  p.in.numKvHeads = k.shape[1];
  p.in.headDim = q.shape[2];
  p.in.q = q.values.data();
  p.in.k = k.values.data();
  p.in.v = v.values.data();
  p.in.docs = &p.docs;
  p.in.causal = causal;
  // Absent: 0, which the reference reads as fl32(1 / sqrt(D)).
  p.in.softmaxScale = softmaxScale ? softmaxScale->convertToFloat() : 0.0f;
  return success();
}

LogicalResult checkTensor(Operation *op, const HostTensor *t, StringRef name,
                          ArrayRef<int64_t> shape) {
  std::string expected;
  for (int64_t d : shape)
    expected += (expected.empty() ? "" : "x") + std::to_string(d);
  if (!t || ArrayRef<int64_t>(t->shape) != shape)
    return op->emitOpError() << "cannot be interpreted: " << name << " is "
                             << (t ? t->describe() : std::string("missing"))
                             << ", expected " << expected;
  return success();
}

LogicalResult runForward(Operation *op, Environment &env,
                         const num::RecipeConfig &recipe, const Problem &p) {
  if (num::Status s = recipe.validate(p.in.headDim); !s)
    return op->emitOpError() << "cannot be interpreted: " << s.message;
  num::ForwardOutputs out;
  num::ScoreTrace trace;
  if (num::Status s = num::referenceForward(p.in, recipe, out,
                                            env.scores ? &trace : nullptr);
      !s)
    return op->emitOpError() << "cannot be interpreted: " << s.message;
  if (env.scores)
    env.scores->push_back(
        {op->getName().getStringRef().str(), std::move(trace.forward)});
  const int64_t T = p.in.numTokens, H = p.in.numHeads, D = p.in.headDim;
  if (failed(checkResultShape(op, 0, {T, H, D})) ||
      failed(checkResultShape(op, 1, {H, T})))
    return failure();
  env.set(op->getResult(0), makeFloatTensor(op->getResult(0).getType(),
                                            {T, H, D}, std::move(out.o)));
  env.set(op->getResult(1), makeFloatTensor(op->getResult(1).getType(), {H, T},
                                            std::move(out.lse)));
  return success();
}

LogicalResult runBackward(Operation *op, Environment &env,
                          const num::RecipeConfig &recipe, const Problem &p,
                          const HostTensor *dO, const HostTensor *o,
                          const HostTensor *lse) {
  const int64_t T = p.in.numTokens, H = p.in.numHeads, Hkv = p.in.numKvHeads,
                D = p.in.headDim;
  if (failed(checkTensor(op, dO, "grad_o", {T, H, D})) ||
      failed(checkTensor(op, o, "o", {T, H, D})) ||
      failed(checkTensor(op, lse, "lse", {H, T})))
    return failure();
  if (num::Status s = recipe.validate(D); !s)
    return op->emitOpError() << "cannot be interpreted: " << s.message;
  num::BackwardOutputs out;
  num::ScoreTrace trace;
  if (num::Status s = num::referenceBackward(
          p.in, recipe, dO->values.data(), o->values.data(), lse->values.data(),
          out, env.scores ? &trace : nullptr);
      !s)
    return op->emitOpError() << "cannot be interpreted: " << s.message;
  if (env.scores) {
    std::vector<float> values = std::move(trace.backwardRows);
    values.insert(values.end(), trace.backwardColumns.begin(),
                  trace.backwardColumns.end());
    env.scores->push_back(
        {op->getName().getStringRef().str(), std::move(values)});
  }
  if (failed(checkResultShape(op, 0, {T, H, D})) ||
      failed(checkResultShape(op, 1, {T, Hkv, D})) ||
      failed(checkResultShape(op, 2, {T, Hkv, D})))
    return failure();
  env.set(op->getResult(0), makeFloatTensor(op->getResult(0).getType(),
                                            {T, H, D}, std::move(out.dq)));
  env.set(op->getResult(1), makeFloatTensor(op->getResult(1).getType(),
                                            {T, Hkv, D}, std::move(out.dk)));
  env.set(op->getResult(2), makeFloatTensor(op->getResult(2).getType(),
                                            {T, Hkv, D}, std::move(out.dv)));
  return success();
}

/// The number of tokens of a GEMM operand (a tensor or a quantized copy).
int64_t tokensOf(const Environment &env, Value v) {
  if (TensorPtr t = env.getTensor(v))
    return t->shape.empty() ? 0 : t->shape[0];
  if (QTensorPtr q = env.getQTensor(v))
    return q->source->shape[0];
  return 0;
}

LogicalResult executeAttention(AttentionOp op, Environment &env) {
  FailureOr<num::RecipeConfig> recipe = mapContractRecipe(op, op.getRecipe());
  if (failed(recipe))
    return failure();
  TensorPtr q = env.getTensor(op.getQ()), k = env.getTensor(op.getK()),
            v = env.getTensor(op.getV());
  if (!q || !k || !v)
    return op.emitOpError() << "cannot be interpreted: q, k and v must be "
                               "tensor values";
  FailureOr<std::vector<int64_t>> starts =
      getDocumentStarts(op, env, op.getCuSeqlens(), tokensOf(env, op.getQ()));
  Problem p;
  if (failed(starts) ||
      failed(makeProblem(op, *q, *k, *v, *starts, op.getCausal(),
                         op.getSoftmaxScale(), p)))
    return failure();
  return runForward(op, env, *recipe, p);
}

LogicalResult executeAttentionGrad(AttentionGradOp op, Environment &env) {
  FailureOr<num::RecipeConfig> recipe = mapContractRecipe(op, op.getRecipe());
  if (failed(recipe))
    return failure();
  TensorPtr q = env.getTensor(op.getQ()), k = env.getTensor(op.getK()),
            v = env.getTensor(op.getV());
  if (!q || !k || !v)
    return op.emitOpError() << "cannot be interpreted: q, k and v must be "
                               "tensor values";
  FailureOr<std::vector<int64_t>> starts =
      getDocumentStarts(op, env, op.getCuSeqlens(), tokensOf(env, op.getQ()));
  Problem p;
  if (failed(starts) ||
      failed(makeProblem(op, *q, *k, *v, *starts, op.getCausal(),
                         op.getSoftmaxScale(), p)))
    return failure();
  return runBackward(op, env, *recipe, p, env.getTensor(op.getGradO()).get(),
                     env.getTensor(op.getO()).get(),
                     env.getTensor(op.getLse()).get());
}

LogicalResult executeAttentionFwd(AttentionFwdOp op, Environment &env) {
  FailureOr<num::RecipeConfig> recipe = mapLoweredRecipe(op, op.getRecipe());
  if (failed(recipe) || failed(mapP(op, op.getP(), *recipe)))
    return failure();
  FailureOr<std::vector<int64_t>> starts =
      getDocumentStarts(op, env, op.getCuSeqlens(), tokensOf(env, op.getQ()));
  if (failed(starts))
    return failure();
  Role q{"Q", {}}, k{"K", {}}, v{"V", {}};
  using U = num::OperandUse;
  if (failed(mapUse(op, env, op.getQ(), "q in S = Q K^T", U::QInQK, *starts,
                    *recipe, q)) ||
      failed(mapUse(op, env, op.getK(), "k in S = Q K^T", U::KInQK, *starts,
                    *recipe, k)) ||
      failed(mapUse(op, env, op.getV(), "v in O = P V", U::VInPV, *starts,
                    *recipe, v)))
    return failure();
  addSafeOperands(env, op.getSafe(), {&q, &k, &v});
  FailureOr<TensorPtr> qt = resolveRole(op, q);
  if (failed(qt))
    return failure();
  FailureOr<TensorPtr> kt = resolveRole(op, k);
  if (failed(kt))
    return failure();
  FailureOr<TensorPtr> vt = resolveRole(op, v);
  Problem p;
  if (failed(vt) ||
      failed(makeProblem(op, **qt, **kt, **vt, *starts, op.getCausal(),
                         op.getSoftmaxScale(), p)))
    return failure();
  return runForward(op, env, *recipe, p);
}

LogicalResult executeAttentionBwd(AttentionBwdOp op, Environment &env) {
  FailureOr<num::RecipeConfig> recipe = mapLoweredRecipe(op, op.getRecipe());
  if (failed(recipe) || failed(mapP(op, op.getP(), *recipe)) ||
      failed(mapDs(op, op.getDs(), *recipe)))
    return failure();
  FailureOr<std::vector<int64_t>> starts =
      getDocumentStarts(op, env, op.getCuSeqlens(), tokensOf(env, op.getQ()));
  if (failed(starts))
    return failure();
  Role q{"Q", {}}, k{"K", {}}, v{"V", {}}, dO{"dO", {}};
  using U = num::OperandUse;
  const std::vector<int64_t> &s = *starts;
  if (failed(mapUse(op, env, op.getQ(), "q in S = Q K^T", U::QInQK, s, *recipe,
                    q)) ||
      failed(mapUse(op, env, op.getK(), "k in S = Q K^T", U::KInQK, s, *recipe,
                    k)) ||
      failed(mapUse(op, env, op.getDovGradO(), "grad_o in dP = dO V^T",
                    U::DOInDOV, s, *recipe, dO)) ||
      failed(mapUse(op, env, op.getDovV(), "v in dP = dO V^T", U::VInDOV, s,
                    *recipe, v)) ||
      failed(mapUse(op, env, op.getDskK(), "k in dQ = dS K", U::KInDSK, s,
                    *recipe, k)) ||
      failed(mapUse(op, env, op.getDsqQ(), "q in dK = dS^T Q", U::QInDSQ, s,
                    *recipe, q)) ||
      failed(mapUse(op, env, op.getPdoGradO(), "grad_o in dV = P^T dO",
                    U::DOInPDO, s, *recipe, dO)))
    return failure();
  // O = P V is not computed by the backward.
  recipe->operand(U::VInPV) = num::OperandQuantization::bf16();
  addSafeOperands(env, op.getSafe(), {&q, &k, &v, &dO});
  FailureOr<TensorPtr> qt = resolveRole(op, q);
  if (failed(qt))
    return failure();
  FailureOr<TensorPtr> kt = resolveRole(op, k);
  if (failed(kt))
    return failure();
  FailureOr<TensorPtr> vt = resolveRole(op, v);
  if (failed(vt))
    return failure();
  FailureOr<TensorPtr> dot = resolveRole(op, dO);
  Problem p;
  if (failed(dot) || failed(makeProblem(op, **qt, **kt, **vt, s, op.getCausal(),
                                        op.getSoftmaxScale(), p)))
    return failure();
  return runBackward(op, env, *recipe, p, dot->get(),
                     env.getTensor(op.getO()).get(),
                     env.getTensor(op.getLse()).get());
}

} // namespace

LogicalResult interp::executeAttentionOp(Operation *op, Environment &env) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](AttentionOp a) { return executeAttention(a, env); })
      .Case([&](AttentionGradOp a) { return executeAttentionGrad(a, env); })
      .Case([&](AttentionFwdOp a) { return executeAttentionFwd(a, env); })
      .Case([&](AttentionBwdOp a) { return executeAttentionBwd(a, env); })
      .Default([](Operation *other) {
        return other->emitOpError() << "is not an attention op";
      });
}
