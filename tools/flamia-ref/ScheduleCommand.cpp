//===- ScheduleCommand.cpp - flamia-ref schedule ----------------*- C++ -*-===//
//
// Builds the varlen work list for a packed batch (cu_seqlens from a .npy file
// or a standard workload), checks its invariants, simulates the persistent
// grid and prints the makespan against the lower bound. See `--help`.
//
//===----------------------------------------------------------------------===//
#include "CommandLine.h"

#include "flamia/Schedule/GridSimulator.h"
#include "flamia/Schedule/ScheduleInvariants.h"
#include "flamia/Schedule/ScheduleSerialization.h"
#include "flamia/Schedule/StandardWorkloads.h"
#include "flamia/Schedule/VarlenSchedule.h"
#include "flamia/Support/FileOutput.h"
#include "flamia/Support/Npy.h"
#include "flamia/Support/Validation.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace flamia::ref {

namespace {
const char *kUsage =
    R"(usage: flamia-ref schedule (--cu-seqlens CU.npy | --workload NAME) --heads H [options]

Builds the work items (document, query head, query tile) of a persistent varlen
attention kernel, orders them longest-first by the cost model, checks the
schedule's invariants and simulates one CTA per SM taking items from an atomic
counter. Prints items, total work, makespan, the lower bound
max(total work / SMs, largest item) and makespan / lower bound.

input (exactly one):
  --cu-seqlens CU.npy    int32 [num_docs + 1]: 0, non-decreasing
  --workload NAME        lognormal1k | fixed2k | single32k | tiny34
  --tokens T             total tokens: with --workload, the batch size
                         (default 32768; tiny34: 8192 x 34 = 278528); with
                         --cu-seqlens, the value cu_seqlens must end at
kernel:
  --heads H              query heads, at most 65535 (required)
  --kv-heads HKV         kv heads, H a multiple of HKV (default H)
  --head-dim D           64, 128, 192 or 256 (default 128)
  --causal | --no-causal (default causal)
  --block-m N            query tile rows, multiple of 32 (default 128)
  --block-n N            key tile columns, multiple of 32 (default 128)
  --safe-block N         bf16 safe block, multiple of 32 (default 128)
  --sms N                persistent CTAs, one per SM (default 132)
  --order O              lpt (longest first) | l2-sections (longest first
                         inside sections of (document, kv head) pairs whose
                         K/V fit --l2-section-bytes) | document (as the
                         tokens lie: a baseline to compare with); default lpt
  --l2-section-bytes N   with l2-sections: bytes of K and V per section
                         (default 33554432, 32 MiB)
  --kv-bytes-per-token N with l2-sections: K and V bytes per token and kv
                         head (default 4 x head dim: the sm_90a bf16 copies)
cost weights:
  --target T             sm_100a (bf16 tile 2) | sm_90a (bf16 tile 1);
                         default sm_100a
  --item-overhead X      override the per-item overhead (in key tiles)
  --bf16-weight X        override the cost of a bf16-only key tile
output:
  --print-items          one line per item, in execution order
  --dump-items OUT.npy   int32 [num_items, 8]: the VarlenWorkItem fields
  --dump-metadata OUT    the serialized metadata buffer the kernel reads
  --write-cu-seqlens OUT.npy  the cu_seqlens used (e.g. of a --workload)

exit status: 0 ok, 1 an invariant check failed, 2 bad input.
)";

int badInput(const std::string &message) {
  std::fprintf(stderr, "flamia-ref schedule: %s\n", message.c_str());
  return kExitBadInput;
}

