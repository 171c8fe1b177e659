//===- Compile.cpp - From an attention spec to PTX, cubin, manifest -------===//
#include "flamia/Compiler/Compile.h"

#include "flamia/Compiler/Pipelines.h"
#include "flamia/Numerics/RecipeRegistry.h"
#include "flamia/Runtime/Manifest.h"
#include "flamia/Schedule/CostModel.h"
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
#include "mlir/IR/SymbolTable.h"
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
#include <map>
#include <regex>

using namespace mlir;

namespace flamia {

namespace {

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
  // Runtime head counts are dynamic dimensions ('?') of every tensor.
  int64_t hq = spec.runtimeHeads() ? dyn : spec.heads;
  int64_t hkv = spec.runtimeHeads() ? dyn : spec.kvHeads;
  auto qType = RankedTensorType::get({dyn, hq, spec.headDim}, bf16);
  auto kvType = RankedTensorType::get({dyn, hkv, spec.headDim}, bf16);
  auto lseType = RankedTensorType::get({hq, dyn}, b.getF32Type());
  SmallVector<Type> inputs = {qType, kvType, kvType};
  if (spec.backward)
    inputs.push_back(qType); // dO
  if (spec.varlen)
    inputs.push_back(RankedTensorType::get({dyn}, b.getI32Type()));
  Type gradElement = spec.gradDtype == "f32" ? Type(b.getF32Type()) : bf16;
  auto dqType = RankedTensorType::get({dyn, hq, spec.headDim}, gradElement);
  auto dkvType = RankedTensorType::get({dyn, hkv, spec.headDim}, gradElement);
  SmallVector<Type> results = {qType, lseType};
  if (spec.backward)
    results.append({dqType, dkvType, dkvType});
  auto func = func::FuncOp::create(b, loc, "flamia",
                                   b.getFunctionType(inputs, results));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToEnd(entry);
  // validateSpec found the kind in the registry.
  bool strict = false;
  const numerics::RecipeKind *kind =
      numerics::findRecipeKindOrStrictPreset(spec.recipe, strict);
  auto recipe = RecipeAttr::get(&ctx, *symbolizeRecipeKind(kind->dialectName),
                                spec.safeBlock, strict || spec.strict);
  FloatAttr scale;
  if (spec.softmaxScale)
    scale = b.getF32FloatAttr(*spec.softmaxScale);
  Value cu = spec.varlen ? entry->getArguments().back() : Value();
  UnitAttr causal = spec.causal ? b.getUnitAttr() : UnitAttr();
  auto attn = AttentionOp::create(
      b, loc, qType, lseType, entry->getArgument(0), entry->getArgument(1),
      entry->getArgument(2), cu, causal, scale, recipe);
  SmallVector<Value> returned(attn->getResults());
  if (spec.backward) {
    auto grad = AttentionGradOp::create(
        b, loc, dqType, dkvType, dkvType, entry->getArgument(0),
        entry->getArgument(1), entry->getArgument(2), attn.getO(),
        attn.getLse(), entry->getArgument(3), cu, causal, scale, recipe);
    returned.append(grad->getResults().begin(), grad->getResults().end());
  }
  func::ReturnOp::create(b, loc, returned);
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

/// The manifest's spelling of a recipe kind (the recipe registry's name;
/// the dialect spells nvfp4-mixed with an underscore).
std::string manifestRecipeName(RecipeKind kind) {
  const numerics::RecipeKind *k = numerics::findRecipeKindByDialectName(
      stringifyRecipeKind(kind).str());
  return k ? k->name : "";
}

func::FuncOp findHost(ModuleOp module) {
  func::FuncOp host;
  module.walk([&](func::FuncOp f) {
    if (f->hasAttr("flamia.recipe"))
      host = f;
  });
  return host;
}

/// What each workspace buffer holds, by buffer name: read from the
/// flamia.quantize_block ops of the kernels the host launches, after
/// flamia-varlen-schedule (the lowering erases them). The operand slot a
/// buffer is bound to says its part and scale layout, its element type the
/// format (scale tiles are bytes: the format of the scales they hold), and
/// the host input bound to the op's source operand the tensor (q, k, v: the
/// argument names of flamia_attention_args).
bool deriveWorkspaceContents(
    ModuleOp module, std::map<std::string, runtime::BufferContents> &out,
    std::string &error) {
  func::FuncOp host = findHost(module);
  if (!host) {
    error = "internal error: no host function (flamia.recipe) after "
            "flamia-varlen-schedule";
    return false;
  }
  DenseMap<Value, std::string> bufferName;
  for (BlockArgument arg : host.getArguments())
    bufferName[arg] =
        attrString(host.getArgAttrDict(arg.getArgNumber()).get("flamia.buffer"));
  host.walk([&](WorkspaceOp ws) {
    bufferName[ws] = ws.getBufferName().str();
  });
  auto formatOf = [](Value v, runtime::HeldFormat &format) {
    Type e = cast<GlobalType>(v.getType()).getElementType();
    // f8E4M3FN: MXFP8 payloads and NVFP4 scales (unsigned E4M3).
    if (isa<Float8E4M3FNType>(e))
      format = runtime::HeldFormat::E4M3;
    else if (isa<Float4E2M1FNType>(e))
      format = runtime::HeldFormat::E2M1;
    else if (isa<Float8E8M0FNUType>(e))
      format = runtime::HeldFormat::E8M0;
    else if (e.isBF16())
      format = runtime::HeldFormat::BF16;
    else
      return false;
    return true;
  };
  bool ok = true;
  host.walk([&](LaunchOp launch) {
    auto kernel = SymbolTable::lookupNearestSymbolFrom<KernelOp>(
        launch, launch.getKernelAttr());
    if (!kernel || !ok)
      return;
    Block &body = kernel.getBody().front();
    // The host buffer bound to a kernel parameter.
    auto bound = [&](Value param) -> std::string {
      auto arg = dyn_cast_or_null<BlockArgument>(param);
      if (!arg || arg.getOwner() != &body ||
          arg.getArgNumber() >= launch.getArgs().size())
        return "";
      return bufferName.lookup(launch.getArgs()[arg.getArgNumber()]);
    };
    kernel.walk([&](QuantizeBlockOp qb) {
      std::string source = bound(qb.getSource());
      runtime::HeldTensor tensor;
      if (source == "q")
        tensor = runtime::HeldTensor::Q;
      else if (source == "k")
        tensor = runtime::HeldTensor::K;
      else if (source == "v")
        tensor = runtime::HeldTensor::V;
      else if (source == "grad_o")
        tensor = runtime::HeldTensor::GradO;
      else {
        error = "internal error: a flamia.quantize_block of kernel '" +
                kernel.getSymName().str() + "' quantizes '" + source +
                "', not the input q, k, v or grad_o";
        ok = false;
        return;
      }
      // `formatFrom`: the value whose element type is the format (for
      // scale tiles, which are bytes: the scales they hold).
      auto record = [&](Value slot, runtime::HeldPart part,
                        runtime::HeldLayout layout, Value formatFrom,
                        runtime::TileRows rows = runtime::TileRows::Tokens) {
        if (!slot || !ok)
          return;
        std::string name = bound(slot);
        runtime::BufferContents c;
        c.part = part;
        c.tensor = tensor;
        c.layout = layout;
        c.tileRows = rows;
        if (name.empty() || !formatOf(formatFrom, c.format)) {
          error = "internal error: a flamia.quantize_block of kernel '" +
                  kernel.getSymName().str() + "' writes " +
                  (name.empty() ? std::string("a value that is no host buffer")
                                : "'" + name + "' in an unknown format");
          ok = false;
          return;
        }
        auto [it, inserted] = out.emplace(name, c);
        if (!inserted && it->second != c) {
          error = "internal error: workspace buffer '" + name +
                  "' is written as two different copies";
          ok = false;
        }
      };
      using runtime::HeldLayout;
      using runtime::HeldPart;
      record(qb.getPerTokenData(), HeldPart::Payload, HeldLayout::PerToken,
             qb.getPerTokenData());
      record(qb.getPerTokenScales(), HeldPart::Scales, HeldLayout::PerToken,
             qb.getPerTokenScales());
      record(qb.getPerTokenDequant(), HeldPart::Dequantized,
             HeldLayout::PerToken, qb.getPerTokenDequant());
      record(qb.getTokenBlockData(), HeldPart::Payload, HeldLayout::TokenBlock,
             qb.getTokenBlockData());
      record(qb.getTokenBlockScales(), HeldPart::Scales,
             HeldLayout::TokenBlock, qb.getTokenBlockScales());
      record(qb.getTokenBlockDequant(), HeldPart::Dequantized,
             HeldLayout::TokenBlock, qb.getTokenBlockDequant());
      // Tiles: rows are tokens, unless token_block_tile_rows says channels.
      record(qb.getPerTokenTiles(), HeldPart::ScaleTiles, HeldLayout::PerToken,
             qb.getPerTokenScales());
      auto rows = qb.getTokenBlockTileRows();
      bool channels = rows && *rows == "channels";
      record(qb.getTokenBlockTiles(), HeldPart::ScaleTiles,
             HeldLayout::TokenBlock, qb.getTokenBlockScales(),
             channels ? runtime::TileRows::Channels : runtime::TileRows::Tokens);
      // The same scales in the other orientation (the sm_100a backward).
      record(qb.getTokenBlockTransposedTiles(), HeldPart::ScaleTiles,
             HeldLayout::TokenBlock, qb.getTokenBlockScales(),
             channels ? runtime::TileRows::Tokens : runtime::TileRows::Channels);
    });
    // D = rowsum(dO O), per query (the gradient quantizer's row_dot).
    kernel.walk([&](RowDotOp rd) {
      std::string name = bound(rd.getOut());
      if (name.empty() || bound(rd.getA()) != "grad_o") {
        error = "internal error: a flamia.row_dot of kernel '" +
                kernel.getSymName().str() +
                "' is not rowsum(grad_o * o) into a host buffer";
        ok = false;
        return;
      }
      runtime::BufferContents c;
      c.part = runtime::HeldPart::Delta;
      c.tensor = runtime::HeldTensor::GradO;
      c.layout = runtime::HeldLayout::PerToken;
      c.format = runtime::HeldFormat::F32;
      out[name] = c;
    });
    // A debug build's S of the first key tile (debug_scores): the kernels'
    // own output for flamia-run's check, no copy of an input.
    kernel.walk([&](Operation *op) {
      Value scores;
      if (auto at = dyn_cast<AttentionTileOp>(op))
        scores = at.getDebugScores();
      else if (auto dq = dyn_cast<AttentionDqTileOp>(op))
        scores = dq.getDebugScores();
      if (!scores)
        return;
      runtime::BufferContents c;
      c.part = runtime::HeldPart::Scratch;
      out[bound(scores)] = c;
    });
  });
  return ok;
}

/// The phase of each kernel (its flamia.phase attribute, set by
/// flamia-varlen-schedule), by name; read before the lowering drops it.
std::map<std::string, runtime::KernelPhase> deriveKernelPhases(ModuleOp module) {
  std::map<std::string, runtime::KernelPhase> phases;
  module.walk([&](KernelOp kernel) {
    phases[kernel.getSymName().str()] =
        attrString(kernel->getAttr("flamia.phase")) == "backward"
            ? runtime::KernelPhase::Backward
            : runtime::KernelPhase::Forward;
  });
  return phases;
}

/// The manifest of the lowered module: the host launch plan (buffers,
/// launches), each kernel's recorded parameters and resources, and what
/// each workspace buffer holds (`contents`, from deriveWorkspaceContents).
bool buildManifest(ModuleOp module, const AttentionSpec &spec,
                   const std::vector<CompiledKernel> &compiled,
                   const std::map<std::string, runtime::BufferContents> &contents,
                   const std::map<std::string, runtime::KernelPhase> &phases,
                   runtime::Manifest &m, std::string &error) {
  func::FuncOp host = findHost(module);
  auto infos = module->getAttrOfType<ArrayAttr>("flamia.kernel_infos");
  if (!host || !infos) {
    error = "internal error: the lowered module has no host function or no "
            "flamia.kernel_infos";
    return false;
  }
  auto fail = [&](std::string message) {
    error = "internal error: manifest: " + message;
    return false;
  };
  auto expression = [&](const std::string &text, runtime::Expression &out) {
    runtime::Status s = runtime::Expression::parse(text, out);
    if (!s.ok())
      error = "internal error: manifest: " + s.message;
    return s.ok();
  };

  m = runtime::Manifest();
  m.version = runtime::kManifestVersion;
  if (!runtime::parseTarget(spec.target, m.target))
    return fail("bad target '" + spec.target + "'");
  auto recipe = host->getAttrOfType<RecipeAttr>("flamia.recipe");
  m.recipe.kind = manifestRecipeName(recipe.getKind());
  m.recipe.safeBlock = recipe.getSafeBlock();
  m.recipe.strict = recipe.getStrict();
  m.headDim = spec.headDim;
  m.heads = spec.heads;
  m.kvHeads = spec.kvHeads;
  m.causal = spec.causal;
  m.varlen = spec.varlen;
  if (spec.softmaxScale) {
    m.hasSoftmaxScale = true;
    m.softmaxScale = static_cast<float>(*spec.softmaxScale);
  }

  // Schedule parameters come from the persistent kernel.
  for (Attribute a : infos)
    if (auto sched = cast<DictionaryAttr>(a).getAs<DictionaryAttr>("schedule")) {
      runtime::ManifestSchedule &s = m.schedule;
      s.present = true;
      s.blockM = cast<IntegerAttr>(sched.get("block_m")).getInt();
      s.blockN = cast<IntegerAttr>(sched.get("block_n")).getInt();
      s.safeBlock = cast<IntegerAttr>(sched.get("safe_block")).getInt();
      s.costModel = attrString(sched.get("cost_model"));
      ScheduleTarget target;
      std::string why;
      if (!parseScheduleTarget(s.costModel, target, why))
        return fail(why);
      s.weights = costWeightsForTarget(target);
      // Absent in IR written before the schedule named its order: LPT.
      if (auto order = sched.getAs<StringAttr>("order")) {
        if (!parseKernelScheduleOrder(order.str(), s.order, why))
          return fail("schedule: " + why);
      }
    }

  // Buffers: the host function's arguments, then its workspaces.
  auto dtypeOf = [](Type t) {
    Type e = cast<GlobalType>(t).getElementType();
    if (e.isBF16())
      return runtime::DType::BF16;
    if (e.isF32())
      return runtime::DType::F32;
    if (e.isInteger(32))
      return runtime::DType::I32;
    return runtime::DType::U8;
  };
  auto shapeOf = [&](ArrayAttr dims, runtime::ManifestBuffer &b) {
    for (Attribute d : dims) {
      b.shape.emplace_back();
      if (!expression(attrString(d), b.shape.back()))
        return false;
    }
    return true;
  };
  DenseMap<Value, int> bufferIndex;
  DenseMap<Value, std::string> valueName;
  for (BlockArgument arg : host.getArguments()) {
    DictionaryAttr attrs = host.getArgAttrDict(arg.getArgNumber());
    runtime::ManifestBuffer b;
    b.name = attrString(attrs.get("flamia.buffer"));
    b.role = attrs.get("flamia.output") ? runtime::BufferRole::Output
                                        : runtime::BufferRole::Input;
    b.dtype = dtypeOf(arg.getType());
    if (!shapeOf(cast<ArrayAttr>(attrs.get("flamia.dims")), b))
      return false;
    bufferIndex[arg] = static_cast<int>(m.buffers.size());
    m.buffers.push_back(std::move(b));
  }
  bool ok = true;
  host.walk([&](WorkspaceOp ws) {
    if (!ok)
      return;
    runtime::ManifestBuffer b;
    b.name = ws.getBufferName().str();
    switch (ws.getKind()) {
    case WorkspaceKind::schedule:
      b.role = runtime::BufferRole::Schedule;
      break;
    case WorkspaceKind::workspace: {
      b.role = runtime::BufferRole::Workspace;
      auto it = contents.find(b.name);
      if (it == contents.end()) {
        ok = fail("workspace buffer '" + b.name +
                  "' is written by no flamia.quantize_block: what it holds "
                  "is unknown");
        return;
      }
      b.holds = it->second;
      break;
    }
    }
    b.dtype = dtypeOf(ws.getType());
    if (!shapeOf(ws.getDims(), b)) {
      ok = false;
      return;
    }
    bufferIndex[ws] = static_cast<int>(m.buffers.size());
    m.buffers.push_back(std::move(b));
  });
  if (!ok)
    return false;
  host.walk([&](RuntimeValueOp v) {
    valueName[v] = v.getValueName().str();
  });

  // Kernels in launch order.
  host.walk([&](LaunchOp launch) {
    if (!ok)
      return;
    runtime::ManifestKernel k;
    k.name = launch.getKernelAttr().getLeafReference().str();
    DictionaryAttr info;
    for (Attribute a : infos)
      if (attrString(cast<DictionaryAttr>(a).get("name")) == k.name)
        info = cast<DictionaryAttr>(a);
    if (!info) {
      ok = fail("kernel '" + k.name + "' has no flamia.kernel_infos entry");
      return;
    }
    const CompiledKernel *ck = nullptr;
    for (const CompiledKernel &c : compiled)
      if (c.name == k.name)
        ck = &c;
    // --ptx-only: no cubin exists, and the manifest says so (an empty
    // cubin is written as null; the runtime refuses it) rather than naming
    // a file that was never written.
    const bool assembled = ck && !ck->cubin.empty();
    if (assembled)
      k.cubin = k.name + ".cubin";
    k.ptx = k.name + ".ptx";
    if (auto it = phases.find(k.name); it != phases.end())
      k.phase = it->second;
    if (launch.getGrid().size() != 3) {
      ok = fail("kernel '" + k.name + "' has a grid of rank " +
                std::to_string(launch.getGrid().size()));
      return;
    }
    for (auto [i, g] : llvm::enumerate(launch.getGrid()))
      if (!expression(attrString(g), k.grid[i])) {
        ok = false;
        return;
      }
    k.block[0] = cast<IntegerAttr>(info.get("threads")).getInt();
    k.launch = attrString(info.get("launch"));
    k.smemBytes = cast<IntegerAttr>(info.get("smem_bytes")).getInt();
    auto tmem = dyn_cast_or_null<IntegerAttr>(info.get("tmem_columns"));
    k.tmemColumns = tmem ? tmem.getInt() : 0;
    if (assembled) {
      k.registers = ck->registers;
      k.spillBytes = ck->spillStoreBytes + ck->spillLoadBytes;
    }
    auto params = cast<ArrayAttr>(info.get("params"));
    for (auto [param, operand] : llvm::zip(params, launch.getArgs())) {
      auto p = cast<DictionaryAttr>(param);
      std::string kind = attrString(p.get("kind"));
      runtime::ManifestParam mp;
      mp.name = attrString(p.get("name"));
      if (kind == "ptr" || kind == "tensormap") {
        mp.kind = kind == "ptr" ? runtime::ParamKind::Ptr
                                : runtime::ParamKind::TensorMap;
        auto it = bufferIndex.find(operand);
        if (it == bufferIndex.end()) {
          ok = fail("parameter '" + mp.name + "' of kernel '" + k.name +
                    "' is bound to no buffer");
          return;
        }
        mp.buffer = it->second;
      } else if (kind == "i32" || kind == "f32") {
        mp.kind = kind == "i32" ? runtime::ParamKind::I32
                                : runtime::ParamKind::F32;
        std::string value = valueName.lookup(operand);
        if (value == "softmax_scale")
          mp.named = runtime::NamedValue::SoftmaxScale;
        else if (value == "softmax_scale_log2")
          mp.named = runtime::NamedValue::SoftmaxScaleLog2;
        else if (!expression(value, mp.value)) {
          ok = false;
          return;
        }
      } else {
        ok = fail("parameter '" + mp.name + "' of kernel '" + k.name +
                  "' has unknown kind '" + kind + "'");
        return;
      }
      if (mp.kind == runtime::ParamKind::TensorMap) {
        runtime::TensorMapSpec &t = mp.tensorMap;
        std::string dtype = attrString(p.get("dtype"));
        if (!runtime::dtypeFromName(dtype, t.dtype)) {
          ok = fail("tensor map '" + mp.name + "' of unknown dtype '" +
                    dtype + "'");
          return;
        }
        // The 2-D view [T, H * D] of a packed [T, H, D] tensor (in bytes,
        // H * D / 2, for packed 4-bit elements through a u8 map); a runtime
        // H is the buffer's head symbol (Hq or Hkv).
        auto g = cast<GlobalType>(operand.getType());
        int64_t rowElems = g.getShape()[2];
        if (g.getElementType().getIntOrFloatBitWidth() == 4)
          rowElems /= 2;
        std::string cols =
            ShapedType::isDynamic(g.getShape()[1])
                ? m.buffers[mp.buffer].shape[1].text() + " * " +
                      std::to_string(rowElems)
                : std::to_string(g.getShape()[1] * rowElems);
        if (!expression("T", t.rows) || !expression(cols, t.cols)) {
          ok = false;
          return;
        }
        t.boxRows = runtime::Expression::constant(
            cast<IntegerAttr>(p.get("box_rows")).getInt());
        t.boxCols = runtime::Expression::constant(
            cast<IntegerAttr>(p.get("box_cols")).getInt());
        t.swizzle = cast<IntegerAttr>(p.get("swizzle")).getInt();
      }
      k.params.push_back(std::move(mp));
    }
    m.kernels.push_back(std::move(k));
  });
  return ok;
}

} // namespace

void registerCompilerDialects(mlir::DialectRegistry &registry) {
  registry.insert<FlamiaDialect, func::FuncDialect, arith::ArithDialect,
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
  // The target, the recipe and the head dim: whether kernels exist is the
  // recipe registry's answer.
  bool strict = false;
  const numerics::RecipeKind *kind =
      numerics::findRecipeKindOrStrictPreset(spec.recipe, strict);
  if (!kind) {
    std::string presets;
    for (const numerics::RecipeKind &k : numerics::recipeKinds())
      presets += (presets.empty() ? "" : ", ") + k.strictPreset;
    return fail("unknown recipe '" + spec.recipe + "' (" +
                numerics::recipeKindNames() + "; strict: " + presets + ")");
  }
  strict |= spec.strict;
  if (numerics::Status s =
          numerics::checkKernels(*kind, strict, spec.target, spec.headDim);
      !s)
    return fail(s.message);
  if (spec.backward) {
    if (numerics::Status s = numerics::checkBackwardKernels(
            *kind, strict, spec.target, spec.headDim);
        !s)
      return fail(s.message);
    if (spec.gradDtype != "bf16" && spec.gradDtype != "f32")
      return fail("gradient dtype '" + spec.gradDtype +
                  "' is not implemented (bf16, f32)");
  }
  if (spec.pInSmem && spec.target != "sm_100a")
    return fail("P in shared memory (--p-in-smem) is an option of the sm_100a "
                "forward (P V from tensor memory or shared memory); " +
                spec.target + " keeps P in registers");
  if (spec.debugScores && !spec.backward)
    return fail("debug scores compare the forward's S with the backward's: "
                "they need a training step (--backward)");
  // Heads and the softmax scale: the rules (and wording) every tool and the
  // runtime share.
  std::string shared;
  if (spec.heads == AttentionSpec::kRuntimeHeads ||
      spec.kvHeads == AttentionSpec::kRuntimeHeads) {
    if (!spec.runtimeHeads())
      return fail("heads = " + std::to_string(spec.heads) + " and kv_heads = " +
                  std::to_string(spec.kvHeads) +
                  ": both are 0 (runtime head counts, one kernel set for "
                  "every Hq and Hkv) or both static");
  } else if (!validation::validateHeads(spec.heads, spec.kvHeads, shared)) {
    return fail(shared);
  }
  if (spec.safeBlock < kKeyTile || spec.safeBlock % kKeyTile != 0 ||
      spec.safeBlock > kMaxSafeBlock)
    return fail("safe block " + std::to_string(spec.safeBlock) +
                " is not implemented by the kernels: they need a multiple of "
                "the " + std::to_string(kKeyTile) +
                "-key tile (a key tile is wholly inside or outside every "
                "query's safe block), at most " +
                std::to_string(kMaxSafeBlock));
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
  // The stages of buildFlamiaToPtxPipeline (what flamia-opt --flamia-to-ptx
  // runs), one at a time to read the IR between them.
  PipelineOptions pipeline;
  pipeline.target = spec.target;
  pipeline.scaleTiles = spec.scaleTiles;
  pipeline.debugScores = spec.debugScores;
  pipeline.overlapSoftmax = spec.overlapSoftmax;
  pipeline.pInSmem = spec.pInSmem;
  pipeline.prefetchKv = spec.prefetchKv;
  pipeline.roundQ = spec.roundQ;
  pipeline.payloads = spec.payloads;
  if (!run([&](OpPassManager &pm) { buildGraphToKernelsPipeline(pm, pipeline); },
           "graph passes and scheduling"))
    return false;
  result.graphIR = printModule(*module);
  // What the workspace buffers hold, while the quantize ops still say it.
  std::map<std::string, runtime::BufferContents> contents;
  if (!deriveWorkspaceContents(*module, contents, error))
    return false;
  std::map<std::string, runtime::KernelPhase> phases =
      deriveKernelPhases(*module);
  if (!run([&](OpPassManager &pm) { buildTilePipeline(pm, pipeline); },
           "flamia-tile"))
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
  runtime::Manifest manifest;
  if (!buildManifest(*module, spec, result.kernels, contents, phases, manifest,
                     error))
    return false;
  result.manifestJson = runtime::writeManifestJson(manifest);
  // The runtime's reader checks what the compiler wrote (it refuses a
  // manifest without cubins, so only when they were assembled).
  bool assembled = !result.kernels.empty();
  for (const CompiledKernel &k : result.kernels)
    assembled &= !k.cubin.empty();
  if (assembled) {
    runtime::Manifest check;
    runtime::Status s = runtime::parseManifest(result.manifestJson, check);
    if (!s.ok()) {
      error = "internal error: the runtime rejects the manifest written: " +
              s.message;
      return false;
    }
  }
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
