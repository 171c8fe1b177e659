//===- Manifest.cpp - manifest.json v2: parse and validate ----------------===//

#include "flamia/Runtime/Manifest.h"

#include "flamia/Numerics/RecipeRegistry.h"

#include "flamia/Runtime/Json.h"
#include "flamia/Schedule/ScheduleParams.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <sys/stat.h>

namespace flamia::runtime {

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::BF16:
    return "bf16";
  case DType::F32:
    return "f32";
  case DType::I32:
    return "i32";
  case DType::U8:
    return "u8";
  }
  return "?";
}

bool dtypeFromName(const std::string &name, DType &out) {
  for (DType d : {DType::BF16, DType::F32, DType::I32, DType::U8})
    if (name == dtypeName(d)) {
      out = d;
      return true;
    }
  return false;
}

int64_t dtypeBytes(DType dtype) {
  switch (dtype) {
  case DType::BF16:
    return 2;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::U8:
    return 1;
  }
  return 1;
}

const char *bufferRoleName(BufferRole role) {
  switch (role) {
  case BufferRole::Input:
    return "input";
  case BufferRole::Output:
    return "output";
  case BufferRole::Workspace:
    return "workspace";
  case BufferRole::Schedule:
    return "schedule";
  }
  return "?";
}

const char *paramKindName(ParamKind kind) {
  switch (kind) {
  case ParamKind::Ptr:
    return "ptr";
  case ParamKind::I32:
    return "i32";
  case ParamKind::F32:
    return "f32";
  case ParamKind::TensorMap:
    return "tensormap";
  }
  return "?";
}

const char *heldPartName(HeldPart part) {
  switch (part) {
  case HeldPart::Payload:
    return "payload";
  case HeldPart::Scales:
    return "scales";
  case HeldPart::Dequantized:
    return "dequantized";
  case HeldPart::ScaleTiles:
    return "scale_tiles";
  case HeldPart::Scratch:
    return "scratch";
  case HeldPart::Delta:
    return "delta";
  }
  return "?";
}

const char *heldTensorName(HeldTensor tensor) {
  switch (tensor) {
  case HeldTensor::Q:
    return "q";
  case HeldTensor::K:
    return "k";
  case HeldTensor::V:
    return "v";
  case HeldTensor::GradO:
    return "grad_o";
  }
  return "?";
}

char heldTensorLetter(HeldTensor tensor) { return heldTensorName(tensor)[0]; }

const char *heldLayoutName(HeldLayout layout) {
  switch (layout) {
  case HeldLayout::PerToken:
    return "per_token";
  case HeldLayout::TokenBlock:
    return "token_block";
  }
  return "?";
}

const char *heldFormatName(HeldFormat format) {
  switch (format) {
  case HeldFormat::E4M3:
    return "e4m3";
  case HeldFormat::E8M0:
    return "e8m0";
  case HeldFormat::BF16:
    return "bf16";
  case HeldFormat::F32:
    return "f32";
  case HeldFormat::E2M1:
    return "e2m1";
  }
  return "?";
}

const char *kernelPhaseName(KernelPhase phase) {
  switch (phase) {
  case KernelPhase::Forward:
    return "forward";
  case KernelPhase::Backward:
    return "backward";
  }
  return "?";
}

const char *tileRowsName(TileRows rows) {
  switch (rows) {
  case TileRows::Tokens:
    return "tokens";
  case TileRows::Channels:
    return "channels";
  }
  return "?";
}

bool BufferContents::operator==(const BufferContents &o) const {
  if (part != o.part)
    return false;
  if (part == HeldPart::Scratch)
    return true;
  return tensor == o.tensor && layout == o.layout && format == o.format &&
         (part != HeldPart::ScaleTiles || tileRows == o.tileRows);
}

const std::vector<ArgumentBinding> &argumentBindings() {
  static const std::vector<ArgumentBinding> bindings = {
      {"q", BufferRole::Input, DType::BF16},
      {"k", BufferRole::Input, DType::BF16},
      {"v", BufferRole::Input, DType::BF16},
      {"cu_seqlens", BufferRole::Input, DType::I32},
      {"o", BufferRole::Output, DType::BF16},
      {"lse", BufferRole::Output, DType::F32},
      // The backward (training step): the gradient of O in, those of Q, K,
      // V out.
      {"grad_o", BufferRole::Input, DType::BF16},
      {"dq", BufferRole::Output, DType::BF16, true},
      {"dk", BufferRole::Output, DType::BF16, true},
      {"dv", BufferRole::Output, DType::BF16, true},
  };
  return bindings;
}

int Manifest::findBuffer(const std::string &name) const {
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].name == name)
      return static_cast<int>(i);
  return -1;
}

bool Manifest::hasBackward() const {
  for (const ManifestKernel &k : kernels)
    if (k.phase == KernelPhase::Backward)
      return true;
  return false;
}

bool Manifest::kernelUsesBuffer(size_t kernel, int buffer) const {
  for (const ManifestParam &p : kernels[kernel].params)
    if ((p.kind == ParamKind::Ptr || p.kind == ParamKind::TensorMap) &&
        p.buffer == buffer)
      return true;
  return false;
}

bool parseTarget(const std::string &name, ManifestTarget &out) {
  out = ManifestTarget();
  if (name.compare(0, 3, "sm_") != 0)
    return false;
  size_t i = 3;
  std::string digits;
  while (i < name.size() && isdigit(static_cast<unsigned char>(name[i])))
    digits += name[i++];
  if (digits.size() < 2 || digits.size() > 3 || digits[0] == '0')
    return false;
  if (i < name.size()) {
    if (i + 1 != name.size())
      return false;
    if (name[i] == 'a')
      out.archSpecific = true;
    else if (name[i] == 'f')
      out.familySpecific = true;
    else
      return false;
  }
  out.name = name;
  out.minor = digits.back() - '0';
  out.major = std::stoi(digits.substr(0, digits.size() - 1));
  return true;
}

