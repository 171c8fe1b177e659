//===- Validation.cpp - One check per concept, shared by every tool -------===//
#include "flamia/Support/Validation.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace flamia::validation {

namespace {
std::string str(int64_t v) { return std::to_string(v); }

/// Shortest text that reads back as `v` ("0.125", "-1", "inf", "nan").
std::string realString(double v) {
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v)
      break;
  }
  return buf;
}
} // namespace

bool checkedProduct(std::initializer_list<int64_t> factors, int64_t &out) {
  int64_t p = 1;
  for (int64_t f : factors)
    if (f < 0 || __builtin_mul_overflow(p, f, &p))
      return false;
  out = p;
  return true;
}

bool parseIntegerInRange(const std::string &text, const char *name, int64_t lo,
                         int64_t hi, int64_t &out, std::string &error) {
  bool ok = !text.empty() &&
            (text[0] == '-' || (text[0] >= '0' && text[0] <= '9'));
  long long v = 0;
  if (ok) {
    errno = 0;
    char *end = nullptr;
    v = std::strtoll(text.c_str(), &end, 10);
    ok = errno == 0 && *end == '\0' && end != text.c_str() + (text[0] == '-') &&
         v >= lo && v <= hi;
  }
  if (!ok) {
    error = std::string(name) + " expects an integer in [" + str(lo) + ", " +
            str(hi) + "], got '" + text + "'";
    return false;
  }
  out = v;
  return true;
}

bool validateSoftmaxScale(double scale, std::string &error) {
  if (std::isfinite(scale) && scale > 0)
    return true;
  error = "softmax_scale " + realString(scale) + " must be finite and > 0";
  return false;
}

bool validateFloat32SoftmaxScale(double scale, const std::string &asWritten,
                                 std::string &error) {
  if (!validateSoftmaxScale(scale, error))
    return false;
  if (validateSoftmaxScale(static_cast<float>(scale), error))
    return true;
  error = "softmax_scale " + asWritten + " is not a positive finite float32";
  return false;
}

bool validateCuSeqlens(const int32_t *cu, size_t count, int64_t numTokens,
                       std::string &error) {
  if (cu == nullptr && count > 0) {
    error = "cu_seqlens is null";
    return false;
  }
  if (count < 2) {
    error = "cu_seqlens has " + std::to_string(count) +
            " entries; it needs num_docs + 1 >= 2 (0, then each document's "
            "end)";
    return false;
  }
  if (static_cast<uint64_t>(count) - 1 > static_cast<uint64_t>(kMaxDocuments)) {
    error = "cu_seqlens has " + std::to_string(count) +
            " entries; at most " + str(kMaxDocuments + 1) + " (2^31 - 2 "
            "documents) are allowed";
    return false;
  }
  if (cu[0] != 0) {
    error = "cu_seqlens[0] = " + str(cu[0]) + "; it must be 0";
    return false;
  }
  for (size_t i = 1; i < count; ++i)
    if (cu[i] < cu[i - 1]) {
      error = "cu_seqlens[" + std::to_string(i) + "] = " + str(cu[i]) +
              " is less than cu_seqlens[" + std::to_string(i - 1) +
              "] = " + str(cu[i - 1]) + " (it must be non-decreasing)";
      return false;
    }
  if (numTokens >= 0 && cu[count - 1] != numTokens) {
    error = "cu_seqlens[" + std::to_string(count - 1) + "] = " +
            str(cu[count - 1]) + " but the batch has T = " + str(numTokens) +
            " tokens (the last entry must be T)";
    return false;
  }
  return true;
}

bool validateCuSeqlensDType(const std::string &dtypeName, std::string &error) {
  if (dtypeName == "int32")
    return true;
  error = "cu_seqlens must be int32, got " + dtypeName;
  return false;
}

