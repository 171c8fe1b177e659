//===- Report.h - flamia-run's result table ---------------------*- C++ -*-===//
#ifndef FLAMIA_TOOLS_FLAMIARUN_REPORT_H
#define FLAMIA_TOOLS_FLAMIARUN_REPORT_H

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace flamia::run {

enum class Verdict { Pass, Fail, Info, Skip };
const char *verdictName(Verdict v);

struct CheckRow {
  std::string check;
  int64_t compared = 0;
  double maxAbsDiff = 0.0;
  Verdict verdict = Verdict::Info;
  std::string detail;
};

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
