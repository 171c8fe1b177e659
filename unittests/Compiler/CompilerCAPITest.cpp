//===- CompilerCAPITest.cpp - flamia/CAPI/Compiler.h, checked -----*- C++
//-*-===//
//
// libflamia_compiler.so compiles specs to PTX (and cubins when ptxas is
// installed) and writes what flamia-compile writes: the manifest is read back
// with the runtime's reader. Every bad argument is a status plus a message
// naming it, never a crash.
//
//===----------------------------------------------------------------------===//
#include "flamia/CAPI/Compiler.h"

#include "flamia/Runtime/Json.h"
#include "flamia/Runtime/Manifest.h"
#include "flamia/Support/Version.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using namespace flamia;

namespace {

/// A fresh directory under the system's temporary directory, removed after.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl =
        (fs::temp_directory_path() / "flamia-capi-XXXXXX").string();
    EXPECT_NE(mkdtemp(tmpl.data()), nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string out() const { return (path / "artifacts").string(); }
};

std::string readFile(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// DIR/manifest.json as JSON (a PTX-only manifest: the runtime's reader
/// refuses kernels without cubin, so the JSON is checked directly).
runtime::JsonValue readManifestJson(const std::string &dir) {
  runtime::JsonValue v;
  runtime::Status st = runtime::parseJson(readFile(dir + "/manifest.json"), v);
  EXPECT_TRUE(st.ok()) << st.message;
  return v;
}

int64_t integerAt(const runtime::JsonValue &v, const char *key) {
  const runtime::JsonValue *m = v.find(key);
  EXPECT_TRUE(m && m->isInteger) << key;
  return m && m->isInteger ? m->integer : -1;
}

flamia_compile_spec sm90Spec() {
  flamia_compile_spec s;
  flamia_compile_spec_init(&s);
  s.target = "sm_90a";
  return s;
}

/// The call fails with `status` and a message containing `needle`, both in
/// `err` and in flamia_compiler_last_error().
void expectError(const flamia_compile_spec *s, const char *outDir,
                 flamia_status status, const std::string &needle) {
  char err[512] = "unchanged";
  EXPECT_EQ(flamia_compile_attention(s, outDir, err, sizeof err), status);
  EXPECT_NE(std::string(err).find(needle), std::string::npos) << err;
  EXPECT_EQ(std::string(err), flamia_compiler_last_error());
}

TEST(CompilerCAPI, VersionAndDefaults) {
  EXPECT_STREQ(flamia_compiler_version(), FLAMIA_VERSION_STRING);
  EXPECT_EQ(flamia_compiler_abi_version(), FLAMIA_COMPILER_ABI_VERSION);
  flamia_compile_spec s;
  flamia_compile_spec_init(&s);
  EXPECT_EQ(s.struct_size, sizeof s);
  EXPECT_EQ(s.target, nullptr);
  EXPECT_EQ(s.head_dim, 128);
  EXPECT_EQ(s.heads, 16);
  EXPECT_EQ(s.kv_heads, 16);
  EXPECT_EQ(s.causal, 1);
  EXPECT_EQ(s.varlen, 1);
  EXPECT_EQ(s.safe_block, 128);
  EXPECT_EQ(s.softmax_scale, 0.0);
  EXPECT_EQ(s.backward, 0);
  EXPECT_EQ(s.overlap_softmax, 1);
  EXPECT_EQ(s.assemble, 1);
  EXPECT_EQ(s.require_cubin, 1);
  flamia_compile_spec_init(nullptr); // a no-op
}

// PTX only: no ptxas needed. GQA, a non-default scale and safe block: the
// manifest read back says what was asked for.
TEST(CompilerCAPI, WritesPtxAndManifest) {
  TempDir dir;
  flamia_compile_spec s = sm90Spec();
  s.heads = 8;
  s.kv_heads = 2;
  s.safe_block = 256;
  s.softmax_scale = 0.125;
  s.assemble = 0;
  char err[256] = "unchanged";
  ASSERT_EQ(flamia_compile_attention(&s, dir.out().c_str(), err, sizeof err),
            FLAMIA_STATUS_OK)
      << err;
  EXPECT_STREQ(err, "");

  runtime::JsonValue m = readManifestJson(dir.out());
  ASSERT_TRUE(m.find("target") && m.find("recipe") && m.find("kernels"));
  EXPECT_EQ(m.find("target")->string, "sm_90a");
  EXPECT_EQ(m.find("recipe")->find("kind")->string, "mxfp8");
  EXPECT_EQ(integerAt(*m.find("recipe"), "safe_block"), 256);
  EXPECT_EQ(integerAt(m, "head_dim"), 128);
  EXPECT_EQ(integerAt(m, "heads"), 8);
  EXPECT_EQ(integerAt(m, "kv_heads"), 2);
  EXPECT_TRUE(m.find("causal")->boolean);
  EXPECT_TRUE(m.find("varlen")->boolean);
  ASSERT_TRUE(m.find("softmax_scale")->isNumber());
  EXPECT_EQ(m.find("softmax_scale")->number, 0.125);
  const std::vector<runtime::JsonValue> &kernels = m.find("kernels")->array;
  ASSERT_FALSE(kernels.empty());
  for (const runtime::JsonValue &k : kernels) {
    const std::string name = k.find("name")->string;
    EXPECT_EQ(k.find("phase")->string, "forward") << name;
    EXPECT_TRUE(k.find("cubin")->isNull()) << name;
    EXPECT_EQ(k.find("ptx")->string, name + ".ptx");
    std::string ptx = readFile(dir.out() + "/" + name + ".ptx");
    EXPECT_NE(ptx.find(".target sm_90a"), std::string::npos) << name;
    EXPECT_NE(ptx.find(".entry " + name), std::string::npos) << name;
    EXPECT_FALSE(fs::exists(dir.out() + "/" + name + ".cubin")) << name;
  }
  EXPECT_FALSE(fs::exists(dir.out() + "/graph.mlir"));
}

// heads = kv_heads = 0: runtime head counts. The manifest states no head
// counts; its shapes name Hq and Hkv, and every kernel takes both.
TEST(CompilerCAPI, RuntimeHeadCounts) {
  TempDir dir;
  flamia_compile_spec s = sm90Spec();
  s.heads = 0;
  s.kv_heads = 0;
  s.backward = 1;
  s.assemble = 0;
  char err[256] = "unchanged";
  ASSERT_EQ(flamia_compile_attention(&s, dir.out().c_str(), err, sizeof err),
            FLAMIA_STATUS_OK)
      << err;
  runtime::JsonValue m = readManifestJson(dir.out());
  EXPECT_EQ(m.find("heads"), nullptr);
  EXPECT_EQ(m.find("kv_heads"), nullptr);
  std::map<std::string, std::vector<std::string>> shapes;
  for (const runtime::JsonValue &b : m.find("buffers")->array)
    for (const runtime::JsonValue &d : b.find("shape")->array)
      shapes[b.find("name")->string].push_back(d.string);
  EXPECT_EQ(shapes["q"], (std::vector<std::string>{"T", "Hq", "128"}));
  EXPECT_EQ(shapes["dk"], (std::vector<std::string>{"T", "Hkv", "128"}));
  EXPECT_EQ(shapes["lse"], (std::vector<std::string>{"Hq", "T"}));
  const std::vector<runtime::JsonValue> &kernels = m.find("kernels")->array;
  ASSERT_EQ(kernels.size(), 5u);
  for (const runtime::JsonValue &k : kernels) {
    const std::vector<runtime::JsonValue> &params = k.find("params")->array;
    ASSERT_GE(params.size(), 2u);
    EXPECT_EQ(params[params.size() - 2].find("value")->string, "Hq")
        << k.find("name")->string;
    EXPECT_EQ(params.back().find("value")->string, "Hkv")
        << k.find("name")->string;
  }
}

// A training step with the IR: five kernels, both phases, graph.mlir.
TEST(CompilerCAPI, TrainingStepWithIR) {
  TempDir dir;
  flamia_compile_spec s = sm90Spec();
  s.backward = 1;
  s.grad_dtype = "f32";
  s.assemble = 0;
  s.write_ir = 1;
  ASSERT_EQ(flamia_compile_attention(&s, dir.out().c_str(), nullptr, 0),
            FLAMIA_STATUS_OK)
      << flamia_compiler_last_error();
  runtime::JsonValue m = readManifestJson(dir.out());
  ASSERT_TRUE(m.find("kernels") && m.find("buffers"));
  int backward = 0;
  for (const runtime::JsonValue &k : m.find("kernels")->array)
    backward += k.find("phase")->string == "backward";
  EXPECT_EQ(m.find("kernels")->array.size(), 5u);
  EXPECT_GE(backward, 1);
  bool sawDq = false;
  for (const runtime::JsonValue &b : m.find("buffers")->array)
    if (b.find("name")->string == "dq") {
      sawDq = true;
      EXPECT_EQ(b.find("dtype")->string, "f32");
    }
  EXPECT_TRUE(sawDq);
  EXPECT_TRUE(fs::exists(dir.out() + "/graph.mlir"));
  EXPECT_TRUE(fs::exists(dir.out() + "/block.mlir"));
}

// Concurrent calls (the header allows them): each compiles in its own MLIR
// context, and all write the same files.
TEST(CompilerCAPI, ConcurrentCallsAgree) {
  TempDir dir;
  const int n = 4;
  std::vector<flamia_status> status(n, FLAMIA_STATUS_INTERNAL);
  std::vector<std::string> errors(n);
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      flamia_compile_spec s = sm90Spec();
      s.assemble = 0;
      char err[1024];
      std::string out = dir.out() + std::to_string(i);
      status[i] = flamia_compile_attention(&s, out.c_str(), err, sizeof err);
      errors[i] = err;
    });
  for (std::thread &t : threads)
    t.join();
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(status[i], FLAMIA_STATUS_OK) << errors[i];
    EXPECT_EQ(readFile(dir.out() + std::to_string(i) + "/manifest.json"),
              readFile(dir.out() + "0/manifest.json"));
    EXPECT_EQ(
        readFile(dir.out() + std::to_string(i) + "/flamia_attention_fwd.ptx"),
        readFile(dir.out() + "0/flamia_attention_fwd.ptx"));
  }
}

