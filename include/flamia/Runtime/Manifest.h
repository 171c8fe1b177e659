//===- Manifest.h - manifest.json v2: write, parse, validate ----*- C++ -*-===//
//
// The contract between the compiler and the runtime (docs/runtime-abi.md):
// the buffers to bind or allocate, the kernels in launch order with their
// typed parameters, the tensor maps to encode, the grid expressions and the
// varlen schedule to build. parseManifest checks everything that can be
// checked without shapes or a device (docs/runtime.md, "Validation"); what
// depends on T, the heads or the device is checked when binding.
//
// Error messages name the file position and the JSON path of the offending
// value: "manifest.json:14:9: kernels[0].params[2].kind: unknown parameter
// kind 'pointer' (expected one of: ptr, i32, f32, tensormap)".
//
// writeManifestJson (ManifestWriter.cpp) writes the same struct back as
// JSON; flamia-compile builds its manifest as a Manifest and writes it with
// it, so the compiler and the runtime share one definition of the format.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_RUNTIME_MANIFEST_H
#define FLAMIA_RUNTIME_MANIFEST_H

#include "flamia/Runtime/Expression.h"
#include "flamia/Runtime/Status.h"
#include "flamia/Schedule/CostModel.h"
#include "flamia/Schedule/ScheduleParams.h"

#include <cstdint>
#include <string>
#include <vector>

namespace flamia::runtime {

/// 2: workspace buffers say what they hold ("holds"); version 1 manifests
/// (without it) are rejected: compile them again.
constexpr int kManifestVersion = 2;

/// Two recipe kinds by their manifest spelling, for code that writes
/// manifests. The reader accepts every kind of the recipe registry
/// (flamia/Numerics/RecipeRegistry.h), which also holds the dialect's
/// spelling (nvfp4_mixed).
constexpr const char *kRecipeMxfp8 = "mxfp8";
constexpr const char *kRecipeNvfp4Mixed = "nvfp4-mixed";

enum class DType { BF16, F32, I32, U8 };
/// "bf16", "f32", "i32", "u8".
const char *dtypeName(DType dtype);
bool dtypeFromName(const std::string &name, DType &out);
int64_t dtypeBytes(DType dtype);

enum class BufferRole { Input, Output, Workspace, Schedule };
/// "input", "output", "workspace", "schedule".
const char *bufferRoleName(BufferRole role);

/// The schedule buffers the runtime knows how to fill.
constexpr const char *kBlockInfoBuffer = "block_info";
constexpr const char *kItemsBuffer = "items";
constexpr const char *kCounterBuffer = "counter";
/// The key-tile items of the backward dK/dV kernel (buildKvTileSchedule).
constexpr const char *kKvItemsBuffer = "kv_items";

/// What a workspace buffer holds: "holds" in the manifest (docs/runtime.md,
/// "Buffers"). Every workspace buffer has it; other roles do not.
enum class HeldPart {
  Payload,     // "payload": the quantized elements, [T, H, D]
  Scales,      // "scales": one scale per block of 32 channels, [rows, H, D/32]
  Dequantized, // "dequantized": payload x scale, [T, H, D]
  ScaleTiles,  // "scale_tiles": the scales in the 128x4 MMA layout, [NB, H, 512]
  Scratch,     // "scratch": the kernels' own memory; nothing else applies
  Delta,       // "delta": rowsum(dO * O) in f32, [Hq, T] (backward, grad_o)
};
/// Which input tensor a copy is of: "q", "k", "v", "grad_o" (the backward's
/// incoming gradient of O).
enum class HeldTensor { Q, K, V, GradO };
/// Which scale blocks the copy uses: "per_token" (1 x 32 channels),
/// "token_block" (32 document-local tokens x 32 channels).
enum class HeldLayout { PerToken, TokenBlock };
/// The element format of the values: "e4m3" (MXFP8 payloads, NVFP4 scales:
/// E4M3 used unsigned), "e8m0" (MXFP8 scales and scale tiles), "e2m1" (NVFP4
/// payloads, two elements a byte: element 2i in the low nibble), "bf16"
/// (dequantized copies), "f32" (delta).
enum class HeldFormat { E4M3, E8M0, BF16, F32, E2M1 };
/// Scale tiles only: what the 128 rows of a tile are, "tokens" (S = Q K^T's
/// operands) or "channels" (V in O = P V, whose K-blocks are 4 token blocks).
enum class TileRows { Tokens, Channels };

struct BufferContents {
  HeldPart part = HeldPart::Scratch;
  // Not for Scratch:
  HeldTensor tensor = HeldTensor::Q;
  HeldLayout layout = HeldLayout::PerToken;
  HeldFormat format = HeldFormat::E4M3;
  TileRows tileRows = TileRows::Tokens; // ScaleTiles only

