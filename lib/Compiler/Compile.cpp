//===- Compile.cpp - From an attention spec to PTX, cubin, manifest -------===//
#include "flamia/Compiler/Compile.h"
#include "flamia/Compiler/Pipelines.h"
#include "flamia/Support/Validation.h"

#include "flamia/Conversion/Passes.h"
#include "flamia/Dialect/FlamiaOps.h"
#include "flamia/Transforms/Passes.h"

#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <regex>

using namespace mlir;

namespace flamia {

namespace {

/// Minimal JSON writer: objects, arrays, strings, numbers, null, booleans.
class Json {
public:
  std::string str() const { return out; }
  void beginObject() { value(); out += "{"; stack.push_back(true); }
  void endObject() { close("}"); }
  void beginArray() { value(); out += "["; stack.push_back(true); }
  void endArray() { close("]"); }
  void key(const std::string &k) {
    element();
    quote(k);
    out += ": ";
    afterKey = true;
  }
  void string(const std::string &s) { value(); quote(s); }
  void number(double v) {
    value();
    char buf[64];
    if (v == std::floor(v) && std::fabs(v) < 1e15)
      snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
    else
      snprintf(buf, sizeof buf, "%.17g", v);
    out += buf;
  }
  void boolean(bool b) { value(); out += b ? "true" : "false"; }
  void null() { value(); out += "null"; }
  template <typename T> void field(const std::string &k, const T &v) {
    key(k);
    if constexpr (std::is_same_v<T, std::string>)
      string(v);
    else if constexpr (std::is_same_v<T, bool>)
      boolean(v);
    else
      number(static_cast<double>(v));
  }

private:
  /// Before a value: after a key nothing, inside an array a separator.
  void value() {
    if (afterKey) {
      afterKey = false;
      return;
    }
    element();
  }
  /// A new element of the innermost container: comma (unless first) and
  /// indentation.
  void element() {
    if (stack.empty())
      return;
    if (!stack.back())
      out += ",";
    stack.back() = false;
    out += "\n" + std::string(2 * stack.size(), ' ');
  }
  void close(const char *bracket) {
    bool empty = stack.back();
    stack.pop_back();
    if (!empty)
      out += "\n" + std::string(2 * stack.size(), ' ');
    out += bracket;
  }
  void quote(const std::string &s) {
    out += '"';
    for (char c : s) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (c == '\n') {
        out += "\\n";
      } else {
        out += c;
      }
    }
    out += '"';
  }
  std::string out;
  std::vector<bool> stack; // per open container: no element yet
  bool afterKey = false;
};

std::string findPtxas(const CompileOptions &options) {
  if (!options.ptxas.empty())
    return options.ptxas;
  if (const char *env = std::getenv("FLAMIA_PTXAS"))
    return env;
  if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
    return "/usr/local/cuda/bin/ptxas";
  if (auto p = llvm::sys::findProgramByName("ptxas"))
    return *p;
  return "";
}

/// Runs ptxas on `kernel.ptx`, filling in the cubin and resource usage.
bool assemble(CompiledKernel &kernel, const std::string &ptxas,
              const std::string &chip, std::string &error) {
  llvm::SmallString<128> ptxPath, cubinPath, logPath;
  if (llvm::sys::fs::createTemporaryFile("flamia", "ptx", ptxPath) ||
      llvm::sys::fs::createTemporaryFile("flamia", "cubin", cubinPath) ||
      llvm::sys::fs::createTemporaryFile("flamia", "log", logPath)) {
    error = "cannot create temporary files for ptxas";
    return false;
  }
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(ptxPath, ec);
    os << kernel.ptx;
  }
  std::string arch = "-arch=" + chip;
  llvm::SmallVector<llvm::StringRef> args = {ptxas, arch, "-v", "-o",
                                             cubinPath, ptxPath};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(logPath),
                                                llvm::StringRef(logPath)};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, 0, 0,
                                     &execError);
  auto log = llvm::MemoryBuffer::getFile(logPath);
  kernel.ptxasLog = log ? (*log)->getBuffer().str() : "";
  if (rc != 0) {
    error = "ptxas failed on " + kernel.name + " (" + execError + "):\n" +
            kernel.ptxasLog;
    for (auto *p : {&ptxPath, &cubinPath, &logPath})
      llvm::sys::fs::remove(*p);
    return false;
  }
  auto removeTemporaries = [&] {
    for (auto *p : {&ptxPath, &cubinPath, &logPath})
      llvm::sys::fs::remove(*p);
  };
  auto cubin = llvm::MemoryBuffer::getFile(cubinPath, /*IsText=*/false);
  if (!cubin || (*cubin)->getBufferSize() == 0) {
    error = ptxas + " exited 0 but wrote no cubin for " + kernel.name +
            " (is it CUDA's ptxas?)";
    removeTemporaries();
    return false;
  }
  kernel.cubin = (*cubin)->getBuffer().str();
  std::smatch m;
  std::string text = kernel.ptxasLog;
  if (std::regex_search(text, m, std::regex(R"(Used (\d+) registers)")))
    kernel.registers = std::stoll(m[1]);
  if (std::regex_search(text, m,
                        std::regex(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)"))) {
    kernel.stackBytes = std::stoll(m[1]);
    kernel.spillStoreBytes = std::stoll(m[2]);
    kernel.spillLoadBytes = std::stoll(m[3]);
  }
  removeTemporaries();
  if (kernel.registers < 0 || kernel.spillStoreBytes < 0) {
    error = ptxas + " -v printed no resource usage (registers, spills) for " +
            kernel.name + " (is it CUDA's ptxas?):\n" + kernel.ptxasLog;
    kernel.cubin.clear();
    return false;
  }
  return true;
}

