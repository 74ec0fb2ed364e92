#include "tools/pto/trace_file.h"

#include <cstdio>

#include "absl/strings/str_cat.h"

namespace pto::tools {

std::string TraceSummaryLine(const TraceSummary& summary) {
  std::string threads;
  for (const TraceThread& t : summary.threads) {
    absl::StrAppend(&threads, threads.empty() ? "" : ", ", t.name, ": ", t.events);
  }
  return absl::StrCat("trace: ", summary.path, ", ", summary.events, " events (", threads,
                      "); open it at ui.perfetto.dev (Open trace file) or chrome://tracing");
}

absl::Status FinishTrace(Runtime& rt) {
  absl::StatusOr<TraceSummary> summary = rt.StopTrace();
  if (!summary.ok()) return summary.status();
  std::printf("%s\n", TraceSummaryLine(*summary).c_str());
  return absl::OkStatus();
}

}  // namespace pto::tools
