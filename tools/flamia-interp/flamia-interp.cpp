//===- flamia-interp.cpp - Run graph-level flamia IR on the CPU -----------===//
//
//   flamia-interp FILE.mlir [--function NAME] [--seed S]
//                 [--tokens T] [--cu-seqlens 0,100,256]
//                 [--heads H] [--kv-heads HKV]
//                 [-o RESULTS.bin] [--dump-inputs DIR] [--dump-outputs DIR]
//                 [--split-input-file] [--verify-diagnostics]
//
// Executes one function of graph-level flamia IR (flamia.attention,
// attention_grad, quantize, dequantize, attention_fwd, attention_bwd) with
// the CPU reference of the numerics contract, on seeded random inputs:
// every bf16/f32 tensor argument gets N(0, 1) values (bf16-rounded for
// bf16), every rank-1 i32 argument the --cu-seqlens list; dynamic sizes of
// the other arguments are T, except runtime head counts ('?' heads, dimension
// 1 of a packed [T, H, D] argument): --kv-heads for the arguments an
// attention reads as K or V, --heads for the others. Prints one line per result with a digest of
// its bits, and writes the results for bit-for-bit comparisons
// (docs/passes.md, "flamia-interp").
//
//===----------------------------------------------------------------------===//
#include "flamia/Dialect/FlamiaDialect.h"
#include "flamia/Dialect/FlamiaOps.h"
#include "flamia/Interpreter/GraphInterpreter.h"
#include "flamia/Numerics/Formats.h"
#include "flamia/Numerics/SyntheticInputs.h"
#include "flamia/Support/Npy.h"
#include "flamia/Support/Validation.h"
#include "flamia/Support/Version.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/InterleavedRange.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <random>

using namespace mlir;
using namespace flamia;
namespace cl = llvm::cl;
namespace num = ::flamia::numerics;

// --help lists these, not the LLVM back ends' options linked in with MLIR.
static cl::OptionCategory interpCategory("flamia-interp options");

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<input .mlir file>"),
                                          cl::init("-"), cl::cat(interpCategory));
static cl::opt<std::string>
    functionName("function",
                 cl::desc("Function to run (default: the only one)"),
                 cl::value_desc("NAME"), cl::init(""), cl::cat(interpCategory));
static cl::opt<unsigned> seed("seed", cl::desc("Seed of the random inputs"),
                              cl::init(1), cl::cat(interpCategory));
static cl::opt<unsigned> tokenSpread(
    "token-spread",
    cl::desc("Scale each (token, head) row of a float argument by 2^k, k "
             "uniform in [-N, N] (default 6; 0: plain N(0, 1)). With N(0, 1) "
             "data every block has about the same amax and E4M3's "
             "floating-point elements hide the scale layout"),
    cl::init(6), cl::cat(interpCategory));
static cl::opt<int64_t>
    tokens("tokens",
           cl::desc("T, the size of every dynamic dimension (default: the "
                    "last entry of --cu-seqlens)"),
           cl::init(-1), cl::cat(interpCategory));
static cl::opt<int64_t> heads(
    "heads",
    cl::desc("Query heads: the size of a runtime head count ('?' in dimension "
             "1 of a packed [T, H, D] argument)"),
    cl::init(-1), cl::cat(interpCategory));
static cl::opt<int64_t> kvHeads(
    "kv-heads",
    cl::desc("Key/value heads, for the runtime head counts of the arguments "
             "an attention reads as K or V (default: --heads)"),
    cl::init(-1), cl::cat(interpCategory));
static cl::opt<std::string>
    cuSeqlens("cu-seqlens",
              cl::desc("Document boundaries given to every rank-1 i32 "
                       "argument, e.g. 0,100,256 (default: 0,T)"),
              cl::init(""), cl::cat(interpCategory));
static cl::opt<std::string>
    outputFile("o",
               cl::desc("Write every result's raw little-endian bits (bf16: "
                        "2 bytes, f32 and i32: 4), concatenated"),
               cl::value_desc("FILE"), cl::init(""), cl::cat(interpCategory));
