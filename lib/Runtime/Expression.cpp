//===- Expression.cpp - Integer shape and grid expressions ----------------===//

#include "flamia/Runtime/Expression.h"

#include <cctype>

namespace flamia::runtime {

namespace {
struct SymbolInfo {
  Symbol symbol;
  const char *name;
};
constexpr SymbolInfo kSymbols[kNumSymbols] = {
    {Symbol::T, "T"},
    {Symbol::Hq, "Hq"},
    {Symbol::Hkv, "Hkv"},
    {Symbol::D, "D"},
    {Symbol::NumDocs, "NUM_DOCS"},
    {Symbol::NB, "NB"},
    {Symbol::NumItems, "NUM_ITEMS"},
    {Symbol::NumSms, "NUM_SMS"},
    {Symbol::NumKvItems, "NUM_KV_ITEMS"},
};
/// Expressions are short; this bounds the recursion of parse and evaluate.
constexpr int kMaxNesting = 64;
constexpr size_t kMaxLength = 1024;
} // namespace

const char *symbolName(Symbol symbol) {
  return kSymbols[static_cast<int>(symbol)].name;
}

bool symbolFromName(const std::string &name, Symbol &out) {
  for (const SymbolInfo &info : kSymbols)
    if (name == info.name) {
      out = info.symbol;
      return true;
    }
  return false;
}

std::string symbolList() {
  std::string list;
  for (const SymbolInfo &info : kSymbols)
    list += (list.empty() ? "" : ", ") + std::string(info.name);
  return list;
}

class ExpressionParser {
public:
  ExpressionParser(const std::string &text, Expression &out)
      : text_(text), out_(out) {}

  Status run() {
    if (text_.size() > kMaxLength)
      return invalidManifest("expression longer than " +
                             std::to_string(kMaxLength) + " characters");
    int root;
    FLAMIA_RETURN_IF_ERROR(parseExpr(root, 0));
    skipSpaces();
    if (pos_ < text_.size())
      return fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    out_.root_ = root;
    return Status::success();
  }

private:
  const std::string &text_;
  Expression &out_;
  size_t pos_ = 0;

  Status failAt(size_t pos, const std::string &message,
                const std::string &hint = "") const {
    return invalidManifest(message + " at column " + std::to_string(pos + 1) +
                           " of '" + text_ + "'" +
                           (hint.empty() ? "" : " (" + hint + ")"));
  }
  Status fail(const std::string &message) const {
    return failAt(pos_, message);
  }

  void skipSpaces() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t'))
      ++pos_;
  }
  bool peek(char c) {
    skipSpaces();
    return pos_ < text_.size() && text_[pos_] == c;
  }

  int addNode(Expression::Node node) {
    out_.nodes_.push_back(node);
    return static_cast<int>(out_.nodes_.size()) - 1;
  }
  int addBinary(Expression::Op op, int lhs, int rhs) {
    Expression::Node node;
    node.op = op;
    node.lhs = lhs;
    node.rhs = rhs;
    return addNode(node);
  }

  Status parseExpr(int &out, int depth) {
    if (depth > kMaxNesting)
      return fail("expression nested deeper than " +
                  std::to_string(kMaxNesting));
    int lhs;
    FLAMIA_RETURN_IF_ERROR(parseTerm(lhs, depth));
    while (peek('+') || peek('-')) {
      Expression::Op op =
          text_[pos_] == '+' ? Expression::Op::Add : Expression::Op::Sub;
      ++pos_;
      int rhs;
      FLAMIA_RETURN_IF_ERROR(parseTerm(rhs, depth));
      lhs = addBinary(op, lhs, rhs);
    }
    out = lhs;
    return Status::success();
  }

  Status parseTerm(int &out, int depth) {
    int lhs;
    FLAMIA_RETURN_IF_ERROR(parseUnary(lhs, depth));
    while (peek('*') || peek('/')) {
      Expression::Op op =
          text_[pos_] == '*' ? Expression::Op::Mul : Expression::Op::Div;
      ++pos_;
      int rhs;
      FLAMIA_RETURN_IF_ERROR(parseUnary(rhs, depth));
      lhs = addBinary(op, lhs, rhs);
    }
    out = lhs;
    return Status::success();
  }

  Status parseUnary(int &out, int depth) {
    if (depth > kMaxNesting)
      return fail("expression nested deeper than " +
                  std::to_string(kMaxNesting));
    if (peek('-')) {
      ++pos_;
      int operand;
      FLAMIA_RETURN_IF_ERROR(parseUnary(operand, depth + 1));
      Expression::Node node;
      node.op = Expression::Op::Neg;
      node.lhs = operand;
      out = addNode(node);
      return Status::success();
    }
    return parsePrimary(out, depth);
  }