/// The graph-level program of `spec`.
OwningOpRef<ModuleOp> buildGraph(MLIRContext &ctx, const AttentionSpec &spec) {
  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  auto module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module.getBody());
  int64_t dyn = ShapedType::kDynamic;
  auto bf16 = b.getBF16Type();
  auto qType = RankedTensorType::get({dyn, spec.heads, spec.headDim}, bf16);
  auto kvType = RankedTensorType::get({dyn, spec.kvHeads, spec.headDim}, bf16);
  auto lseType = RankedTensorType::get({spec.heads, dyn}, b.getF32Type());
  SmallVector<Type> inputs = {qType, kvType, kvType};
  if (spec.varlen)
    inputs.push_back(RankedTensorType::get({dyn}, b.getI32Type()));
  auto func = func::FuncOp::create(b, loc, "flamia",
                                   b.getFunctionType(inputs, {qType, lseType}));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToEnd(entry);
  auto recipe = mlir::flamia::RecipeAttr::get(&ctx, mlir::flamia::RecipeKind::mxfp8,
                                        spec.safeBlock, false);
  FloatAttr scale;
  if (spec.softmaxScale)
    scale = b.getF32FloatAttr(*spec.softmaxScale);
  auto attn = mlir::flamia::AttentionOp::create(
      b, loc, qType, lseType, entry->getArgument(0), entry->getArgument(1),
      entry->getArgument(2), spec.varlen ? entry->getArgument(3) : Value(),
      spec.causal ? b.getUnitAttr() : UnitAttr(), scale, recipe);
  func::ReturnOp::create(b, loc, attn->getResults());
  return module;
}

std::string printModule(ModuleOp module) {
  std::string s;
  llvm::raw_string_ostream os(s);
  module.print(os);
  return s;
}

std::string attrString(Attribute a) {
  if (auto s = dyn_cast_or_null<StringAttr>(a))
    return s.str();
  return "";
}

