// `--trace FILE` of `pto demo` and `pto run`: a Chrome trace of the command's calls
// (Runtime::StartTrace), and the line that says where it went and how to open it.
#ifndef PTO_TOOLS_PTO_TRACE_FILE_H_
#define PTO_TOOLS_PTO_TRACE_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "pto/runtime.h"

namespace pto::tools {

// "trace: FILE, N events (thread 1 main: 120, thread 2: 80); open it at ui.perfetto.dev (Open
// trace file) or chrome://tracing".
std::string TraceSummaryLine(const TraceSummary& summary);

// Stops `rt`'s trace and prints TraceSummaryLine on stdout.
absl::Status FinishTrace(Runtime& rt);

}  // namespace pto::tools

#endif  // PTO_TOOLS_PTO_TRACE_FILE_H_