// With CUDA's ptxas: cubins and their resource usage in the manifest.
TEST(CompilerCAPI, AssemblesCubins) {
  const char *ptxas = "/usr/local/cuda/bin/ptxas";
  if (access(ptxas, X_OK) != 0)
    GTEST_SKIP() << "no " << ptxas;
  TempDir dir;
  flamia_compile_spec s = sm90Spec();
  s.ptxas = ptxas;
  char err[4096];
  ASSERT_EQ(flamia_compile_attention(&s, dir.out().c_str(), err, sizeof err),
            FLAMIA_STATUS_OK)
      << err;
  runtime::Manifest m;
  runtime::Status st = runtime::loadManifest(dir.out(), m);
  ASSERT_TRUE(st.ok()) << st.message;
  ASSERT_FALSE(m.kernels.empty());
  for (const runtime::ManifestKernel &k : m.kernels) {
    EXPECT_EQ(k.cubin, k.name + ".cubin");
    EXPECT_GT(fs::file_size(dir.out() + "/" + k.cubin), 0u) << k.name;
    EXPECT_GT(k.registers, 0) << k.name;
  }
}

TEST(CompilerCAPI, MissingPtxasIsNamed) {
  TempDir dir;
  flamia_compile_spec s = sm90Spec();
  s.ptxas = "/nonexistent/ptxas";
  expectError(&s, dir.out().c_str(), FLAMIA_STATUS_INVALID_ARTIFACT,
              "ptxas failed on ");
  EXPECT_FALSE(fs::exists(dir.out()));
}