static cl::opt<std::string>
    dumpInputs("dump-inputs",
               cl::desc("Write argument i to DIR/arg<i>.npy (float32; i32 "
                        "for cu_seqlens)"),
               cl::value_desc("DIR"), cl::init(""), cl::cat(interpCategory));
static cl::opt<std::string>
    dumpOutputs("dump-outputs",
                cl::desc("Write result i to DIR/result<i>.npy (float32, "
                         "bf16 widened exactly; i32 as int32)"),
                cl::value_desc("DIR"), cl::init(""), cl::cat(interpCategory));
static cl::opt<bool> traceScores(
    "trace-scores",
    cl::desc("Also digest (and write with -o, after the results) the "
             "log2-domain scores of every attention op: the backward's "
             "recomputed S, which E4M3 P and dS hide from the gradients"), cl::cat(interpCategory));
static cl::opt<bool> splitInputFile(
    "split-input-file",
    cl::desc("Split the input at '// -----' and run every chunk"), cl::cat(interpCategory));
static cl::opt<bool> verifyDiagnostics(
    "verify-diagnostics",
    cl::desc("Check the emitted diagnostics against expected-* comments"), cl::cat(interpCategory));

namespace {

using TensorPtr = std::shared_ptr<const HostTensor>;

/// FNV-1a, 64 bits.
uint64_t fnv1a(const std::vector<uint8_t> &bytes) {
  uint64_t h = 1469598103934665603ull;
  for (uint8_t b : bytes) {
    h ^= b;
    h *= 1099511628211ull;
  }
  return h;
}

/// The raw bits of a tensor as its element type stores them.
std::vector<uint8_t> rawBytes(const HostTensor &t) {
  std::vector<uint8_t> out;
  if (t.element == HostElement::I32) {
    out.resize(t.ints.size() * 4);
    std::memcpy(out.data(), t.ints.data(), out.size());
  } else if (t.element == HostElement::F32) {
    out.resize(t.values.size() * 4);
    std::memcpy(out.data(), t.values.data(), out.size());
  } else {
    out.resize(t.values.size() * 2);
    for (size_t i = 0; i < t.values.size(); ++i) {
      uint16_t b = num::floatToBf16(t.values[i]);
      std::memcpy(&out[2 * i], &b, 2);
    }
  }
  return out;
}

bool writeNpyFile(const std::string &path, const HostTensor &t) {
  NpyArray a = makeNpyArray(
      t.isFloat() ? NpyDType::Float32 : NpyDType::Int32,
      std::vector<int64_t>(t.shape.begin(), t.shape.end()));
  if (t.isFloat())
    std::memcpy(a.bytes.data(), t.values.data(), a.bytes.size());
  else
    std::memcpy(a.bytes.data(), t.ints.data(), a.bytes.size());
  std::string error;
  if (!writeNpy(path, a, error)) {
    llvm::errs() << "flamia-interp: error: " << error << "\n";
    return false;
  }
  return true;
}

/// All arguments together hold at most this many elements (1 GiB of f32):
/// the reference's O(T^2) attention is for small checks, and a larger
/// request is an error before any allocation.
constexpr int64_t kMaxArgumentElements = int64_t(1) << 28;

/// The entries of --cu-seqlens, each an integer in [0, 2^31 - 1]
/// (flamia::validation's parser and message).
LogicalResult parseCuSeqlens(std::vector<int32_t> &out) {
  out.clear();
  if (cuSeqlens.empty())
    return success();
  std::string error;
  for (StringRef part : llvm::split(StringRef(cuSeqlens), ',')) {
    int64_t v;
    if (!validation::parseIntegerInRange(
            part.trim().str(), "--cu-seqlens", 0, INT32_MAX, v, error)) {
      llvm::errs() << "flamia-interp: error: " << error << "\n";
      return failure();
    }
    out.push_back(static_cast<int32_t>(v));
  }
  return success();
}

/// The arguments of `func`: seeded N(0, 1) float tensors, cu_seqlens.
FailureOr<SmallVector<TensorPtr>> makeArguments(func::FuncOp func) {
  std::vector<int32_t> cu;
  if (failed(parseCuSeqlens(cu)))
    return failure();
  int64_t T = tokens;
  if (tokens.getNumOccurrences() && (tokens < 0 || tokens > INT32_MAX))
    return func.emitError() << "--tokens " << T
                            << " out of range [0, " << INT32_MAX << "]";
  if (!cu.empty()) {
    // The rule of every tool and the runtime: num_docs + 1 >= 2 entries from
    // 0, non-decreasing, ending at T (--tokens, when given).
    std::string error;
    if (!validation::validateCuSeqlens(cu.data(), cu.size(), T,
                                       error)) {
      llvm::errs() << "flamia-interp: error: --cu-seqlens: " << error << "\n";
      return failure();
    }
    T = cu.back();
  }
  // Runtime head counts: K and V (of any attention) take --kv-heads.
  const int64_t Hq = heads, Hkv = kvHeads.getNumOccurrences() ? kvHeads : heads;
  if (heads.getNumOccurrences() || kvHeads.getNumOccurrences()) {
    std::string error;
    if (!validation::validateHeads(Hq, Hkv, error)) {
      llvm::errs() << "flamia-interp: error: --heads/--kv-heads: " << error
                   << "\n";
      return failure();
    }
  }
  // The K and V operands of every attention op, before and after the graph
  // passes (their quantized copies lead back to the argument).
  llvm::DenseSet<Value> keysAndValues;
  auto addKv = [&](Value v) {
    if (auto q = v.getDefiningOp<QuantizeOp>())
      v = q.getInput();
    keysAndValues.insert(v);
  };
  auto addSafeKv = [&](ValueRange safe) {
    if (safe.size() >= 3) {
      addKv(safe[1]);
      addKv(safe[2]);
    }
  };
  func.walk([&](Operation *op) {
    if (auto a = dyn_cast<AttentionOp>(op)) {
      addKv(a.getK());
      addKv(a.getV());
    } else if (auto g = dyn_cast<AttentionGradOp>(op)) {
      addKv(g.getK());
      addKv(g.getV());
    } else if (auto f = dyn_cast<AttentionFwdOp>(op)) {
      addKv(f.getK());
      addKv(f.getV());
      addSafeKv(f.getSafe());
    } else if (auto b = dyn_cast<AttentionBwdOp>(op)) {
      addKv(b.getK());
      addKv(b.getDovV());
      addKv(b.getDskK());
      addSafeKv(b.getSafe());
    }
  });
  SmallVector<TensorPtr> args;
  int64_t totalElements = 0;
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    std::optional<HostElement> element =
        type ? getHostElement(type.getElementType()) : std::nullopt;
    if (!element || (*element == HostElement::I32 && type.getRank() != 1))
      return emitError(arg.getLoc())
             << "argument #" << i << " has type " << arg.getType()
             << "; flamia-interp makes random bf16/f32 tensors and passes "
                "--cu-seqlens to rank-1 i32 tensors";
    auto t = std::make_shared<HostTensor>();
    t->element = *element;
    if (*element == HostElement::I32) {
      t->ints = cu;
      if (t->ints.empty()) {
        if (T < 0)
          return emitError(arg.getLoc())
                 << "argument #" << i
                 << " is cu_seqlens: pass --cu-seqlens or --tokens";
        t->ints = {0, static_cast<int32_t>(T)};
      }
      int64_t n = static_cast<int64_t>(t->ints.size());
      if (!type.isDynamicDim(0) && type.getDimSize(0) != n)
        return emitError(arg.getLoc())
               << "argument #" << i << " has type " << type << " but "
               << "--cu-seqlens has " << n << " entries";
      t->shape = {n};
      args.push_back(std::move(t));
      continue;
    }
    int64_t elements = 1;
    for (auto [dim, staticSize] : llvm::enumerate(type.getShape())) {
      int64_t size = staticSize;
      if (ShapedType::isDynamic(size) && dim == 1 && type.getRank() == 3) {
        if (Hq < 0)
          return emitError(arg.getLoc())
                 << "argument #" << i << " has type " << type
                 << ": pass --heads (and --kv-heads) for its runtime head "
                    "count";
        size = keysAndValues.contains(arg) ? Hkv : Hq;
      } else if (ShapedType::isDynamic(size)) {
        if (T < 0)
          return emitError(arg.getLoc())
                 << "argument #" << i << " has type " << type
                 << ": pass --tokens or --cu-seqlens for its dynamic size";
        size = T;
      }
      t->shape.push_back(size);
      // Checked before anything is allocated: the product of the sizes,
      // in 64 bits, against what the CPU reference is meant to run.
      if (size != 0 && elements > kMaxArgumentElements / size)
        elements = kMaxArgumentElements + 1;
      else
        elements *= size;
    }
    totalElements += elements;
    if (elements > kMaxArgumentElements || totalElements > kMaxArgumentElements)
      return emitError(arg.getLoc())
             << "argument #" << i << " of shape [" << llvm::interleaved(t->shape, ", ")
             << "] (T = " << T << ") takes the inputs past "
             << kMaxArgumentElements
             << " elements, the CPU interpreter's limit: it runs the "
                "reference on small problems (use fewer tokens)";
    // Argument i: N(0, 1) from NormalGenerator(seed * 1000 + i); the rows
    // (last dimension) scaled by 2^k, k = mt19937(seed * 1000 + i) % (2N+1) - N
    // (both generators are fully specified, so every platform agrees).
    const uint32_t argSeed =
        static_cast<uint32_t>(seed) * 1000u + static_cast<uint32_t>(i);
    num::NormalGenerator gen(argSeed);
    std::mt19937 rows(argSeed);
    const int64_t rowLength = t->shape.empty() ? 1 : t->shape.back();
    t->values.resize(static_cast<size_t>(t->getNumElements()));
    float rowScale = 1.0f;
    for (size_t k = 0; k < t->values.size(); ++k) {
      if (k % static_cast<size_t>(std::max<int64_t>(rowLength, 1)) == 0)
        rowScale =
            std::ldexp(1.0f, static_cast<int>(rows() % (2 * tokenSpread + 1)) -
                                 static_cast<int>(tokenSpread));
      float x = gen.next() * rowScale;
      t->values[k] = *element == HostElement::BF16 ? num::roundToBf16(x) : x;
    }
    args.push_back(std::move(t));
  }
  return args;
}

