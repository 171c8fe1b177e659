//===- TestArtifacts.cpp - Artifact directories for runtime tests ---------===//

#include "TestArtifacts.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <unistd.h>
#include <vector>

namespace flamia::runtime::test {

std::string standardManifest() {
  return R"({
  "flamia_manifest_version": 2,
  "target": "sm_90a",
  "recipe": {"kind": "mxfp8", "safe_block": 128, "strict": false},
  "head_dim": 128, "causal": true, "softmax_scale": null,
  "schedule": {"block_m": 128, "block_n": 128, "safe_block": 128, "cost_model": "sm_90a"},
  "buffers": [
    {"name": "q", "role": "input", "dtype": "bf16", "shape": ["T", "Hq", "D"]},
    {"name": "k", "role": "input", "dtype": "bf16", "shape": ["T", "Hkv", "D"]},
    {"name": "v", "role": "input", "dtype": "bf16", "shape": ["T", "Hkv", "D"]},
    {"name": "cu_seqlens", "role": "input", "dtype": "i32", "shape": ["NUM_DOCS + 1"]},
    {"name": "o", "role": "output", "dtype": "bf16", "shape": ["T", "Hq", "D"]},
    {"name": "lse", "role": "output", "dtype": "f32", "shape": ["Hq", "T"]},
    {"name": "q_pt", "role": "workspace", "dtype": "u8", "shape": ["T", "Hq", "D"], "holds": {"part": "payload", "tensor": "q", "layout": "per_token", "format": "e4m3"}},
    {"name": "q_pt_scales", "role": "workspace", "dtype": "u8", "shape": ["T", "Hq", "D / 32"], "holds": {"part": "scales", "tensor": "q", "layout": "per_token", "format": "e8m0"}},
    {"name": "k_tb_scales", "role": "workspace", "dtype": "u8", "shape": ["NB", "Hkv", "D / 32"], "holds": {"part": "scales", "tensor": "k", "layout": "token_block", "format": "e8m0"}},
    {"name": "q_deq", "role": "workspace", "dtype": "bf16", "shape": ["T", "Hq", "D"], "holds": {"part": "dequantized", "tensor": "q", "layout": "per_token", "format": "bf16"}},
    {"name": "block_info", "role": "schedule", "dtype": "i32", "shape": ["NB", "2"]},
    {"name": "items", "role": "schedule", "dtype": "i32", "shape": ["NUM_ITEMS", "8"]},
    {"name": "counter", "role": "schedule", "dtype": "i32", "shape": ["1"]}
  ],
  "kernels": [
    {
      "name": "flamia_quantize", "cubin": "flamia_quantize.cubin", "ptx": "flamia_quantize.ptx",
      "grid": ["NB", "Hq", "1"], "block": [128, 1, 1], "cluster": [1, 1, 1],
      "smem_bytes": 0, "tmem_columns": 0, "registers": 40, "spill_bytes": 0,
      "params": [
        {"name": "q", "kind": "ptr", "buffer": "q"},
        {"name": "k", "kind": "ptr", "buffer": "k"},
        {"name": "block_info", "kind": "ptr", "buffer": "block_info"},
        {"name": "q_pt", "kind": "ptr", "buffer": "q_pt"},
        {"name": "q_pt_scales", "kind": "ptr", "buffer": "q_pt_scales"},
        {"name": "num_blocks", "kind": "i32", "value": "NB"}
      ]
    },
    {
      "name": "flamia_attention_fwd", "cubin": "flamia_attention_fwd.cubin",
      "grid": ["NUM_SMS", "1", "1"], "block": [384, 1, 1], "cluster": [1, 1, 1],
      "smem_bytes": 200000, "registers": 168, "spill_bytes": 0,
      "params": [
        {"name": "tma_q", "kind": "tensormap", "buffer": "q_deq", "dtype": "bf16",
         "dims": ["T", "Hq * D"], "box": [128, 64], "swizzle": 128},
        {"name": "o", "kind": "ptr", "buffer": "o"},
        {"name": "lse", "kind": "ptr", "buffer": "lse"},
        {"name": "items", "kind": "ptr", "buffer": "items"},
        {"name": "num_items", "kind": "i32", "value": "NUM_ITEMS"},
        {"name": "counter", "kind": "ptr", "buffer": "counter"},
        {"name": "scale_log2", "kind": "f32", "value": "softmax_scale_log2"},
        {"name": "T", "kind": "i32", "value": "T"}
      ]
    }
  ]
}
)";
}

std::string quantizeCubin() {
  return "FAKECUBIN\nkernel flamia_quantize 8,8,8,8,8,4\n";
}

std::string forwardCubin() {
  return "FAKECUBIN\nkernel flamia_attention_fwd 128,8,8,8,4,8,4,4 "
         "static_smem=1024\n";
}

namespace {
/// Directories made by makeTempDir, removed when the test binary exits.
std::vector<std::string> &tempDirs() {
  static std::vector<std::string> *dirs = [] {
    auto *d = new std::vector<std::string>();
    std::atexit([] {
      for (const std::string &dir : tempDirs()) {
        std::error_code ignored;
        std::filesystem::remove_all(dir, ignored);
      }
    });
    return d;
  }();
  return *dirs;
}
} // namespace

std::string makeTempDir() {
  const char *base = getenv("TMPDIR");
  std::string pattern =
      std::string(base && *base ? base : "/tmp") + "/flamia-rt-XXXXXX";
  std::string buf = pattern;
  char *dir = mkdtemp(&buf[0]);
  if (!dir)
    return std::string();
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  tempDirs().push_back(dir);
  return dir;
}

void writeFile(const std::string &dir, const std::string &name,
               const std::string &text) {
  std::ofstream out(dir + "/" + name, std::ios::binary);
  out << text;
}

std::string makeArtifactDir(const std::string &manifest) {
  std::string dir = makeTempDir();
  writeFile(dir, "manifest.json", manifest);
  writeFile(dir, "flamia_quantize.cubin", quantizeCubin());
  writeFile(dir, "flamia_attention_fwd.cubin", forwardCubin());
  return dir;
}

std::string replaceOnce(const std::string &text, const std::string &from,
                        const std::string &to, bool *found) {
  size_t pos = text.find(from);
  if (found)
    *found = pos != std::string::npos;
  if (pos == std::string::npos)
    return text;
  return text.substr(0, pos) + to + text.substr(pos + from.size());
}

} // namespace flamia::runtime::test
