//===- ExpressionTest.cpp - Shape and grid expressions --------------------===//

#include "flamia/Runtime/Expression.h"

#include <gtest/gtest.h>

using namespace flamia::runtime;

namespace {

SymbolValues standardSymbols() {
  SymbolValues s;
  s.set(Symbol::T, 4096);
  s.set(Symbol::Hq, 16);
  s.set(Symbol::Hkv, 4);
  s.set(Symbol::D, 128);
  s.set(Symbol::NumDocs, 3);
  s.set(Symbol::NB, 130);
  s.set(Symbol::NumSms, 132);
  return s;
}

int64_t eval(const std::string &text) {
  Expression e;
  Status s = Expression::parse(text, e);
  EXPECT_TRUE(s.ok()) << text << ": " << s.message;
  int64_t v = -999;
  s = e.evaluate(standardSymbols(), v);
  EXPECT_TRUE(s.ok()) << text << ": " << s.message;
  return v;
}

std::string parseError(const std::string &text) {
  Expression e;
  Status s = Expression::parse(text, e);
  EXPECT_FALSE(s.ok()) << text;
  EXPECT_EQ(s.code, ErrorCode::InvalidManifest);
  return s.message;
}

std::string evalError(const std::string &text, const SymbolValues &symbols) {
  Expression e;
  EXPECT_TRUE(Expression::parse(text, e).ok()) << text;
  int64_t v;
  Status s = e.evaluate(symbols, v);
  EXPECT_FALSE(s.ok()) << text << " = " << v;
  EXPECT_EQ(s.code, ErrorCode::InvalidArgument);
  return s.message;
}

TEST(Expression, ArithmeticAndPrecedence) {
  EXPECT_EQ(eval("T"), 4096);
  EXPECT_EQ(eval("Hq * D"), 2048);
  EXPECT_EQ(eval("NUM_DOCS + 1"), 4);
  EXPECT_EQ(eval("D / 32"), 4);
  EXPECT_EQ(eval("2 + 3 * 4"), 14);
  EXPECT_EQ(eval("(2 + 3) * 4"), 20);
  EXPECT_EQ(eval("10 - 3 - 2"), 5);   // left associative
  EXPECT_EQ(eval("100 / 10 / 5"), 2); // left associative
  EXPECT_EQ(eval("-3 + 5"), 2);
  EXPECT_EQ(eval("- (2 * 3)"), -6);
  EXPECT_EQ(eval("7 / 2"), 3);
  EXPECT_EQ(eval("-7 / 2"), -3); // C division truncates
  EXPECT_EQ(eval("cdiv(T, 128)"), 32);
  EXPECT_EQ(eval("cdiv(T + 1, 128)"), 33);
  EXPECT_EQ(eval("cdiv(0, 32)"), 0);
  EXPECT_EQ(eval("cdiv(-5, 2)"), -2); // ceiling of -2.5
  EXPECT_EQ(eval("cdiv(cdiv(NB, 2) * Hq, NUM_SMS)"), 8);
  EXPECT_EQ(eval("  Hq*Hkv  "), 64);
  EXPECT_EQ(eval("9223372036854775807"), INT64_MAX);
}

TEST(Expression, Queries) {
  Expression e;
  ASSERT_TRUE(Expression::parse("NB * Hkv * (D / 32)", e).ok());
  EXPECT_EQ(e.text(), "NB * Hkv * (D / 32)");
  EXPECT_TRUE(e.uses(Symbol::NB));
  EXPECT_TRUE(e.uses(Symbol::D));
  EXPECT_FALSE(e.uses(Symbol::T));
  int64_t c;
  EXPECT_FALSE(e.constantValue(c));
  ASSERT_TRUE(Expression::parse("cdiv(7, 2) * 3", e).ok());
  ASSERT_TRUE(e.constantValue(c));
  EXPECT_EQ(c, 12);
  Expression k = Expression::constant(42);
  EXPECT_EQ(k.text(), "42");
  ASSERT_TRUE(k.constantValue(c));
  EXPECT_EQ(c, 42);
}

TEST(Expression, ParseErrorsNameTheProblemAndColumn) {
  EXPECT_EQ(parseError("Tq * D"),
            "unknown symbol 'Tq' at column 1 of 'Tq * D' (symbols: T, Hq, "
            "Hkv, D, NUM_DOCS, NB, NUM_ITEMS, NUM_SMS, NUM_KV_ITEMS)");
  EXPECT_EQ(parseError(""), "empty expression at column 1 of ''");
  EXPECT_EQ(parseError("T +"),
            "expected a number, a symbol or '(', found the end at column 4 of "
            "'T +'");
  EXPECT_EQ(parseError("(T"), "expected ')' at column 3 of '(T'");
  EXPECT_EQ(parseError("T )"), "unexpected ')' at column 3 of 'T )'");
  EXPECT_EQ(parseError("max(T, 2)"),
            "unknown function 'max' at column 1 of 'max(T, 2)' (the only "
            "function is cdiv)");
  EXPECT_EQ(parseError("cdiv(T)"),
            "expected ',' between the arguments of cdiv at column 7 of "
            "'cdiv(T)'");
  EXPECT_EQ(parseError("cdiv"),
            "cdiv needs arguments: cdiv(a, b) at column 1 of 'cdiv'");
  EXPECT_EQ(parseError("1.5 * T"),
            "unexpected '.' after a number (integers only) at column 2 of "
            "'1.5 * T'");
  EXPECT_EQ(parseError("T % 2"), "unexpected '%' at column 3 of 'T % 2'");
  EXPECT_EQ(parseError("99999999999999999999"),
            "integer literal does not fit in int64 at column 1 of "
            "'99999999999999999999'");
  EXPECT_EQ(parseError(std::string(65, '(') + "1" + std::string(65, ')'))
                .substr(0, 33),
            "expression nested deeper than 64 ");
}

TEST(Expression, EvaluationErrors) {
  SymbolValues s = standardSymbols();
  EXPECT_EQ(evalError("T / (Hq - 16)", s),
            "division by zero while evaluating 'T / (Hq - 16)'");
  EXPECT_EQ(evalError("cdiv(T, 0)", s),
            "cdiv by 0 (the divisor must be positive) while evaluating "
            "'cdiv(T, 0)'");
  EXPECT_EQ(evalError("cdiv(T, -2)", s),
            "cdiv by -2 (the divisor must be positive) while evaluating "
            "'cdiv(T, -2)'");
  EXPECT_EQ(evalError("T * 9223372036854775807", s),
            "integer overflow in '*' while evaluating 'T * "
            "9223372036854775807'");
  EXPECT_EQ(evalError("9223372036854775807 + 1", s),
            "integer overflow in '+' while evaluating '9223372036854775807 + "
            "1'");
  EXPECT_EQ(evalError("-9223372036854775807 - 2", s),
            "integer overflow in '-' while evaluating '-9223372036854775807 - "
            "2'");
  EXPECT_EQ(evalError("NUM_ITEMS * 8", s),
            "symbol NUM_ITEMS has no value (in 'NUM_ITEMS * 8')");
  s.setUnavailableReason(Symbol::NumItems, "the manifest has no \"schedule\"");
  EXPECT_EQ(evalError("NUM_ITEMS", s),
            "symbol NUM_ITEMS has no value: the manifest has no \"schedule\" "
            "(in 'NUM_ITEMS')");
}

TEST(Expression, SymbolNamesRoundTrip) {
  for (int i = 0; i < kNumSymbols; ++i) {
    Symbol s = static_cast<Symbol>(i), back;
    ASSERT_TRUE(symbolFromName(symbolName(s), back));
    EXPECT_EQ(back, s);
  }
  Symbol ignored;
  EXPECT_FALSE(symbolFromName("t", ignored)); // case-sensitive
}

} // namespace
