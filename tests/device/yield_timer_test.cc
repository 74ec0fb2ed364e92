#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "device/yield_point.h"
#include "gtest/gtest.h"

namespace pto::device {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// Work that never passes a yield point (like one long LLVM pass). Calls the clock, so that
// sanitizers that defer signals to intercepted calls deliver them too.
void SpinFor(milliseconds duration) {
  const auto end = steady_clock::now() + duration;
  while (steady_clock::now() < end) {
  }
}

TEST(YieldTimerTest, RunsTheHookInsideWorkThatHasNoYieldPoint) {
  int runs = 0;
  const std::function<void()> hook = [&runs] { ++runs; };
  const ScopedYieldHook scope(&hook);
  const long signals_before = ScopedYieldTimer::signals_handled();
  {
    absl::StatusOr<std::unique_ptr<ScopedYieldTimer>> timer =
        ScopedYieldTimer::Start(std::chrono::microseconds(1000));
    ASSERT_TRUE(timer.ok()) << timer.status();
    SpinFor(milliseconds(200));
  }
  // About 200 periods; a loaded machine delivers fewer, none would mean no timer.
  EXPECT_GE(runs, 20);
  EXPECT_GE(ScopedYieldTimer::signals_handled() - signals_before, runs);
  const int after_timer = runs;
  SpinFor(milliseconds(20));
  EXPECT_LE(runs, after_timer + 1);  // at most one signal was still pending when it stopped
}

TEST(YieldTimerTest, TimeInHooksRunByTheTimerCountsAsYielded) {
  const std::function<void()> hook = [] { std::this_thread::sleep_for(milliseconds(2)); };
  const ScopedYieldHook scope(&hook);
  const double before = SecondsYielded();
  const auto start = steady_clock::now();
  {
    absl::StatusOr<std::unique_ptr<ScopedYieldTimer>> timer =
        ScopedYieldTimer::Start(std::chrono::microseconds(5000));
    ASSERT_TRUE(timer.ok()) << timer.status();
    SpinFor(milliseconds(100));
  }
  const double wall = std::chrono::duration<double>(steady_clock::now() - start).count();
  const double yielded = SecondsYielded() - before;
  EXPECT_GT(yielded, 0.01);  // about 20 hooks of 2 ms
  EXPECT_LT(yielded, wall);
}

TEST(YieldTimerTest, DoesNotReenterAHookThatIsRunning) {
  std::atomic<int> depth{0};
  std::atomic<int> deepest{0};
  int runs = 0;
  const std::function<void()> hook = [&] {
    const int d = depth.fetch_add(1) + 1;
    deepest.store(std::max(deepest.load(), d));
    // The first run (from the yield point) lasts many periods: signals arrive while it runs.
    if (++runs == 1) SpinFor(milliseconds(20));
    depth.fetch_sub(1);
  };
  const ScopedYieldHook scope(&hook);
  absl::StatusOr<std::unique_ptr<ScopedYieldTimer>> timer =
      ScopedYieldTimer::Start(std::chrono::microseconds(500));
  ASSERT_TRUE(timer.ok()) << timer.status();
  const long signals_before = ScopedYieldTimer::signals_handled();
  YieldPoint();
  EXPECT_GT(ScopedYieldTimer::signals_handled(), signals_before);
  EXPECT_EQ(runs, 1);  // the signals inside it did not run it again
  SpinFor(milliseconds(20));
  timer->reset();
  EXPECT_GE(runs, 2);
  EXPECT_EQ(deepest.load(), 1);
}

TEST(YieldTimerTest, WithoutAHookSignalsDoNothing) {
  absl::StatusOr<std::unique_ptr<ScopedYieldTimer>> timer =
      ScopedYieldTimer::Start(std::chrono::microseconds(500));
  ASSERT_TRUE(timer.ok()) << timer.status();
  const long before = ScopedYieldTimer::signals_handled();
  SpinFor(milliseconds(50));
  EXPECT_GT(ScopedYieldTimer::signals_handled(), before);
  EXPECT_FALSE(HasYieldHook());
}

TEST(YieldTimerTest, InterruptedSleepsAndReadsComplete) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::thread writer([fd = fds[1]] {
    std::this_thread::sleep_for(milliseconds(50));
    const char byte = 'x';
    EXPECT_EQ(write(fd, &byte, 1), 1);
  });
  absl::StatusOr<std::unique_ptr<ScopedYieldTimer>> timer =
      ScopedYieldTimer::Start(std::chrono::microseconds(300));
  ASSERT_TRUE(timer.ok()) << timer.status();
  const auto start = steady_clock::now();
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_GE(steady_clock::now() - start, milliseconds(20));
  char byte = 0;
  EXPECT_EQ(read(fds[0], &byte, 1), 1);  // blocks through many signals: SA_RESTART
  EXPECT_EQ(byte, 'x');
  writer.join();
  close(fds[0]);
  close(fds[1]);
}

TEST(YieldTimerTest, RejectsAPeriodOfZero) {
  absl::StatusOr<std::unique_ptr<ScopedYieldTimer>> timer =
      ScopedYieldTimer::Start(std::chrono::microseconds(0));
  ASSERT_FALSE(timer.ok());
  EXPECT_EQ(timer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(timer.status().message(), "the yield timer's period must be > 0");
}

}  // namespace
}  // namespace pto::device
