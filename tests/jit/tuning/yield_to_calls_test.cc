#include "jit/tuning/yield_to_calls.h"

#include <time.h>

#include <atomic>
#include <chrono>
#include <latch>
#include <thread>

#include "device/epoch.h"
#include "gtest/gtest.h"

namespace pto::jit {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A "call" on its own thread: inside a guard of `calls` until `leave` is set.
class Call {
 public:
  Call(device::EpochDomain& calls, const std::atomic<bool>& leave) {
    std::latch entered(1);
    thread_ = std::thread([&calls, &leave, &entered, this] {
      device::EpochGuard guard = calls.Enter();
      entered.count_down();
      while (!leave.load()) std::this_thread::sleep_for(std::chrono::microseconds(50));
      left_.store(true);
    });
    entered.wait();
  }
  ~Call() { thread_.join(); }
  bool left() const { return left_.load(); }

 private:
  std::atomic<bool> left_{false};
  std::thread thread_;
};

TEST(YieldToCallsTest, NoDomainOrNoCallsNeverWaits) {
  std::atomic<bool> stop{false};
  YieldToCalls none(nullptr, stop, 10, 0.01);
  none.Wait();
  EXPECT_EQ(none.waited_seconds(), 0);
  device::EpochDomain calls;
  YieldToCalls idle(&calls, stop, 10, 0.01);
  idle.Wait();
  EXPECT_EQ(idle.waited_seconds(), 0);
}

TEST(YieldToCallsTest, WaitsUntilTheRunningCallLeaves) {
  device::EpochDomain calls;
  std::atomic<bool> stop{false};
  std::atomic<bool> leave{false};
  Call call(calls, leave);
  std::thread ender([&leave] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    leave.store(true);
  });
  YieldToCalls yield(&calls, stop, /*patience_seconds=*/10, /*burst_cpu_seconds=*/0.01);
  yield.Wait();
  EXPECT_TRUE(call.left());  // returned only once the call was over
  EXPECT_GE(yield.waited_seconds(), 0.02);
  EXPECT_LT(yield.waited_seconds(), 5);
  ender.join();
}

// Burns this thread's CPU for at least `seconds` of CPU time.
void BurnCpu(double seconds) {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  const double end =
      static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec) + seconds;
  volatile double x = 1;
  do {
    for (int i = 0; i < 10000; ++i) x = x * 1.0000001;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  } while (static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec) < end);
}

TEST(YieldToCallsTest, WhenCallsNeverPauseRunsABurstThenWaitsAgain) {
  device::EpochDomain calls;
  std::atomic<bool> stop{false};
  std::atomic<bool> leave{false};
  Call call(calls, leave);
  YieldToCalls yield(&calls, stop, /*patience_seconds=*/0.02, /*burst_cpu_seconds=*/0.03);
  const Clock::time_point start = Clock::now();
  yield.Wait();  // patience runs out: the call never leaves
  EXPECT_GE(SecondsSince(start), 0.02);
  EXPECT_FALSE(call.left());
  const double waited = yield.waited_seconds();
  EXPECT_GE(waited, 0.02);
  yield.Wait();  // inside the burst: no wait, though the call still runs
  EXPECT_EQ(yield.waited_seconds(), waited);
  BurnCpu(0.04);  // the burst's CPU time is spent
  yield.Wait();   // waits again, a whole patience
  EXPECT_GE(yield.waited_seconds(), waited + 0.02);
  leave.store(true);
}

TEST(YieldToCallsTest, StopEndsAWaitAtOnce) {
  device::EpochDomain calls;
  std::atomic<bool> stop{false};
  std::atomic<bool> leave{false};
  Call call(calls, leave);
  std::thread stopper([&stop] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    stop.store(true);
  });
  YieldToCalls yield(&calls, stop, /*patience_seconds=*/60, /*burst_cpu_seconds=*/0.01);
  const Clock::time_point start = Clock::now();
  yield.Wait();
  EXPECT_LT(SecondsSince(start), 10);
  EXPECT_TRUE(stop.load());
  EXPECT_FALSE(call.left());
  stopper.join();
  leave.store(true);
}

}  // namespace
}  // namespace pto::jit
