// One Function called from many threads at once, including while its first compilation is
// under way, and two Runtimes called at once (run it under the tsan preset too).
#include <sched.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

TEST(Threads, EightCallersDuringFirstCompile) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto fn = rt->Jit("mlp", [](Value x, Value w, Value b) { return relu(linear(x, w, b)) * 2.0f; },
                    {.dynamic = {{0, 0, Dim("batch", 1, 256)}}});
  ASSERT_TRUE(fn.ok());
  const ops::HostTensor w = ops::HostTensor::Random({16, 32}, 1),
                        b = ops::HostTensor::Random({16}, 2);
  constexpr int kThreads = 8;
  // Two shape classes, raced for: the buckets [8, 15] and [16, 31].
  std::atomic<int> go{0}, failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const int64_t batch = 8 + 8 * (t % 2);
      ops::HostTensor x = ops::HostTensor::Random({batch, 32}, 10 + t);
      go.fetch_add(1);
      while (go.load() < kThreads) {
      }
      for (int rep = 0; rep < 20; ++rep) {
        absl::StatusOr<std::vector<ops::HostTensor>> got = testing::RunPto(**fn, {x, w, b});
        if (!got.ok()) {
          failures.fetch_add(1);
          continue;
        }
        float want = 0;
        for (int k = 0; k < 32; ++k) want += x.data[k] * w.data[k];
        want = std::max(want + b.data[0], 0.0f) * 2.0f;
        if (std::abs((*got)[0].data[0] - want) > 1e-4f) failures.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ((*fn)->stats().compiles, 2);
  EXPECT_EQ((*fn)->stats().traces, 1);
  EXPECT_EQ((*fn)->stats().calls, kThreads * 20);
}

// Two Runtimes of 2 threads share the process's arena (ThreadArena::Shared); called at once
// from two threads, each gets its own results, its kernels split across the arena's threads.
TEST(Threads, TwoRuntimesCalledAtOnce) {
  TraceFn f = [](std::span<const Value> v) {
    return std::vector<Value>{softmax(matmul(v[0], v[1]))};
  };
  constexpr int kRuntimes = 2, kCalls = 30;
  std::vector<std::unique_ptr<Runtime>> runtimes;
  std::vector<std::unique_ptr<Function>> fns;
  for (int r = 0; r < kRuntimes; ++r) {
    runtimes.push_back(testing::OpenRuntime({.intra_op_threads = 2}));
    auto fn = runtimes.back()->JitTraced("mm_softmax", 2, f, {});
    ASSERT_TRUE(fn.ok()) << fn.status();
    fns.push_back(*std::move(fn));
  }
  std::atomic<int> go{0}, failures{0};
  std::vector<std::thread> threads;
  for (int r = 0; r < kRuntimes; ++r) {
    threads.emplace_back([&, r] {
      const std::vector<ops::HostTensor> in = {ops::HostTensor::Random({192, 64}, 20 + r),
                                               ops::HostTensor::Random({64, 160}, 30 + r)};
      absl::StatusOr<std::vector<ops::HostTensor>> want = testing::RunReference(f, in);
      if (!want.ok()) {
        failures.fetch_add(1);
        return;
      }
      go.fetch_add(1);
      while (go.load() < kRuntimes) {
      }
      for (int c = 0; c < kCalls; ++c) {
        absl::StatusOr<std::vector<ops::HostTensor>> got = testing::RunPto(*fns[r], in);
        if (!got.ok() ||
            !testing::Compare(*got, *want, ops::OpTolerance(ir::OpKind::kMatMul, 64)).empty()) {
          failures.fetch_add(1);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  for (const auto& fn : fns) EXPECT_EQ(fn->stats().calls, kCalls);
}

// A Runtime that pins its threads (ThreadPinning::kAlways) computes the same results, and a
// caller's affinity, narrowed for the length of each call, is its own again after it.
TEST(Threads, PinnedRuntimeGivesTheCallerItsAffinityBack) {
  cpu_set_t before;
  CPU_ZERO(&before);
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  TraceFn f = [](std::span<const Value> v) {
    return std::vector<Value>{softmax(matmul(v[0], v[1]))};
  };
  std::unique_ptr<Runtime> rt =
      testing::OpenRuntime({.intra_op_threads = 2, .thread_pinning = ThreadPinning::kAlways});
  auto fn = rt->JitTraced("mm_softmax", 2, f, {});
  ASSERT_TRUE(fn.ok()) << fn.status();
  const std::vector<ops::HostTensor> in = {ops::HostTensor::Random({192, 64}, 5),
                                           ops::HostTensor::Random({64, 160}, 6)};
  absl::StatusOr<std::vector<ops::HostTensor>> want = testing::RunReference(f, in);
  ASSERT_TRUE(want.ok()) << want.status();
  for (int c = 0; c < 3; ++c) {
    absl::StatusOr<std::vector<ops::HostTensor>> got = testing::RunPto(**fn, in);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(
        testing::Compare(*got, *want, ops::OpTolerance(ir::OpKind::kMatMul, 64)).empty());
    cpu_set_t after;
    CPU_ZERO(&after);
    ASSERT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
    EXPECT_TRUE(CPU_EQUAL(&before, &after)) << "call " << c;
  }
}

}  // namespace
}  // namespace pto