func::FuncOp findFunction(ModuleOp module) {
  func::FuncOp found;
  int count = 0;
  for (auto f : module.getOps<func::FuncOp>()) {
    if (f.isExternal())
      continue;
    if (!functionName.empty() ? f.getSymName() == functionName : !found)
      found = f;
    ++count;
  }
  if (!found) {
    emitError(module.getLoc())
        << (functionName.empty() ? std::string("no function with a body to run")
                                 : "no function named '" + functionName + "'");
    return {};
  }
  if (functionName.empty() && count > 1) {
    emitError(module.getLoc()) << "the module has " << count
                               << " functions: choose one with --function";
    return {};
  }
  return found;
}

LogicalResult writeResults(func::FuncOp func, ArrayRef<TensorPtr> args,
                           const Interpretation &run, raw_ostream &os) {
  ArrayRef<TensorPtr> results = run.results;
  // What ran, so that a test can tell which form of the IR it executed.
  llvm::MapVector<StringRef, int> ran;
  for (Operation &op : func.getBody().front())
    if (!isa<func::ReturnOp>(op))
      ++ran[op.getName().getStringRef()];
  os << "@" << func.getSymName() << " ran";
  for (auto [i, entry] : llvm::enumerate(ran))
    os << (i ? ", " : " ") << entry.second << " " << entry.first;
  os << " (seed " << seed << ", " << args.size() << " arguments)\n";
  std::vector<uint8_t> all;
  for (auto [i, r] : llvm::enumerate(results)) {
    std::vector<uint8_t> bytes = rawBytes(*r);
    int64_t nonFinite = 0;
    float maxAbs = 0;
    for (float x : r->values) {
      if (!std::isfinite(x))
        ++nonFinite;
      else
        maxAbs = std::max(maxAbs, std::fabs(x));
    }
    os << "result #" << i << ": " << r->describe() << " digest "
       << llvm::format_hex_no_prefix(fnv1a(bytes), 16) << ", "
       << r->getNumElements() << " elements";
    if (r->isFloat())
      os << ", " << nonFinite << " non-finite, max |x| "
         << llvm::format("%.6g", maxAbs);
    os << "\n";
    all.insert(all.end(), bytes.begin(), bytes.end());
  }
  for (auto [i, trace] : llvm::enumerate(run.scores)) {
    std::vector<uint8_t> bytes(trace.values.size() * sizeof(float));
    if (!bytes.empty())
      std::memcpy(bytes.data(), trace.values.data(), bytes.size());
    os << "scores #" << i << " (" << trace.opName << "): digest "
       << llvm::format_hex_no_prefix(fnv1a(bytes), 16) << ", "
       << trace.values.size() << " scores\n";
    all.insert(all.end(), bytes.begin(), bytes.end());
  }
  if (!outputFile.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream out(outputFile, ec, llvm::sys::fs::OF_None);
    if (ec) {
      llvm::errs() << "flamia-interp: error: cannot write " << outputFile
                   << ": " << ec.message() << "\n";
      return failure();
    }
    out.write(reinterpret_cast<const char *>(all.data()), all.size());
  }
  for (auto [dir, values, stem] :
       {std::make_tuple(std::string(dumpInputs), args, "arg"),
        std::make_tuple(std::string(dumpOutputs), results, "result")}) {
    if (dir.empty())
      continue;
    if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
      llvm::errs() << "flamia-interp: error: cannot create " << dir << ": "
                   << ec.message() << "\n";
      return failure();
    }
    for (auto [i, t] : llvm::enumerate(values))
      if (!writeNpyFile(dir + "/" + stem + std::to_string(i) + ".npy", *t))
        return failure();
  }
  return success();
}

