//===- Workload.cpp - flamia-run's inputs ---------------------------------===//

#include "Workload.h"

#include "flamia/Numerics/Formats.h"
#include "flamia/Numerics/Parallel.h"
#include "flamia/Numerics/SyntheticInputs.h"
#include "flamia/Schedule/DeterministicRandom.h"
#include "flamia/Schedule/StandardWorkloads.h"
#include "flamia/Support/Npy.h"
#include "flamia/Support/Validation.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace flamia::run {

float bf16ToFloat(uint16_t bits) { return numerics::bf16ToFloat(bits); }
uint16_t floatToBf16(float x) { return numerics::floatToBf16(x); }

std::vector<float> toFloat(const std::vector<uint16_t> &x) {
  std::vector<float> out(x.size());
  numerics::parallelFor(static_cast<int64_t>((x.size() + 65535) / 65536),
                        [&](int64_t chunk) {
                          size_t b = static_cast<size_t>(chunk) * 65536;
                          size_t e = std::min(x.size(), b + 65536);
                          for (size_t i = b; i < e; ++i)
                            out[i] = bf16ToFloat(x[i]);
                        });
  return out;
}

bool makeCuSeqlens(const RunOptions &o, std::vector<int32_t> &cu,
                   std::string &error) {
  cu.clear();
  const bool smallDefault = o.check || o.leakcheck;
  if (o.workload.compare(0, 5, "docs:") == 0) {
    std::string list = o.workload.substr(5);
    std::vector<int64_t> lengths;
    size_t pos = 0;
    while (pos <= list.size()) {
      size_t comma = list.find(',', pos);
      std::string item = list.substr(
          pos, comma == std::string::npos ? std::string::npos : comma - pos);
      char *end = nullptr;
      errno = 0;
      long long length = item.empty() || item[0] < '0' || item[0] > '9'
                             ? -1
                             : strtoll(item.c_str(), &end, 10);
      if (length < 0 || *end) {
        error = "--workload docs: expects comma-separated document lengths "
                ">= 0, got '" +
                item + "'";
        return false;
      }
      if (errno == ERANGE || length > validation::kMaxTokens) {
        error = "--workload docs: document length " + item +
                " exceeds the limit of " +
                std::to_string(validation::kMaxTokens) + " tokens";
        return false;
      }
      lengths.push_back(length);
      if (comma == std::string::npos)
        break;
      pos = comma + 1;
    }
    if (!validation::cuSeqlensFromLengths(lengths.data(), lengths.size(),
                                          validation::kMaxTokens, cu, error)) {
      error = "--workload docs: " + error;
      return false;
    }
    const int64_t total = cu.back();
    if (o.tokens >= 0 && o.tokens != total) {
      error = "--tokens " + std::to_string(o.tokens) +
              " differs from the documents' total " + std::to_string(total);
      return false;
    }
    return true;
  }
  std::string name = o.workload == "single" ? "single32k" : o.workload;
  StandardWorkload w;
  if (!parseStandardWorkload(name, w, error)) {
    error = "--workload: expected single, fixed2k, lognormal1k, tiny34 or "
            "docs:L1,L2,..., got '" +
            o.workload + "'";
    return false;
  }
  int64_t tokens = o.tokens;
  if (tokens < 0)
    tokens = smallDefault ? 4096 : standardWorkloadDefaultTokens(w);
  if (tokens == 0) {
    cu = {0, 0};
    return true;
  }
  return makeStandardWorkload(w, tokens, cu, error);
}

bool checkBatchSize(const HostBatch &b, const RunOptions &o,
                    std::string &error) {
  if (!validation::validateProblemSize(b.T, b.Hq, b.Hkv, b.D,
                                       validation::kMaxTensorElements, error))
    return false;
  // The host tensors: q and o as bf16 (2 bytes) and float (4: the checks'
  // copies), k and v likewise; with --check/--leakcheck the references hold
  // several more float copies. A lower bound of what is needed, in 64 bits.
  const int64_t perElement = o.check || o.leakcheck ? 24 : 4;
  int64_t qk = 0, bytes = 0;
  if (!validation::checkedProduct({b.T, b.Hq + b.Hkv, b.D}, qk) ||
      !validation::checkedProduct({qk, perElement}, bytes)) {
    error = "the batch's host tensors overflow a 64-bit size";
    return false;
  }
  const long pages = ::sysconf(_SC_PHYS_PAGES), pageSize = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && pageSize > 0) {
    const double memory = static_cast<double>(pages) * static_cast<double>(pageSize);
    if (static_cast<double>(bytes) > memory) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / 1073741824.0);
      std::string need = buf;
      std::snprintf(buf, sizeof buf, "%.1f GiB", memory / 1073741824.0);
      error = "T = " + std::to_string(b.T) + ", Hq = " + std::to_string(b.Hq) +
              ", Hkv = " + std::to_string(b.Hkv) + ", D = " +
              std::to_string(b.D) + " needs at least " + need +
              " of host memory for the inputs" +
              (o.check || o.leakcheck ? " and references" : "") +
              "; this machine has " + buf;
      return false;
    }
  }
  return true;
}

void generateInputs(HostBatch &b, uint64_t seed, bool outliers) {
  numerics::makePackedBf16Inputs(b.T, b.Hq, b.Hkv, b.D, seed, outliers, b.q,
                                 b.k, b.v);
}

