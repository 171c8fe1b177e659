//===- CommandLine.cpp - Option parsing for the plain tools ---------------===//
#include "flamia/Support/CommandLine.h"

#include "flamia/Support/Validation.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace flamia::cli {

namespace {

/// "-5", "-.5", "-1e3": a negative number, which is a value, not an option.
bool looksNegativeNumber(const std::string &s) {
  return s.size() > 1 && s[0] == '-' &&
         (std::isdigit(static_cast<unsigned char>(s[1])) || s[1] == '.');
}

std::string formatReal(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

} // namespace

CommandLine &CommandLine::add(OptionSpec spec) {
  for (const std::string &n : spec.names)
    if (byName_.count(n)) {
      if (declarationError_.empty())
        declarationError_ = "option " + n + " declared twice";
      return *this;
    }
  spec.section = section_;
  for (const std::string &n : spec.names)
    byName_[n] = specs_.size();
  specs_.push_back(std::move(spec));
  return *this;
}

CommandLine &CommandLine::addFlag(std::initializer_list<std::string> names,
                                  std::string help) {
  OptionSpec s;
  s.names = names;
  s.kind = ValueKind::Flag;
  s.help = std::move(help);
  return add(std::move(s));
}

/// The declaration of a value option `name` (one name) of `kind`.
static OptionSpec valueOption(const std::string &name, ValueKind kind,
                              std::string metavar, std::string help) {
  OptionSpec s;
  s.names = {name};
  s.kind = kind;
  s.metavar = std::move(metavar);
  s.help = std::move(help);
  return s;
}

CommandLine &CommandLine::addString(const std::string &name,
                                    std::string metavar, std::string help) {
  return add(valueOption(name, ValueKind::String, std::move(metavar),
                         std::move(help)));
}

CommandLine &CommandLine::addInteger(const std::string &name,
                                     std::string metavar, int64_t min,
                                     int64_t max, std::string help) {
  OptionSpec s = valueOption(name, ValueKind::Integer, std::move(metavar),
                             std::move(help));
  s.min = min;
  s.max = max;
  return add(std::move(s));
}

CommandLine &CommandLine::addReal(const std::string &name, std::string metavar,
                                  std::string help) {
  return add(valueOption(name, ValueKind::Real, std::move(metavar),
                         std::move(help)));
}

CommandLine &CommandLine::addRealAtLeast(const std::string &name,
                                         std::string metavar, double min,
                                         std::string help) {
  OptionSpec s = valueOption(name, ValueKind::Real, std::move(metavar),
                             std::move(help));
  s.hasMin = true;
  s.realMin = min;
  return add(std::move(s));
}

CommandLine &CommandLine::addSection(std::string title) {
  section_ = std::move(title);
  return *this;
}

CommandLine &CommandLine::allowPositional(bool allowed) {
  allowPositional_ = allowed;
  return *this;
}

const OptionSpec *CommandLine::find(const std::string &name) const {
  auto it = byName_.find(name);
  return it == byName_.end() ? nullptr : &specs_[it->second];
}

bool CommandLine::parse(int argc, const char *const *argv, int first,
                        std::string &error) {
  std::vector<std::string> args;
  for (int i = first; i < argc; ++i)
    args.emplace_back(argv[i]);
  return parse(args, error);
}

bool CommandLine::parse(const std::vector<std::string> &args,
                        std::string &error) {
  values_.clear();
  positional_.clear();
  bool optionsEnded = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (!optionsEnded && arg == "--") {
      optionsEnded = true;
      continue;
    }
    if (optionsEnded || arg.size() < 2 || arg[0] != '-' ||
        looksNegativeNumber(arg)) {
      if (!allowPositional_) {
        error = "unexpected argument '" + arg + "'";
        return false;
      }
      positional_.push_back(arg);
      continue;
    }
    std::string name = arg, value;
    bool inlineValue = false;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      inlineValue = true;
    }
    const OptionSpec *spec = find(name);
    if (!spec) {
      error = "unknown option " + name;
      return false;
    }
    if (spec->kind == ValueKind::Flag) {
      if (inlineValue) {
        error = "option " + name + " takes no value";
        return false;
      }
    } else if (!inlineValue) {
      if (i + 1 >= args.size()) {
        error = "option " + name + " needs a value";
        return false;
      }
      value = args[++i];
    }
    if (!values_.emplace(spec->names.front(), value).second) {
      error = "option " + name + " given twice";
      return false;
    }
  }
  return true;
}

