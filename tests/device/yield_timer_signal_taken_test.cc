// Its own program: the yield timer's handler must not be installed yet in this process.
#include <signal.h>

#include <chrono>

#include "absl/strings/match.h"
#include "device/yield_point.h"
#include "gtest/gtest.h"

namespace pto::device {
namespace {

void EmbeddersHandler(int) {}

TEST(YieldTimerSignalTakenTest, FailsWhenTheSignalHasAnotherHandler) {
  struct sigaction action = {};
  action.sa_handler = &EmbeddersHandler;
  sigemptyset(&action.sa_mask);
  ASSERT_EQ(sigaction(YieldSignal(), &action, nullptr), 0);
  absl::StatusOr<std::unique_ptr<ScopedYieldTimer>> timer =
      ScopedYieldTimer::Start(std::chrono::microseconds(250));
  ASSERT_FALSE(timer.ok());
  EXPECT_EQ(timer.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(timer.status().message(), "(SIGRTMIN+6) has a handler already"))
      << timer.status();
  struct sigaction now = {};
  ASSERT_EQ(sigaction(YieldSignal(), nullptr, &now), 0);
  EXPECT_EQ(now.sa_handler, &EmbeddersHandler);  // left as it was
}

}  // namespace
}  // namespace pto::device
