//===- Validation.h - One check per concept, shared by every tool -*- C++ -*-===//
//
// The rules every FLAMIA tool and the runtime apply to what a user gives
// them: the softmax scale, cu_seqlens, head counts and tensor sizes, and the
// pairing of a quantization format with its scale blocks. Each rule lives
// here once; flamia-ref, flamia-run, the runtime (lib/Runtime), and the MLIR
// tools (flamia-compile, flamia-interp) call these functions instead of
// writing their own, so that a value one tool accepts no other rejects.
//
// Plain C++17: no LLVM, no exceptions. Every function returns true when the
// value is valid, and otherwise false with `error` set to one sentence (no
// trailing period, no tool prefix) that names the offending value and the
// rule, e.g. "softmax_scale -0.5 must be finite and > 0". Callers prefix it
// with their own context (option name, file name).
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_SUPPORT_VALIDATION_H
#define FLAMIA_SUPPORT_VALIDATION_H

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace flamia::validation {

//===----------------------------------------------------------------------===//
// Limits
//===----------------------------------------------------------------------===//

/// Tokens in a packed batch: cu_seqlens is int32.
constexpr int64_t kMaxTokens = 2147483647;
/// Documents in a packed batch (cu_seqlens has num_docs + 1 int32 entries).
constexpr int64_t kMaxDocuments = 2147483646;
/// Query (and kv) heads: a grid dimension of the kernels (y, z <= 65535).
constexpr int64_t kMaxHeads = 65535;
/// Elements of one [T, H, D] tensor (T x Hq x D) the kernels are checked to
/// run: 3.5M tokens at H = 16, D = 128 (7 x 2^30), the largest batch
/// validated on the H200 (docs/runtime.md, "Sizes"). The kernels' global
/// offsets are 64-bit; what stops a larger batch is memory: the sm_90a kernel
/// set takes 18 bytes per element, and 4M tokens at H = 16, D = 128 would
/// need 144 GiB of the H200's 140.
constexpr int64_t kMaxTensorElements = int64_t{7} << 30;

//===----------------------------------------------------------------------===//
// Integer arithmetic
//===----------------------------------------------------------------------===//

/// out = the product of `factors` (all >= 0). False, with `out` unchanged,
/// when a factor is negative or the product overflows int64.
bool checkedProduct(std::initializer_list<int64_t> factors, int64_t &out);

/// Parses all of `text` as a base-10 integer in [lo, hi] (no sign other than
/// a leading '-', no spaces, no suffix). On failure sets `error` to
/// "NAME expects an integer in [lo, hi], got 'text'".
bool parseIntegerInRange(const std::string &text, const char *name, int64_t lo,
                         int64_t hi, int64_t &out, std::string &error);

//===----------------------------------------------------------------------===//
// Softmax scale
//===----------------------------------------------------------------------===//

/// A softmax scale must be finite and > 0 (scores are multiplied by it; a
/// negative scale would reverse the attention, 0 flattens it). APIs where 0
/// means "the default, 1/sqrt(D)" (the runtime's C API) test for 0 before
/// calling this. Error: "softmax_scale S must be finite and > 0".
bool validateSoftmaxScale(double scale, std::string &error);

/// A softmax scale a user wrote (`asWritten`, parsed as `scale`) for kernels
/// that receive it as a float32: validateSoftmaxScale on the value and on its
/// float32 rounding (1e-60 is > 0 but rounds to 0; 1e60 overflows). Error:
/// validateSoftmaxScale's, or "softmax_scale <asWritten> is not a positive
/// finite float32" when only the rounding fails.
bool validateFloat32SoftmaxScale(double scale, const std::string &asWritten,
                                 std::string &error);

//===----------------------------------------------------------------------===//
// cu_seqlens
//===----------------------------------------------------------------------===//

/// cu_seqlens of a packed batch: int32, num_docs + 1 >= 2 entries (at most
/// kMaxDocuments + 1), cu[0] == 0, non-decreasing (zero-length documents are
/// allowed), and cu[count - 1] == numTokens when numTokens >= 0 (pass -1 to
/// skip that check). Errors name the first offending index and value, e.g.
/// "cu_seqlens[2] = 20 is less than cu_seqlens[1] = 30 (it must be
/// non-decreasing)".
bool validateCuSeqlens(const int32_t *cu, size_t count, int64_t numTokens,
                       std::string &error);

/// The dtype rule for cu_seqlens read from a file: it must be int32.
/// `dtypeName` is the file's dtype as a name ("int32", "int64", ...).
/// Error: "cu_seqlens must be int32, got int64".
bool validateCuSeqlensDType(const std::string &dtypeName, std::string &error);

/// Document lengths (e.g. a --doc-lengths option): each >= 0, at least one,
/// summing to at most `maxTokens` (<= kMaxTokens). On success `cu` holds the
/// cu_seqlens (0, L0, L0 + L1, ...).
bool cuSeqlensFromLengths(const int64_t *lengths, size_t count,
                          int64_t maxTokens, std::vector<int32_t> &cu,
                          std::string &error);

//===----------------------------------------------------------------------===//
// Heads and sizes
//===----------------------------------------------------------------------===//

/// numQHeads in [1, kMaxHeads], numKVHeads in [1, numQHeads], and numQHeads a
/// multiple of numKVHeads (grouped-query attention).
bool validateHeads(int64_t numQHeads, int64_t numKVHeads, std::string &error);

/// The size of a packed attention problem: T in [0, kMaxTokens], heads as
/// validateHeads, D >= 1, and T x Hq x D <= maxTensorElements (pass
/// kMaxTensorElements for what the kernels address; a CPU tool may pass a
/// larger bound). The error names the product and the limit.
bool validateProblemSize(int64_t numTokens, int64_t numQHeads,
                         int64_t numKVHeads, int64_t headDim,
                         int64_t maxTensorElements, std::string &error);

//===----------------------------------------------------------------------===//
// Quantization format x scale blocks
//===----------------------------------------------------------------------===//

/// Element encodings of a quantized payload.
enum class ElementEncoding { E4M3, E5M2, E2M1 };
/// Scale encodings: E8M0 (MX: MXFP8, MXFP4) or unsigned E4M3 (NVFP4).
enum class ScaleEncoding { E8M0, UE4M3 };

/// Whether a format and a scale block go together (the dialect's
/// ScaleLayoutAttr/QTensorType rules, for every tool):
///   - per tensor (`perTensor`, block sizes ignored): E8M0 scales only;
///   - UE4M3 scales (NVFP4): an E2M1 payload and channel block 16;
///   - E8M0 scales (MX): channel block 32;
///   - token block 1 (per token) or a positive multiple of 16;
///   - headDim (when >= 1) divisible by the channel block.
/// `formatName` ("mxfp8-e4m3", "nvfp4", ...) is only used in messages.
bool validateFormatBlock(ElementEncoding element, ScaleEncoding scale,
                         bool perTensor, int64_t tokenBlock,
                         int64_t channelBlock, int64_t headDim,
                         const std::string &formatName, std::string &error);

} // namespace flamia::validation

#endif // FLAMIA_SUPPORT_VALIDATION_H
