// The timeline (jit/timeline.h): events from several threads on small stable thread ids,
// ordered by start, times relative to the timeline's start; and the trace observer's pieces.
#include "jit/timeline.h"

#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "jit/trace_observer.h"

namespace pto::jit {
namespace {

using Clock = Timeline::Clock;
using std::chrono::microseconds;

TEST(Timeline, ThreadIdsAreSmallStableAndDistinct) {
  const int mine = TimelineThreadId();
  EXPECT_GE(mine, 1);
  EXPECT_EQ(TimelineThreadId(), mine);
  int other = 0;
  std::thread([&] { other = TimelineThreadId(); }).join();
  EXPECT_NE(other, mine);
  EXPECT_GE(other, 1);
}

TEST(Timeline, EventsFromThreadsAreOrderedByStartWithTheirThreads) {
  const Clock::time_point t0 = Clock::now();
  Timeline timeline(t0);
  timeline.Add("late", EventCategory::kCall, t0 + microseconds(50), t0 + microseconds(80),
               {{"inputs", "[2, 3]"}});
  int worker = 0;
  std::thread([&] {
    worker = TimelineThreadId();
    timeline.Add("early", EventCategory::kKernel, t0 + microseconds(10), t0 + microseconds(30));
  }).join();
  // Before the start: clamped to it.
  timeline.Add("before", EventCategory::kCompile, t0 - microseconds(20), t0 + microseconds(5));
  const std::vector<TimelineEvent> events = timeline.Events();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].name, "before");
  EXPECT_DOUBLE_EQ(events[0].start_us, 0);
  EXPECT_DOUBLE_EQ(events[0].duration_us, 5);
  EXPECT_EQ(events[1].name, "early");
  EXPECT_EQ(events[1].tid, worker);
  EXPECT_EQ(events[1].category, EventCategory::kKernel);
  EXPECT_DOUBLE_EQ(events[1].start_us, 10);
  EXPECT_DOUBLE_EQ(events[1].duration_us, 20);
  EXPECT_EQ(events[2].name, "late");
  EXPECT_EQ(events[2].tid, TimelineThreadId());
  ASSERT_EQ(events[2].args.size(), 1u);
  EXPECT_EQ(events[2].args[0].second, "[2, 3]");
  const std::vector<TimelineThread> threads = timeline.Threads();
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_LT(threads[0].tid, threads[1].tid);
  std::set<int> tids = {threads[0].tid, threads[1].tid};
  EXPECT_EQ(tids, (std::set<int>{worker, TimelineThreadId()}));
  for (const TimelineThread& t : threads) EXPECT_FALSE(t.name.empty());
  timeline.Clear();
  EXPECT_TRUE(timeline.Events().empty());
  EXPECT_EQ(timeline.Threads().size(), 2u);
}

TEST(Timeline, ConcurrentAppendsAreAllKept) {
  Timeline timeline;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 250; ++i) {
        const Clock::time_point now = Clock::now();
        timeline.Add("piece", EventCategory::kKernel, now, now);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(timeline.Events().size(), 1000u);
  EXPECT_EQ(timeline.Threads().size(), 4u);
}

TEST(TraceObserver, EachPieceIsAKernelEventWithItsRange) {
  Plan plan;
  plan.kernels.resize(2);
  plan.kernels[1].name = "f32_add_x";
  const Clock::time_point t0 = Clock::now();
  Timeline timeline(t0);
  TraceObserver observer(plan, timeline);
  EXPECT_TRUE(observer.wants_pieces());
  const int64_t lo[2] = {0, 64}, hi[2] = {32, 128};
  observer.OnPiece(1, lo, hi, 1, t0 + microseconds(3), t0 + microseconds(7));
  const std::vector<TimelineEvent> events = timeline.Events();
  ASSERT_EQ(events.size(), 1u);
  const TimelineEvent& e = events[0];
  EXPECT_EQ(e.name, "f32_add_x");
  EXPECT_EQ(e.category, EventCategory::kKernel);
  EXPECT_EQ(e.tid, TimelineThreadId());
  EXPECT_DOUBLE_EQ(e.start_us, 3);
  EXPECT_DOUBLE_EQ(e.duration_us, 4);
  EXPECT_EQ(e.kernel, 1);
  EXPECT_EQ(e.arena_slot, 1);
  EXPECT_EQ(e.lo[0], 0);
  EXPECT_EQ(e.lo[1], 64);
  EXPECT_EQ(e.hi[0], 32);
  EXPECT_EQ(e.hi[1], 128);
  EXPECT_TRUE(e.args.empty());
}

}  // namespace
}  // namespace pto::jit
