// Writes a Timeline in the Chrome Trace Event Format (the JSON that ui.perfetto.dev and
// chrome://tracing open): a "traceEvents" array of complete events ("ph": "X", microseconds)
// and a thread_name metadata event ("ph": "M") per thread.
#ifndef PTO_JIT_CHROME_TRACE_H_
#define PTO_JIT_CHROME_TRACE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "jit/timeline.h"

namespace pto::jit {

// `text` as a JSON string literal, quotes included (control characters escaped as \uXXXX,
// bytes of 0x80 and above passed through: UTF-8 stays UTF-8).
std::string JsonString(std::string_view text);

// "rows [0, 64) cols [0, 128)": a kernel piece's grid range, as its event shows it.
std::string GridRangeText(const int64_t lo[2], const int64_t hi[2]);

// The trace's JSON; a kernel piece's args are its "grid" (GridRangeText), "kernel" (its index
// in the plan) and "arena slot", then its other args; `process_name` names the process's track.
std::string ChromeTraceJson(const std::vector<TimelineEvent>& events,
                            const std::vector<TimelineThread>& threads,
                            std::string_view process_name);

// Writes ChromeTraceJson to `path` (replaced). PermissionDenied "cannot write the trace to
// PATH: REASON" when it cannot.
absl::Status WriteChromeTrace(const std::string& path, const std::vector<TimelineEvent>& events,
                              const std::vector<TimelineThread>& threads,
                              std::string_view process_name);

}  // namespace pto::jit

#endif  // PTO_JIT_CHROME_TRACE_H_
