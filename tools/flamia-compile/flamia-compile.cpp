//===- flamia-compile.cpp - attention spec -> PTX, cubin, manifest --------===//
//
//   flamia-compile --target sm_100a --recipe mxfp8 --head-dim 128 --causal
//                  --varlen -o DIR
//   flamia-compile --target sm_100a FILE.mlir -o DIR
//
// The second form compiles every graph-level flamia.attention in FILE (its
// shapes, causal flag, cu_seqlens and recipe give the spec). Each form
// writes DIR/<kernel>.ptx, DIR/<kernel>.cubin (ptxas from CUDA 13,
// overridable with --ptxas or $FLAMIA_PTXAS) and DIR/manifest.json
// (docs/runtime-abi.md). --emit-ir also writes the graph- and block-level IR.
//
//===----------------------------------------------------------------------===//
#include "flamia/Compiler/Compile.h"
#include "flamia/Compiler/SpecFromIR.h"
#include "flamia/Support/Validation.h"
#include "flamia/Support/Version.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

namespace cl = llvm::cl;

// --help lists these, not the LLVM back ends' options linked in with MLIR.
static cl::OptionCategory compileCategory("flamia-compile options");

// No default: sm_90a runs on Hopper GPUs, sm_100a has only been checked
// statically (ptxas, FileCheck), and a user must know which one they get.
static cl::opt<std::string> target("target",
                                   cl::desc("sm_90a or sm_100a (required)"),
                                   cl::cat(compileCategory));
static cl::opt<std::string>
    recipe("recipe",
           cl::desc("Recipe (mxfp8; nvfp4-mixed: sm_90a, and the sm_100a "
                    "forward; the strict presets mxfp8-strict: sm_90a only, "
                    "nvfp4-mixed-strict: as nvfp4-mixed)"),
           cl::init("mxfp8"), cl::cat(compileCategory));
static cl::opt<bool>
    strict("strict",
           cl::desc("Strict (L3) mode: every head-dim-contracted operand per "
                    "token (the same as --recipe R-strict; sm_90a only)"),
           cl::cat(compileCategory));
static cl::opt<int64_t> headDim("head-dim", cl::desc("Head dim (64, 128)"),
                                cl::init(128), cl::cat(compileCategory));
static cl::opt<int64_t> heads("heads", cl::desc("Query heads (1-65535)"),
                              cl::init(16), cl::cat(compileCategory));
static cl::opt<int64_t> kvHeads("kv-heads",
                                cl::desc("Key/value heads (default: heads)"),
                                cl::init(0), cl::cat(compileCategory));
static cl::opt<bool> runtimeHeads(
    "runtime-heads",
    cl::desc("One kernel set for every head count: Hq and Hkv are kernel "
             "arguments (instead of --heads/--kv-heads)"),
    cl::cat(compileCategory));
static cl::opt<bool> debugScores(
    "debug-scores",
    cl::desc("With --backward (sm_90a), a debug build: the forward and the dQ "
             "kernel also write S of each query row against its document's "
             "first key tile, for flamia-run --check to compare bit for bit"),
    cl::cat(compileCategory));
static cl::opt<bool> causal("causal", cl::desc("Causal attention"), cl::cat(compileCategory));
static cl::opt<bool> varlen("varlen",
                            cl::desc("Packed documents with cu_seqlens"), cl::cat(compileCategory));
static cl::opt<int64_t> safeBlock("safe-block",
                                  cl::desc("Safe block (a multiple of 128)"),
                                  cl::init(128), cl::cat(compileCategory));
static cl::opt<double> softmaxScale(
    "softmax-scale", cl::desc("Softmax scale (default 1/sqrt(D))"),
    cl::init(0), cl::cat(compileCategory));
static cl::opt<std::string> ptxas("ptxas", cl::desc("ptxas to use"),
                                  cl::init(""), cl::cat(compileCategory));
static cl::opt<bool> ptxOnly("ptx-only",
                             cl::desc("Write PTX only: do not run ptxas (no cubins; the manifest says so)"), cl::cat(compileCategory));
static cl::opt<bool> scaleTiles(
    "scale-tiles",
    cl::desc("sm_90a: also write sm_100a's scale-factor tiles (q_sf, k_sf, "
             "v_sf; with --backward also the backward's), to check the "
             "quantizer's tile layout on a Hopper GPU"), cl::cat(compileCategory));
static cl::opt<bool> overlapSoftmax(
    "overlap-softmax",
    cl::desc("sm_90a, D = 128: run the softmax while the next S = Q K^T and the "
             "previous P V execute (default on; =false for the serial "
             "consumer, to compare)"),
    cl::init(true), cl::cat(compileCategory));