/// manifest.json from the lowered module: the host launch plan (buffers,
/// launches) and each kernel's recorded parameters and resources.
std::string buildManifest(ModuleOp module, const AttentionSpec &spec,
                          const std::vector<CompiledKernel> &compiled) {
  func::FuncOp host;
  module.walk([&](func::FuncOp f) {
    if (f->hasAttr("flamia.recipe"))
      host = f;
  });
  auto infos = module->getAttrOfType<ArrayAttr>("flamia.kernel_infos");
  Json j;
  j.beginObject();
  j.field("flamia_manifest_version", 1);
  j.field("target", spec.target);
  j.key("recipe");
  j.beginObject();
  j.field("kind", spec.recipe);
  j.field("safe_block", host ? host->getAttrOfType<mlir::flamia::RecipeAttr>(
                                    "flamia.recipe").getSafeBlock()
                              : spec.safeBlock);
  j.field("strict", false);
  j.endObject();
  j.field("head_dim", spec.headDim);
  j.field("heads", spec.heads);
  j.field("kv_heads", spec.kvHeads);
  j.field("causal", spec.causal);
  j.field("varlen", spec.varlen);
  j.key("softmax_scale");
  if (spec.softmaxScale)
    j.number(*spec.softmaxScale);
  else
    j.null();

  // Schedule parameters come from the persistent kernel.
  for (Attribute a : infos)
    if (auto sched = cast<DictionaryAttr>(a).getAs<DictionaryAttr>("schedule")) {
      j.key("schedule");
      j.beginObject();
      j.field("block_m", cast<IntegerAttr>(sched.get("block_m")).getInt());
      j.field("block_n", cast<IntegerAttr>(sched.get("block_n")).getInt());
      j.field("safe_block", cast<IntegerAttr>(sched.get("safe_block")).getInt());
      j.field("cost_model", attrString(sched.get("cost_model")));
      j.endObject();
    }

  // Buffers: the host function's arguments, then its workspaces.
  auto dtypeOf = [](Type t) -> std::string {
    Type e = cast<mlir::flamia::GlobalType>(t).getElementType();
    if (e.isBF16()) return "bf16";
    if (e.isF32()) return "f32";
    if (e.isInteger(32)) return "i32";
    return "u8";
  };
  auto writeDims = [&](ArrayAttr dims) {
    j.key("shape");
    j.beginArray();
    for (Attribute d : dims)
      j.string(attrString(d));
    j.endArray();
  };
  DenseMap<Value, std::string> bufferName, valueName;
  j.key("buffers");
  j.beginArray();
  for (BlockArgument arg : host.getArguments()) {
    DictionaryAttr attrs = host.getArgAttrDict(arg.getArgNumber());
    std::string name = attrString(attrs.get("flamia.buffer"));
    bufferName[arg] = name;
    j.beginObject();
    j.field("name", name);
    j.field("role", std::string(attrs.get("flamia.output") ? "output" : "input"));
    j.field("dtype", dtypeOf(arg.getType()));
    writeDims(cast<ArrayAttr>(attrs.get("flamia.dims")));
    j.endObject();
  }
  host.walk([&](mlir::flamia::WorkspaceOp ws) {
    bufferName[ws] = ws.getBufferName().str();
    j.beginObject();
    j.field("name", ws.getBufferName().str());
    j.field("role", ws.getKind().str());
    j.field("dtype", dtypeOf(ws.getType()));
    writeDims(ws.getDims());
    j.endObject();
  });
  j.endArray();
  host.walk([&](mlir::flamia::RuntimeValueOp v) { valueName[v] = v.getValueName().str(); });

  // Kernels in launch order.
  j.key("kernels");
  j.beginArray();
  host.walk([&](mlir::flamia::LaunchOp launch) {
    std::string name = launch.getKernelAttr().getLeafReference().str();
    DictionaryAttr info;
    for (Attribute a : infos)
      if (attrString(cast<DictionaryAttr>(a).get("name")) == name)
        info = cast<DictionaryAttr>(a);
    const CompiledKernel *ck = nullptr;
    for (const CompiledKernel &k : compiled)
      if (k.name == name)
        ck = &k;
    j.beginObject();
    j.field("name", name);
    // --ptx-only: no cubin exists, and the manifest says so (the runtime
    // refuses it) rather than naming a file that was never written.
    j.key("cubin");
    if (ck && !ck->cubin.empty())
      j.string(name + ".cubin");
    else
      j.null();
    j.field("ptx", name + ".ptx");
    j.key("grid");
    j.beginArray();
    for (Attribute g : launch.getGrid())
      j.string(attrString(g));
    j.endArray();
    j.key("block");
    j.beginArray();
    j.number(cast<IntegerAttr>(info.get("threads")).getInt());
    j.number(1);
    j.number(1);
    j.endArray();
    j.key("cluster");
    j.beginArray();
    j.number(1); j.number(1); j.number(1);
    j.endArray();
    j.field("launch", attrString(info.get("launch")));
    j.field("smem_bytes", cast<IntegerAttr>(info.get("smem_bytes")).getInt());
    auto tmem = dyn_cast_or_null<IntegerAttr>(info.get("tmem_columns"));
    j.field("tmem_columns", tmem ? tmem.getInt() : 0);
    if (ck && !ck->cubin.empty()) {
      j.field("registers", ck->registers);
      j.field("spill_bytes", ck->spillStoreBytes + ck->spillLoadBytes);
    }
    j.key("params");
    j.beginArray();
    auto params = cast<ArrayAttr>(info.get("params"));
    for (auto [param, operand] : llvm::zip(params, launch.getArgs())) {
      auto p = cast<DictionaryAttr>(param);
      std::string kind = attrString(p.get("kind"));
      j.beginObject();
      j.field("name", attrString(p.get("name")));
      j.field("kind", kind);
      if (kind == "ptr" || kind == "tensormap") {
        j.field("buffer", bufferName.lookup(operand));
        if (kind == "tensormap")
          j.field("dtype", attrString(p.get("dtype")));
      } else {
        j.field("value", valueName.lookup(operand));
      }
      if (kind == "tensormap") {
        // The 2-D view [T, H * D] of a packed [T, H, D] tensor.
        auto g = cast<mlir::flamia::GlobalType>(operand.getType());
        j.key("dims");
        j.beginArray();
        j.string("T");
        j.string(std::to_string(g.getShape()[1] * g.getShape()[2]));
        j.endArray();
        j.key("box");
        j.beginArray();
        j.number(cast<IntegerAttr>(p.get("box_rows")).getInt());
        j.number(cast<IntegerAttr>(p.get("box_cols")).getInt());
        j.endArray();
        j.field("swizzle", cast<IntegerAttr>(p.get("swizzle")).getInt());
      }
      j.endObject();
    }
    j.endArray();
    j.endObject();
  });
  j.endArray();
  j.endObject();
  return j.str() + "\n";
}

} // namespace

void registerCompilerDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::flamia::FlamiaDialect, func::FuncDialect, arith::ArithDialect,
                  scf::SCFDialect, cf::ControlFlowDialect, gpu::GPUDialect,
                  NVVM::NVVMDialect, LLVM::LLVMDialect>();
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerConvertNVVMToLLVMInterface(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
}

bool validateSpec(const AttentionSpec &spec, std::string &error) {
  auto fail = [&](std::string message) {
    error = std::move(message);
    return false;
  };
  if (spec.target != "sm_90a" && spec.target != "sm_100a")
    return fail("unsupported target '" + spec.target + "' (sm_90a, sm_100a)");
  if (spec.recipe != "mxfp8")
    return fail("unsupported recipe '" + spec.recipe + "' (mxfp8)");
  if (spec.headDim != 64 && spec.headDim != 128)
    return fail("head dim " + std::to_string(spec.headDim) +
                " is not implemented by the kernels (64, 128)");
  // Heads and the softmax scale: the rules (and wording) every tool and the
  // runtime share.
  std::string shared;
  if (!validation::validateHeads(spec.heads, spec.kvHeads, shared))
    return fail(shared);
  if (spec.safeBlock < kKeyTile || spec.safeBlock % kKeyTile != 0 ||
      spec.safeBlock > mlir::flamia::kMaxSafeBlock)
    return fail("safe block " + std::to_string(spec.safeBlock) +
                " is not implemented by the kernels: they need a multiple of "
                "the " + std::to_string(kKeyTile) +
                "-key tile (a key tile is wholly inside or outside every "
                "query's safe block), at most " +
                std::to_string(mlir::flamia::kMaxSafeBlock));
  // The kernels receive the scale as a float32: the rule applies to the
  // value as given and to its rounding (1e-60 rounds to 0, 1e60 to inf), as
  // in flamia-ref and flamia-run.
  if (spec.softmaxScale) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", *spec.softmaxScale);
    if (!validation::validateFloat32SoftmaxScale(*spec.softmaxScale, text,
                                                 shared))
      return fail(shared);
  }
  return true;
}

