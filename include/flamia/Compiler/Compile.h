//===- Compile.h - From an attention spec to PTX, cubin, manifest -*- C++ -*-===//
//
// The integrator's entry point: one call from an attention specification to
// the kernels (PTX and cubin, one pair per kernel) and the runtime manifest
// (docs/runtime-abi.md). flamia-compile is a thin CLI over this.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_COMPILER_COMPILE_H
#define FLAMIA_COMPILER_COMPILE_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
class ModuleOp;
class OpPassManager;
} // namespace mlir

namespace flamia {

struct AttentionSpec {
  std::string target = "sm_100a"; ///< sm_90a or sm_100a (flamia-compile asks for it)
  /// A recipe kind ("mxfp8", "nvfp4-mixed") or its strict preset
  /// ("mxfp8-strict": the same as `strict`).
  std::string recipe = "mxfp8";
  /// Strict (L3) mode (docs/design.md): every head-dim-contracted operand
  /// per token, so dQ_i sees no later and dK_j, dV_j no earlier token.
  bool strict = false;
  int64_t headDim = 128;
  /// Query and key/value heads (GQA: kvHeads divides heads). Both
  /// kRuntimeHeads: the head counts are kernel arguments, and one kernel set
  /// serves every Hq and Hkv (the runtime checks Hkv divides Hq).
  int64_t heads = 16;
  int64_t kvHeads = 16;
  static constexpr int64_t kRuntimeHeads = 0;
  bool runtimeHeads() const {
    return heads == kRuntimeHeads && kvHeads == kRuntimeHeads;
  }
  bool causal = true;
  bool varlen = true;      ///< packed documents with cu_seqlens
  int64_t safeBlock = 128; ///< 0: none (rejected as leaky)
  std::optional<double> softmaxScale; ///< default 1/sqrt(D)
  /// sm_90a: also write sm_100a's scale-factor tiles (to check them on a
  /// Hopper GPU; the sm_90a kernels do not read them).
  bool scaleTiles = false;
  /// A debug build of a training step (sm_90a): the forward and the dQ
  /// kernel also write S of the first key tile (workspaces s_fwd, s_dq) for
  /// flamia-run --check's recomputation check. Slower; not for training.
  bool debugScores = false;
  /// sm_90a: overlap the softmax with the next S and the previous P V MMAs
  /// (flamia-tile's overlap-softmax); false gives the serial consumer.
  bool overlapSoftmax = true;
  /// sm_100a forward: P V reads P (E4M3) from shared memory instead of
  /// tensor memory (flamia-tile's p-in-smem), for a Blackwell bring-up's
  /// A/B of the two block-scaled MMA forms. sm_100a only.
  bool pInSmem = false;
  /// The quantization kernel prefetches K and V into L2 before quantizing
  /// Q (flamia-varlen-schedule's prefetch-kv); false to compare.
  bool prefetchKv = true;
  /// sm_90a, forward-only MXFP8 sets: the forward rounds Q itself and the
  /// quantizer writes no copy of Q (flamia-varlen-schedule's round-q);
  /// false to compare.
  bool roundQ = true;
  /// sm_90a: the quantizers also write the E4M3 (E2M1) payloads, which no
  /// sm_90a kernel reads (they read the bf16 dequantized copies), for
  /// inspection and flamia-run --check's comparison of the codes. sm_100a
  /// always writes them.
  bool payloads = false;
  /// A training step: the forward and its backward (dO in; dQ, dK, dV out),
  /// five kernels (docs/runtime-abi.md).
  bool backward = false;
  /// The gradients' element type: "bf16" or "f32".
  std::string gradDtype = "bf16";
};

struct CompileOptions {
  /// ptxas to assemble cubins with; empty: $FLAMIA_PTXAS, then
  /// /usr/local/cuda/bin/ptxas, then PATH. No ptxas: PTX only.
  std::string ptxas;
  /// Run ptxas; false writes PTX alone (kernels without cubin, registers or
  /// spills, and a manifest that says so).
  bool assemble = true;
  /// With `assemble`: a missing ptxas is an error (else PTX alone).
  bool requireCubin = true;
};

struct CompiledKernel {
  std::string name;
  std::string ptx;
  std::string cubin; ///< empty if not assembled
  int64_t registers = -1, spillStoreBytes = -1, spillLoadBytes = -1,
          stackBytes = -1;
  std::string ptxasLog;
};

struct CompileResult {
  std::vector<CompiledKernel> kernels;
  std::string manifestJson;
  std::string graphIR;  ///< after flamia-varlen-schedule (before flamia-tile)
  std::string blockIR;  ///< after flamia-tile
  double compileSeconds = 0; ///< spec to PTX (MLIR + LLVM), without ptxas
};

/// Limits of what the kernels implement (validateSpec checks them).
/// The safe block's upper bound is the dialect's (flamia::kMaxSafeBlock)
/// and the head limits are flamia::validation's.
constexpr int64_t kKeyTile = 128; ///< keys per tile; safe blocks are multiples

/// Checks that the kernels implement `spec`: target, recipe, head dim, head
/// counts, safe block, softmax scale. Returns false and sets `error` to a
/// message naming the offending value otherwise. compileAttention calls it.
bool validateSpec(const AttentionSpec &spec, std::string &error);

/// Compiles `spec`. Returns false and sets `error` (a message naming the
/// problem) on unsupported specs or compiler failures.
bool compileAttention(const AttentionSpec &spec, const CompileOptions &options,
                      CompileResult &result, std::string &error);

/// Writes `<dir>/<kernel>.ptx`, `.cubin` (when assembled), `manifest.json`
/// and, with `withIR`, `graph.mlir` and `block.mlir`. All or nothing: on a
/// failed write no file of the set is left behind and `error` names the path.
bool writeArtifacts(const CompileResult &result, const std::string &dir,
                    std::string &error, bool withIR = false);

} // namespace flamia

#endif // FLAMIA_COMPILER_COMPILE_H