bool readCuSeqlens(const std::string &path, std::vector<int32_t> &cu,
                   std::string &error) {
  NpyArray a;
  if (!readNpy(path, a, error))
    return false;
  if (a.shape.size() != 1 || a.shape[0] < 1) {
    error =
        path +
        ": cu_seqlens must be 1-D with num_docs + 1 >= 1 entries, got shape " +
        a.shapeString();
    return false;
  }
  if (!validation::validateCuSeqlensDType(npyDTypeName(a.dtype), error)) {
    error = path + ": " + error;
    return false;
  }
  const size_t n = static_cast<size_t>(a.shape[0]);
  if (a.bytes.size() != n * sizeof(int32_t)) {
    error = path + ": shape " + a.shapeString() + " does not match the " +
            std::to_string(a.bytes.size()) + " bytes of data";
    return false;
  }
  cu.resize(n);
  std::memcpy(cu.data(), a.bytes.data(), n * sizeof(int32_t));
  return true;
}

// Integral values without decimals, others with up to three.
std::string formatNumber(double v) {
  char buf[64];
  if (std::fabs(v - std::round(v)) < 1e-9 && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof(buf), "%.0f", v);
    return buf;
  }
  std::snprintf(buf, sizeof(buf), "%.3f", v);
  std::string s = buf;
  while (!s.empty() && s.back() == '0')
    s.pop_back();
  if (!s.empty() && s.back() == '.')
    s.pop_back();
  return s;
}

NpyArray itemsArray(const VarlenSchedule &s) {
  constexpr int64_t kFields = sizeof(VarlenWorkItem) / sizeof(int32_t);
  NpyArray a = makeNpyArray(NpyDType::Int32,
                            {static_cast<int64_t>(s.items.size()), kFields});
  if (!s.items.empty())
    std::memcpy(a.bytes.data(), s.items.data(),
                s.items.size() * sizeof(VarlenWorkItem));
  return a;
}
} // namespace