static cl::opt<bool> pInSmem(
    "p-in-smem",
    cl::desc("sm_100a forward: the softmax writes P to shared memory and P V "
             "reads it there (the block-scaled MMA form CUTLASS wraps) instead "
             "of from tensor memory; for a Blackwell bring-up's A/B "
             "(bench/blackwell-bringup.sh). One K/V stage fewer at D = 128"),
    cl::cat(compileCategory));
static cl::opt<bool> prefetchKv(
    "prefetch-kv",
    cl::desc("the quantization kernel asks L2 for its K and V rows before it "
             "quantizes Q (default on; =false to compare)"),
    cl::init(true), cl::cat(compileCategory));
static cl::opt<bool> roundQ(
    "round-q",
    cl::desc("sm_90a, forward-only mxfp8 and mxfp8-strict sets: the forward "
             "kernel rounds each query tile to its MXFP8 copy itself, so the "
             "quantizer neither reads Q nor writes q_pt_scales and q_deq "
             "(default on; =false for the quantizer's copy, to compare)"),
    cl::init(true), cl::cat(compileCategory));
static cl::opt<bool> payloads(
    "payloads",
    cl::desc("sm_90a: the quantizers also write the E4M3 (E2M1) payloads of "
             "every copy (q_pt, k_tb, v_tb, do_tb, ...), which no sm_90a "
             "kernel reads; by default only their scales and bf16 dequantized "
             "copies are written. sm_100a always writes them"),
    cl::cat(compileCategory));
static cl::opt<bool> backward(
    "backward",
    cl::desc("A training step: also the backward kernels (dO in; dQ, dK, dV "
             "out; sm_90a)"),
    cl::cat(compileCategory));
static cl::opt<std::string> gradDtype(
    "grad-dtype", cl::desc("With --backward: dQ, dK, dV as bf16 (default) or f32"),
    cl::init("bf16"), cl::cat(compileCategory));
static cl::opt<bool> forwardOnly(
    "forward-only",
    cl::desc("With FILE.mlir: compile its flamia.attention ops only, not "
             "their flamia.attention_grad (e.g. for a target without "
             "backward kernels)"),
    cl::cat(compileCategory));
static cl::opt<bool> emitIR("emit-ir", cl::desc("Also write graph.mlir and "
                                                "block.mlir"), cl::cat(compileCategory));
static cl::opt<std::string> inputFile(cl::Positional,
                                      cl::desc("[graph-level FILE.mlir]"),
                                      cl::init(""), cl::cat(compileCategory));
static cl::opt<std::string> outDir("o", cl::desc("Output directory"),
                                   cl::value_desc("DIR"), cl::Required, cl::cat(compileCategory));

namespace {

/// `x` as %g writes it ("0", "-0.5", "nan"), for messages.
std::string shortest(double x) {
  char buf[32];
  snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

int usageError(const llvm::Twine &message) {
  llvm::errs() << "flamia-compile: error: " << message << "\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(compileCategory);
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "flamia-compile " << flamia::versionBanner() << "\n";
  });
  cl::ParseCommandLineOptions(argc, argv, "FLAMIA attention compiler\n");
  if (target.empty())
    return usageError("--target is required: sm_90a (Hopper; runs on the "
                      "H200) or sm_100a (Blackwell; checked by ptxas and "
                      "FileCheck only, never run on a GPU)");
  if (target == "sm_100a")
    llvm::errs() << "flamia-compile: warning: the sm_100a kernels have never "
                    "run on a GPU (checked statically only; "
                    "docs/lowering.md)\n";
  flamia::CompileOptions options;
  options.ptxas = ptxas;
  options.assemble = !ptxOnly;