  bool operator==(const BufferContents &o) const;
  bool operator!=(const BufferContents &o) const { return !(*this == o); }
};

const char *heldPartName(HeldPart part);
const char *heldTensorName(HeldTensor tensor);
const char *heldLayoutName(HeldLayout layout);
const char *heldFormatName(HeldFormat format);
const char *tileRowsName(TileRows rows);
/// 'q', 'k', 'v', 'g' (grad_o).
char heldTensorLetter(HeldTensor tensor);

struct ManifestBuffer {
  std::string name;
  BufferRole role = BufferRole::Workspace;
  DType dtype = DType::U8;
  std::vector<Expression> shape; // rank 1..8
  BufferContents holds;          // role Workspace only
};

/// When a kernel runs: "forward" (quantization and attention) or "backward"
/// (the gradients; they read the forward's outputs). "phase" in the manifest,
/// absent = forward.
enum class KernelPhase { Forward, Backward };
/// "forward", "backward".
const char *kernelPhaseName(KernelPhase phase);

enum class ParamKind { Ptr, I32, F32, TensorMap };
/// "ptr", "i32", "f32", "tensormap".
const char *paramKindName(ParamKind kind);

/// Values of i32 / f32 parameters that are not integer expressions.
enum class NamedValue {
  None,             // the expression `value`
  SoftmaxScale,     // "softmax_scale" (f32 only)
  SoftmaxScaleLog2, // "softmax_scale_log2" = softmax_scale * log2(e) (f32)
  FloatLiteral,     // a JSON number given for an f32 (e.g. 0.5)
};

struct TensorMapSpec {
  DType dtype = DType::BF16;
  Expression rows, cols;       // `dims`: the 2-D row-major view [rows, cols]
  Expression boxRows, boxCols; // `box`
  int swizzle = 0;             // bytes: 0, 32, 64, 128
  int l2Promotion = 128;       // bytes: 0 (none), 64, 128, 256 (optional key)
};

struct ManifestParam {
  std::string name;
  ParamKind kind = ParamKind::Ptr;
  int buffer = -1;  // ptr, tensormap: index into Manifest::buffers
  Expression value; // i32, f32 with NamedValue::None
  NamedValue named = NamedValue::None;
  double floatLiteral = 0.0; // NamedValue::FloatLiteral
  TensorMapSpec tensorMap;   // tensormap
};

struct ManifestKernel {
  std::string name; // the kernel symbol in the cubin
  std::string cubin;
  std::string ptx; // informational (optional)
  std::string launch; // informational: "grid", "persistent" (optional)
  KernelPhase phase = KernelPhase::Forward;
  Expression grid[3];
  uint32_t block[3] = {1, 1, 1};
  uint32_t cluster[3] = {1, 1, 1};
  int64_t smemBytes = 0;
  // Informational (from ptxas); -1 when absent.
  int64_t registers = -1, spillBytes = -1, tmemColumns = -1;
  std::vector<ManifestParam> params;