int runScheduleCommand(int argc, char **argv) {
  constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
  CommandLine cl;
  cl.addString("--cu-seqlens", "CU.npy")
      .addString("--workload", "NAME")
      .addInteger("--tokens", "T", 1, kInt32Max)
      .addInteger("--heads", "H", 1, validation::kMaxHeads)
      .addInteger("--kv-heads", "HKV", 1, validation::kMaxHeads)
      .addInteger("--head-dim", "D", 1, kInt32Max)
      .addInteger("--block-m", "M", 1, kInt32Max)
      .addInteger("--block-n", "N", 1, kInt32Max)
      .addInteger("--safe-block", "N", 1, kInt32Max)
      .addInteger("--sms", "N", 1, 1 << 20)
      .addString("--target", "TARGET")
      .addRealAtLeast("--item-overhead", "F", 0.0)
      .addRealAtLeast("--bf16-weight", "F", 0.0)
      .addString("--order", "ORDER")
      .addInteger("--l2-section-bytes", "N", 1, int64_t{1} << 40)
      .addInteger("--kv-bytes-per-token", "N", 1, int64_t{1} << 20)
      .addString("--dump-items", "PATH")
      .addString("--dump-metadata", "PATH")
      .addString("--write-cu-seqlens", "PATH")
      .addFlag("--causal")
      .addFlag("--no-causal")
      .addFlag("--print-items")
      .addFlag({"-h", "--help"});
  std::string error;
  if (!cl.parse(argc, argv, 1, error))
    return badInput(error + " (see `flamia-ref schedule --help`)");
  if (cl.flag("--help")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (!cl.positional().empty())
    return badInput("unexpected argument '" + cl.positional().front() + "'");

  // Input.
  bool fromFile = cl.value("--cu-seqlens").has_value();
  bool fromWorkload = cl.value("--workload").has_value();
  if (fromFile == fromWorkload)
    return badInput(
        "give exactly one of --cu-seqlens CU.npy and --workload NAME");
  int64_t tokens = -1;
  if (!cl.getInteger("--tokens", tokens, error))
    return badInput(error);
  std::vector<int32_t> cu;
  std::string inputLine;
  if (fromFile) {
    std::string path = *cl.value("--cu-seqlens");
    if (!readCuSeqlens(path, cu, error))
      return badInput(error);
    if (!validation::validateCuSeqlens(cu.data(), cu.size(), tokens, error))
      return badInput(path + ": " + error);
    inputLine = "cu_seqlens " + path;
  } else {
    StandardWorkload workload;
    if (!parseStandardWorkload(*cl.value("--workload"), workload, error))
      return badInput(error);
    if (tokens < 0)
      tokens = standardWorkloadDefaultTokens(workload);
    if (!makeStandardWorkload(workload, tokens, cu, error))
      return badInput(error);
    char seed[32];
    std::snprintf(seed, sizeof(seed), "0x%llx",
                  static_cast<unsigned long long>(kStandardWorkloadSeed));
    inputLine = std::string("workload ") + standardWorkloadName(workload) +
                (workload == StandardWorkload::Lognormal1k
                     ? std::string(" (seed ") + seed + ")"
                     : std::string());
  }

  // Kernel and cost model.
  if (!cl.value("--heads"))
    return badInput("--heads H is required");
  if (cl.flag("--causal") && cl.flag("--no-causal"))
    return badInput("--causal and --no-causal contradict each other");
  VarlenScheduleParams params;
  int64_t heads = 0, kvHeads = -1, headDim = 128, blockM = 128, blockN = 128,
          safeBlock = 128, sms = 132;
  if (!cl.getInteger("--heads", heads, error) ||
      !cl.getInteger("--kv-heads", kvHeads, error) ||
      !cl.getInteger("--head-dim", headDim, error) ||
      !cl.getInteger("--block-m", blockM, error) ||
      !cl.getInteger("--block-n", blockN, error) ||
      !cl.getInteger("--safe-block", safeBlock, error) ||
      !cl.getInteger("--sms", sms, error))
    return badInput(error);
  ScheduleTarget target = ScheduleTarget::Sm100a;
  if (std::optional<std::string> t = cl.value("--target"))
    if (!parseScheduleTarget(*t, target, error))
      return badInput(error);
  params.numQHeads = static_cast<int32_t>(heads);
  params.numKVHeads = static_cast<int32_t>(kvHeads < 0 ? heads : kvHeads);
  params.headDim = static_cast<int32_t>(headDim);
  params.causal = !cl.flag("--no-causal");
  params.blockM = static_cast<int32_t>(blockM);
  params.blockN = static_cast<int32_t>(blockN);
  params.safeBlock = static_cast<int32_t>(safeBlock);
  params.weights = costWeightsForTarget(target);
  if (std::optional<std::string> order = cl.value("--order"))
    if (!parseScheduleOrder(*order, params.order, error))
      return badInput(error);
  if ((cl.given("--l2-section-bytes") || cl.given("--kv-bytes-per-token")) &&
      params.order != ScheduleOrder::L2Sections)
    return badInput("--l2-section-bytes and --kv-bytes-per-token need "
                    "--order l2-sections");
  if (!cl.getInteger("--l2-section-bytes", params.l2SectionBytes, error) ||
      !cl.getInteger("--kv-bytes-per-token", params.sectionBytesPerToken,
                     error))
    return badInput(error);
  if (!cl.getReal("--item-overhead", params.weights.itemOverhead, error) ||
      !cl.getReal("--bf16-weight", params.weights.bf16Tile, error))
    return badInput(error);

  VarlenSchedule schedule;
  if (!buildVarlenSchedule(cu.data(), cu.size(), params, schedule, error))
    return badInput(error);
  if (!checkVarlenSchedule(schedule, error)) {
    std::fprintf(stderr, "flamia-ref schedule: invariant check failed: %s\n",
                 error.c_str());
    return 1;
  }
  GridSimulation sim =
      simulatePersistentGrid(schedule.costs, static_cast<int32_t>(sms));

  // Files first, so that a bad output path is reported before printing; all
  // of them or none.
  std::vector<std::pair<std::string, NpyArray>> npyFiles;
  if (std::optional<std::string> path = cl.value("--write-cu-seqlens")) {
    NpyArray a =
        makeNpyArray(NpyDType::Int32, {static_cast<int64_t>(cu.size())});
    std::memcpy(a.bytes.data(), cu.data(), cu.size() * sizeof(int32_t));
    npyFiles.push_back({*path, std::move(a)});
  }
  if (std::optional<std::string> path = cl.value("--dump-items"))
    npyFiles.push_back({*path, itemsArray(schedule)});
  std::vector<uint8_t> metadata;
  std::optional<std::string> metadataPath = cl.value("--dump-metadata");
  if (metadataPath && !serializeVarlenSchedule(schedule, metadata, error))
    return badInput(error);
  if (!writeNpyFilesAtomically(npyFiles, error))
    return badInput(error);
  if (metadataPath &&
      !writeFileAtomically(*metadataPath, metadata.data(), metadata.size(),
                           error)) {
    for (const auto &file : npyFiles)
      std::remove(file.first.c_str());
    return badInput(error);
  }

  const DocumentLayout &docs = schedule.docs;
  const CostWeights &w = params.weights;
  std::printf("input: %s, %lld tokens\n", inputLine.c_str(),
              static_cast<long long>(docs.numTokens()));
  std::printf("documents: %d (%d empty), longest %lld, query tiles %lld, "
              "scale blocks %d\n",
              docs.numDocuments(), docs.numEmptyDocuments(),
              static_cast<long long>(docs.longestDocument()),
              static_cast<long long>(docs.numQueryTiles()),
              docs.numScaleBlocks());
  std::printf("kernel: %d query heads, %d kv heads, head dim %d, %s, block_m "
              "%d, block_n %d, safe_block %d\n",
              params.numQHeads, params.numKVHeads, params.headDim,
              params.causal ? "causal" : "non-causal", params.blockM,
              params.blockN, params.safeBlock);
  std::printf("weights: %s, item overhead %s, fp8 tile %s, bf16 tile %s, "
              "mixed tile %s, head-dim scale %s\n",
              scheduleTargetName(target), formatNumber(w.itemOverhead).c_str(),
              formatNumber(w.fp8Tile).c_str(), formatNumber(w.bf16Tile).c_str(),
              formatNumber(w.mixedTile()).c_str(),
              formatNumber(params.costModel().headDimScale()).c_str());
  if (cl.flag("--print-items")) {
    for (size_t k = 0; k < schedule.items.size(); ++k) {
      const VarlenWorkItem &it = schedule.items[k];
      std::printf("item %zu: rows [%d, %d) doc [%d, %d) tile %d head %d kv %d "
                  "block_base %d cost %s cta %d start %s\n",
                  k, it.q_start, it.q_start + it.q_rows, it.doc_start,
                  it.doc_end, it.q_tile_in_doc, it.q_head, it.kv_head,
                  it.doc_block_base, formatNumber(schedule.costs[k]).c_str(),
                  sim.cta[k], formatNumber(sim.start[k]).c_str());
    }
  }
  std::printf("order: %s", scheduleOrderName(params.order));
  if (params.order == ScheduleOrder::L2Sections)
    std::printf(" (%zu sections of at most %lld bytes, %lld per token and "
                "kv head)",
                schedule.sectionBegins.size(),
                static_cast<long long>(params.l2SectionBytes),
                static_cast<long long>(params.bytesPerSectionToken()));
  std::printf("\n");
  std::printf("sms: %lld\n", static_cast<long long>(sms));
  std::printf("items: %zu\n", schedule.items.size());
  std::printf("total work: %s\n", formatNumber(sim.totalWork).c_str());
  std::printf("largest item: %s\n", formatNumber(sim.largestItem).c_str());
  std::printf("lower bound: %s\n", formatNumber(sim.lowerBound).c_str());
  std::printf("makespan: %s\n", formatNumber(sim.makespan).c_str());
  std::printf("ratio: %.4f\n", sim.ratio());
  return 0;
}

} // namespace flamia::ref
