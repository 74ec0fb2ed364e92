// A timeline of what a Runtime did while tracing (Runtime::StartTrace): calls, kernel pieces
// on the threads that ran them, compilations and cache loads, as complete events (a start and
// a duration) on small stable thread ids. Thread-safe: any thread appends.
#ifndef PTO_JIT_TIMELINE_H_
#define PTO_JIT_TIMELINE_H_

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace pto::jit {

// What an event is about: the trace's "cat" field.
enum class EventCategory : uint8_t { kCall, kKernel, kCompile, kCacheLoad, kShapeClass, kTune };
const char* EventCategoryName(EventCategory category);

struct TimelineEvent {
  std::string name;
  EventCategory category = EventCategory::kCall;
  int tid = 0;          // TimelineThreadId() of the thread it happened on
  double start_us = 0;  // from the timeline's start
  double duration_us = 0;
  // Shown with the event ("inputs" "[2, 8]", ...), in order.
  std::vector<std::pair<std::string, std::string>> args;
  // A kernel piece (kKernel): the kernel's index in its plan (-1: not a piece), the thread's
  // arena slot and the piece's grid range, kept as numbers (formatted when written: an event
  // per piece stays cheap).
  int kernel = -1;
  int arena_slot = 0;
  int64_t lo[2] = {0, 0}, hi[2] = {0, 0};
};

struct TimelineThread {
  int tid = 0;
  std::string name;  // the OS thread's name when it has one, else "thread <tid>"
};

// A small id for the calling OS thread, stable for the thread's life and unique in the process
// (1, 2, ... in order of first use).
int TimelineThreadId();

class Timeline {
 public:
  using Clock = std::chrono::steady_clock;
  explicit Timeline(Clock::time_point start = Clock::now()) : start_(start) {}

  Clock::time_point start() const { return start_; }
  // Appends an event of the calling thread from `begin` to `end` (clamped to the timeline's
  // start).
  void Add(std::string name, EventCategory category, Clock::time_point begin, Clock::time_point end,
           std::vector<std::pair<std::string, std::string>> args = {});
  // A piece [lo, hi) of kernel `kernel` (named `name`) that ran on the calling thread, in slot
  // `arena_slot` of its arena.
  void AddPiece(const std::string& name, int kernel, const int64_t lo[2], const int64_t hi[2],
                int arena_slot, Clock::time_point begin, Clock::time_point end);
  // As Add, on the thread `tid` (an event reported by one thread about another).
  void AddOnThread(int tid, std::string name, EventCategory category, Clock::time_point begin,
                   Clock::time_point end, std::vector<std::pair<std::string, std::string>> args);

  // Every event so far, ordered by start, and the threads they are on (ordered by id).
  std::vector<TimelineEvent> Events() const;
  std::vector<TimelineThread> Threads() const;
  // Drops every event (the threads seen are kept).
  void Clear();

 private:
  void Append(TimelineEvent event);

  Clock::time_point start_;
  mutable std::mutex mu_;
  std::vector<TimelineEvent> events_;
  std::vector<TimelineThread> threads_;
};

}  // namespace pto::jit

#endif  // PTO_JIT_TIMELINE_H_
