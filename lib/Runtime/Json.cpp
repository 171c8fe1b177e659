//===- Json.cpp - A small strict JSON parser ------------------------------===//

#include "flamia/Runtime/Json.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <system_error>

namespace flamia::runtime {

const JsonValue *JsonValue::find(const std::string &key) const {
  if (kind != Kind::Object)
    return nullptr;
  for (const auto &member : object)
    if (member.first == key)
      return &member.second;
  return nullptr;
}

const char *JsonValue::kindName(Kind kind) {
  switch (kind) {
  case Kind::Null:
    return "null";
  case Kind::Bool:
    return "boolean";
  case Kind::Number:
    return "number";
  case Kind::String:
    return "string";
  case Kind::Array:
    return "array";
  case Kind::Object:
    return "object";
  }
  return "?";
}

namespace {

class Parser {
public:
  explicit Parser(const std::string &text) : text_(text) {}

  Status parseDocument(JsonValue &out) {
    skipWhitespace();
    FLAMIA_RETURN_IF_ERROR(parseValue(out, 0));
    skipWhitespace();
    if (pos_ < text_.size())
      return fail("unexpected " + describeChar() +
                  " after the top-level value");
    return Status::success();
  }

private:
  const std::string &text_;
  size_t pos_ = 0;
  int line_ = 1;
  size_t lineStart_ = 0;

  int column() const { return static_cast<int>(pos_ - lineStart_) + 1; }

  Status failAt(int line, int column, const std::string &message) const {
    return invalidManifest("line " + std::to_string(line) + ", column " +
                           std::to_string(column) + ": " + message);
  }
  Status fail(const std::string &message) const {
    return failAt(line_, column(), message);
  }

  std::string describeChar() const {
    if (pos_ >= text_.size())
      return "end of input";
    unsigned char c = static_cast<unsigned char>(text_[pos_]);
    if (c >= 0x20 && c < 0x7F)
      return std::string("'") + static_cast<char>(c) + "'";
    char buf[16];
    snprintf(buf, sizeof buf, "byte 0x%02X", c);
    return buf;
  }

  void skipWhitespace() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == '\n') {
        ++pos_;
        ++line_;
        lineStart_ = pos_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else {
        break;
      }
    }
  }

  bool consumeLiteral(const char *literal) {
    size_t n = strlen(literal);
    if (text_.compare(pos_, n, literal) != 0)
      return false;
    pos_ += n;
    return true;
  }

  Status parseValue(JsonValue &out, int depth) {
    out = JsonValue();
    out.line = line_;
    out.column = column();
    if (pos_ >= text_.size())
      return fail("expected a value, found end of input");
    char c = text_[pos_];
    switch (c) {
    case '{':
      return parseObject(out, depth);
    case '[':
      return parseArray(out, depth);
    case '"':
      out.kind = JsonValue::Kind::String;
      return parseString(out.string);
    case 't':
      if (consumeLiteral("true")) {
        out.kind = JsonValue::Kind::Bool;
        out.boolean = true;
        return Status::success();
      }
      break;
    case 'f':
      if (consumeLiteral("false")) {
        out.kind = JsonValue::Kind::Bool;
        out.boolean = false;
        return Status::success();
      }
      break;
    case 'n':
      if (consumeLiteral("null")) {
        out.kind = JsonValue::Kind::Null;
        return Status::success();
      }
      break;
    default:
      if (c == '-' || (c >= '0' && c <= '9'))
        return parseNumber(out);
      break;
    }
    return fail("expected a value, found " + describeChar());
  }

