//===- CommandLine.h - Option parsing for the plain tools --------*- C++ -*-===//
//
// One small, strict command-line parser for the MLIR-free tools (flamia-ref,
// flamia-run, flamia-desc); plain C++, no LLVM. A tool declares its options
// (name and aliases, value kind, range, help), parses argv, then reads the
// values:
//
//   cli::CommandLine cl;
//   cl.addInteger("--heads", "H", 1, 65535, "query heads (default 16)")
//     .addFlag({"-v", "--verbose"}, "print more");
//   std::string error;
//   if (!cl.parse(argc, argv, 1, error)) ...   // "unknown option --bogus"
//   int64_t heads = 16;
//   if (!cl.getInteger("--heads", heads, error)) ...
//
// Syntax: `--name value`, `--name=value`, `-o value`, boolean `--flag`, and
// positional arguments (a word that does not start with '-', the word "-",
// a negative number such as -5 or -.5, and everything after "--").
// Parse errors (each names the option as written):
//   unknown option NAME
//   option NAME needs a value
//   option NAME takes no value
//   option NAME given twice              (an alias counts as the same option)
//   unexpected argument 'WORD'           (when positionals are not allowed)
// Typed values are checked when read (getInteger, getReal) or all at once
// (validate), so that a tool decides which error comes first:
//   NAME expects an integer in [lo, hi], got 'TEXT'
//     (validation::parseIntegerInRange: base 10, no spaces, no '+')
//   NAME expects a finite number, got 'TEXT'
//   NAME expects a finite number >= MIN, got 'TEXT'   (with a lower bound)
// helpText() lists the options, grouped by addSection, with their help.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_SUPPORT_COMMANDLINE_H
#define FLAMIA_SUPPORT_COMMANDLINE_H

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace flamia::cli {

enum class ValueKind {
  Flag,    // no value
  String,  // any text
  Integer, // a base-10 integer in [min, max]
  Real,    // a finite number >= min (when hasMin)
};

struct OptionSpec {
  /// Every spelling, with its dashes ("-v", "--verbose"); names[0] is the
  /// canonical one (what value(), flag() and the getters accept any of).
  std::vector<std::string> names;
  ValueKind kind = ValueKind::Flag;
  std::string metavar; // "N", "DIR": shown in helpText()
  std::string help;    // may hold '\n' for more lines
  std::string section; // the addSection title in force when declared
  int64_t min = 0, max = 0; // Integer
  bool hasMin = false;      // Real
  double realMin = 0;       // Real
};

class CommandLine {
public:
  /// Declarations; each returns *this. A name declared twice is a
  /// programming error (the later declaration is ignored; see declarationError).
  CommandLine &addFlag(std::initializer_list<std::string> names,
                       std::string help = "");
  CommandLine &addFlag(const std::string &name, std::string help = "") {
    return addFlag({name}, std::move(help));
  }
  CommandLine &addString(const std::string &name, std::string metavar,
                         std::string help = "");
  CommandLine &addInteger(const std::string &name, std::string metavar,
                          int64_t min, int64_t max, std::string help = "");
  CommandLine &addReal(const std::string &name, std::string metavar,
                       std::string help = "");
  /// A real option whose value must also be >= min.
  CommandLine &addRealAtLeast(const std::string &name, std::string metavar,
                              double min, std::string help = "");
  /// Options declared after this are listed under `title` in helpText().
  CommandLine &addSection(std::string title);
  /// Whether positional arguments are accepted (default: yes). When not,
  /// parse fails with "unexpected argument 'WORD'".
  CommandLine &allowPositional(bool allowed);

  /// Parses argv[first..argc). False with `error` on the first problem.
  bool parse(int argc, const char *const *argv, int first, std::string &error);
  bool parse(const std::vector<std::string> &args, std::string &error);

  /// Whether option `name` (any alias) was given; for flags and valued ones.
  bool flag(const std::string &name) const { return given(name); }
  bool given(const std::string &name) const;
  /// The text of valued option `name`, if given.
  std::optional<std::string> value(const std::string &name) const;
  /// Typed values: `out` is set only when the option was given; true when it
  /// was not. False with the error of the file comment on a bad value.
  bool getInteger(const std::string &name, int64_t &out,
                  std::string &error) const;
  bool getReal(const std::string &name, double &out, std::string &error) const;
  /// getInteger / getReal of every given typed option, in declaration order.
  bool validate(std::string &error) const;

  const std::vector<std::string> &positional() const { return positional_; }

  /// The options, one entry per option, under their section titles:
  ///   "  -v, --verbose     print more\n" (help from column 20; a longer
  ///   name and metavar put the help on the next line).
  std::string helpText() const;

  /// Set when a declaration reused a name (for tests of the tools' tables).
  const std::string &declarationError() const { return declarationError_; }

private:
  const OptionSpec *find(const std::string &name) const;
  CommandLine &add(OptionSpec spec);

  std::vector<OptionSpec> specs_;
  std::map<std::string, size_t> byName_; // every spelling -> specs_ index
  std::string section_;
  bool allowPositional_ = true;
  std::string declarationError_;
  // Parse results: canonical name -> value ("" for flags).
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

} // namespace flamia::cli

#endif // FLAMIA_SUPPORT_COMMANDLINE_H