  int64_t threadsPerBlock() const {
    return int64_t{block[0]} * block[1] * block[2];
  }
  int64_t clusterSize() const {
    return int64_t{cluster[0]} * cluster[1] * cluster[2];
  }
};

struct ManifestRecipe {
  std::string kind; // kRecipeMxfp8, kRecipeNvfp4Mixed; empty: no "recipe"
  int64_t safeBlock = 128;
  bool strict = false;
};

struct ManifestSchedule {
  bool present = false;
  int32_t blockM = 128;
  int32_t blockN = 128;
  int32_t safeBlock = 128;
  std::string costModel; // preset name, or "custom" for an object
  CostWeights weights;
  /// The order of the work lists ("order": "lpt" when absent or
  /// "l2-sections"; "document" is a baseline and not accepted here) and the
  /// section budget ("l2_section_bytes", only with l2-sections).
  ScheduleOrder order = ScheduleOrder::LongestFirst;
  int64_t l2SectionBytes = VarlenScheduleParams().l2SectionBytes;
};

/// An architecture target "sm_<major><minor>[a|f]".
struct ManifestTarget {
  std::string name;
  int major = 0, minor = 0;
  bool archSpecific = false;   // 'a': runs only on exactly this major.minor
  bool familySpecific = false; // 'f': this major, minor >= this minor
};

struct Manifest {
  int version = 0;
  ManifestTarget target;
  ManifestRecipe recipe;
  int64_t headDim = 0;
  bool causal = true;
  int64_t heads = 0;   ///< query heads the kernels were compiled for (0: unstated)
  int64_t kvHeads = 0; ///< key/value heads (0: unstated)
  bool varlen = true;
  bool hasSoftmaxScale = false;
  float softmaxScale = 0.0f; // when hasSoftmaxScale
  ManifestSchedule schedule;
  std::vector<ManifestBuffer> buffers;
  std::vector<ManifestKernel> kernels;

  /// Index of the buffer called `name`, or -1.
  int findBuffer(const std::string &name) const;
  /// Whether kernel `k` has a parameter bound to buffer `buffer`.
  bool kernelUsesBuffer(size_t kernel, int buffer) const;
  /// Whether any kernel is of the backward phase.
  bool hasBackward() const;
};

/// Parses and validates the text of a manifest. `fileName` prefixes the
/// messages ("manifest.json:L:C: path: message").
Status parseManifest(const std::string &text, Manifest &out,
                     const std::string &fileName = "manifest.json");

/// The text of `m` as manifest.json: what parseManifest reads back into an
/// equal Manifest (for a manifest it accepts). Shapes, grids, tensor-map
/// dims and i32/f32 expressions are written as strings (their text), constant
/// tensor-map boxes as integers; optional fields are written when set
/// (heads/kv_heads > 0, a recipe kind, the schedule, resources >= 0, a ptx
/// or launch name, l2_promotion other than 128). A kernel with an empty
/// `cubin` is written with "cubin": null (flamia-compile --ptx-only), which
/// the reader refuses.
std::string writeManifestJson(const Manifest &m);

/// Reads DIR/manifest.json, parses it and checks that every cubin it names
/// is a readable file inside DIR (relative path, no "..").
Status loadManifest(const std::string &artifactDir, Manifest &out);

/// Parses "sm_90a", "sm_100a", "sm_120f", "sm_80"...
bool parseTarget(const std::string &name, ManifestTarget &out);

/// Whether a device of compute capability major.minor runs code built for
/// `target`; if not, `why` says so.
bool targetRunsOn(const ManifestTarget &target, int major, int minor,
                  std::string &why);

/// The argument names that input/output buffers bind to (flamia_attention_args
/// and, for the backward's grad_o, dq, dk, dv, runtime::AttentionArgs), with
/// the dtype each must have; the gradients may be bf16 or f32 (`orF32`: the
/// training function's result types choose).
struct ArgumentBinding {
  const char *name;
  BufferRole role;
  DType dtype;
  bool orF32 = false;
};
const std::vector<ArgumentBinding> &argumentBindings();

} // namespace flamia::runtime

#endif // FLAMIA_RUNTIME_MANIFEST_H