  Status parseObject(JsonValue &out, int depth) {
    if (depth + 1 > kMaxJsonDepth)
      return fail("nesting deeper than " + std::to_string(kMaxJsonDepth));
    out.kind = JsonValue::Kind::Object;
    ++pos_; // '{'
    skipWhitespace();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      return Status::success();
    }
    while (true) {
      skipWhitespace();
      if (pos_ >= text_.size() || text_[pos_] != '"')
        return fail("expected a string key, found " + describeChar());
      int keyLine = line_, keyColumn = column();
      std::string key;
      FLAMIA_RETURN_IF_ERROR(parseString(key));
      if (out.find(key))
        return failAt(keyLine, keyColumn, "duplicate key \"" + key + "\"");
      skipWhitespace();
      if (pos_ >= text_.size() || text_[pos_] != ':')
        return fail("expected ':' after key \"" + key + "\", found " +
                    describeChar());
      ++pos_;
      skipWhitespace();
      JsonValue value;
      FLAMIA_RETURN_IF_ERROR(parseValue(value, depth + 1));
      out.object.emplace_back(std::move(key), std::move(value));
      skipWhitespace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        skipWhitespace();
        if (pos_ < text_.size() && text_[pos_] == '}')
          return fail("trailing comma before '}'");
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        return Status::success();
      }
      return fail("expected ',' or '}' in object, found " + describeChar());
    }
  }

  Status parseArray(JsonValue &out, int depth) {
    if (depth + 1 > kMaxJsonDepth)
      return fail("nesting deeper than " + std::to_string(kMaxJsonDepth));
    out.kind = JsonValue::Kind::Array;
    ++pos_; // '['
    skipWhitespace();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      return Status::success();
    }
    while (true) {
      skipWhitespace();
      JsonValue value;
      FLAMIA_RETURN_IF_ERROR(parseValue(value, depth + 1));
      out.array.push_back(std::move(value));
      skipWhitespace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        skipWhitespace();
        if (pos_ < text_.size() && text_[pos_] == ']')
          return fail("trailing comma before ']'");
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        return Status::success();
      }
      return fail("expected ',' or ']' in array, found " + describeChar());
    }
  }

  static void appendUtf8(std::string &out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  Status parseHex4(uint32_t &out) {
    out = 0;
    for (int i = 0; i < 4; ++i) {
      if (pos_ >= text_.size())
        return fail("unterminated \\u escape");
      char c = text_[pos_];
      uint32_t digit;
      if (c >= '0' && c <= '9')
        digit = c - '0';
      else if (c >= 'a' && c <= 'f')
        digit = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        digit = c - 'A' + 10;
      else
        return fail("bad hex digit " + describeChar() + " in \\u escape");
      out = out * 16 + digit;
      ++pos_;
    }
    return Status::success();
  }

  Status parseString(std::string &out) {
    ++pos_; // opening quote
    while (true) {
      if (pos_ >= text_.size())
        return fail("unterminated string");
      unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        return Status::success();
      }
      if (c < 0x20)
        return fail("control character " + describeChar() +
                    " in string (escape it)");
      if (c != '\\') {
        out += static_cast<char>(c);
        ++pos_;
        continue;
      }
      ++pos_;
      if (pos_ >= text_.size())
        return fail("unterminated escape");
      char e = text_[pos_++];
      switch (e) {
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      case '/':
        out += '/';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        uint32_t cp;
        FLAMIA_RETURN_IF_ERROR(parseHex4(cp));
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          if (text_.compare(pos_, 2, "\\u") != 0)
            return fail("high surrogate \\u" + hex(cp) +
                        " not followed by a low surrogate");
          pos_ += 2;
          uint32_t low;
          FLAMIA_RETURN_IF_ERROR(parseHex4(low));
          if (low < 0xDC00 || low > 0xDFFF)
            return fail("high surrogate \\u" + hex(cp) + " followed by \\u" +
                        hex(low) + ", not a low surrogate");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          return fail("lone low surrogate \\u" + hex(cp));
        }
        appendUtf8(out, cp);
        break;
      }
      default:
        --pos_;
        return fail("invalid escape '\\" + std::string(1, e) + "'");
      }
    }
  }

  static std::string hex(uint32_t v) {
    char buf[8];
    snprintf(buf, sizeof buf, "%04X", v);
    return buf;
  }

  static bool isDigit(char c) { return c >= '0' && c <= '9'; }

  Status parseNumber(JsonValue &out) {
    size_t start = pos_;
    bool integerLiteral = true;
    if (text_[pos_] == '-')
      ++pos_;
    if (pos_ >= text_.size() || !isDigit(text_[pos_]))
      return fail("expected a digit after '-'");
    if (text_[pos_] == '0') {
      ++pos_;
      if (pos_ < text_.size() && isDigit(text_[pos_]))
        return fail("leading zero in number");
    } else {
      while (pos_ < text_.size() && isDigit(text_[pos_]))
        ++pos_;
    }
    if (pos_ < text_.size() && text_[pos_] == '.') {
      integerLiteral = false;
      ++pos_;
      if (pos_ >= text_.size() || !isDigit(text_[pos_]))
        return fail("expected a digit after '.'");
      while (pos_ < text_.size() && isDigit(text_[pos_]))
        ++pos_;
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      integerLiteral = false;
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-'))
        ++pos_;
      if (pos_ >= text_.size() || !isDigit(text_[pos_]))
        return fail("expected a digit in the exponent");
      while (pos_ < text_.size() && isDigit(text_[pos_]))
        ++pos_;
    }
    std::string literal = text_.substr(start, pos_ - start);
    const char *first = literal.data(), *last = first + literal.size();
    out.kind = JsonValue::Kind::Number;
    // std::from_chars: locale-independent (strtod would read "0.5" as 0 under
    // a locale whose decimal separator is ',').
    auto parsed = std::from_chars(first, last, out.number);
    if (parsed.ec == std::errc::result_out_of_range ||
        !std::isfinite(out.number))
      return failAt(out.line, out.column,
                    "number " + literal + " is out of range");
    if (parsed.ec != std::errc() || parsed.ptr != last)
      return failAt(out.line, out.column, "malformed number " + literal);
    if (integerLiteral) {
      int64_t v = 0;
      auto exact = std::from_chars(first, last, v);
      if (exact.ec == std::errc() && exact.ptr == last) {
        out.isInteger = true;
        out.integer = v;
      }
    }
    return Status::success();
  }
};

} // namespace

Status parseJson(const std::string &text, JsonValue &out) {
  Parser parser(text);
  return parser.parseDocument(out);
}

} // namespace flamia::runtime