bool cuSeqlensFromLengths(const int64_t *lengths, size_t count,
                          int64_t maxTokens, std::vector<int32_t> &cu,
                          std::string &error) {
  if (maxTokens > kMaxTokens)
    maxTokens = kMaxTokens;
  if (count == 0) {
    error = "no document lengths given (at least one is needed)";
    return false;
  }
  std::vector<int32_t> out = {0};
  out.reserve(count + 1);
  int64_t total = 0;
  for (size_t i = 0; i < count; ++i) {
    if (lengths[i] < 0) {
      error = "document length " + str(lengths[i]) + " (document " +
              std::to_string(i) + ") is negative";
      return false;
    }
    if (lengths[i] > maxTokens - total) {
      error = "document lengths sum to more than " + str(maxTokens) +
              " tokens (the limit) at document " + std::to_string(i) +
              " (length " + str(lengths[i]) + ")";
      return false;
    }
    total += lengths[i];
    out.push_back(static_cast<int32_t>(total));
  }
  cu = std::move(out);
  return true;
}

bool validateHeads(int64_t numQHeads, int64_t numKVHeads, std::string &error) {
  if (numQHeads < 1 || numQHeads > kMaxHeads) {
    error = "Hq (query heads) = " + str(numQHeads) + " must be in [1, " +
            str(kMaxHeads) + "]";
    return false;
  }
  if (numKVHeads < 1 || numKVHeads > numQHeads) {
    error = "Hkv (kv heads) = " + str(numKVHeads) + " must be in [1, Hq = " +
            str(numQHeads) + "]";
    return false;
  }
  if (numQHeads % numKVHeads != 0) {
    error = "Hq (query heads) = " + str(numQHeads) +
            " is not a multiple of Hkv (kv heads) = " + str(numKVHeads);
    return false;
  }
  return true;
}

bool validateProblemSize(int64_t numTokens, int64_t numQHeads,
                         int64_t numKVHeads, int64_t headDim,
                         int64_t maxTensorElements, std::string &error) {
  if (numTokens < 0 || numTokens > kMaxTokens) {
    error = "T (tokens) = " + str(numTokens) + " must be in [0, " +
            str(kMaxTokens) + "] (cu_seqlens is int32)";
    return false;
  }
  if (!validateHeads(numQHeads, numKVHeads, error))
    return false;
  if (headDim < 1) {
    error = "D (head dim) = " + str(headDim) + " must be >= 1";
    return false;
  }
  int64_t elements = 0;
  if (!checkedProduct({numTokens, numQHeads, headDim}, elements) ||
      elements > maxTensorElements) {
    error = "T x Hq x D = " + str(numTokens) + " x " + str(numQHeads) +
            " x " + str(headDim) +
            (elements > 0 ? " = " + str(elements) : std::string()) +
            " elements exceeds the limit of " + str(maxTensorElements) +
            " elements per tensor";
    return false;
  }
  return true;
}

bool validateFormatBlock(ElementEncoding element, ScaleEncoding scale,
                         bool perTensor, int64_t tokenBlock,
                         int64_t channelBlock, int64_t headDim,
                         const std::string &formatName, std::string &error) {
  const std::string what = formatName.empty() ? "the format" : formatName;
  if (scale == ScaleEncoding::UE4M3 && element != ElementEncoding::E2M1) {
    error = what + ": E4M3 scales (NVFP4) need an E2M1 (FP4) payload";
    return false;
  }
  if (perTensor) {
    if (scale != ScaleEncoding::E8M0) {
      error = what + ": a per-tensor scale is E8M0; NVFP4 (E4M3 scales) has "
                     "no per-tensor layout";
      return false;
    }
    return true;
  }
  const int64_t needChannels = scale == ScaleEncoding::UE4M3 ? 16 : 32;
  if (channelBlock != needChannels) {
    error = what + ": " +
            (scale == ScaleEncoding::UE4M3 ? "NVFP4 (E4M3) scales cover 16"
                                           : "MX (E8M0) scales cover 32") +
            " channels: the channel block must be " + str(needChannels) +
            ", got " + str(channelBlock);
    return false;
  }
  if (tokenBlock != 1 && (tokenBlock <= 0 || tokenBlock % 16 != 0)) {
    error = what + ": the token block must be 1 (per token) or a positive "
                   "multiple of 16, got " +
            str(tokenBlock);
    return false;
  }
  if (headDim >= 1 && headDim % channelBlock != 0) {
    error = "head dim " + str(headDim) +
            " is not divisible by the channel block " + str(channelBlock);
    return false;
  }
  return true;
}

} // namespace flamia::validation