bool targetRunsOn(const ManifestTarget &target, int major, int minor,
                  std::string &why) {
  char device[32], wanted[32];
  snprintf(device, sizeof device, "%d.%d", major, minor);
  snprintf(wanted, sizeof wanted, "%d.%d", target.major, target.minor);
  if (target.archSpecific) {
    if (major == target.major && minor == target.minor)
      return true;
    why = "target " + target.name +
          " (architecture-specific) runs only on compute capability " + wanted +
          "; the device is " + device;
    return false;
  }
  if (target.familySpecific) {
    if (major == target.major && minor >= target.minor)
      return true;
    why = "target " + target.name +
          " (family-specific) runs only on compute "
          "capability " +
          std::to_string(target.major) +
          ".x with x >= " + std::to_string(target.minor) + "; the device is " +
          device;
    return false;
  }
  if (major > target.major || (major == target.major && minor >= target.minor))
    return true;
  why = "target " + target.name + " needs compute capability " + wanted +
        " or newer; the device is " + device;
  return false;
}

namespace {

bool isIdentifier(const std::string &s) {
  if (s.empty() || isdigit(static_cast<unsigned char>(s[0])))
    return false;
  for (char c : s)
    if (!isalnum(static_cast<unsigned char>(c)) && c != '_')
      return false;
  return true;
}

/// Reads one manifest; `path` strings are JSON paths for messages.
class ManifestReader {
public:
  explicit ManifestReader(std::string fileName)
      : fileName_(std::move(fileName)) {}

  Status read(const JsonValue &root, Manifest &m);

private:
  std::string fileName_;

  Status fail(const JsonValue &at, const std::string &path,
              const std::string &message) const {
    return invalidManifest(fileName_ + ":" + std::to_string(at.line) + ":" +
                           std::to_string(at.column) + ": " +
                           (path.empty() ? "" : path + ": ") + message);
  }

  static std::string join(const std::vector<std::string> &names) {
    std::string out;
    for (const std::string &n : names)
      out += (out.empty() ? "" : ", ") + n;
    return out;
  }

  /// Every key of `obj` must be in `allowed` (or start with "x-": extensions,
  /// ignored).
  Status checkKeys(const JsonValue &obj, const std::string &path,
                   const std::vector<std::string> &allowed) const {
    for (const auto &member : obj.object) {
      if (member.first.compare(0, 2, "x-") == 0)
        continue;
      bool known = false;
      for (const std::string &a : allowed)
        known |= member.first == a;
      if (!known)
        return fail(member.second,
                    path.empty() ? member.first : path + "." + member.first,
                    "unknown key \"" + member.first +
                        "\" (expected one of: " + join(allowed) + ")");
    }
    return Status::success();
  }

  Status require(const JsonValue &obj, const std::string &path,
                 const std::string &key, const JsonValue *&out) const {
    out = obj.find(key);
    if (!out)
      return fail(obj, path, "missing required key \"" + key + "\"");
    return Status::success();
  }

  Status expectKind(const JsonValue &v, const std::string &path,
                    JsonValue::Kind kind) const {
    if (v.kind != kind)
      return fail(v, path,
                  std::string("expected ") + JsonValue::kindName(kind) +
                      ", found " + v.kindName());
    return Status::success();
  }

  Status readInt(const JsonValue &v, const std::string &path, int64_t min,
                 int64_t max, int64_t &out) const {
    if (!v.isNumber() || !v.isInteger)
      return fail(v, path,
                  std::string("expected an integer, found ") +
                      (v.isNumber() ? "a non-integer number" : v.kindName()));
    if (v.integer < min || v.integer > max)
      return fail(v, path,
                  std::to_string(v.integer) + " is out of range [" +
                      std::to_string(min) + ", " + std::to_string(max) + "]");
    out = v.integer;
    return Status::success();
  }

  Status readString(const JsonValue &v, const std::string &path,
                    std::string &out) const {
    FLAMIA_RETURN_IF_ERROR(expectKind(v, path, JsonValue::Kind::String));
    out = v.string;
    return Status::success();
  }

  Status readBool(const JsonValue &v, const std::string &path,
                  bool &out) const {
    FLAMIA_RETURN_IF_ERROR(expectKind(v, path, JsonValue::Kind::Bool));
    out = v.boolean;
    return Status::success();
  }

  /// An expression: a string, or a non-negative JSON integer.
  Status readExpression(const JsonValue &v, const std::string &path,
                        Expression &out) const {
    if (v.isNumber()) {
      if (!v.isInteger)
        return fail(v, path,
                    "expected an integer or an expression string, "
                    "found a non-integer number");
      out = Expression::constant(v.integer);
    } else if (v.isString()) {
      Status s = Expression::parse(v.string, out);
      if (!s.ok())
        return fail(v, path, s.message);
    } else {
      return fail(v, path,
                  std::string("expected an expression (string) or "
                              "an integer, found ") +
                      v.kindName());
    }
    FLAMIA_RETURN_IF_ERROR(checkScheduleSymbols(v, path, out));
    int64_t c;
    if (out.constantValue(c) && c < 0)
      return fail(v, path,
                  "'" + out.text() + "' is negative (" + std::to_string(c) +
                      ")");
    return Status::success();
  }

  /// NUM_ITEMS and NUM_KV_ITEMS count the schedule's items: without a
  /// "schedule" section there are none.
  Status checkScheduleSymbols(const JsonValue &v, const std::string &path,
                              const Expression &e) const {
    if (scheduleAvailable_)
      return Status::success();
    for (Symbol s : {Symbol::NumItems, Symbol::NumKvItems})
      if (e.uses(s))
        return fail(v, path,
                    "'" + e.text() + "' uses " + symbolName(s) +
                        " but the manifest has no \"schedule\"");
    return Status::success();
  }

  Status readExpressionArray(const JsonValue &v, const std::string &path,
                             size_t minCount, size_t maxCount,
                             std::vector<Expression> &out) const {
    FLAMIA_RETURN_IF_ERROR(expectKind(v, path, JsonValue::Kind::Array));
    if (v.array.size() < minCount || v.array.size() > maxCount) {
      std::string expected =
          minCount == maxCount
              ? std::to_string(minCount)
              : std::to_string(minCount) + " to " + std::to_string(maxCount);
      return fail(v, path,
                  "expected " + expected + " entries, found " +
                      std::to_string(v.array.size()));
    }
    out.clear();
    for (size_t i = 0; i < v.array.size(); ++i) {
      Expression e;
      FLAMIA_RETURN_IF_ERROR(
          readExpression(v.array[i], path + "[" + std::to_string(i) + "]", e));
      out.push_back(std::move(e));
    }
    return Status::success();
  }

