//===- JsonTest.cpp - The strict JSON parser ------------------------------===//

#include "flamia/Runtime/Json.h"

#include <gtest/gtest.h>

using namespace flamia::runtime;

namespace {

std::string parseError(const std::string &text) {
  JsonValue v;
  Status s = parseJson(text, v);
  EXPECT_FALSE(s.ok()) << "accepted: " << text;
  EXPECT_EQ(s.code, ErrorCode::InvalidManifest);
  return s.message;
}

TEST(Json, ParsesEveryKindWithPositions) {
  JsonValue v;
  ASSERT_TRUE(parseJson("{\n  \"a\": [1, -2.5e1, true, false, null],\n"
                        "  \"b\": {\"c\": \"x\\ny\"}\n}",
                        v)
                  .ok());
  ASSERT_TRUE(v.isObject());
  ASSERT_EQ(v.object.size(), 2u);
  const JsonValue *a = v.find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->line, 2);
  EXPECT_EQ(a->column, 8);
  ASSERT_EQ(a->array.size(), 5u);
  EXPECT_TRUE(a->array[0].isInteger);
  EXPECT_EQ(a->array[0].integer, 1);
  EXPECT_FALSE(a->array[1].isInteger);
  EXPECT_DOUBLE_EQ(a->array[1].number, -25.0);
  EXPECT_TRUE(a->array[2].boolean);
  EXPECT_FALSE(a->array[3].boolean);
  EXPECT_TRUE(a->array[4].isNull());
  EXPECT_EQ(a->array[4].column, 33);
  const JsonValue *c = v.find("b")->find("c");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->string, "x\ny");
  EXPECT_EQ(c->line, 3);
  EXPECT_EQ(v.find("zzz"), nullptr);
}

TEST(Json, IntegersAreExactAndLargeOnesStayDouble) {
  JsonValue v;
  ASSERT_TRUE(
      parseJson("[9007199254740993, 92233720368547758070, 1.0, 0, -0]", v)
          .ok());
  EXPECT_TRUE(v.array[0].isInteger);
  EXPECT_EQ(v.array[0].integer,
            9007199254740993LL);      // not representable in double
  EXPECT_FALSE(v.array[1].isInteger); // beyond int64
  EXPECT_FALSE(v.array[2].isInteger); // written with a fraction
  EXPECT_TRUE(v.array[3].isInteger);
  EXPECT_TRUE(v.array[4].isInteger);
  EXPECT_EQ(v.array[4].integer, 0);
}

TEST(Json, UnicodeEscapesBecomeUtf8) {
  JsonValue v;
  ASSERT_TRUE(parseJson(R"("\u00e9\u4e2d\ud83d\ude00\/")", v).ok());
  EXPECT_EQ(v.string, "\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80/");
}

TEST(Json, SyntaxErrorsCarryLineAndColumn) {
  EXPECT_EQ(parseError("{\"a\": 1,}"),
            "line 1, column 9: trailing comma before '}'");
  EXPECT_EQ(parseError("[1, 2,]"),
            "line 1, column 7: trailing comma before ']'");
  EXPECT_EQ(parseError("{\n  \"a\": 1,\n  \"a\": 2\n}"),
            "line 3, column 3: duplicate key \"a\"");
  EXPECT_EQ(parseError("{\"a\" 1}"),
            "line 1, column 6: expected ':' after key \"a\", found '1'");
  EXPECT_EQ(parseError("[01]"), "line 1, column 3: leading zero in number");
  EXPECT_EQ(parseError("[1.]"), "line 1, column 4: expected a digit after '.'");
  EXPECT_EQ(parseError("[NaN]"),
            "line 1, column 2: expected a value, found 'N'");
  EXPECT_EQ(parseError("{'a': 1}"),
            "line 1, column 2: expected a string key, found '''");
  EXPECT_EQ(parseError("// c\n{}"),
            "line 1, column 1: expected a value, found '/'");
  EXPECT_EQ(parseError("{} x"),
            "line 1, column 4: unexpected 'x' after the top-level value");
  EXPECT_EQ(parseError(""),
            "line 1, column 1: expected a value, found end of input");
  EXPECT_EQ(parseError("\"abc"), "line 1, column 5: unterminated string");
  EXPECT_EQ(
      parseError("\"a\tb\""),
      "line 1, column 3: control character byte 0x09 in string (escape it)");
  EXPECT_EQ(parseError(R"("\x")"), "line 1, column 3: invalid escape '\\x'");
  EXPECT_EQ(parseError(R"("\ud800")"),
            "line 1, column 8: high surrogate \\uD800 not followed by a low "
            "surrogate");
  EXPECT_EQ(parseError(R"("\udc00")"),
            "line 1, column 8: lone low surrogate \\uDC00");
  EXPECT_EQ(parseError("[1e999]"),
            "line 1, column 2: number 1e999 is out of range");
  EXPECT_EQ(parseError("tru"), "line 1, column 1: expected a value, found 't'");
  EXPECT_EQ(parseError("[-]"), "line 1, column 3: expected a digit after '-'");
  EXPECT_EQ(parseError("[1 2]"),
            "line 1, column 4: expected ',' or ']' in array, found '2'");
}

TEST(Json, NestingIsBounded) {
  std::string deep(kMaxJsonDepth, '[');
  deep += std::string(kMaxJsonDepth, ']');
  JsonValue v;
  EXPECT_TRUE(parseJson(deep, v).ok());
  std::string tooDeep(kMaxJsonDepth + 1, '[');
  tooDeep += std::string(kMaxJsonDepth + 1, ']');
  EXPECT_EQ(parseError(tooDeep), "line 1, column 65: nesting deeper than 64");
}

} // namespace
