#include "jit/timeline.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>

#include "absl/strings/str_cat.h"

namespace pto::jit {
namespace {

std::atomic<int> next_thread_id{1};

// The calling OS thread's name as it was at its first event (asked once per thread: it is a
// system call).
const std::string& OsThreadName() {
  thread_local const std::string name = [] {
    char buffer[64] = {};
    return pthread_getname_np(pthread_self(), buffer, sizeof buffer) == 0 ? std::string(buffer)
                                                                          : std::string();
  }();
  return name;
}

double Micros(Timeline::Clock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

}  // namespace

const char* EventCategoryName(EventCategory category) {
  switch (category) {
    case EventCategory::kCall:
      return "call";
    case EventCategory::kKernel:
      return "kernel";
    case EventCategory::kCompile:
      return "compile";
    case EventCategory::kCacheLoad:
      return "cache_load";
    case EventCategory::kShapeClass:
      return "shape_class";
    case EventCategory::kTune:
      return "tune";
  }
  return "other";
}

int TimelineThreadId() {
  thread_local const int id = next_thread_id.fetch_add(1, std::memory_order_relaxed);
  return id;
}

void Timeline::Add(std::string name, EventCategory category, Clock::time_point begin,
                   Clock::time_point end, std::vector<std::pair<std::string, std::string>> args) {
  AddOnThread(TimelineThreadId(), std::move(name), category, begin, end, std::move(args));
}

void Timeline::AddOnThread(int tid, std::string name, EventCategory category,
                           Clock::time_point begin, Clock::time_point end,
                           std::vector<std::pair<std::string, std::string>> args) {
  TimelineEvent e;
  e.name = std::move(name);
  e.category = category;
  e.tid = tid;
  e.start_us = std::max(0.0, Micros(begin - start_));
  e.duration_us = std::max(0.0, Micros(end - std::max(begin, start_)));
  e.args = std::move(args);
  Append(std::move(e));
}

void Timeline::AddPiece(const std::string& name, int kernel, const int64_t lo[2],
                        const int64_t hi[2], int arena_slot, Clock::time_point begin,
                        Clock::time_point end) {
  TimelineEvent e;
  e.name = name;
  e.category = EventCategory::kKernel;
  e.tid = TimelineThreadId();
  e.start_us = std::max(0.0, Micros(begin - start_));
  e.duration_us = std::max(0.0, Micros(end - std::max(begin, start_)));
  e.kernel = kernel;
  e.arena_slot = arena_slot;
  for (int d = 0; d < 2; ++d) {
    e.lo[d] = lo[d];
    e.hi[d] = hi[d];
  }
  Append(std::move(e));
}

void Timeline::Append(TimelineEvent e) {
  const int tid = e.tid;
  std::lock_guard<std::mutex> lock(mu_);
  events_.push_back(std::move(e));
  const auto it = std::find_if(threads_.begin(), threads_.end(),
                               [tid](const TimelineThread& t) { return t.tid == tid; });
  if (it == threads_.end()) {
    // Only the calling thread's own name is known here.
    const std::string& os_name = tid == TimelineThreadId() ? OsThreadName() : std::string();
    threads_.push_back({tid, os_name.empty() ? absl::StrCat("thread ", tid)
                                             : absl::StrCat(os_name, " (thread ", tid, ")")});
  }
}

std::vector<TimelineEvent> Timeline::Events() const {
  std::vector<TimelineEvent> events;
  {
    std::lock_guard<std::mutex> lock(mu_);
    events = events_;
  }
  std::stable_sort(
      events.begin(), events.end(),
      [](const TimelineEvent& a, const TimelineEvent& b) { return a.start_us < b.start_us; });
  return events;
}

std::vector<TimelineThread> Timeline::Threads() const {
  std::vector<TimelineThread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    threads = threads_;
  }
  std::sort(threads.begin(), threads.end(),
            [](const TimelineThread& a, const TimelineThread& b) { return a.tid < b.tid; });
  return threads;
}

void Timeline::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  events_.clear();
  events_.shrink_to_fit();
}

}  // namespace pto::jit
