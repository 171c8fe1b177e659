//===- ExpressionFuzzer.cpp - Fuzz manifest shape expressions -------------===//
//
// Any text through Expression::parse, and every accepted expression through
// evaluate with symbol values from ordinary to extreme: evaluation either
// succeeds or reports an error (overflow, division by zero, ...), and never
// executes signed overflow (UBSan would abort). An expression without symbols
// evaluates to its constantValue.
//
//===----------------------------------------------------------------------===//
#include "FuzzTarget.h"

#include "flamia/Runtime/Expression.h"

#include <string>

using namespace flamia::runtime;

namespace {
SymbolValues valuesAll(int64_t v) {
  SymbolValues s;
  for (int i = 0; i < kNumSymbols; ++i)
    s.set(static_cast<Symbol>(i), v);
  return s;
}

SymbolValues valuesTypical() {
  SymbolValues s;
  s.set(Symbol::T, 4096);
  s.set(Symbol::Hq, 16);
  s.set(Symbol::Hkv, 4);
  s.set(Symbol::D, 128);
  s.set(Symbol::NumDocs, 3);
  s.set(Symbol::NB, 130);
  // NUM_ITEMS left unset: an error, never a read of garbage.
  s.setUnavailableReason(Symbol::NumItems, "the manifest has no schedule");
  s.set(Symbol::NumSms, 132);
  return s;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  Expression e;
  Status parsed = Expression::parse(text, e);
  if (!parsed.ok()) {
    FUZZ_CHECK(!parsed.message.empty());
    return 0;
  }
  const SymbolValues cases[] = {
      valuesTypical(),        valuesAll(0),         valuesAll(1),
      valuesAll(-1),          valuesAll(INT32_MAX), valuesAll(INT64_MAX),
      valuesAll(INT64_MIN),   valuesAll(3037000500), // ~sqrt(2^63)
  };
  for (const SymbolValues &values : cases) {
    int64_t v = 0;
    Status s = e.evaluate(values, v);
    FUZZ_CHECK(s.ok() || !s.message.empty());
  }
  int64_t constant;
  if (e.constantValue(constant)) {
    int64_t v = 0;
    FUZZ_CHECK(e.evaluate(SymbolValues(), v).ok() && v == constant);
  }
  return 0;
}
