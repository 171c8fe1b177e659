//===- Report.cpp - flamia-run's result table -----------------------------===//

#include "Report.h"

#include <algorithm>

namespace flamia::run {

bool Report::pass() const { return failures() == 0; }

int Report::failures() const {
  int n = 0;
  for (const CheckRow &r : rows_)
    n += r.verdict == Verdict::Fail;
  return n;
}

void Report::print(FILE *out) const {
  size_t width = 5;
  for (const CheckRow &r : rows_)
    width = std::max(width, r.name.size());
  fprintf(out, "%-*s  %12s  %12s  %-7s %s\n", static_cast<int>(width), "check",
          "compared", "max abs diff", "verdict", "detail");
  fprintf(out, "%s\n", std::string(width + 50, '-').c_str());
  for (const CheckRow &r : rows_) {
    char diff[32];
    if (r.compared == 0)
      snprintf(diff, sizeof diff, "-");
    else
      snprintf(diff, sizeof diff, "%.3g", r.maxAbsDiff);
    fprintf(out, "%-*s  %12lld  %12s  %-7s %s\n", static_cast<int>(width),
            r.name.c_str(), static_cast<long long>(r.compared), diff,
            verdictName(r.verdict), r.detail.c_str());
  }
}

} // namespace flamia::run
