//===- StandardWorkloads.h - Benchmark batches ------------------*- C++ -*-===//
//
// cu_seqlens of the standard varlen workloads (docs/design.md section 6, issue 6),
// generated deterministically so that tables are reproducible:
//   lognormal1k  documents of max(64, round(exp(N(ln 1024, 1)))) tokens, drawn
//                with DeterministicRandom(kStandardWorkloadSeed) until the
//                tokens are used up, the last one trimmed to what is left
//   fixed2k      documents of 2048 tokens (the last one trimmed)
//   single32k    one document of all the tokens
//   tiny34       documents of 34 tokens (the last one trimmed); the default
//                token count is 8192 x 34 = 278528, i.e. 8192 documents
// The default token count is 32768 for the other three.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_SCHEDULE_STANDARDWORKLOADS_H
#define FLAMIA_SCHEDULE_STANDARDWORKLOADS_H

#include <cstdint>
#include <string>
#include <vector>

namespace flamia {

enum class StandardWorkload { Lognormal1k, Fixed2k, Single32k, Tiny34 };

/// "FLAMIA" in ASCII.
constexpr uint64_t kStandardWorkloadSeed = 0x464C414D4941ull;

const char *standardWorkloadName(StandardWorkload workload);
/// Parses a name above; otherwise false with a message listing them.
bool parseStandardWorkload(const std::string &name, StandardWorkload &out,
                           std::string &error);
/// 278528 for tiny34, 32768 otherwise.
int64_t standardWorkloadDefaultTokens(StandardWorkload workload);

/// The cu_seqlens of `workload` over `tokens` tokens (1 <= tokens <= 2^31 - 1).
bool makeStandardWorkload(StandardWorkload workload, int64_t tokens,
                          std::vector<int32_t> &cuSeqlens, std::string &error);

} // namespace flamia

#endif // FLAMIA_SCHEDULE_STANDARDWORKLOADS_H
