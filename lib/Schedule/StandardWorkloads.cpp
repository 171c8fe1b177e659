//===- StandardWorkloads.cpp - Benchmark batches --------------------------===//
#include "flamia/Schedule/StandardWorkloads.h"

#include "flamia/Schedule/DeterministicRandom.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace flamia {

namespace {
struct WorkloadInfo {
  StandardWorkload workload;
  const char *name;
};
constexpr WorkloadInfo kWorkloads[] = {
    {StandardWorkload::Lognormal1k, "lognormal1k"},
    {StandardWorkload::Fixed2k, "fixed2k"},
    {StandardWorkload::Single32k, "single32k"},
    {StandardWorkload::Tiny34, "tiny34"},
};

// Documents of `length` tokens until `tokens` are used up.
void appendFixed(int64_t length, int64_t tokens, std::vector<int32_t> &cu) {
  for (int64_t at = 0; at < tokens;) {
    at = std::min(tokens, at + length);
    cu.push_back(static_cast<int32_t>(at));
  }
}

void appendLognormal(int64_t tokens, std::vector<int32_t> &cu) {
  DeterministicRandom random(kStandardWorkloadSeed);
  const double mu = std::log(1024.0), sigma = 1.0;
  for (int64_t at = 0; at < tokens;) {
    double length = std::round(std::exp(mu + sigma * random.normal()));
    length = std::max(64.0, length);
    int64_t left = tokens - at;
    at += length >= static_cast<double>(left) ? left
                                              : static_cast<int64_t>(length);
    cu.push_back(static_cast<int32_t>(at));
  }
}
} // namespace

const char *standardWorkloadName(StandardWorkload workload) {
  for (const WorkloadInfo &w : kWorkloads)
    if (w.workload == workload)
      return w.name;
  return "?";
}

bool parseStandardWorkload(const std::string &name, StandardWorkload &out,
                           std::string &error) {
  for (const WorkloadInfo &w : kWorkloads) {
    if (name == w.name) {
      out = w.workload;
      return true;
    }
  }
  error = "unknown workload '" + name +
          "' (expected lognormal1k, fixed2k, single32k or tiny34)";
  return false;
}

int64_t standardWorkloadDefaultTokens(StandardWorkload workload) {
  return workload == StandardWorkload::Tiny34 ? 8192 * 34 : 32768;
}

bool makeStandardWorkload(StandardWorkload workload, int64_t tokens,
                          std::vector<int32_t> &cu, std::string &error) {
  if (tokens < 1 || tokens > std::numeric_limits<int32_t>::max()) {
    error = "workload token count must be in [1, 2^31 - 1], got " +
            std::to_string(tokens);
    return false;
  }
  cu.assign(1, 0);
  switch (workload) {
  case StandardWorkload::Lognormal1k:
    appendLognormal(tokens, cu);
    break;
  case StandardWorkload::Fixed2k:
    appendFixed(2048, tokens, cu);
    break;
  case StandardWorkload::Single32k:
    appendFixed(tokens, tokens, cu);
    break;
  case StandardWorkload::Tiny34:
    appendFixed(34, tokens, cu);
    break;
  }
  return true;
}

} // namespace flamia
