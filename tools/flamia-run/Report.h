//===- Report.h - flamia-run's result table ---------------------*- C++ -*-===//
#ifndef FLAMIA_TOOLS_FLAMIARUN_REPORT_H
#define FLAMIA_TOOLS_FLAMIARUN_REPORT_H

#include "flamia/Validation/Check.h"

#include <cstdio>
#include <vector>

namespace flamia::run {

/// A row of the table is a FlamiaValidation result (the self-test writes
/// its own rows in the same type).
using Verdict = validation::device::Verdict;
using CheckRow = validation::device::Check;
using validation::device::verdictName;

class Report {
public:
  void add(CheckRow row) { rows_.push_back(std::move(row)); }
  /// No row failed (Info and Skip rows do not count).
  bool pass() const;
  int failures() const;
  bool empty() const { return rows_.empty(); }
  void print(FILE *out) const;

private:
  std::vector<CheckRow> rows_;
};

} // namespace flamia::run

#endif // FLAMIA_TOOLS_FLAMIARUN_REPORT_H