  Status parsePrimary(int &out, int depth) {
    skipSpaces();
    if (pos_ >= text_.size())
      return fail(text_.empty() ? "empty expression"
                                : "expected a number, a symbol or '(', found "
                                  "the end");
    char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      FLAMIA_RETURN_IF_ERROR(parseExpr(out, depth + 1));
      if (!peek(')'))
        return fail("expected ')'");
      ++pos_;
      return Status::success();
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t start = pos_;
      int64_t value = 0;
      while (pos_ < text_.size() &&
             std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        int digit = text_[pos_] - '0';
        if (__builtin_mul_overflow(value, 10, &value) ||
            __builtin_add_overflow(value, digit, &value))
          return failAt(start, "integer literal does not fit in int64");
        ++pos_;
      }
      if (pos_ < text_.size() &&
          (std::isalpha(static_cast<unsigned char>(text_[pos_])) ||
           text_[pos_] == '_' || text_[pos_] == '.'))
        return fail("unexpected '" + std::string(1, text_[pos_]) +
                    "' after a number (integers only)");
      Expression::Node node;
      node.op = Expression::Op::Constant;
      node.value = value;
      out = addNode(node);
      return Status::success();
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
              text_[pos_] == '_'))
        ++pos_;
      std::string name = text_.substr(start, pos_ - start);
      if (peek('(')) {
        if (name != "cdiv")
          return failAt(start, "unknown function '" + name + "'",
                        "the only function is cdiv");
        ++pos_;
        int a, b;
        FLAMIA_RETURN_IF_ERROR(parseExpr(a, depth + 1));
        if (!peek(','))
          return fail("expected ',' between the arguments of cdiv");
        ++pos_;
        FLAMIA_RETURN_IF_ERROR(parseExpr(b, depth + 1));
        if (!peek(')'))
          return fail("expected ')' after the arguments of cdiv");
        ++pos_;
        out = addBinary(Expression::Op::CDiv, a, b);
        return Status::success();
      }
      if (name == "cdiv")
        return failAt(start, "cdiv needs arguments: cdiv(a, b)");
      Symbol symbol;
      if (!symbolFromName(name, symbol))
        return failAt(start, "unknown symbol '" + name + "'",
                      "symbols: " + symbolList());
      Expression::Node node;
      node.op = Expression::Op::Symbol;
      node.symbol = symbol;
      out = addNode(node);
      return Status::success();
    }
    return fail("expected a number, a symbol or '(', found '" +
                std::string(1, c) + "'");
  }
};

Status Expression::parse(const std::string &text, Expression &out) {
  out = Expression();
  out.text_ = text;
  ExpressionParser parser(text, out);
  Status status = parser.run();
  if (!status.ok())
    out = Expression();
  return status;
}

Expression Expression::constant(int64_t value) {
  Expression e;
  e.text_ = std::to_string(value);
  Node node;
  node.op = Op::Constant;
  node.value = value;
  e.nodes_.push_back(node);
  e.root_ = 0;
  return e;
}

bool Expression::uses(Symbol symbol) const {
  for (const Node &node : nodes_)
    if (node.op == Op::Symbol && node.symbol == symbol)
      return true;
  return false;
}

bool Expression::constantValue(int64_t &out) const {
  if (nodes_.empty())
    return false;
  for (const Node &node : nodes_)
    if (node.op == Op::Symbol)
      return false;
  SymbolValues none;
  return evaluate(none, out).ok();
}

Status Expression::evaluate(const SymbolValues &symbols, int64_t &out) const {
  if (root_ < 0)
    return invalidArgument("empty expression");
  return evaluateNode(root_, symbols, out);
}

Status Expression::evaluateNode(int index, const SymbolValues &symbols,
                                int64_t &out) const {
  const Node &node = nodes_[index];
  auto overflow = [&](const char *what) {
    return invalidArgument(std::string("integer overflow in ") + what +
                           " while evaluating '" + text_ + "'");
  };
  switch (node.op) {
  case Op::Constant:
    out = node.value;
    return Status::success();
  case Op::Symbol:
    if (!symbols.has(node.symbol)) {
      const std::string &reason = symbols.unavailableReason(node.symbol);
      return invalidArgument(
          std::string("symbol ") + symbolName(node.symbol) + " has no value" +
          (reason.empty() ? "" : ": " + reason) + " (in '" + text_ + "')");
    }
    out = symbols.get(node.symbol);
    return Status::success();
  case Op::Neg: {
    int64_t v;
    FLAMIA_RETURN_IF_ERROR(evaluateNode(node.lhs, symbols, v));
    if (__builtin_sub_overflow(int64_t{0}, v, &out))
      return overflow("negation");
    return Status::success();
  }
  default:
    break;
  }
  int64_t a, b;
  FLAMIA_RETURN_IF_ERROR(evaluateNode(node.lhs, symbols, a));
  FLAMIA_RETURN_IF_ERROR(evaluateNode(node.rhs, symbols, b));
  switch (node.op) {
  case Op::Add:
    if (__builtin_add_overflow(a, b, &out))
      return overflow("'+'");
    return Status::success();
  case Op::Sub:
    if (__builtin_sub_overflow(a, b, &out))
      return overflow("'-'");
    return Status::success();
  case Op::Mul:
    if (__builtin_mul_overflow(a, b, &out))
      return overflow("'*'");
    return Status::success();
  case Op::Div:
    if (b == 0)
      return invalidArgument("division by zero while evaluating '" + text_ +
                             "'");
    if (a == INT64_MIN && b == -1)
      return overflow("'/'");
    out = a / b;
    return Status::success();
  case Op::CDiv: {
    if (b <= 0)
      return invalidArgument("cdiv by " + std::to_string(b) +
                             " (the divisor must be positive) while "
                             "evaluating '" +
                             text_ + "'");
    int64_t q = a / b, r = a % b;
    out = (r > 0) ? q + 1 : q; // ceiling; r < 0 means a < 0, truncation is up
    return Status::success();
  }
  default:
    return Status::error(ErrorCode::Internal, "bad expression node");
  }
}

} // namespace flamia::runtime