void generateGradO(HostBatch &b, uint64_t seed) {
  b.gradO.assign(b.qElements(), 0);
  numerics::perturbPackedBf16Tokens(b.gradO, b.Hq, b.D, 0, b.T,
                                    seed ^ 0x67726164ull /* "grad" */, false);
}

static bool readFloatTensor(const std::string &path, const char *what,
                            NpyArray &a, std::string &error) {
  if (!readNpy(path, a, error))
    return false;
  if (a.dtype != NpyDType::Float32 || a.shape.size() != 3) {
    error = std::string(what) + " (" + path +
            ") must be float32 [T, H, D], is " + npyDTypeName(a.dtype) + " " +
            a.shapeString();
    return false;
  }
  return true;
}

/// float32 values that must be bf16 values, to bf16 bits; the first that is
/// not is named.
static bool toBf16Exactly(const NpyArray &a, std::vector<uint16_t> &out,
                          const char *what, std::string &error) {
  const float *x = a.data<float>();
  out.resize(static_cast<size_t>(a.numElements()));
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = floatToBf16(x[i]);
    uint32_t before, after;
    float back = bf16ToFloat(out[i]);
    memcpy(&before, &x[i], 4);
    memcpy(&after, &back, 4);
    if (before != after && !(std::isnan(x[i]) && std::isnan(back))) {
      error = std::string(what) + " element " + std::to_string(i) + " (" +
              std::to_string(x[i]) + ") is not a bf16 value";
      return false;
    }
  }
  return true;
}

bool loadNpyInputs(const RunOptions &o, HostBatch &b, std::string &error) {
  NpyArray q, k, v;
  if (!readFloatTensor(o.qNpy, "--q", q, error) ||
      !readFloatTensor(o.kNpy, "--k", k, error) ||
      !readFloatTensor(o.vNpy, "--v", v, error))
    return false;
  if (k.shape != v.shape || k.shape[0] != q.shape[0] ||
      k.shape[2] != q.shape[2]) {
    error = "shapes do not match: q " + q.shapeString() + ", k " +
            k.shapeString() + ", v " + v.shapeString() +
            " (expected [T, Hq, D], [T, Hkv, D], [T, Hkv, D])";
    return false;
  }
  b.T = q.shape[0];
  b.Hq = q.shape[1];
  b.Hkv = k.shape[1];
  b.D = q.shape[2];
  if (!validation::validateProblemSize(b.T, b.Hq, b.Hkv, b.D,
                                       validation::kMaxTensorElements, error)) {
    error = "--q/--k/--v: " + error;
    return false;
  }
  for (const NpyArray *a : {&q, &k, &v})
    if (a->bytes.size() != static_cast<size_t>(a->numElements()) * 4) {
      error = "--q/--k/--v: shape " + a->shapeString() +
              " does not match the file's " + std::to_string(a->bytes.size()) +
              " bytes of data";
      return false;
    }
  if (!toBf16Exactly(q, b.q, "--q", error) ||
      !toBf16Exactly(k, b.k, "--k", error) ||
      !toBf16Exactly(v, b.v, "--v", error))
    return false;
  if (o.cuNpy.empty()) {
    b.cu = {0, static_cast<int32_t>(b.T)};
    return true;
  }
  NpyArray cu;
  if (!readNpy(o.cuNpy, cu, error))
    return false;
  if (!validation::validateCuSeqlensDType(npyDTypeName(cu.dtype), error)) {
    error = "--cu-seqlens (" + o.cuNpy + "): " + error;
    return false;
  }
  if (cu.shape.size() != 1 || cu.shape[0] < 1 ||
      cu.bytes.size() != static_cast<size_t>(cu.shape[0]) * 4) {
    error = "--cu-seqlens (" + o.cuNpy + ") must be int32 [num_docs + 1], is " +
            npyDTypeName(cu.dtype) + " " + cu.shapeString();
    return false;
  }
  b.cu.assign(cu.data<int32_t>(), cu.data<int32_t>() + cu.numElements());
  return true; // validated by the runtime (as a caller's would be)
}

bool loadGradO(const std::string &path, HostBatch &b, std::string &error) {
  NpyArray a;
  if (!readFloatTensor(path, "--grad-o", a, error))
    return false;
  if (a.shape != std::vector<int64_t>{b.T, b.Hq, b.D} ||
      a.bytes.size() != static_cast<size_t>(a.numElements()) * 4) {
    error = "--grad-o (" + path + ") must be float32 [T, Hq, D] = [" +
            std::to_string(b.T) + ", " + std::to_string(b.Hq) + ", " +
            std::to_string(b.D) + "] (the batch's), is " + a.shapeString();
    return false;
  }
  return toBf16Exactly(a, b.gradO, "--grad-o", error);
}

double forwardFlops(const std::vector<int32_t> &cu, int64_t Hq, int64_t D,
                    bool causal) {
  double flops = 0;
  for (size_t d = 0; d + 1 < cu.size(); ++d) {
    double L = static_cast<double>(cu[d + 1]) - cu[d];
    flops += (causal ? 2.0 : 4.0) * L * L * static_cast<double>(D) *
             static_cast<double>(Hq);
  }
  return flops;
}

} // namespace flamia::run