  // (name, output directory, spec) of every kernel set to compile.
  std::vector<flamia::NamedSpec> specs;
  std::string error;
  if (!inputFile.empty()) {
    for (cl::Option *shapeFlag : std::initializer_list<cl::Option *>{
             &recipe, &strict, &headDim, &heads, &kvHeads, &runtimeHeads,
             &causal, &varlen, &safeBlock, &softmaxScale, &backward,
             &gradDtype}) {
      if (shapeFlag->getNumOccurrences()) {
        llvm::errs() << "flamia-compile: error: --" << shapeFlag->ArgStr
                     << " conflicts with " << inputFile
                     << ": the file's flamia.attention gives the spec\n";
        return 1;
      }
    }
    std::vector<std::string> notes;
    if (!flamia::specsFromFile(inputFile, specs, notes, error, forwardOnly)) {
      llvm::errs() << "flamia-compile: error: " << error << "\n";
      return 1;
    }
    for (const std::string &note : notes)
      llvm::outs() << "note: " << note << "\n";
  } else {
    // Heads and the softmax scale: the rules and wording of every tool and
    // the runtime (flamia::validation), named by the options they came from.
    // The scale is checked as given and as the float32 the kernels receive.
    if (runtimeHeads && (heads.getNumOccurrences() ||
                         kvHeads.getNumOccurrences()))
      return usageError("--runtime-heads conflicts with --heads/--kv-heads: "
                        "its kernels take every head count at run time");
    if (!runtimeHeads &&
        !flamia::validation::validateHeads(
            heads, kvHeads.getNumOccurrences() ? kvHeads : heads, error))
      return usageError("--heads/--kv-heads: " + error);
    if (softmaxScale.getNumOccurrences() &&
        !flamia::validation::validateFloat32SoftmaxScale(
            softmaxScale, shortest(softmaxScale), error)) {
      return usageError("--softmax-scale " + shortest(softmaxScale) + ": " +
                        error + " (omit it for 1/sqrt(D))");
    }
    flamia::NamedSpec named;
    named.name = "attention";
    flamia::AttentionSpec &spec = named.spec;
    spec.recipe = recipe;
    spec.strict = strict;
    spec.headDim = headDim;
    spec.heads = heads;
    spec.kvHeads = kvHeads.getNumOccurrences() ? kvHeads : heads;
    if (runtimeHeads)
      spec.heads = spec.kvHeads = flamia::AttentionSpec::kRuntimeHeads;
    spec.causal = causal;
    spec.varlen = varlen;
    spec.safeBlock = safeBlock;
    if (softmaxScale.getNumOccurrences())
      spec.softmaxScale = softmaxScale;
    if (gradDtype.getNumOccurrences() && !backward)
      return usageError("--grad-dtype needs --backward");
    if (forwardOnly)
      return usageError("--forward-only applies to FILE.mlir (without a file, "
                        "the spec is a forward unless --backward)");
    spec.backward = backward;
    spec.gradDtype = gradDtype;
    specs.push_back(named);
  }

  // Compile every kernel set first and write only when all compiled: a
  // failure leaves no output behind.
  std::vector<std::pair<std::string, flamia::CompileResult>> results;
  for (flamia::NamedSpec &named : specs) {
    named.spec.target = target;
    named.spec.scaleTiles = scaleTiles;
    named.spec.debugScores = debugScores;
    named.spec.overlapSoftmax = overlapSoftmax;
    named.spec.pInSmem = pInSmem;
    named.spec.prefetchKv = prefetchKv;
    named.spec.roundQ = roundQ;
    named.spec.payloads = payloads;
    // One kernel set goes to DIR itself, several to DIR/<function>.
    std::string dir = specs.size() == 1 ? std::string(outDir)
                                        : outDir + "/" + named.name;
    if (!named.location.empty())
      llvm::outs() << named.name << " (" << named.location << "): D = "
                   << named.spec.headDim << ", "
                   << (named.spec.runtimeHeads()
                           ? std::string("runtime query / key-value heads, ")
                           : std::to_string(named.spec.heads) + " query / " +
                                 std::to_string(named.spec.kvHeads) +
                                 " key-value heads, ")
                   << (named.spec.causal ? "causal" : "non-causal") << ", "
                   << (named.spec.varlen ? "packed documents" : "one sequence")
                   << (named.spec.backward ? ", forward and backward" : "")
                   << " -> " << dir << "\n";
    flamia::CompileResult result;
    if (!flamia::compileAttention(named.spec, options, result, error))
      return usageError((named.location.empty() ? "" : named.location + ": ") +
                        error);
    for (const flamia::CompiledKernel &k : result.kernels) {
      llvm::outs() << k.name << ": ";
      if (k.cubin.empty())
        llvm::outs() << "PTX only (not assembled: no registers or spills known)\n";
      else
        llvm::outs() << k.registers << " registers, " << k.spillStoreBytes
                     << "+" << k.spillLoadBytes << " bytes spilled\n";
    }
    llvm::outs() << "compile time (spec to PTX): "
                 << llvm::format("%.3f", result.compileSeconds) << " s\n";
    results.emplace_back(dir, std::move(result));
  }
  for (auto &[dir, result] : results)
    if (!flamia::writeArtifacts(result, dir, error, emitIR))
      return usageError(error);
  return 0;
}
