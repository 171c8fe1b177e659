//===- Expression.h - Integer shape and grid expressions --------*- C++ -*-===//
//
// The manifest's sizes are integer expressions over a fixed set of symbols
// (docs/runtime-abi.md, "Symbols"):
//
//   expr    := term (('+' | '-') term)*
//   term    := unary (('*' | '/') unary)*
//   unary   := '-' unary | primary
//   primary := INTEGER | SYMBOL | 'cdiv' '(' expr ',' expr ')' | '(' expr ')'
//
// Arithmetic is on int64 with every overflow an error. `a / b` is C integer
// division (truncates toward zero); b = 0 is an error. `cdiv(a, b)` is the
// mathematical ceiling of a / b and needs b > 0. Symbols are resolved when the
// expression is parsed (an unknown name is a parse error that lists the valid
// ones); their values are supplied at evaluation, where a symbol without a
// value (NUM_ITEMS or NUM_KV_ITEMS when the manifest has no
// schedule) is an error.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_RUNTIME_EXPRESSION_H
#define FLAMIA_RUNTIME_EXPRESSION_H

#include "flamia/Runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace flamia::runtime {

enum class Symbol {
  T,        // total tokens
  Hq,       // query heads
  Hkv,      // key/value heads
  D,        // head dim
  NumDocs,  // NUM_DOCS
  NB,       // document-local 32-token scale blocks
  NumItems, // NUM_ITEMS: work items of the schedule
  NumSms,   // NUM_SMS: multiprocessors of the device
  NumKvItems, // NUM_KV_ITEMS: key-tile items of the dK/dV schedule
};
constexpr int kNumSymbols = 9;

/// The name as written in manifests: "T", "Hq", ..., "NUM_DOCS".
const char *symbolName(Symbol symbol);
/// Looks a name up; false if it is not a symbol.
bool symbolFromName(const std::string &name, Symbol &out);
/// "T, Hq, Hkv, D, NUM_DOCS, NB, NUM_ITEMS, NUM_SMS, NUM_KV_ITEMS".
std::string symbolList();

/// Values of the symbols for one evaluation; a symbol may be left unset.
class SymbolValues {
public:
  void set(Symbol symbol, int64_t value) {
    values_[static_cast<int>(symbol)] = value;
    isSet_[static_cast<int>(symbol)] = true;
  }
  bool has(Symbol symbol) const { return isSet_[static_cast<int>(symbol)]; }
  int64_t get(Symbol symbol) const { return values_[static_cast<int>(symbol)]; }
  /// Why a symbol may be unset, for the error message ("the manifest has no
  /// schedule"); empty gives a generic message.
  void setUnavailableReason(Symbol symbol, std::string reason) {
    reasons_[static_cast<int>(symbol)] = std::move(reason);
  }
  const std::string &unavailableReason(Symbol symbol) const {
    return reasons_[static_cast<int>(symbol)];
  }

private:
  int64_t values_[kNumSymbols] = {};
  bool isSet_[kNumSymbols] = {};
  std::string reasons_[kNumSymbols];
};

class Expression {
public:
  /// Parses `text`. Errors (InvalidManifest) quote the text and give the
  /// 1-based column: "unknown symbol 'Tq' at column 1 of 'Tq * D' (symbols:
  /// ...)".
  static Status parse(const std::string &text, Expression &out);
  /// An expression holding one integer.
  static Expression constant(int64_t value);

  /// Evaluates with `symbols`. Errors (InvalidArgument): a symbol without a
  /// value, division by zero, cdiv by a non-positive divisor, int64 overflow.
  Status evaluate(const SymbolValues &symbols, int64_t &out) const;

  /// The source text (or the decimal constant).
  const std::string &text() const { return text_; }
  bool empty() const { return nodes_.empty(); }
  /// Whether the expression mentions `symbol`.
  bool uses(Symbol symbol) const;
  /// True and the value if the expression uses no symbol.
  bool constantValue(int64_t &out) const;

private:
  enum class Op { Constant, Symbol, Neg, Add, Sub, Mul, Div, CDiv };
  struct Node {
    Op op = Op::Constant;
    int64_t value = 0;
    Symbol symbol = Symbol::T;
    int lhs = -1;
    int rhs = -1;
  };
  std::string text_;
  std::vector<Node> nodes_;
  int root_ = -1;

  Status evaluateNode(int index, const SymbolValues &symbols,
                      int64_t &out) const;
  friend class ExpressionParser;
};

} // namespace flamia::runtime

#endif // FLAMIA_RUNTIME_EXPRESSION_H
