// Its own program: the embedder's handler must own the yield timer's signal before any tuning
// step starts in this process.
#include <signal.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "device/yield_point.h"
#include "gtest/gtest.h"
#include "pto/pto.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

using ops::HostTensor;

void EmbeddersHandler(int) {}

TEST(TuningSignalTaken, BackgroundTuningFallsBackToItsYieldPointsWithAWarning) {
  struct sigaction action = {};
  action.sa_handler = &EmbeddersHandler;
  sigemptyset(&action.sa_mask);
  ASSERT_EQ(sigaction(device::YieldSignal(), &action, nullptr), 0);

  std::mutex mu;
  std::vector<std::string> warnings;
  RuntimeOptions o;
  o.tuning.mode = TuningMode::kBackground;  // every core for calls (the default): yields to them
  o.tuning.trials_per_kernel = 2;
  o.log_level = LogLevel::kWarning;
  o.log_sink = [&](LogLevel level, std::string_view message) {
    std::lock_guard<std::mutex> lock(mu);
    if (level == LogLevel::kWarning) warnings.emplace_back(message);
  };
  std::unique_ptr<Runtime> rt = testing::OpenRuntime(o);
  const TraceFn program = [](std::span<const Value> v) {
    return std::vector<Value>{matmul(v[0], v[1])};
  };
  auto fn = rt->JitTraced("taken", 2, program, {});
  ASSERT_TRUE(fn.ok()) << fn.status();
  const std::vector<HostTensor> inputs = {HostTensor::Random({16, 24}, 1),
                                          HostTensor::Random({24, 32}, 2)};
  absl::StatusOr<std::vector<HostTensor>> got = testing::RunPto(**fn, inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(rt->WaitForTuning().ok());

  const std::vector<KernelTuning> results = rt->tuning_results();
  ASSERT_EQ(results.size(), 1u);
  EXPECT_GE(results[0].trials, 1);  // tuning still ran
  EXPECT_EQ(results[0].failed, 0);
  std::lock_guard<std::mutex> lock(mu);
  int timer_warnings = 0;
  for (const std::string& w : warnings) {
    if (absl::StrContains(w,
                          "background tuning yields to calls at its yield points only: "
                          "signal ") &&
        absl::StrContains(w, "(SIGRTMIN+6) has a handler already")) {
      ++timer_warnings;
    }
  }
  EXPECT_EQ(timer_warnings, 1) << "warnings: " << warnings.size();
  struct sigaction now = {};
  ASSERT_EQ(sigaction(device::YieldSignal(), nullptr, &now), 0);
  EXPECT_EQ(now.sa_handler, &EmbeddersHandler);  // left as it was
}

}  // namespace
}  // namespace pto
