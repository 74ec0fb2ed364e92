// Plan publication under concurrent calls: 8 threads call a Function in a loop, each checking
// every result against the reference, while background tuning swaps new Plans in (a very
// negative min_improvement makes every verified candidate win: every trial swaps). Run under the
// tsan preset too: a call loads one Plan pointer inside an epoch guard; replaced Plans are
// freed only when no call can hold them.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

using ops::HostTensor;

TEST(TuningSwap, EightThreadsCallWhilePlansAreSwapped) {
  const TraceFn program = [](std::span<const Value> v) {
    return std::vector<Value>{gelu(matmul(v[0], v[1]) + v[2])};
  };
  RuntimeOptions o;
  o.tuning.mode = TuningMode::kBackground;
  o.tuning.trials_per_kernel = 3;
  o.tuning.seed = 3;
  o.tuning.min_improvement = -100;  // a verified candidate up to 101x slower still wins: swaps
  std::unique_ptr<Runtime> rt = testing::OpenRuntime(o);
  auto fn = rt->JitTraced("swap", 3, program, {});
  ASSERT_TRUE(fn.ok());

  constexpr int kThreads = 8;
  std::vector<std::vector<HostTensor>> inputs;
  std::vector<std::vector<HostTensor>> expected;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back({HostTensor::Random({20, 48}, 10 + t), HostTensor::Random({48, 40}, 50 + t),
                      HostTensor::Random({40}, 90 + t)});
    absl::StatusOr<std::vector<HostTensor>> want = testing::RunReference(program, inputs.back());
    ASSERT_TRUE(want.ok()) << want.status();
    expected.push_back(*std::move(want));
  }
  // The first call compiles the shape class and queues its kernel for tuning.
  {
    absl::StatusOr<std::vector<HostTensor>> first = testing::RunPto(**fn, inputs[0]);
    ASSERT_TRUE(first.ok()) << first.status();
  }
  std::atomic<bool> done{false};
  std::atomic<int64_t> calls{0}, wrong{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      while (!done.load()) {
        absl::StatusOr<std::vector<HostTensor>> got = testing::RunPto(**fn, inputs[t]);
        calls.fetch_add(1);
        if (!got.ok()) {
          failed.fetch_add(1);
        } else if (!testing::Compare(*got, expected[t], ops::Tolerance{1e-5, 1e-5}).empty()) {
          wrong.fetch_add(1);
        }
        // Eight callers on two cores would leave the idle-priority tuner no CPU at all, and
        // background tuning waits while any call runs: the pauses must overlap often (calls
        // take hundreds of microseconds under TSan).
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    });
  }
  ASSERT_TRUE(rt->WaitForTuning().ok());
  const int64_t calls_while_tuning = calls.load();
  done.store(true);
  for (std::thread& t : threads) t.join();

  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(calls_while_tuning, kThreads);
  const std::vector<KernelTuning> results = rt->tuning_results();
  ASSERT_EQ(results.size(), 1u);
  std::printf(
      "[ swaps    ] %lld calls while tuning; %lld trials (%lld failed), %lld plans swapped\n",
      static_cast<long long>(calls_while_tuning), static_cast<long long>(results[0].trials),
      static_cast<long long>(results[0].failed),
      static_cast<long long>((*fn)->stats().plans_swapped));
  EXPECT_GE(results[0].trials, 1);
  EXPECT_EQ(results[0].failed, 0);
  // Every trial won and swapped a plan in while the callers ran.
  EXPECT_EQ((*fn)->stats().plans_swapped, results[0].trials);
}

}  // namespace
}  // namespace pto
