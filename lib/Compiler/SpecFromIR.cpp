//===- SpecFromIR.cpp - Attention specs from graph-level IR ---------------===//
#include "flamia/Compiler/SpecFromIR.h"

#include "flamia/Dialect/FlamiaOps.h"

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
                   std::vector<std::string> &notes, std::string &error) {
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
  WalkResult walk = module->walk([&](Operation *op) -> WalkResult {
    if (auto grad = dyn_cast<AttentionGradOp>(op)) {
      notes.push_back(locationString(grad.getLoc()) +
                      ": flamia.attention_grad not compiled: backward kernels "
                      "are not implemented yet (the forward is)");
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
    if (recipe.getStrict()) {
      error = locationString(attn.getLoc()) +
              ": strict recipes (L3 causality: K quantized per token) are not "
              "compiled yet; the kernels quantize K in 32x32 token blocks";
      return WalkResult::interrupt();
    }
    NamedSpec named;
    std::string function = functionName(op);
    int n = perFunction[function]++;
    named.name = n == 0 ? function : function + "." + std::to_string(n);
    named.location = locationString(attn.getLoc());
    AttentionSpec &spec = named.spec;
    spec.recipe = stringifyRecipeKind(recipe.getKind()).str();
    spec.heads = q.getDimSize(1);
    spec.kvHeads = k.getDimSize(1);
    spec.headDim = q.getDimSize(2);
    spec.causal = attn.getCausal();
    spec.varlen = static_cast<bool>(attn.getCuSeqlens());
    spec.safeBlock = recipe.getSafeBlock();
    if (FloatAttr scale = attn.getSoftmaxScaleAttr())
      spec.softmaxScale = scale.getValueAsDouble();
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