  Status readDims3(const JsonValue &v, const std::string &path, uint32_t out[3],
                   int64_t max) const {
    FLAMIA_RETURN_IF_ERROR(expectKind(v, path, JsonValue::Kind::Array));
    if (v.array.size() != 3)
      return fail(v, path,
                  "expected 3 integers, found " +
                      std::to_string(v.array.size()) + " entries");
    for (int i = 0; i < 3; ++i) {
      int64_t x;
      FLAMIA_RETURN_IF_ERROR(
          readInt(v.array[i], path + "[" + std::to_string(i) + "]", 1, max, x));
      out[i] = static_cast<uint32_t>(x);
    }
    return Status::success();
  }

  /// `v` must be a string naming one of `values` (by `nameOf`).
  template <typename E>
  Status readEnum(const JsonValue &v, const std::string &path,
                  const char *what, const char *(*nameOf)(E),
                  std::initializer_list<E> values, E &out) const {
    std::string text;
    FLAMIA_RETURN_IF_ERROR(readString(v, path, text));
    std::vector<std::string> names;
    for (E e : values) {
      if (text == nameOf(e)) {
        out = e;
        return Status::success();
      }
      names.push_back(nameOf(e));
    }
    return fail(v, path,
                std::string("unknown ") + what + " '" + text +
                    "' (expected one of: " + join(names) + ")");
  }

  Status readRecipe(const JsonValue &v, Manifest &m);
  Status readHolds(const JsonValue &v, const std::string &path,
                   ManifestBuffer &b);
  Status readSchedule(const JsonValue &v, Manifest &m);
  Status readBuffer(const JsonValue &v, const std::string &path,
                    ManifestBuffer &b, const Manifest &m);
  Status readKernel(const JsonValue &v, const std::string &path,
                    ManifestKernel &k, const Manifest &m);
  Status readParam(const JsonValue &v, const std::string &path,
                   ManifestParam &p, const Manifest &m);
  Status readTensorMap(const JsonValue &v, const std::string &path,
                       ManifestParam &p, const Manifest &m);