TEST(CompilerCAPI, BadSpecsAreNamed) {
  TempDir dir;
  const std::string out = dir.out();
  flamia_compile_spec s = sm90Spec();
  s.head_dim = 96;
  expectError(&s, out.c_str(), FLAMIA_STATUS_INVALID_ARGUMENT,
              "head dim 96 is not implemented by the kernels");
  s = sm90Spec();
  s.target = "sm_80";
  expectError(&s, out.c_str(), FLAMIA_STATUS_INVALID_ARGUMENT, "sm_80");
  s = sm90Spec();
  s.recipe = "fp4-nonsense";
  expectError(&s, out.c_str(), FLAMIA_STATUS_INVALID_ARGUMENT,
              "unknown recipe 'fp4-nonsense'");
  // A strict preset is a recipe name too; sm_100a has no strict kernels.
  s = sm90Spec();
  s.target = "sm_100a";
  s.recipe = "mxfp8-strict";
  expectError(&s, out.c_str(), FLAMIA_STATUS_INVALID_ARGUMENT,
              "no sm_100a kernels implement strict mxfp8");
  s = sm90Spec();
  s.heads = 6;
  s.kv_heads = 4;
  expectError(&s, out.c_str(), FLAMIA_STATUS_INVALID_ARGUMENT,
              "is not a multiple of Hkv");
  s = sm90Spec();
  s.heads = 0; // runtime heads need kv_heads = 0 too
  s.kv_heads = 2;
  expectError(&s, out.c_str(), FLAMIA_STATUS_INVALID_ARGUMENT,
              "heads = 0 and kv_heads = 2: both are 0 (runtime head counts");
  s = sm90Spec();
  s.safe_block = 100;
  expectError(&s, out.c_str(), FLAMIA_STATUS_INVALID_ARGUMENT,
              "safe block 100");
  s = sm90Spec();
  s.softmax_scale = -1;
  expectError(&s, out.c_str(), FLAMIA_STATUS_INVALID_ARGUMENT,
              "softmax_scale -1 must be finite and > 0");
  s = sm90Spec();
  s.backward = 1;
  s.grad_dtype = "f16";
  expectError(&s, out.c_str(), FLAMIA_STATUS_INVALID_ARGUMENT,
              "gradient dtype 'f16'");
  s = sm90Spec();
  s.causal = 2;
  expectError(&s, out.c_str(), FLAMIA_STATUS_INVALID_ARGUMENT,
              "causal must be 0 or 1, got 2");
  s = sm90Spec();
  s.write_ir = -1;
  expectError(&s, out.c_str(), FLAMIA_STATUS_INVALID_ARGUMENT,
              "write_ir must be 0 or 1, got -1");
  // Nothing was written for any of them.
  EXPECT_FALSE(fs::exists(out));
}

