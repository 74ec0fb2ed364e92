// Runtime::StartTrace and StopTrace: a Timeline the Runtime's calls, plans and kernel compiler
// append to, written as a Chrome trace when it stops.
#include <map>

#include "absl/strings/str_cat.h"
#include "jit/chrome_trace.h"
#include "jit/runtime_impl.h"

namespace pto {
namespace detail {

absl::Status RuntimeImpl::StartTrace(const std::string& path) {
  std::lock_guard<std::mutex> lock(trace_mu_);
  if (timeline_.load(std::memory_order_relaxed) != nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("a trace is being recorded already (to ",
                                                      trace_path_, "): call StopTrace first"));
  }
  // Written now, so that an unwritable path is reported before anything is recorded.
  if (absl::Status s = jit::WriteChromeTrace(path, {}, {}, "pto"); !s.ok()) return s;
  timelines_.push_back(std::make_unique<jit::Timeline>());
  trace_path_ = path;
  timeline_.store(timelines_.back().get(), std::memory_order_release);
  compiler_->SetTimeline(timelines_.back().get());
  return absl::OkStatus();
}

absl::StatusOr<TraceSummary> RuntimeImpl::StopTrace() {
  std::lock_guard<std::mutex> lock(trace_mu_);
  jit::Timeline* timeline = timeline_.load(std::memory_order_relaxed);
  if (timeline == nullptr) {
    return absl::FailedPreconditionError(
        "no trace is being recorded: call Runtime::StartTrace first");
  }
  timeline_.store(nullptr, std::memory_order_release);
  compiler_->SetTimeline(nullptr);
  const std::vector<jit::TimelineEvent> events = timeline->Events();
  const std::vector<jit::TimelineThread> threads = timeline->Threads();
  timeline->Clear();  // kept (a call may still hold it), emptied
  if (absl::Status s = jit::WriteChromeTrace(trace_path_, events, threads, "pto"); !s.ok()) {
    return s;
  }
  TraceSummary summary;
  summary.path = trace_path_;
  summary.events = static_cast<int64_t>(events.size());
  std::map<int, size_t> index;
  for (const jit::TimelineThread& t : threads) {
    index[t.tid] = summary.threads.size();
    summary.threads.push_back({t.tid, t.name, 0, 0, 0});
  }
  for (const jit::TimelineEvent& e : events) {
    TraceThread& t = summary.threads[index[e.tid]];
    ++t.events;
    if (e.category == jit::EventCategory::kKernel) {
      ++t.kernel_events;
      t.kernel_seconds += e.duration_us * 1e-6;
    }
  }
  return summary;
}

}  // namespace detail

absl::Status Runtime::StartTrace(const std::string& path) { return impl_->StartTrace(path); }
absl::StatusOr<TraceSummary> Runtime::StopTrace() { return impl_->StopTrace(); }

}  // namespace pto
