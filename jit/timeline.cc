#include "jit/timeline.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>

#include "absl/strings/str_cat.h"

namespace pto::jit {
namespace {

std::atomic<int> next_thread_id{1};

// The OS thread's name, or "" when it has none but the process's (a thread inherits it).
std::string OsThreadName() {
  char name[64] = {};
  if (pthread_getname_np(pthread_self(), name, sizeof name) != 0) return "";
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
  // Named outside the lock: the name of the calling thread only (another's is not ours to ask).
  std::string os_name = tid == TimelineThreadId() ? OsThreadName() : "";
  std::lock_guard<std::mutex> lock(mu_);
  events_.push_back(std::move(e));
  const auto it = std::find_if(threads_.begin(), threads_.end(),
                               [tid](const TimelineThread& t) { return t.tid == tid; });
  if (it == threads_.end()) {
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
  std::stable_sort(events.begin(), events.end(),
                   [](const TimelineEvent& a, const TimelineEvent& b) {
                     return a.start_us < b.start_us;
                   });
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
