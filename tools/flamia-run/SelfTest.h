//===- SelfTest.h - flamia-run --selftest -----------------------*- C++ -*-===//
//
// Checks the runtime's device path on a real GPU without any FLAMIA kernel:
// a hand-written PTX kernel (flamia_echo.ptx, JIT-compiled by the driver)
// echoes the parameters it received and what it saw of the launch (work
// counter, cluster size, dynamic shared memory) into a workspace buffer, and
// flamia-run compares that with what the runtime packed and uploaded.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_TOOLS_FLAMIARUN_SELFTEST_H
#define FLAMIA_TOOLS_FLAMIARUN_SELFTEST_H

#include "Options.h"
#include "Report.h"

#include "flamia/Runtime/Status.h"

namespace flamia::run {

runtime::Status runSelfTest(const RunOptions &options, Report &report);

} // namespace flamia::run

#endif // FLAMIA_TOOLS_FLAMIARUN_SELFTEST_H
