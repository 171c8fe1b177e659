//===- CommandLineTest.cpp - The plain tools' option parser -----*- C++ -*-===//
#include "flamia/Support/CommandLine.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <string>
#include <vector>

using namespace flamia::cli;

namespace {

CommandLine sample() {
  CommandLine cl;
  cl.addSection("inputs")
      .addString("--workload", "W", "the workload\nsecond line")
      .addInteger("--heads", "H", 1, 65535, "query heads")
      .addReal("--scale", "S", "a scale")
      .addRealAtLeast("--weight", "F", 0.0)
      .addSection("other")
      .addFlag({"-v", "--verbose"}, "print more")
      .addFlag("--check")
      .addString("-o", "PATH", "output")
      .addFlag("--sanitize-friendly", "long name");
  return cl;
}

bool parse(CommandLine &cl, std::vector<std::string> args, std::string &e) {
  return cl.parse(args, e);
}

TEST(CommandLine, ValuesFlagsAndPositionals) {
  CommandLine cl = sample();
  std::string e;
  ASSERT_TRUE(parse(cl,
                    {"in.npy", "--workload", "docs:1,2", "--heads=8", "-v",
                     "-o", "-", "-5", "-.5", "-", "--", "--check"},
                    e))
      << e;
  EXPECT_EQ(cl.value("--workload"), std::optional<std::string>("docs:1,2"));
  EXPECT_EQ(cl.value("-o"), std::optional<std::string>("-"));
  EXPECT_TRUE(cl.flag("-v"));
  EXPECT_TRUE(cl.flag("--verbose")); // an alias is the same option
  EXPECT_FALSE(cl.flag("--check"));  // after "--": a positional
  EXPECT_FALSE(cl.given("--scale"));
  EXPECT_EQ(cl.value("--scale"), std::nullopt);
  EXPECT_EQ(cl.value("--verbose"), std::nullopt); // flags have no value
  EXPECT_EQ(cl.positional(),
            (std::vector<std::string>{"in.npy", "-5", "-.5", "-", "--check"}));
  int64_t heads = 16;
  ASSERT_TRUE(cl.getInteger("--heads", heads, e)) << e;
  EXPECT_EQ(heads, 8);
  double scale = 0.25; // not given: unchanged
  ASSERT_TRUE(cl.getReal("--scale", scale, e));
  EXPECT_EQ(scale, 0.25);
  EXPECT_TRUE(cl.validate(e));
}

TEST(CommandLine, ValuesMayStartWithADash) {
  CommandLine cl = sample();
  std::string e;
  ASSERT_TRUE(parse(cl, {"--scale", "-0.5", "--workload", "--check"}, e)) << e;
  EXPECT_EQ(cl.value("--workload"), std::optional<std::string>("--check"));
  EXPECT_FALSE(cl.flag("--check"));
  double s = 0;
  ASSERT_TRUE(cl.getReal("--scale", s, e));
  EXPECT_EQ(s, -0.5);
  // An inline value may be empty or hold '='.
  ASSERT_TRUE(parse(cl, {"--workload=", "-o=a=b"}, e)) << e;
  EXPECT_EQ(cl.value("--workload"), std::optional<std::string>(""));
  EXPECT_EQ(cl.value("-o"), std::optional<std::string>("a=b"));
}

TEST(CommandLine, ParseErrorsNameTheOption) {
  CommandLine cl = sample();
  std::string e;
  EXPECT_FALSE(parse(cl, {"--bogus"}, e));
  EXPECT_EQ(e, "unknown option --bogus");
  EXPECT_FALSE(parse(cl, {"--bogus=3"}, e));
  EXPECT_EQ(e, "unknown option --bogus");
  EXPECT_FALSE(parse(cl, {"--heads"}, e));
  EXPECT_EQ(e, "option --heads needs a value");
  EXPECT_FALSE(parse(cl, {"--check=yes"}, e));
  EXPECT_EQ(e, "option --check takes no value");
  EXPECT_FALSE(parse(cl, {"--heads", "2", "--heads=3"}, e));
  EXPECT_EQ(e, "option --heads given twice");
  EXPECT_FALSE(parse(cl, {"-v", "--verbose"}, e));
  EXPECT_EQ(e, "option --verbose given twice");
  EXPECT_FALSE(parse(cl, {"--check", "--check"}, e));
  EXPECT_EQ(e, "option --check given twice");
  // A second parse starts from nothing.
  EXPECT_TRUE(parse(cl, {"--check"}, e));
  EXPECT_FALSE(cl.flag("-v"));
}

TEST(CommandLine, PositionalsCanBeRefused) {
  CommandLine cl = sample();
  cl.allowPositional(false);
  std::string e;
  EXPECT_FALSE(parse(cl, {"--check", "extra"}, e));
  EXPECT_EQ(e, "unexpected argument 'extra'");
  EXPECT_FALSE(parse(cl, {"-3"}, e));
  EXPECT_EQ(e, "unexpected argument '-3'");
  EXPECT_TRUE(parse(cl, {"-o", "x"}, e));
}

TEST(CommandLine, IntegersAreCheckedAgainstTheirRange) {
  CommandLine cl = sample();
  std::string e;
  int64_t h = 16;
  for (const char *bad : {"0", "65536", "x", " 5", "+5", "5 ", "", "1e3",
                          "99999999999999999999"}) {
    ASSERT_TRUE(parse(cl, {"--heads", bad}, e)) << e;
    EXPECT_FALSE(cl.getInteger("--heads", h, e)) << bad;
    EXPECT_EQ(e, std::string("--heads expects an integer in [1, 65535], got '") +
                     bad + "'");
    EXPECT_FALSE(cl.validate(e));
    EXPECT_EQ(h, 16);
  }
  ASSERT_TRUE(parse(cl, {"--heads=65535"}, e));
  EXPECT_TRUE(cl.getInteger("--heads", h, e));
  EXPECT_EQ(h, 65535);
}

TEST(CommandLine, RealsMustBeFinite) {
  CommandLine cl = sample();
  std::string e;
  double x = 1;
  for (const char *bad : {"inf", "nan", "1e999", "", " 1", "1x", "0x"}) {
    ASSERT_TRUE(parse(cl, {"--scale", bad}, e)) << e;
    EXPECT_FALSE(cl.getReal("--scale", x, e)) << bad;
    EXPECT_EQ(e, std::string("--scale expects a finite number, got '") + bad +
                     "'");
  }
  ASSERT_TRUE(parse(cl, {"--weight", "-1"}, e));
  EXPECT_FALSE(cl.getReal("--weight", x, e));
  EXPECT_EQ(e, "--weight expects a finite number >= 0, got '-1'");
  EXPECT_FALSE(cl.validate(e));
  EXPECT_EQ(e, "--weight expects a finite number >= 0, got '-1'");
  ASSERT_TRUE(parse(cl, {"--weight", "0", "--scale", "1.5e-3"}, e));
  EXPECT_TRUE(cl.getReal("--weight", x, e));
  EXPECT_EQ(x, 0.0);
  EXPECT_TRUE(cl.getReal("--scale", x, e));
  EXPECT_EQ(x, 1.5e-3);
}

TEST(CommandLine, GettersOfTheWrongKindAreErrors) {
  CommandLine cl = sample();
  std::string e;
  ASSERT_TRUE(parse(cl, {}, e));
  int64_t i;
  double d;
  EXPECT_FALSE(cl.getInteger("--workload", i, e));
  EXPECT_FALSE(cl.getReal("--heads", d, e));
  EXPECT_FALSE(cl.getInteger("--undeclared", i, e));
}

TEST(CommandLine, DeclaringANameTwiceIsReported) {
  CommandLine cl;
  cl.addFlag("--x").addString("--y", "Y");
  EXPECT_EQ(cl.declarationError(), "");
  cl.addInteger("--x", "N", 0, 1);
  EXPECT_EQ(cl.declarationError(), "option --x declared twice");
  std::string e;
  EXPECT_FALSE(cl.parse(std::vector<std::string>{"--x=1"}, e));
  EXPECT_EQ(e, "option --x takes no value"); // the first declaration stands
}

TEST(CommandLine, HelpTextListsTheOptionsBySection) {
  EXPECT_EQ(sample().helpText(),
            "inputs\n"
            "  --workload W      the workload\n"
            "                    second line\n"
            "  --heads H         query heads\n"
            "  --scale S         a scale\n"
            "  --weight F\n"
            "\n"
            "other\n"
            "  -v, --verbose     print more\n"
            "  --check\n"
            "  -o PATH           output\n"
            "  --sanitize-friendly\n"
            "                    long name\n");
}

TEST(CommandLine, ParsesArgvFromAnIndex) {
  CommandLine cl = sample();
  const char *argv[] = {"tool", "sub", "--heads", "3", "file"};
  std::string e;
  ASSERT_TRUE(cl.parse(5, argv, 2, e)) << e;
  EXPECT_EQ(cl.value("--heads"), std::optional<std::string>("3"));
  EXPECT_EQ(cl.positional(), std::vector<std::string>{"file"});
}

} // namespace
