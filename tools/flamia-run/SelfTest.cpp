//===- SelfTest.cpp - flamia-run --selftest -------------------------------===//

#include "SelfTest.h"

#include "SelfTestKernel.h"
#include "Session.h"
#include "Workload.h"

#include "flamia/Runtime/ScheduleBuffers.h"
#include "flamia/Runtime/TensorMap.h"
#include "flamia/Schedule/VarlenSchedule.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <unistd.h>

namespace flamia::run {

using runtime::Status;

namespace {

const char *kSelfTestManifest = R"({
  "flamia_manifest_version": 2,
  "target": "sm_90",
  "recipe": {"kind": "mxfp8", "safe_block": 128, "strict": false},
  "head_dim": 64, "causal": true, "softmax_scale": null,
  "schedule": {"block_m": 128, "block_n": 128, "safe_block": 128, "cost_model": "sm_90a"},
  "x-note": "flamia-run --selftest: flamia_echo.cubin is PTX, JIT-compiled by cuModuleLoadData",
  "buffers": [
    {"name": "q", "role": "input", "dtype": "bf16", "shape": ["T", "Hq", "D"]},
    {"name": "k", "role": "input", "dtype": "bf16", "shape": ["T", "Hkv", "D"]},
    {"name": "v", "role": "input", "dtype": "bf16", "shape": ["T", "Hkv", "D"]},
    {"name": "cu_seqlens", "role": "input", "dtype": "i32", "shape": ["NUM_DOCS + 1"]},
    {"name": "o", "role": "output", "dtype": "bf16", "shape": ["T", "Hq", "D"]},
    {"name": "lse", "role": "output", "dtype": "f32", "shape": ["Hq", "T"]},
    {"name": "echo", "role": "workspace", "dtype": "u8", "shape": ["256"], "holds": {"part": "scratch"}},
    {"name": "block_info", "role": "schedule", "dtype": "i32", "shape": ["NB", "2"]},
    {"name": "items", "role": "schedule", "dtype": "i32", "shape": ["NUM_ITEMS", "8"]},
    {"name": "counter", "role": "schedule", "dtype": "i32", "shape": ["1"]}
  ],
  "kernels": [
    {
      "name": "flamia_echo", "cubin": "flamia_echo.cubin",
      "grid": ["2", "1", "1"], "block": [32, 1, 1], "cluster": [2, 1, 1],
      "smem_bytes": 100000,
      "params": [
        {"name": "tmap", "kind": "tensormap", "buffer": "q", "dtype": "bf16",
         "dims": ["T", "Hq * D"], "box": [64, 64], "swizzle": 128},
        {"name": "items", "kind": "ptr", "buffer": "items"},
        {"name": "counter", "kind": "ptr", "buffer": "counter"},
        {"name": "echo", "kind": "ptr", "buffer": "echo"},
        {"name": "n", "kind": "i32", "value": "NUM_ITEMS * 1000 + NB"},
        {"name": "scale_log2", "kind": "f32", "value": "softmax_scale_log2"}
      ]
    }
  ]
}
)";

constexpr int kSmemBytes = 100000;

template <typename T> T at(const std::vector<uint8_t> &bytes, size_t offset) {
  T v;
  memcpy(&v, bytes.data() + offset, sizeof v);
  return v;
}

CheckRow row(const std::string &check, int64_t compared, bool pass,
             const std::string &detail) {
  CheckRow r;
  r.name = "selftest: " + check;
  r.compared = compared;
  r.verdict = pass ? Verdict::Pass : Verdict::Fail;
  r.detail = detail;
  return r;
}

std::string hex(uint64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

} // namespace

