//===- CommandLine.h - Option parsing for flamia-ref subcommands -*- C++ -*-===//
//
// A small, strict parser: `--name value`, `--name=value`, boolean `--flag`,
// `-o PATH`, and positional arguments. Unknown options and missing values are
// errors. Plain C++ so that flamia-ref builds without LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_TOOLS_FLAMIAREF_COMMANDLINE_H
#define FLAMIA_TOOLS_FLAMIAREF_COMMANDLINE_H

#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace flamia::ref {

/// Exit code for bad input (usage errors, unreadable or malformed files).
constexpr int kExitBadInput = 2;

class CommandLine {
public:
  /// `valueOptions` take a value, `flagOptions` do not. Names include the
  /// dashes ("--format", "-o").
  CommandLine(std::set<std::string> valueOptions,
              std::set<std::string> flagOptions)
      : valueOptions_(std::move(valueOptions)),
        flagOptions_(std::move(flagOptions)) {}

  /// Parses argv[first..argc). Returns false and sets `error` on a problem.
  bool parse(int argc, char **argv, int first, std::string &error) {
    for (int i = first; i < argc; ++i) {
      std::string arg = argv[i];
      if (arg.size() > 1 && arg[0] == '-' && !isNumber(arg)) {
        std::string name = arg, value;
        bool hasInlineValue = false;
        if (size_t eq = arg.find('='); eq != std::string::npos) {
          name = arg.substr(0, eq);
          value = arg.substr(eq + 1);
          hasInlineValue = true;
        }
        if (flagOptions_.count(name)) {
          if (hasInlineValue) {
            error = "option " + name + " takes no value";
            return false;
          }
          flags_.insert(name);
        } else if (valueOptions_.count(name)) {
          if (!hasInlineValue) {
            if (i + 1 >= argc) {
              error = "option " + name + " needs a value";
              return false;
            }
            value = argv[++i];
          }
          values_[name] = value;
        } else {
          error = "unknown option " + name;
          return false;
        }
      } else {
        positional_.push_back(arg);
      }
    }
    return true;
  }

  bool flag(const std::string &name) const { return flags_.count(name) != 0; }
  std::optional<std::string> value(const std::string &name) const {
    auto it = values_.find(name);
    if (it == values_.end())
      return std::nullopt;
    return it->second;
  }
  const std::vector<std::string> &positional() const { return positional_; }

private:
  static bool isNumber(const std::string &s) {
    return s.size() > 1 && s[0] == '-' &&
           (std::isdigit(static_cast<unsigned char>(s[1])) || s[1] == '.');
  }
  std::set<std::string> valueOptions_, flagOptions_, flags_;
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

} // namespace flamia::ref

#endif // FLAMIA_TOOLS_FLAMIAREF_COMMANDLINE_H
