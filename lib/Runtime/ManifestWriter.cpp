//===- ManifestWriter.cpp - manifest.json v2: write -----------------------===//
//
// The writing half of the manifest library: a Manifest back to the JSON
// parseManifest reads (docs/runtime-abi.md, docs/runtime.md). flamia-compile
// writes its manifests with it; the unit tests check write -> parse -> equal.
//
//===----------------------------------------------------------------------===//

#include "flamia/Runtime/Manifest.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace flamia::runtime {

namespace {

/// A pretty-printing JSON writer (two-space indentation, one element per
/// line), enough for manifests: objects, arrays, strings, integers, finite
/// numbers, booleans and null.
class JsonWriter {
public:
  std::string take() { return std::move(out_); }

  void beginObject() {
    value();
    out_ += "{";
    stack_.push_back(true);
  }
  void endObject() { close("}"); }
  void beginArray() {
    value();
    out_ += "[";
    stack_.push_back(true);
  }
  void endArray() { close("]"); }
  void key(const std::string &k) {
    element();
    quote(k);
    out_ += ": ";
    afterKey_ = true;
  }
  void string(const std::string &s) {
    value();
    quote(s);
  }
  void integer(int64_t v) {
    value();
    out_ += std::to_string(v);
  }
  /// A finite double, as many digits as it takes to read back the same
  /// value (integral values without fraction).
  void number(double v) {
    value();
    char buf[64];
    if (v == std::floor(v) && std::fabs(v) < 1e15) {
      snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
    } else {
      for (int digits = 1; digits <= 17; ++digits) {
        snprintf(buf, sizeof buf, "%.*g", digits, v);
        if (std::strtod(buf, nullptr) == v)
          break;
      }
    }
    out_ += buf;
  }
  /// A finite float32, with the fewest digits that read back (as a float32)
  /// the same value.
  void float32(float v) {
    value();
    char buf[64];
    for (int digits = 1; digits <= 9; ++digits) {
      snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(v));
      if (std::strtof(buf, nullptr) == v)
        break;
    }
    out_ += buf;
  }
  void boolean(bool b) {
    value();
    out_ += b ? "true" : "false";
  }
  void null() {
    value();
    out_ += "null";
  }

  void field(const std::string &k, const std::string &v) {
    key(k);
    string(v);
  }
  void field(const std::string &k, const char *v) { field(k, std::string(v)); }
  void field(const std::string &k, int64_t v) {
    key(k);
    integer(v);
  }
  void field(const std::string &k, bool v) {
    key(k);
    boolean(v);
  }

private:
  /// Before a value: after a key nothing, inside an array a separator.
  void value() {
    if (afterKey_) {
      afterKey_ = false;
      return;
    }
    element();
  }
  /// A new element of the innermost container: comma (unless first) and
  /// indentation.
  void element() {
    if (stack_.empty())
      return;
    if (!stack_.back())
      out_ += ",";
    stack_.back() = false;
    out_ += "\n" + std::string(2 * stack_.size(), ' ');
  }
  void close(const char *bracket) {
    bool empty = stack_.back();
    stack_.pop_back();
    if (!empty)
      out_ += "\n" + std::string(2 * stack_.size(), ' ');
    out_ += bracket;
  }
  void quote(const std::string &s) {
    out_ += '"';
    for (char c : s) {
      if (c == '"' || c == '\\') {
        out_ += '\\';
        out_ += c;
      } else if (c == '\n') {
        out_ += "\\n";
      } else if (static_cast<unsigned char>(c) < 0x20) {
        char buf[8];
        snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
        out_ += buf;
      } else {
        out_ += c;
      }
    }
    out_ += '"';
  }

  std::string out_;
  std::vector<bool> stack_; // per open container: no element yet
  bool afterKey_ = false;
};

void writeExpressions(JsonWriter &j, const std::string &key,
                      const Expression *begin, const Expression *end) {
  j.key(key);
  j.beginArray();
  for (const Expression *e = begin; e != end; ++e)
    j.string(e->text());
  j.endArray();
}

/// A tensor-map box entry: an integer when constant (as flamia-compile has
/// always written boxes), its text otherwise.
void writeBoxEntry(JsonWriter &j, const Expression &e) {
  int64_t c;
  if (e.constantValue(c))
    j.integer(c);
  else
    j.string(e.text());
}

void writeHolds(JsonWriter &j, const BufferContents &h) {
  j.key("holds");
  j.beginObject();
  j.field("part", heldPartName(h.part));
  if (h.part != HeldPart::Scratch) {
    j.field("tensor", heldTensorName(h.tensor));
    j.field("layout", heldLayoutName(h.layout));
    j.field("format", heldFormatName(h.format));
    if (h.part == HeldPart::ScaleTiles)
      j.field("tile_rows", tileRowsName(h.tileRows));
  }
  j.endObject();
}

void writeBuffer(JsonWriter &j, const ManifestBuffer &b) {
  j.beginObject();
  j.field("name", b.name);
  j.field("role", bufferRoleName(b.role));
  j.field("dtype", dtypeName(b.dtype));
  writeExpressions(j, "shape", b.shape.data(), b.shape.data() + b.shape.size());
  if (b.role == BufferRole::Workspace)
    writeHolds(j, b.holds);
  j.endObject();
}