  bool scheduleAvailable_ = false;
};

Status ManifestReader::read(const JsonValue &root, Manifest &m) {
  m = Manifest();
  FLAMIA_RETURN_IF_ERROR(expectKind(root, "", JsonValue::Kind::Object));
  FLAMIA_RETURN_IF_ERROR(
      checkKeys(root, "",
                {"flamia_manifest_version", "target", "recipe", "head_dim",
                 "heads", "kv_heads", "causal", "varlen", "softmax_scale",
                 "schedule", "buffers", "kernels"}));

  const JsonValue *v;
  FLAMIA_RETURN_IF_ERROR(require(root, "", "flamia_manifest_version", v));
  int64_t version;
  if (!v->isNumber() || !v->isInteger)
    return fail(*v, "flamia_manifest_version", "expected an integer");
  version = v->integer;
  if (version != kManifestVersion)
    return fail(*v, "flamia_manifest_version",
                "unsupported manifest version " + std::to_string(version) +
                    " (this runtime reads version " +
                    std::to_string(kManifestVersion) +
                    "; compile the kernels again with flamia-compile)");
  m.version = static_cast<int>(version);

  FLAMIA_RETURN_IF_ERROR(require(root, "", "target", v));
  std::string target;
  FLAMIA_RETURN_IF_ERROR(readString(*v, "target", target));
  if (!parseTarget(target, m.target))
    return fail(*v, "target",
                "bad target '" + target +
                    "' (expected sm_<major><minor>[a|f], e.g. sm_90a, "
                    "sm_100a)");

  FLAMIA_RETURN_IF_ERROR(require(root, "", "head_dim", v));
  FLAMIA_RETURN_IF_ERROR(readInt(*v, "head_dim", 1, 1024, m.headDim));
  if (m.headDim % 32 != 0)
    return fail(*v, "head_dim",
                "head_dim " + std::to_string(m.headDim) +
                    " is not a multiple of 32 (the MX channel block)");

  FLAMIA_RETURN_IF_ERROR(require(root, "", "causal", v));
  FLAMIA_RETURN_IF_ERROR(readBool(*v, "causal", m.causal));

  // Optional: the head counts the kernels were compiled for (the buffers'
  // shapes say the same), and whether documents come from cu_seqlens.
  if ((v = root.find("heads")))
    FLAMIA_RETURN_IF_ERROR(readInt(*v, "heads", 1, 1 << 16, m.heads));
  if ((v = root.find("kv_heads")))
    FLAMIA_RETURN_IF_ERROR(readInt(*v, "kv_heads", 1, 1 << 16, m.kvHeads));
  if (m.heads && m.kvHeads && m.heads % m.kvHeads != 0)
    return fail(*v, "kv_heads",
                "heads (" + std::to_string(m.heads) +
                    ") must be a multiple of kv_heads (" +
                    std::to_string(m.kvHeads) + ")");
  if ((v = root.find("varlen")))
    FLAMIA_RETURN_IF_ERROR(readBool(*v, "varlen", m.varlen));

  if ((v = root.find("softmax_scale")) && !v->isNull()) {
    if (!v->isNumber())
      return fail(*v, "softmax_scale",
                  std::string("expected a number or null, found ") +
                      v->kindName());
    float f = static_cast<float>(v->number);
    if (!(f > 0.0f) || !std::isfinite(f))
      return fail(*v, "softmax_scale",
                  "must be a positive finite float32 (or null for "
                  "1/sqrt(D))");
    m.hasSoftmaxScale = true;
    m.softmaxScale = f;
  }

  if ((v = root.find("recipe")))
    FLAMIA_RETURN_IF_ERROR(readRecipe(*v, m));
  if ((v = root.find("schedule")))
    FLAMIA_RETURN_IF_ERROR(readSchedule(*v, m));
  scheduleAvailable_ = m.schedule.present;
  if (m.schedule.present && !m.recipe.kind.empty() &&
      m.schedule.safeBlock != m.recipe.safeBlock)
    return fail(*root.find("schedule"), "schedule.safe_block",
                "schedule safe_block " + std::to_string(m.schedule.safeBlock) +
                    " differs from recipe safe_block " +
                    std::to_string(m.recipe.safeBlock));

  FLAMIA_RETURN_IF_ERROR(require(root, "", "buffers", v));
  FLAMIA_RETURN_IF_ERROR(expectKind(*v, "buffers", JsonValue::Kind::Array));
  if (v->array.empty())
    return fail(*v, "buffers", "no buffers");
  for (size_t i = 0; i < v->array.size(); ++i) {
    ManifestBuffer b;
    std::string path = "buffers[" + std::to_string(i) + "]";
    FLAMIA_RETURN_IF_ERROR(readBuffer(v->array[i], path, b, m));
    if (m.findBuffer(b.name) >= 0)
      return fail(v->array[i], path, "duplicate buffer name '" + b.name + "'");
    m.buffers.push_back(std::move(b));
  }

  FLAMIA_RETURN_IF_ERROR(require(root, "", "kernels", v));
  FLAMIA_RETURN_IF_ERROR(expectKind(*v, "kernels", JsonValue::Kind::Array));
  if (v->array.empty())
    return fail(*v, "kernels", "no kernels");
  for (size_t i = 0; i < v->array.size(); ++i) {
    ManifestKernel k;
    FLAMIA_RETURN_IF_ERROR(
        readKernel(v->array[i], "kernels[" + std::to_string(i) + "]", k, m));
    m.kernels.push_back(std::move(k));
  }
  return Status::success();
}

Status ManifestReader::readRecipe(const JsonValue &v, Manifest &m) {
  FLAMIA_RETURN_IF_ERROR(expectKind(v, "recipe", JsonValue::Kind::Object));
  FLAMIA_RETURN_IF_ERROR(
      checkKeys(v, "recipe", {"kind", "safe_block", "strict"}));
  const JsonValue *x;
  FLAMIA_RETURN_IF_ERROR(require(v, "recipe", "kind", x));
  FLAMIA_RETURN_IF_ERROR(readString(*x, "recipe.kind", m.recipe.kind));
  if (!numerics::findRecipeKind(m.recipe.kind))
    return fail(*x, "recipe.kind",
                "unknown recipe '" + m.recipe.kind + "' (expected one of: " +
                    numerics::recipeKindNames() + ")");
  if ((x = v.find("safe_block"))) {
    FLAMIA_RETURN_IF_ERROR(
        readInt(*x, "recipe.safe_block", 32, 1 << 20, m.recipe.safeBlock));
    if (m.recipe.safeBlock % 32 != 0)
      return fail(*x, "recipe.safe_block",
                  std::to_string(m.recipe.safeBlock) +
                      " is not a multiple of 32");
  }
  if ((x = v.find("strict")))
    FLAMIA_RETURN_IF_ERROR(readBool(*x, "recipe.strict", m.recipe.strict));
  return Status::success();
}

Status ManifestReader::readSchedule(const JsonValue &v, Manifest &m) {
  FLAMIA_RETURN_IF_ERROR(expectKind(v, "schedule", JsonValue::Kind::Object));
  FLAMIA_RETURN_IF_ERROR(
      checkKeys(v, "schedule",
                {"block_m", "block_n", "safe_block", "cost_model", "order",
                 "l2_section_bytes"}));
  ManifestSchedule &s = m.schedule;
  s.present = true;
  const JsonValue *x;
  int64_t n;
  FLAMIA_RETURN_IF_ERROR(require(v, "schedule", "block_m", x));
  FLAMIA_RETURN_IF_ERROR(readInt(*x, "schedule.block_m", 1, 1 << 20, n));
  s.blockM = static_cast<int32_t>(n);
  FLAMIA_RETURN_IF_ERROR(require(v, "schedule", "block_n", x));
  FLAMIA_RETURN_IF_ERROR(readInt(*x, "schedule.block_n", 1, 1 << 20, n));
  s.blockN = static_cast<int32_t>(n);
  FLAMIA_RETURN_IF_ERROR(require(v, "schedule", "safe_block", x));
  FLAMIA_RETURN_IF_ERROR(readInt(*x, "schedule.safe_block", 1, 1 << 20, n));
  s.safeBlock = static_cast<int32_t>(n);
  FLAMIA_RETURN_IF_ERROR(require(v, "schedule", "cost_model", x));
  if (x->isString()) {
    ScheduleTarget target;
    std::string error;
    if (!parseScheduleTarget(x->string, target, error))
      return fail(*x, "schedule.cost_model", error);
    s.costModel = x->string;
    s.weights = costWeightsForTarget(target);
  } else if (x->isObject()) {
    FLAMIA_RETURN_IF_ERROR(checkKeys(
        *x, "schedule.cost_model", {"item_overhead", "fp8_tile", "bf16_tile"}));
    s.costModel = "custom";
    struct Field {
      const char *key;
      double *dst;
      bool positive;
    } fields[] = {{"item_overhead", &s.weights.itemOverhead, false},
                  {"fp8_tile", &s.weights.fp8Tile, true},
                  {"bf16_tile", &s.weights.bf16Tile, true}};
    for (const Field &f : fields) {
      const JsonValue *w;
      std::string path = std::string("schedule.cost_model.") + f.key;
      FLAMIA_RETURN_IF_ERROR(require(*x, "schedule.cost_model", f.key, w));
      if (!w->isNumber())
        return fail(*w, path, "expected a number");
      if (w->number < 0 || (f.positive && w->number == 0))
        return fail(*w, path,
                    f.positive ? "must be positive" : "must not be negative");
      *f.dst = w->number;
    }
  } else {
    return fail(*x, "schedule.cost_model",
                std::string("expected a preset name (sm_90a, sm_100a) or an "
                            "object of weights, found ") +
                    x->kindName());
  }
  if ((x = v.find("order"))) {
    std::string name, error;
    FLAMIA_RETURN_IF_ERROR(readString(*x, "schedule.order", name));
    if (!parseKernelScheduleOrder(name, s.order, error))
      return fail(*x, "schedule.order", error);
  }
  if ((x = v.find("l2_section_bytes"))) {
    if (s.order != ScheduleOrder::L2Sections)
      return fail(*x, "schedule.l2_section_bytes",
                  "only allowed with \"order\": \"l2-sections\"");
    FLAMIA_RETURN_IF_ERROR(readInt(*x, "schedule.l2_section_bytes", 1,
                                   int64_t{1} << 40, s.l2SectionBytes));
  }
  // The schedule library's own checks (tile sizes, safe block, head dim).
  VarlenScheduleParams params;
  params.numQHeads = 1;
  params.numKVHeads = 1;
  params.headDim = static_cast<int32_t>(m.headDim);
  params.causal = m.causal;
  params.blockM = s.blockM;
  params.blockN = s.blockN;
  params.safeBlock = s.safeBlock;
  params.weights = s.weights;
  std::string error;
  if (!validateScheduleParams(params, error))
    return fail(v, "schedule", error);
  return Status::success();
}

Status ManifestReader::readBuffer(const JsonValue &v, const std::string &path,
                                  ManifestBuffer &b, const Manifest &m) {
  FLAMIA_RETURN_IF_ERROR(expectKind(v, path, JsonValue::Kind::Object));
  FLAMIA_RETURN_IF_ERROR(
      checkKeys(v, path, {"name", "role", "dtype", "shape", "holds"}));
  const JsonValue *x;
  FLAMIA_RETURN_IF_ERROR(require(v, path, "name", x));
  FLAMIA_RETURN_IF_ERROR(readString(*x, path + ".name", b.name));
  if (!isIdentifier(b.name))
    return fail(*x, path + ".name",
                "buffer name '" + b.name +
                    "' is not an identifier ([A-Za-z_][A-Za-z0-9_]*)");
  std::string role;
  FLAMIA_RETURN_IF_ERROR(require(v, path, "role", x));
  FLAMIA_RETURN_IF_ERROR(readString(*x, path + ".role", role));
  if (role == "input")
    b.role = BufferRole::Input;
  else if (role == "output")
    b.role = BufferRole::Output;
  else if (role == "workspace")
    b.role = BufferRole::Workspace;
  else if (role == "schedule")
    b.role = BufferRole::Schedule;
  else
    return fail(*x, path + ".role",
                "unknown role '" + role +
                    "' (expected one of: input, output, workspace, schedule)");
  const JsonValue *roleValue = x;
  std::string dtype;
  FLAMIA_RETURN_IF_ERROR(require(v, path, "dtype", x));
  FLAMIA_RETURN_IF_ERROR(readString(*x, path + ".dtype", dtype));
  if (!dtypeFromName(dtype, b.dtype))
    return fail(*x, path + ".dtype",
                "unknown dtype '" + dtype +
                    "' (expected one of: bf16, f32, i32, u8)");
  const JsonValue *dtypeValue = x;
  FLAMIA_RETURN_IF_ERROR(require(v, path, "shape", x));
  FLAMIA_RETURN_IF_ERROR(
      readExpressionArray(*x, path + ".shape", 1, 8, b.shape));

  if (const JsonValue *holds = v.find("holds")) {
    if (b.role != BufferRole::Workspace)
      return fail(*holds, path + ".holds",
                  std::string(bufferRoleName(b.role)) + " buffer '" + b.name +
                      "' has \"holds\"; only workspace buffers say what "
                      "they hold");
    FLAMIA_RETURN_IF_ERROR(readHolds(*holds, path + ".holds", b));
  } else if (b.role == BufferRole::Workspace) {
    return fail(v, path,
                "workspace buffer '" + b.name +
                    "' has no \"holds\" (what it holds: {\"part\": "
                    "\"scratch\"} or a quantized copy; manifest version " +
                    std::to_string(kManifestVersion) + ")");
  }

  if (b.role == BufferRole::Input || b.role == BufferRole::Output) {
    // Callers' tensors are described by the arguments alone.
    for (size_t i = 0; i < b.shape.size(); ++i)
      for (Symbol s : {Symbol::NB, Symbol::NumItems, Symbol::NumSms,
                       Symbol::NumKvItems})
        if (b.shape[i].uses(s))
          return fail(x->array[i], path + ".shape[" + std::to_string(i) + "]",
                      std::string(bufferRoleName(b.role)) + " buffer '" +
                          b.name + "' uses " + symbolName(s) +
                          "; inputs and outputs may use T, Hq, Hkv, D and "
                          "NUM_DOCS only");
    const ArgumentBinding *binding = nullptr;
    std::string names;
    for (const ArgumentBinding &a : argumentBindings()) {
      if (a.role == b.role)
        names += (names.empty() ? "" : ", ") + std::string(a.name);
      if (b.name == a.name)
        binding = &a;
    }
    if (!binding || binding->role != b.role)
      return fail(*roleValue, path,
                  std::string(bufferRoleName(b.role)) + " buffer '" + b.name +
                      "' is not an argument of flamia_attention_args (" +
                      bufferRoleName(b.role) + "s: " + names + ")");
    if (binding->dtype != b.dtype &&
        !(binding->orF32 && b.dtype == DType::F32))
      return fail(*dtypeValue, path + ".dtype",
                  std::string("buffer '") + b.name + "' must be " +
                      dtypeName(binding->dtype) +
                      (binding->orF32 ? " or f32" : "") +
                      " (flamia_attention_args), "
                      "not " +
                      dtypeName(b.dtype));
  }
  if (b.role == BufferRole::Schedule) {
    if (b.name != kBlockInfoBuffer && b.name != kItemsBuffer &&
        b.name != kCounterBuffer && b.name != kKvItemsBuffer)
      return fail(*roleValue, path,
                  "unknown schedule buffer '" + b.name +
                      "' (the runtime fills block_info, items, kv_items, "
                      "counter)");
    if (b.dtype != DType::I32)
      return fail(*dtypeValue, path + ".dtype",
                  "schedule buffer '" + b.name + "' must be i32");
    if ((b.name == kItemsBuffer || b.name == kKvItemsBuffer) &&
        !m.schedule.present)
      return fail(*roleValue, path,
                  "schedule buffer '" + b.name +
                      "' needs the manifest's \"schedule\" "
                      "section (block sizes and cost model)");
  }
  return Status::success();
}

Status ManifestReader::readHolds(const JsonValue &v, const std::string &path,
                                 ManifestBuffer &b) {
  FLAMIA_RETURN_IF_ERROR(expectKind(v, path, JsonValue::Kind::Object));
  BufferContents &h = b.holds;
  const JsonValue *x;
  FLAMIA_RETURN_IF_ERROR(require(v, path, "part", x));
  FLAMIA_RETURN_IF_ERROR(readEnum(
      *x, path + ".part", "part", heldPartName,
      {HeldPart::Payload, HeldPart::Scales, HeldPart::Dequantized,
       HeldPart::ScaleTiles, HeldPart::Scratch, HeldPart::Delta},
      h.part));
  if (h.part == HeldPart::Scratch)
    return checkKeys(v, path, {"part"});
  const bool tiles = h.part == HeldPart::ScaleTiles;
  if (tiles)
    FLAMIA_RETURN_IF_ERROR(checkKeys(
        v, path, {"part", "tensor", "layout", "format", "tile_rows"}));
  else
    FLAMIA_RETURN_IF_ERROR(
        checkKeys(v, path, {"part", "tensor", "layout", "format"}));
  FLAMIA_RETURN_IF_ERROR(require(v, path, "tensor", x));
  FLAMIA_RETURN_IF_ERROR(readEnum(*x, path + ".tensor", "tensor",
                                  heldTensorName,
                                  {HeldTensor::Q, HeldTensor::K, HeldTensor::V,
                                   HeldTensor::GradO},
                                  h.tensor));
  if (h.part == HeldPart::Delta && h.tensor != HeldTensor::GradO)
    return fail(*x, path + ".tensor",
                std::string("workspace buffer '") + b.name +
                    "' holds delta of tensor " + heldTensorName(h.tensor) +
                    "; delta (rowsum(dO * O)) is of tensor grad_o");
  FLAMIA_RETURN_IF_ERROR(require(v, path, "layout", x));
  FLAMIA_RETURN_IF_ERROR(
      readEnum(*x, path + ".layout", "layout", heldLayoutName,
               {HeldLayout::PerToken, HeldLayout::TokenBlock}, h.layout));
  if (h.part == HeldPart::Delta && h.layout != HeldLayout::PerToken)
    return fail(*x, path + ".layout",
                std::string("workspace buffer '") + b.name +
                    "' holds delta in layout " + heldLayoutName(h.layout) +
                    "; delta has one value per token and head (per_token)");
  FLAMIA_RETURN_IF_ERROR(require(v, path, "format", x));
  FLAMIA_RETURN_IF_ERROR(
      readEnum(*x, path + ".format", "format", heldFormatName,
               {HeldFormat::E4M3, HeldFormat::E8M0, HeldFormat::BF16,
                HeldFormat::F32, HeldFormat::E2M1},
               h.format));
  // The formats each part has (the recipes the reader knows): MXFP8 copies
  // (e4m3 payload, e8m0 scales) and NVFP4 per-token copies (e2m1 payload,
  // e4m3 scales).
  std::vector<HeldFormat> formats;
  switch (h.part) {
  case HeldPart::Payload:
    formats = {HeldFormat::E4M3, HeldFormat::E2M1};
    break;
  case HeldPart::Scales:
    formats = {HeldFormat::E8M0, HeldFormat::E4M3};
    break;
  case HeldPart::ScaleTiles:
    formats = {HeldFormat::E8M0, HeldFormat::E4M3};
    break;
  case HeldPart::Dequantized:
    formats = {HeldFormat::BF16};
    break;
  case HeldPart::Delta:
    formats = {HeldFormat::F32};
    break;
  case HeldPart::Scratch:
    break;
  }
  if (std::find(formats.begin(), formats.end(), h.format) == formats.end()) {
    std::string allowed;
    for (HeldFormat f : formats)
      allowed += std::string(allowed.empty() ? "" : " or ") + heldFormatName(f);
    return fail(*x, path + ".format",
                std::string("workspace buffer '") + b.name + "' holds " +
                    heldPartName(h.part) + " in format " +
                    heldFormatName(h.format) + "; " + heldPartName(h.part) +
                    " are " + allowed);
  }
  const bool nvfp4 =
      (h.part == HeldPart::Payload && h.format == HeldFormat::E2M1) ||
      ((h.part == HeldPart::Scales || h.part == HeldPart::ScaleTiles) &&
       h.format == HeldFormat::E4M3);
  if (nvfp4 && h.layout != HeldLayout::PerToken)
    return fail(*x, path + ".format",
                std::string("workspace buffer '") + b.name + "' holds NVFP4 " +
                    heldPartName(h.part) + " (" + heldFormatName(h.format) +
                    ") in layout " + heldLayoutName(h.layout) +
                    "; NVFP4 copies are per_token (1x16 blocks)");
  DType dtype = h.part == HeldPart::Dequantized ? DType::BF16
                : h.part == HeldPart::Delta       ? DType::F32
                                                  : DType::U8;
  if (b.dtype != dtype)
    return fail(v, path,
                std::string("workspace buffer '") + b.name + "' holds " +
                    heldFormatName(h.format) + " " + heldPartName(h.part) +
                    "; its dtype must be " + dtypeName(dtype) + ", not " +
                    dtypeName(b.dtype));
  if (tiles) {
    FLAMIA_RETURN_IF_ERROR(require(v, path, "tile_rows", x));
    FLAMIA_RETURN_IF_ERROR(
        readEnum(*x, path + ".tile_rows", "tile rows", tileRowsName,
                 {TileRows::Tokens, TileRows::Channels}, h.tileRows));
    if (nvfp4 && h.tileRows != TileRows::Tokens)
      return fail(*x, path + ".tile_rows",
                  std::string("workspace buffer '") + b.name +
                      "' holds NVFP4 scale tiles with rows " +
                      tileRowsName(h.tileRows) +
                      "; an NVFP4 copy is per token, its tile rows are tokens");
  }
  return Status::success();
}

Status ManifestReader::readKernel(const JsonValue &v, const std::string &path,
                                  ManifestKernel &k, const Manifest &m) {
  FLAMIA_RETURN_IF_ERROR(expectKind(v, path, JsonValue::Kind::Object));
  FLAMIA_RETURN_IF_ERROR(checkKeys(v, path,
                                   {"name", "cubin", "ptx", "grid", "block",
                                    "cluster", "smem_bytes", "tmem_columns",
                                    "registers", "spill_bytes", "launch",
                                    "phase", "params"}));
  const JsonValue *x;
  FLAMIA_RETURN_IF_ERROR(require(v, path, "name", x));
  FLAMIA_RETURN_IF_ERROR(readString(*x, path + ".name", k.name));
  if (!isIdentifier(k.name))
    return fail(*x, path + ".name",
                "kernel name '" + k.name + "' is not a symbol name");
  FLAMIA_RETURN_IF_ERROR(require(v, path, "cubin", x));
  if (x->isNull())
    return fail(*x, path + ".cubin",
                "kernel '" + k.name +
                    "' has no cubin (compiled with flamia-compile --ptx-only); "
                    "compile again with CUDA's ptxas available");
  FLAMIA_RETURN_IF_ERROR(readString(*x, path + ".cubin", k.cubin));
  if (k.cubin.empty() || k.cubin[0] == '/' ||
      k.cubin.find("..") != std::string::npos)
    return fail(*x, path + ".cubin",
                "cubin '" + k.cubin +
                    "' must be a relative path inside the artifact directory "
                    "(no '..')");
  if ((x = v.find("ptx")) && !x->isNull()) // informational; null = none
    FLAMIA_RETURN_IF_ERROR(readString(*x, path + ".ptx", k.ptx));
  if ((x = v.find("launch"))) // informational
    FLAMIA_RETURN_IF_ERROR(readString(*x, path + ".launch", k.launch));
  if ((x = v.find("phase"))) // absent: forward (manifests before the backward)
    FLAMIA_RETURN_IF_ERROR(readEnum(*x, path + ".phase", "kernel phase",
                                    kernelPhaseName,
                                    {KernelPhase::Forward, KernelPhase::Backward},
                                    k.phase));

  FLAMIA_RETURN_IF_ERROR(require(v, path, "grid", x));
  std::vector<Expression> grid;
  FLAMIA_RETURN_IF_ERROR(readExpressionArray(*x, path + ".grid", 3, 3, grid));
  for (int i = 0; i < 3; ++i)
    k.grid[i] = grid[i];

  FLAMIA_RETURN_IF_ERROR(require(v, path, "block", x));
  FLAMIA_RETURN_IF_ERROR(readDims3(*x, path + ".block", k.block, 1024));
  if (k.block[2] > 64)
    return fail(*x, path + ".block",
                "block z " + std::to_string(k.block[2]) + " exceeds 64");
  if (k.threadsPerBlock() > 1024)
    return fail(*x, path + ".block",
                std::to_string(k.threadsPerBlock()) +
                    " threads per block exceed 1024");
  if ((x = v.find("cluster"))) {
    FLAMIA_RETURN_IF_ERROR(readDims3(*x, path + ".cluster", k.cluster, 16));
    if (k.clusterSize() > 16)
      return fail(*x, path + ".cluster",
                  "cluster of " + std::to_string(k.clusterSize()) +
                      " CTAs exceeds 16");
  }
  if ((x = v.find("smem_bytes")))
    FLAMIA_RETURN_IF_ERROR(
        readInt(*x, path + ".smem_bytes", 0, INT32_MAX, k.smemBytes));
  if ((x = v.find("registers")))
    FLAMIA_RETURN_IF_ERROR(
        readInt(*x, path + ".registers", 0, 65536, k.registers));
  if ((x = v.find("spill_bytes")))
    FLAMIA_RETURN_IF_ERROR(
        readInt(*x, path + ".spill_bytes", 0, INT32_MAX, k.spillBytes));
  if ((x = v.find("tmem_columns")))
    FLAMIA_RETURN_IF_ERROR(
        readInt(*x, path + ".tmem_columns", 0, 512, k.tmemColumns));

  FLAMIA_RETURN_IF_ERROR(require(v, path, "params", x));
  FLAMIA_RETURN_IF_ERROR(
      expectKind(*x, path + ".params", JsonValue::Kind::Array));
  for (size_t i = 0; i < x->array.size(); ++i) {
    ManifestParam p;
    std::string ppath = path + ".params[" + std::to_string(i) + "]";
    FLAMIA_RETURN_IF_ERROR(readParam(x->array[i], ppath, p, m));
    for (const ManifestParam &q : k.params)
      if (q.name == p.name)
        return fail(x->array[i], ppath,
                    "duplicate parameter name '" + p.name + "' in kernel '" +
                        k.name + "'");
    k.params.push_back(std::move(p));
  }
  return Status::success();
}

Status ManifestReader::readParam(const JsonValue &v, const std::string &path,
                                 ManifestParam &p, const Manifest &m) {
  FLAMIA_RETURN_IF_ERROR(expectKind(v, path, JsonValue::Kind::Object));
  const JsonValue *x;
  FLAMIA_RETURN_IF_ERROR(require(v, path, "name", x));
  FLAMIA_RETURN_IF_ERROR(readString(*x, path + ".name", p.name));
  if (p.name.empty())
    return fail(*x, path + ".name", "empty parameter name");
  FLAMIA_RETURN_IF_ERROR(require(v, path, "kind", x));
  std::string kind;
  FLAMIA_RETURN_IF_ERROR(readString(*x, path + ".kind", kind));
  if (kind == "ptr")
    p.kind = ParamKind::Ptr;
  else if (kind == "i32")
    p.kind = ParamKind::I32;
  else if (kind == "f32")
    p.kind = ParamKind::F32;
  else if (kind == "tensormap")
    p.kind = ParamKind::TensorMap;
  else
    return fail(*x, path + ".kind",
                "unknown parameter kind '" + kind +
                    "' (expected one of: ptr, i32, f32, tensormap)");

  auto readBufferRef = [&]() -> Status {
    const JsonValue *b;
    FLAMIA_RETURN_IF_ERROR(require(v, path, "buffer", b));
    std::string name;
    FLAMIA_RETURN_IF_ERROR(readString(*b, path + ".buffer", name));
    p.buffer = m.findBuffer(name);
    if (p.buffer < 0)
      return fail(*b, path + ".buffer",
                  "parameter '" + p.name + "' names buffer '" + name +
                      "', which is not in \"buffers\"");
    return Status::success();
  };

  switch (p.kind) {
  case ParamKind::Ptr:
    FLAMIA_RETURN_IF_ERROR(checkKeys(v, path, {"name", "kind", "buffer"}));
    return readBufferRef();
  case ParamKind::I32:
  case ParamKind::F32: {
    FLAMIA_RETURN_IF_ERROR(checkKeys(v, path, {"name", "kind", "value"}));
    FLAMIA_RETURN_IF_ERROR(require(v, path, "value", x));
    if (x->isString() &&
        (x->string == "softmax_scale" || x->string == "softmax_scale_log2")) {
      if (p.kind == ParamKind::I32)
        return fail(*x, path + ".value",
                    "'" + x->string + "' is a float; declare parameter '" +
                        p.name + "' as f32");
      p.named = x->string == "softmax_scale" ? NamedValue::SoftmaxScale
                                             : NamedValue::SoftmaxScaleLog2;
      return Status::success();
    }
    if (p.kind == ParamKind::F32 && x->isNumber() && !x->isInteger) {
      p.named = NamedValue::FloatLiteral;
      p.floatLiteral = x->number;
      return Status::success();
    }
    if (x->isNumber() && x->isInteger) {
      p.value = Expression::constant(x->integer);
      if (p.kind == ParamKind::I32 &&
          (x->integer < INT32_MIN || x->integer > INT32_MAX))
        return fail(*x, path + ".value",
                    std::to_string(x->integer) + " does not fit in i32");
      return Status::success();
    }
    if (!x->isString())
      return fail(*x, path + ".value",
                  std::string("expected an expression, a named value "
                              "(softmax_scale, softmax_scale_log2) or a "
                              "number, found ") +
                      x->kindName());
    Status s = Expression::parse(x->string, p.value);
    if (!s.ok())
      return fail(*x, path + ".value", s.message);
    FLAMIA_RETURN_IF_ERROR(checkScheduleSymbols(*x, path + ".value", p.value));
    return Status::success();
  }
  case ParamKind::TensorMap:
    FLAMIA_RETURN_IF_ERROR(checkKeys(v, path,
                                     {"name", "kind", "buffer", "dtype", "dims",
                                      "box", "swizzle", "l2_promotion"}));
    FLAMIA_RETURN_IF_ERROR(readBufferRef());
    return readTensorMap(v, path, p, m);
  }
  return Status::success();
}

Status ManifestReader::readTensorMap(const JsonValue &v,
                                     const std::string &path, ManifestParam &p,
                                     const Manifest &m) {
  TensorMapSpec &t = p.tensorMap;
  const JsonValue *x;
  std::string dtype;
  FLAMIA_RETURN_IF_ERROR(require(v, path, "dtype", x));
  FLAMIA_RETURN_IF_ERROR(readString(*x, path + ".dtype", dtype));
  if (!dtypeFromName(dtype, t.dtype))
    return fail(*x, path + ".dtype",
                "unknown dtype '" + dtype +
                    "' (expected one of: bf16, f32, i32, u8)");
  const ManifestBuffer &buffer = m.buffers[p.buffer];
  if (t.dtype != buffer.dtype)
    return fail(*x, path + ".dtype",
                std::string("tensor map dtype ") + dtypeName(t.dtype) +
                    " differs from buffer '" + buffer.name + "' dtype " +
                    dtypeName(buffer.dtype));
  std::vector<Expression> dims, box;
  FLAMIA_RETURN_IF_ERROR(require(v, path, "dims", x));
  FLAMIA_RETURN_IF_ERROR(readExpressionArray(*x, path + ".dims", 2, 2, dims));
  t.rows = dims[0];
  t.cols = dims[1];
  FLAMIA_RETURN_IF_ERROR(require(v, path, "box", x));
  const JsonValue *boxValue = x;
  FLAMIA_RETURN_IF_ERROR(readExpressionArray(*x, path + ".box", 2, 2, box));
  t.boxRows = box[0];
  t.boxCols = box[1];
  int64_t swizzle;
  FLAMIA_RETURN_IF_ERROR(require(v, path, "swizzle", x));
  FLAMIA_RETURN_IF_ERROR(readInt(*x, path + ".swizzle", 0, 128, swizzle));
  if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128)
    return fail(*x, path + ".swizzle",
                "swizzle " + std::to_string(swizzle) +
                    " is not one of 0, 32, 64, 128 (bytes)");
  t.swizzle = static_cast<int>(swizzle);
  if ((x = v.find("l2_promotion"))) {
    int64_t l2;
    FLAMIA_RETURN_IF_ERROR(readInt(*x, path + ".l2_promotion", 0, 256, l2));
    if (l2 != 0 && l2 != 64 && l2 != 128 && l2 != 256)
      return fail(*x, path + ".l2_promotion",
                  "l2_promotion " + std::to_string(l2) +
                      " is not one of 0, 64, 128, 256 (bytes)");
    t.l2Promotion = static_cast<int>(l2);
  }
  // The box constraints that do not depend on shapes, checked now when the
  // box is constant (TensorMap.cpp checks them again on the values).
  int64_t boxRows, boxCols;
  const int64_t elem = dtypeBytes(t.dtype);
  if (t.boxRows.constantValue(boxRows) && (boxRows < 1 || boxRows > 256))
    return fail(boxValue->array[0], path + ".box[0]",
                "box rows " + std::to_string(boxRows) + " outside [1, 256]");
  if (t.boxCols.constantValue(boxCols)) {
    if (boxCols < 1 || boxCols > 256)
      return fail(boxValue->array[1], path + ".box[1]",
                  "box cols " + std::to_string(boxCols) + " outside [1, 256]");
    if ((boxCols * elem) % 16 != 0)
      return fail(boxValue->array[1], path + ".box[1]",
                  "box row of " + std::to_string(boxCols) + " x " +
                      std::to_string(elem) +
                      " bytes = " + std::to_string(boxCols * elem) +
                      " bytes is not a multiple of 16");
    if (t.swizzle != 0 && boxCols * elem > t.swizzle)
      return fail(boxValue->array[1], path + ".box[1]",
                  "box row of " + std::to_string(boxCols * elem) +
                      " bytes exceeds the " + std::to_string(t.swizzle) +
                      "-byte swizzle span");
  }
  return Status::success();
}

} // namespace