bool CommandLine::given(const std::string &name) const {
  const OptionSpec *spec = find(name);
  return spec && values_.count(spec->names.front());
}

std::optional<std::string> CommandLine::value(const std::string &name) const {
  const OptionSpec *spec = find(name);
  if (!spec || spec->kind == ValueKind::Flag)
    return std::nullopt;
  auto it = values_.find(spec->names.front());
  if (it == values_.end())
    return std::nullopt;
  return it->second;
}

bool CommandLine::getInteger(const std::string &name, int64_t &out,
                             std::string &error) const {
  const OptionSpec *spec = find(name);
  if (!spec || spec->kind != ValueKind::Integer) {
    error = "internal error: " + name + " is not an integer option";
    return false;
  }
  std::optional<std::string> text = value(name);
  if (!text)
    return true;
  return validation::parseIntegerInRange(*text, spec->names.front().c_str(),
                                         spec->min, spec->max, out, error);
}

bool CommandLine::getReal(const std::string &name, double &out,
                          std::string &error) const {
  const OptionSpec *spec = find(name);
  if (!spec || spec->kind != ValueKind::Real) {
    error = "internal error: " + name + " is not a real option";
    return false;
  }
  std::optional<std::string> text = value(name);
  if (!text)
    return true;
  errno = 0;
  char *end = nullptr;
  // strtod would skip leading spaces: reject them like parseIntegerInRange.
  const bool leadingSpace =
      !text->empty() && std::isspace(static_cast<unsigned char>((*text)[0]));
  double v = std::strtod(text->c_str(), &end);
  if (text->empty() || leadingSpace || *end != '\0' || errno == ERANGE ||
      !std::isfinite(v) || (spec->hasMin && v < spec->realMin)) {
    error = spec->names.front() + " expects a finite number" +
            (spec->hasMin ? " >= " + formatReal(spec->realMin) : "") +
            ", got '" + *text + "'";
    return false;
  }
  out = v;
  return true;
}

bool CommandLine::validate(std::string &error) const {
  for (const OptionSpec &spec : specs_) {
    const std::string &name = spec.names.front();
    if (spec.kind == ValueKind::Integer) {
      int64_t v;
      if (!getInteger(name, v, error))
        return false;
    } else if (spec.kind == ValueKind::Real) {
      double v;
      if (!getReal(name, v, error))
        return false;
    }
  }
  return true;
}

std::string CommandLine::helpText() const {
  constexpr size_t kHelpColumn = 20;
  std::string out;
  std::string section;
  bool first = true;
  for (const OptionSpec &spec : specs_) {
    if (first || spec.section != section) {
      if (!spec.section.empty())
        out += (first ? "" : "\n") + spec.section + "\n";
      section = spec.section;
      first = false;
    }
    // Short spellings first: "-v, --verbose".
    std::string names;
    for (int pass = 0; pass < 2; ++pass)
      for (const std::string &n : spec.names) {
        const bool isShort = n.size() < 2 || n[1] != '-';
        if (isShort != (pass == 0))
          continue;
        names += (names.empty() ? "" : ", ") + n;
      }
    std::string line = "  " + names;
    if (!spec.metavar.empty())
      line += " " + spec.metavar;
    std::vector<std::string> helpLines;
    size_t pos = 0;
    while (pos <= spec.help.size() && !spec.help.empty()) {
      size_t nl = spec.help.find('\n', pos);
      helpLines.push_back(spec.help.substr(
          pos, nl == std::string::npos ? std::string::npos : nl - pos));
      if (nl == std::string::npos)
        break;
      pos = nl + 1;
    }
    size_t next = 0;
    if (!helpLines.empty() && line.size() + 2 <= kHelpColumn) {
      line.append(kHelpColumn - line.size(), ' ');
      line += helpLines[next++];
    }
    out += line + "\n";
    for (; next < helpLines.size(); ++next)
      out += std::string(kHelpColumn, ' ') + helpLines[next] + "\n";
  }
  return out;
}

} // namespace flamia::cli