LogicalResult runChunk(std::unique_ptr<llvm::MemoryBuffer> buffer,
                       const DialectRegistry &registry, raw_ostream &os) {
  MLIRContext context(registry);
  // Errors point at the op's line; the generic form of the op adds nothing.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());

  auto run = [&]() -> LogicalResult {
    OwningOpRef<ModuleOp> module =
        parseSourceFile<ModuleOp>(sourceMgr, &context);
    if (!module)
      return failure();
    func::FuncOp func = findFunction(*module);
    if (!func)
      return failure();
    FailureOr<SmallVector<TensorPtr>> args = makeArguments(func);
    if (failed(args))
      return failure();
    InterpreterOptions options;
    options.traceScores = traceScores;
    FailureOr<Interpretation> results = interpretFunction(func, *args, options);
    if (failed(results))
      return failure();
    return writeResults(func, *args, *results, os);
  };

  if (!verifyDiagnostics) {
    SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    return run();
  }
  SourceMgrDiagnosticVerifierHandler handler(sourceMgr, &context);
  (void)run(); // the expected diagnostics decide
  return handler.verify();
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(interpCategory);
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "flamia-interp " << versionBanner() << "\n";
  });
  cl::ParseCommandLineOptions(
      argc, argv,
      "FLAMIA graph-level interpreter: runs a function of flamia IR with the "
      "CPU reference of the numerics contract on seeded random inputs\n");
  if (tokenSpread > 30) {
    llvm::errs() << "flamia-interp: error: --token-spread must be at most "
                    "30 (scores of rows scaled by 2^N stay far from float's "
                    "range), got "
                 << tokenSpread << "\n";
    return 1;
  }
  if (splitInputFile &&
      (!outputFile.empty() || !dumpInputs.empty() || !dumpOutputs.empty())) {
    llvm::errs() << "flamia-interp: error: -o, --dump-inputs and "
                    "--dump-outputs take one function; do not combine them "
                    "with --split-input-file\n";
    return 1;
  }
  DialectRegistry registry;
  registry.insert<FlamiaDialect, func::FuncDialect, arith::ArithDialect>();

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << "flamia-interp: error: " << error << "\n";
    return 1;
  }
  auto process = [&](std::unique_ptr<llvm::MemoryBuffer> chunk,
                     raw_ostream &os) {
    return runChunk(std::move(chunk), registry, os);
  };
  if (!splitInputFile)
    return failed(process(std::move(input), llvm::outs())) ? 1 : 0;
  return failed(splitAndProcessBuffer(std::move(input), process, llvm::outs(),
                                      kDefaultSplitMarker, kDefaultSplitMarker))
             ? 1
             : 0;
}