TEST(CompilerCAPI, BadPointersAndSizesAreNamed) {
  TempDir dir;
  const std::string out = dir.out();
  expectError(nullptr, out.c_str(), FLAMIA_STATUS_INVALID_ARGUMENT,
              "spec is NULL");
  flamia_compile_spec s = sm90Spec();
  expectError(&s, nullptr, FLAMIA_STATUS_INVALID_ARGUMENT,
              "out_dir is NULL or empty");
  expectError(&s, "", FLAMIA_STATUS_INVALID_ARGUMENT,
              "out_dir is NULL or empty");
  s.struct_size = sizeof(size_t);
  expectError(&s, out.c_str(), FLAMIA_STATUS_INVALID_ARGUMENT,
              "spec->struct_size is 8, expected at least " +
                  std::to_string(sizeof(flamia_compile_spec)));
  // A newer caller's struct: accepted only when the unknown tail is zero.
  struct Newer {
    flamia_compile_spec s;
    int64_t unknown;
  } newer;
  newer.s = sm90Spec();
  newer.s.struct_size = sizeof newer;
  newer.unknown = 7;
  expectError(&newer.s, out.c_str(), FLAMIA_STATUS_INVALID_ARGUMENT,
              "are not zero");
  newer.unknown = 0;
  newer.s.assemble = 0;
  EXPECT_EQ(flamia_compile_attention(&newer.s, out.c_str(), nullptr, 0),
            FLAMIA_STATUS_OK)
      << flamia_compiler_last_error();
}

TEST(CompilerCAPI, ErrorsAreTruncatedAndUnwritableDirsNamed) {
  flamia_compile_spec s = sm90Spec();
  s.head_dim = 96;
  char err[8];
  EXPECT_EQ(flamia_compile_attention(&s, "/tmp/x", err, sizeof err),
            FLAMIA_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(err, "head di");
  // A file where the directory should be: the compile runs, the write fails
  // and names the path.
  TempDir dir;
  std::ofstream(dir.out()) << "a file";
  s = sm90Spec();
  s.assemble = 0;
  expectError(&s, dir.out().c_str(), FLAMIA_STATUS_INVALID_ARTIFACT, dir.out());
}

} // namespace