bool compileAttention(const AttentionSpec &spec, const CompileOptions &options,
                      CompileResult &result, std::string &error) {
  if (!validateSpec(spec, error))
    return false;
  DialectRegistry registry;
  registerCompilerDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  std::string diagnostics;
  llvm::raw_string_ostream diagOs(diagnostics);
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error)
      diagOs << d.str() << "\n";
    return success();
  });

  auto start = std::chrono::steady_clock::now();
  OwningOpRef<ModuleOp> module = buildGraph(ctx, spec);
  if (failed(mlir::verify(*module))) {
    error = "invalid attention spec:\n" + diagnostics;
    return false;
  }
  auto run = [&](function_ref<void(OpPassManager &)> build, const char *stage) {
    PassManager pm(&ctx);
    build(pm);
    if (failed(pm.run(*module))) {
      error = std::string(stage) + " failed:\n" + diagnostics;
      return false;
    }
    return true;
  };
  if (!run([&](OpPassManager &pm) {
        buildGraphToKernelsPipeline(pm, spec.target, /*tile=*/false,
                                    spec.scaleTiles);
      }, "graph passes and scheduling"))
    return false;
  result.graphIR = printModule(*module);
  if (!run([&](OpPassManager &pm) {
        mlir::flamia::FlamiaTileOptions tile;
        tile.overlapSoftmax = spec.overlapSoftmax;
        pm.addPass(mlir::flamia::createFlamiaTile(tile));
      }, "flamia-tile"))
    return false;
  result.blockIR = printModule(*module);
  if (!run([&](OpPassManager &pm) { buildKernelsToPtxPipeline(pm); },
           "lowering to PTX"))
    return false;
  result.compileSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();

  module->walk([&](gpu::BinaryOp binary) {
    CompiledKernel k;
    std::string sym = binary.getSymName().str();
    k.name = sym.substr(0, sym.size() - std::string("_module").size());
    auto object = cast<gpu::ObjectAttr>(binary.getObjects()[0]);
    k.ptx = object.getObject().str();
    result.kernels.push_back(std::move(k));
  });
  std::string ptxas = options.assemble ? findPtxas(options) : "";
  if (options.assemble && ptxas.empty() && options.requireCubin) {
    error = "CUDA's ptxas was not found ($FLAMIA_PTXAS, /usr/local/cuda/bin, "
            "PATH); pass --ptx-only to write PTX alone";
    return false;
  }
  if (!ptxas.empty())
    for (CompiledKernel &k : result.kernels)
      if (!assemble(k, ptxas, spec.target, error))
        return false;
  result.manifestJson = buildManifest(*module, spec, result.kernels);
  return true;
}

bool writeArtifacts(const CompileResult &result, const std::string &dir,
                    std::string &error, bool withIR) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    error = dir + ": cannot create directory: " + ec.message();
    return false;
  }
  std::vector<std::pair<std::string, const std::string *>> files;
  for (const CompiledKernel &k : result.kernels) {
    files.emplace_back(k.name + ".ptx", &k.ptx);
    if (!k.cubin.empty())
      files.emplace_back(k.name + ".cubin", &k.cubin);
  }
  if (withIR) {
    files.emplace_back("graph.mlir", &result.graphIR);
    files.emplace_back("block.mlir", &result.blockIR);
  }
  files.emplace_back("manifest.json", &result.manifestJson);

  // Every file goes to a temporary name in `dir` first and is renamed only
  // once all of them are written: a failed write leaves no partial kernel
  // set behind (a manifest naming cubins that were never written, or PTX
  // without its manifest).
  std::vector<std::pair<llvm::SmallString<256>, llvm::SmallString<256>>> staged;
  auto discard = [&] {
    for (auto &[temp, final] : staged)
      llvm::sys::fs::remove(temp);
  };
  for (auto &[name, bytes] : files) {
    llvm::SmallString<256> final(dir), model(dir);
    llvm::sys::path::append(final, name);
    llvm::sys::path::append(model, "." + name + ".tmp-%%%%%%");
    int fd;
    llvm::SmallString<256> temp;
    if (std::error_code ec = llvm::sys::fs::createUniqueFile(model, fd, temp)) {
      error = std::string(final) + ": cannot write: " + ec.message();
      discard();
      return false;
    }
    staged.emplace_back(temp, final);
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << *bytes;
    os.close();
    if (os.has_error()) {
      error = std::string(final) + ": cannot write: " + os.error().message();
      os.clear_error();
      discard();
      return false;
    }
  }
  for (size_t i = 0; i < staged.size(); ++i)
    if (std::error_code ec =
            llvm::sys::fs::rename(staged[i].first, staged[i].second)) {
      error = std::string(staged[i].second) + ": cannot write: " + ec.message();
      // Files renamed so far belong to a set that is now incomplete.
      for (size_t j = 0; j < i; ++j)
        llvm::sys::fs::remove(staged[j].second);
      for (size_t j = i; j < staged.size(); ++j)
        llvm::sys::fs::remove(staged[j].first);
      return false;
    }
  return true;
}

} // namespace flamia