Status parseManifest(const std::string &text, Manifest &out,
                     const std::string &fileName) {
  JsonValue root;
  Status s = parseJson(text, root);
  if (!s.ok())
    return invalidManifest(fileName + ": " + s.message);
  ManifestReader reader(fileName);
  return reader.read(root, out);
}

static bool readWholeFile(const std::string &path, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return !in.bad();
}

Status loadManifest(const std::string &artifactDir, Manifest &out) {
  struct stat st;
  if (artifactDir.empty())
    return invalidArgument("empty artifact directory");
  if (stat(artifactDir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Status::error(ErrorCode::InvalidArtifact,
                         "artifact directory '" + artifactDir +
                             "' does not exist or is not a directory");
  std::string path = artifactDir + "/manifest.json";
  std::string text;
  if (!readWholeFile(path, text))
    return Status::error(ErrorCode::InvalidArtifact,
                         "cannot read '" + path + "'");
  FLAMIA_RETURN_IF_ERROR(parseManifest(text, out, path));
  for (const ManifestKernel &k : out.kernels) {
    std::string cubin = artifactDir + "/" + k.cubin;
    if (stat(cubin.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
      return Status::error(ErrorCode::InvalidArtifact,
                           "missing cubin '" + k.cubin + "' of kernel '" +
                               k.name + "' (looked for " + cubin + ")");
    if (st.st_size == 0)
      return Status::error(ErrorCode::InvalidArtifact,
                           "cubin '" + cubin + "' of kernel '" + k.name +
                               "' is empty");
  }
  return Status::success();
}

} // namespace flamia::runtime
