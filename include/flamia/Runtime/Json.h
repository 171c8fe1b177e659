//===- Json.h - A small strict JSON parser ----------------------*- C++ -*-===//
//
// RFC 8259 JSON, strictly: no comments, no trailing commas, no single quotes,
// no NaN/Infinity, no leading zeros or '+' signs, no control characters in
// strings, no duplicate object keys, no content after the top-level value,
// nesting at most kMaxJsonDepth deep. \uXXXX escapes (surrogate pairs
// included) become UTF-8. Every value remembers its line and column (1-based;
// columns count bytes), so that callers can point at the offending value;
// syntax errors carry "line L, column C" too.
//
// Numbers are kept as double; a number written without fraction or exponent
// that fits int64 is also available exactly as `integer` (isInteger).
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_RUNTIME_JSON_H
#define FLAMIA_RUNTIME_JSON_H

#include "flamia/Runtime/Status.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace flamia::runtime {

constexpr int kMaxJsonDepth = 64;

class JsonValue {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  Kind kind = Kind::Null;
  int line = 0;
  int column = 0;
  bool boolean = false;
  double number = 0.0;
  bool isInteger = false; // written as an integer literal that fits int64
  int64_t integer = 0;
  std::string string;
  std::vector<JsonValue> array;
  /// Members in source order (keys are unique).
  std::vector<std::pair<std::string, JsonValue>> object;

  bool isNull() const { return kind == Kind::Null; }
  bool isBool() const { return kind == Kind::Bool; }
  bool isNumber() const { return kind == Kind::Number; }
  bool isString() const { return kind == Kind::String; }
  bool isArray() const { return kind == Kind::Array; }
  bool isObject() const { return kind == Kind::Object; }

  /// The member `key` of an object, or null if absent (or not an object).
  const JsonValue *find(const std::string &key) const;

  /// "null", "boolean", "number", "string", "array", "object".
  static const char *kindName(Kind kind);
  const char *kindName() const { return kindName(kind); }
};

/// Parses `text` (UTF-8). On failure returns InvalidManifest with
/// "line L, column C: <what is wrong>".
Status parseJson(const std::string &text, JsonValue &out);

} // namespace flamia::runtime

#endif // FLAMIA_RUNTIME_JSON_H
