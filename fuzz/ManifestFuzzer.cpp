//===- ManifestFuzzer.cpp - Fuzz the manifest and JSON parsers ------------===//
//
// Any text through parseJson and parseManifest (JSON, then the manifest's
// schema, its expressions and cross-checks). A rejected manifest has a
// message; an accepted one is self-consistent: every parameter's buffer
// index is in range, and every shape and grid expression evaluates (or
// reports an error) for ordinary and for huge sizes.
//
//===----------------------------------------------------------------------===//
#include "FuzzTarget.h"

#include "flamia/Runtime/Json.h"
#include "flamia/Runtime/Manifest.h"

#include <string>

using namespace flamia::runtime;

namespace {
void evaluateAll(const Manifest &m, int64_t tokens, int64_t heads) {
  SymbolValues s;
  s.set(Symbol::T, tokens);
  s.set(Symbol::Hq, heads);
  s.set(Symbol::Hkv, heads);
  s.set(Symbol::D, m.headDim);
  s.set(Symbol::NumDocs, 2);
  s.set(Symbol::NB, tokens / 32 + 2);
  s.set(Symbol::NumItems, 7);
  s.set(Symbol::NumSms, 132);
  int64_t v;
  auto check = [&](const Expression &e) {
    if (e.empty())
      return;
    Status st = e.evaluate(s, v);
    FUZZ_CHECK(st.ok() || !st.message.empty());
  };
  for (const ManifestBuffer &b : m.buffers)
    for (const Expression &e : b.shape)
      check(e);
  for (const ManifestKernel &k : m.kernels) {
    for (const Expression &e : k.grid)
      check(e);
    for (const ManifestParam &p : k.params) {
      check(p.value);
      check(p.tensorMap.rows);
      check(p.tensorMap.cols);
      check(p.tensorMap.boxRows);
      check(p.tensorMap.boxCols);
    }
  }
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  JsonValue json;
  Status js = parseJson(text, json);
  FUZZ_CHECK(js.ok() || !js.message.empty());

  Manifest m;
  Status s = parseManifest(text, m, "fuzz.json");
  if (!s.ok()) {
    FUZZ_CHECK(!s.message.empty());
    return 0;
  }
  FUZZ_CHECK(js.ok()); // a manifest is JSON first
  for (const ManifestKernel &k : m.kernels)
    for (const ManifestParam &p : k.params)
      FUZZ_CHECK(p.buffer < static_cast<int>(m.buffers.size()));
  evaluateAll(m, 4096, 16);
  evaluateAll(m, INT32_MAX, 65535);
  return 0;
}