Status runSelfTest(const RunOptions &options, Report &report) {
  // The artifact directory: the manifest and the PTX (as its "cubin").
  const char *tmp = getenv("TMPDIR");
  std::string dir =
      std::string(tmp && *tmp ? tmp : "/tmp") + "/flamia-selftest-XXXXXX";
  if (!mkdtemp(&dir[0]))
    return runtime::invalidArgument("cannot create a temporary directory");
  {
    std::ofstream m(dir + "/manifest.json"), k(dir + "/flamia_echo.cubin");
    m << kSelfTestManifest;
    k << selfTestPtx();
    if (!m || !k)
      return runtime::invalidArgument("cannot write into " + dir);
  }
  struct RemoveWhenDone {
    std::string dir;
    ~RemoveWhenDone() {
      remove((dir + "/manifest.json").c_str());
      remove((dir + "/flamia_echo.cubin").c_str());
      rmdir(dir.c_str());
    }
  } cleanup{dir};
  RunOptions o = options;
  o.artifacts = dir;
  o.softmaxScale = 0;

  HostBatch b;
  b.cu = {0, 100, 100, 237}; // documents of 100, 0 and 137 tokens
  b.T = 237;
  b.Hq = 2;
  b.Hkv = 1;
  b.D = 64;
  generateInputs(b, options.seed, false);
  Session session;
  FLAMIA_RETURN_IF_ERROR(session.open(o, b));
  FLAMIA_RETURN_IF_ERROR(session.uploadInputs());
  printf("flamia-run --selftest: %s, artifacts in %s (removed afterwards)\n",
         flamia_runtime_target(session.runtime()), dir.c_str());

  // The schedule the runtime must have uploaded, built here independently.
  VarlenScheduleParams params;
  params.numQHeads = 2;
  params.numKVHeads = 1;
  params.headDim = 64;
  params.causal = true;
  params.weights = costWeightsForTarget(ScheduleTarget::Sm90a);
  VarlenSchedule schedule;
  std::string error;
  if (!buildVarlenSchedule(b.cu.data(), b.cu.size(), params, schedule, error))
    return runtime::invalidArgument(error);
  const std::vector<int32_t> blockInfo =
      runtime::makeBlockInfo(b.cu.data(), b.cu.size());
  const int64_t numItems = static_cast<int64_t>(schedule.items.size());
  const int64_t nb = static_cast<int64_t>(blockInfo.size() / 2);

  for (int run = 0; run < 2; ++run) { // twice: the counter is re-zeroed
    FLAMIA_RETURN_IF_ERROR(session.forward());
    std::vector<uint8_t> echo, items, info, counter;
    flamia_buffer_info echoInfo, itemsInfo, blockInfoInfo, counterInfo;
    FLAMIA_RETURN_IF_ERROR(session.downloadBuffer("echo", echo, echoInfo));
    FLAMIA_RETURN_IF_ERROR(session.downloadBuffer("items", items, itemsInfo));
    FLAMIA_RETURN_IF_ERROR(
        session.downloadBuffer("block_info", info, blockInfoInfo));
    FLAMIA_RETURN_IF_ERROR(
        session.downloadBuffer("counter", counter, counterInfo));
    const std::string pass = run == 0 ? "" : " (second call)";

    std::set<uint32_t> olds = {at<uint32_t>(echo, 192),
                               at<uint32_t>(echo, 196)};
    report.add(
        row("work counter zeroed before the kernel" + pass, 2,
            olds == std::set<uint32_t>{0, 1} && at<int32_t>(counter, 0) == 2,
            "atomicAdd returned " + std::to_string(at<uint32_t>(echo, 192)) +
                " and " + std::to_string(at<uint32_t>(echo, 196)) +
                ", counter now " + std::to_string(at<int32_t>(counter, 0))));
    if (run == 1)
      break;

    // Parameters by value, in order.
    flamia_attention_args args = session.args();
    runtime::TensorMapRequest r;
    r.what = "selftest";
    r.bufferName = "q";
    r.dtype = runtime::DType::BF16;
    r.address = reinterpret_cast<uintptr_t>(args.q);
    r.bufferBytes = static_cast<uint64_t>(b.T * b.Hq * b.D * 2);
    r.rows = b.T;
    r.cols = b.Hq * b.D;
    r.boxRows = 64;
    r.boxCols = 64;
    r.swizzle = 128;
    CUtensorMap expected;
    memset(&expected, 0, sizeof expected);
    FLAMIA_RETURN_IF_ERROR(
        runtime::encodeTensorMap(session.device().driver(), r, expected));
    const bool mapSame = memcmp(echo.data(), &expected, 128) == 0;
    report.add(row("tensor map by value (128 bytes, 64-aligned)", 128, mapSame,
                   mapSame ? "the kernel received the encoded map"
                           : "differs from the host encoding"));

    const uint64_t itemsPtr = reinterpret_cast<uintptr_t>(itemsInfo.device_ptr),
                   counterPtr =
                       reinterpret_cast<uintptr_t>(counterInfo.device_ptr),
                   echoPtr = reinterpret_cast<uintptr_t>(echoInfo.device_ptr);
    const bool ptrs = at<uint64_t>(echo, 128) == itemsPtr &&
                      at<uint64_t>(echo, 136) == counterPtr &&
                      at<uint64_t>(echo, 144) == echoPtr;
    report.add(row("ptr parameters", 3, ptrs,
                   "items " + hex(at<uint64_t>(echo, 128)) + ", counter " +
                       hex(at<uint64_t>(echo, 136)) + ", echo " +
                       hex(at<uint64_t>(echo, 144))));
    const int32_t n = at<int32_t>(echo, 152);
    const float scale = at<float>(echo, 156);
    const float expectedScale = static_cast<float>(
        static_cast<double>(static_cast<float>(1.0 / std::sqrt(64.0))) *
        1.4426950408889634);
    report.add(row("i32 and f32 parameters", 2,
                   n == numItems * 1000 + nb && scale == expectedScale,
                   "NUM_ITEMS * 1000 + NB = " + std::to_string(n) +
                       " (expected " + std::to_string(numItems * 1000 + nb) +
                       "), softmax_scale_log2 " + std::to_string(scale)));

    // Schedule buffers: what the runtime uploaded, and what the kernel read.
    const bool itemsSame =
        items.size() == schedule.items.size() * sizeof(VarlenWorkItem) &&
        memcmp(items.data(), schedule.items.data(), items.size()) == 0;
    report.add(row("items uploaded (FlamiaSchedule, LPT)", numItems * 8,
                   itemsSame,
                   std::to_string(numItems) + " items, " +
                       (itemsSame ? "identical" : "differ")));
    const bool kernelRead =
        items.size() >= 32 && memcmp(echo.data() + 160, items.data(), 32) == 0;
    report.add(row("items[0] as the kernel reads it", 8, kernelRead,
                   kernelRead ? "identical" : "differs"));
    const bool infoSame =
        info.size() == blockInfo.size() * 4 &&
        memcmp(info.data(), blockInfo.data(), info.size()) == 0;
    report.add(row("block_info uploaded",
                   static_cast<int64_t>(blockInfo.size()), infoSame,
                   std::to_string(nb) + " blocks"));

    // Launch configuration.
    const uint32_t c0 = at<uint32_t>(echo, 200), c1 = at<uint32_t>(echo, 204);
    report.add(row("cluster launch attribute", 2, c0 == 2 && c1 == 2,
                   "%cluster_nctarank = " + std::to_string(c0) + ", " +
                       std::to_string(c1) + " (cluster [2, 1, 1])"));
    const uint32_t s0 = at<uint32_t>(echo, 208), s1 = at<uint32_t>(echo, 212);
    const uint32_t w0 = at<uint32_t>(echo, 216), w1 = at<uint32_t>(echo, 220);
    report.add(row("dynamic shared memory > 48 KiB", 4,
                   s0 == kSmemBytes && s1 == kSmemBytes && w0 == 0x5EED0000u &&
                       w1 == 0x5EED0001u,
                   "%dynamic_smem_size = " + std::to_string(s0) +
                       ", last word stored and loaded back"));
  }
  return Status::success();
}

} // namespace flamia::run