void writeParam(JsonWriter &j, const Manifest &m, const ManifestParam &p) {
  j.beginObject();
  j.field("name", p.name);
  j.field("kind", paramKindName(p.kind));
  switch (p.kind) {
  case ParamKind::Ptr:
  case ParamKind::TensorMap:
    j.field("buffer", p.buffer >= 0 && p.buffer < int(m.buffers.size())
                          ? m.buffers[p.buffer].name
                          : std::string());
    break;
  case ParamKind::I32:
  case ParamKind::F32:
    j.key("value");
    switch (p.named) {
    case NamedValue::None:
      j.string(p.value.text());
      break;
    case NamedValue::SoftmaxScale:
      j.string("softmax_scale");
      break;
    case NamedValue::SoftmaxScaleLog2:
      j.string("softmax_scale_log2");
      break;
    case NamedValue::FloatLiteral:
      j.number(p.floatLiteral);
      break;
    }
    break;
  }
  if (p.kind == ParamKind::TensorMap) {
    const TensorMapSpec &t = p.tensorMap;
    j.field("dtype", dtypeName(t.dtype));
    j.key("dims");
    j.beginArray();
    j.string(t.rows.text());
    j.string(t.cols.text());
    j.endArray();
    j.key("box");
    j.beginArray();
    writeBoxEntry(j, t.boxRows);
    writeBoxEntry(j, t.boxCols);
    j.endArray();
    j.field("swizzle", int64_t{t.swizzle});
    if (t.l2Promotion != 128) // the reader's default
      j.field("l2_promotion", int64_t{t.l2Promotion});
  }
  j.endObject();
}

void writeKernel(JsonWriter &j, const Manifest &m, const ManifestKernel &k) {
  j.beginObject();
  j.field("name", k.name);
  j.key("cubin");
  if (k.cubin.empty())
    j.null(); // flamia-compile --ptx-only: no cubin was written
  else
    j.string(k.cubin);
  if (!k.ptx.empty())
    j.field("ptx", k.ptx);
  writeExpressions(j, "grid", k.grid, k.grid + 3);
  j.key("block");
  j.beginArray();
  for (uint32_t b : k.block)
    j.integer(b);
  j.endArray();
  j.key("cluster");
  j.beginArray();
  for (uint32_t c : k.cluster)
    j.integer(c);
  j.endArray();
  if (!k.launch.empty())
    j.field("launch", k.launch);
  j.field("phase", kernelPhaseName(k.phase));
  j.field("smem_bytes", k.smemBytes);
  if (k.tmemColumns >= 0)
    j.field("tmem_columns", k.tmemColumns);
  if (k.registers >= 0)
    j.field("registers", k.registers);
  if (k.spillBytes >= 0)
    j.field("spill_bytes", k.spillBytes);
  j.key("params");
  j.beginArray();
  for (const ManifestParam &p : k.params)
    writeParam(j, m, p);
  j.endArray();
  j.endObject();
}

} // namespace

std::string writeManifestJson(const Manifest &m) {
  JsonWriter j;
  j.beginObject();
  j.field("flamia_manifest_version", int64_t{m.version});
  j.field("target", m.target.name);
  if (!m.recipe.kind.empty()) {
    j.key("recipe");
    j.beginObject();
    j.field("kind", m.recipe.kind);
    j.field("safe_block", m.recipe.safeBlock);
    j.field("strict", m.recipe.strict);
    j.endObject();
  }
  j.field("head_dim", m.headDim);
  if (m.heads > 0)
    j.field("heads", m.heads);
  if (m.kvHeads > 0)
    j.field("kv_heads", m.kvHeads);
  j.field("causal", m.causal);
  j.field("varlen", m.varlen);
  j.key("softmax_scale");
  if (m.hasSoftmaxScale)
    j.float32(m.softmaxScale);
  else
    j.null();
  if (m.schedule.present) {
    const ManifestSchedule &s = m.schedule;
    j.key("schedule");
    j.beginObject();
    j.field("block_m", int64_t{s.blockM});
    j.field("block_n", int64_t{s.blockN});
    j.field("safe_block", int64_t{s.safeBlock});
    if (s.costModel == "custom") {
      j.key("cost_model");
      j.beginObject();
      j.key("item_overhead");
      j.number(s.weights.itemOverhead);
      j.key("fp8_tile");
      j.number(s.weights.fp8Tile);
      j.key("bf16_tile");
      j.number(s.weights.bf16Tile);
      j.endObject();
    } else {
      j.field("cost_model", s.costModel);
    }
    if (s.order != ScheduleOrder::LongestFirst) {
      j.field("order", std::string(scheduleOrderName(s.order)));
      j.field("l2_section_bytes", s.l2SectionBytes);
    }
    j.endObject();
  }
  j.key("buffers");
  j.beginArray();
  for (const ManifestBuffer &b : m.buffers)
    writeBuffer(j, b);
  j.endArray();
  j.key("kernels");
  j.beginArray();
  for (const ManifestKernel &k : m.kernels)
    writeKernel(j, m, k);
  j.endArray();
  j.endObject();
  return j.take() + "\n";
}

} // namespace flamia::runtime
