//===- SpecFromIR.cpp - Attention specs from graph-level IR ---------------===//
#include "flamia/Compiler/SpecFromIR.h"

#include "flamia/Dialect/FlamiaOps.h"
#include "flamia/Numerics/RecipeRegistry.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace mlir;

namespace flamia {

namespace {
std::string locationString(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().str() + ":" + std::to_string(file.getLine()) +
            ":" + std::to_string(file.getColumn()));
  std::string s;
  llvm::raw_string_ostream os(s);
  loc.print(os);
  return s;
}

std::string functionName(Operation *op) {
  if (auto func = op->getParentOfType<func::FuncOp>())
    return func.getSymName().str();
  return "attention";
}
} // namespace

bool specsFromFile(const std::string &path, std::vector<NamedSpec> &specs,
                   std::vector<std::string> &notes, std::string &error,
                   bool forwardOnly) {
  DialectRegistry registry;
  registry.insert<FlamiaDialect, func::FuncDialect>();
  MLIRContext ctx(registry);
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    llvm::raw_string_ostream os(diagnostics);
    os << locationString(diag.getLocation()) << ": " << diag << "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(path, &ctx);
  if (!module) {
    error = "cannot compile '" + path + "':\n" + diagnostics;
    return false;
  }

  std::map<std::string, int> perFunction;
  std::map<Operation *, size_t> specOf; // flamia.attention -> its spec
  WalkResult walk = module->walk([&](Operation *op) -> WalkResult {
    if (auto grad = dyn_cast<AttentionGradOp>(op)) {
      if (forwardOnly) {
        notes.push_back(locationString(grad.getLoc()) +
                        ": flamia.attention_grad not compiled (--forward-only)");
        return WalkResult::advance();
      }
      // A training step: the backward of an attention of the same inputs
      // (its O and LSE, its q, k, v and attributes). It is compiled with
      // the forward, whose kernels write what it reads.
      auto attn = grad.getO().getDefiningOp<AttentionOp>();
      if (!attn || grad.getLse().getDefiningOp() != attn ||
          grad.getQ() != attn.getQ() || grad.getK() != attn.getK() ||
          grad.getV() != attn.getV() ||
          grad.getCuSeqlens() != attn.getCuSeqlens() ||
          grad.getCausal() != attn.getCausal() ||
          grad.getRecipe() != attn.getRecipe() ||
          grad.getSoftmaxScaleAttr() != attn.getSoftmaxScaleAttr() ||
          !specOf.count(attn)) {
        error = locationString(grad.getLoc()) +
                ": flamia.attention_grad is compiled as the backward of a "
                "flamia.attention with the same q, k, v, cu_seqlens and "
                "attributes whose O and LSE it takes";
        return WalkResult::interrupt();
      }
      AttentionSpec &spec = specs[specOf[attn]].spec;
      if (spec.backward) {
        error = locationString(grad.getLoc()) +
                ": a flamia.attention has two flamia.attention_grad; one "
                "backward per attention is compiled";
        return WalkResult::interrupt();
      }
      auto dq = cast<RankedTensorType>(grad.getGradQ().getType());
      auto dk = cast<RankedTensorType>(grad.getGradK().getType());
      auto dv = cast<RankedTensorType>(grad.getGradV().getType());
      if (dq.getElementType() != dk.getElementType() ||
          dq.getElementType() != dv.getElementType()) {
        error = locationString(grad.getLoc()) +
                ": dQ, dK and dV of one backward have one element type";
        return WalkResult::interrupt();
      }
      spec.backward = true;
      spec.gradDtype = dq.getElementType().isF32() ? "f32" : "bf16";
      return WalkResult::advance();
    }
    if (auto fwd = dyn_cast<AttentionFwdOp>(op)) {
      notes.push_back(locationString(fwd.getLoc()) +
                      ": flamia.attention_fwd not compiled: its operands are "
                      "already quantized, the kernel set quantizes bf16 Q, K, "
                      "V itself (write flamia.attention)");
      return WalkResult::advance();
    }
    auto attn = dyn_cast<AttentionOp>(op);
    if (!attn)
      return WalkResult::advance();
    auto q = cast<RankedTensorType>(attn.getQ().getType());
    auto k = cast<RankedTensorType>(attn.getK().getType());
    RecipeAttr recipe = attn.getRecipe();
    NamedSpec named;
    std::string function = functionName(op);
    int n = perFunction[function]++;
    named.name = n == 0 ? function : function + "." + std::to_string(n);
    named.location = locationString(attn.getLoc());
    AttentionSpec &spec = named.spec;
    // The tools' spelling ("nvfp4-mixed"), not the dialect's ("nvfp4_mixed").
    std::string dialectName = stringifyRecipeKind(recipe.getKind()).str();
    const numerics::RecipeKind *kind =
        numerics::findRecipeKindByDialectName(dialectName);
    spec.recipe = kind ? kind->name : dialectName;
    spec.strict = recipe.getStrict();
    // '?' heads: runtime head counts (the verifier has both or neither).
    spec.heads = q.isDynamicDim(1) ? AttentionSpec::kRuntimeHeads
                                   : q.getDimSize(1);
    spec.kvHeads = k.isDynamicDim(1) ? AttentionSpec::kRuntimeHeads
                                     : k.getDimSize(1);
    spec.headDim = q.getDimSize(2);
    spec.causal = attn.getCausal();
    spec.varlen = static_cast<bool>(attn.getCuSeqlens());
    spec.safeBlock = recipe.getSafeBlock();
    if (FloatAttr scale = attn.getSoftmaxScaleAttr())
      spec.softmaxScale = scale.getValueAsDouble();
    specOf[attn] = specs.size();
    specs.push_back(std::move(named));
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return false;
  if (specs.empty()) {
    error = "'" + path + "' holds no flamia.attention to compile";
    for (const std::string &note : notes)
      error += "\n  " + note;
    return false;
  }
  return true;
}

} // namespace flamia
