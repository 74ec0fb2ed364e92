// A Function may outlive its Runtime: it keeps the Runtime's internals (compiler and loaded
// kernels, cache, threads) alive and keeps working, for known and new shape classes alike.
// Destroying the Runtime ends tuning; the cache closes with the last Function.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cache/cache_test_util.h"
#include "tests/jit/e2e/deadline.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

using ops::HostTensor;

// A matmul with a bias epilogue and a softmax: two kernels, both tunable.
const TraceFn kProgram = [](std::span<const Value> v) {
  return std::vector<Value>{softmax(matmul(v[0], v[1]) + v[2])};
};

std::vector<HostTensor> Inputs(int64_t rows) {
  return {HostTensor::Random({rows, 40}, 1), HostTensor::Random({40, 72}, 2),
          HostTensor::Random({72}, 3)};
}

FunctionOptions DynamicRows() { return {.dynamic = {{0, 0, Dim("rows", 1, 4096)}}}; }

// Runs `fn` at `rows` and checks the result against the ops/ reference.
void ExpectCorrect(Function& fn, int64_t rows) {
  const std::vector<HostTensor> in = Inputs(rows);
  absl::StatusOr<std::vector<HostTensor>> got =
      testing::WithDeadline("a call", [&] { return testing::RunPto(fn, in); });
  ASSERT_TRUE(got.ok()) << got.status();
  absl::StatusOr<std::vector<HostTensor>> want = testing::RunReference(kProgram, in);
  ASSERT_TRUE(want.ok()) << want.status();
  EXPECT_EQ(testing::Compare(*got, *want, ops::Tolerance{1e-5, 1e-4}), "") << "rows " << rows;
}

TEST(RuntimeLifetime, AFunctionOutlivesItsRuntimeAtKnownAndNewShapeClasses) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  ASSERT_NE(rt, nullptr);
  auto fn = rt->JitTraced("outlives", 3, kProgram, DynamicRows());
  ASSERT_TRUE(fn.ok()) << fn.status();
  ExpectCorrect(**fn, 24);
  rt.reset();

  ExpectCorrect(**fn, 24);   // the compiled shape class
  ExpectCorrect(**fn, 300);  // a new one: traced variant reused, compiled now
  ASSERT_TRUE((*fn)->Precompile({{1000, 40}, {40, 72}, {72}}).ok());
  absl::StatusOr<std::vector<std::vector<int64_t>>> shapes =
      (*fn)->OutputShapes({{7, 40}, {40, 72}, {72}});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ(*shapes, (std::vector<std::vector<int64_t>>{{7, 72}}));
  const FunctionStats stats = (*fn)->stats();
  EXPECT_EQ(stats.traces, 1);
  EXPECT_EQ(stats.compiles, 3);
  EXPECT_EQ(stats.shape_classes, 3);
}

// With background tuning under way and a persistent cache: destroying the Runtime stops the
// tuner before it returns (no progress call afterwards, none for later shape classes); the
// Function compiles a new shape class into the still open cache, which a later Runtime loads
// once the Function is gone too.
TEST(RuntimeLifetime, DestroyingTheRuntimeEndsTuningAndTheCacheClosesWithTheLastFunction) {
  cache::testing::TempDir dir;
  std::mutex mu;
  std::condition_variable tuning_progressed;
  int progress_calls = 0;
  std::atomic<bool> runtime_gone{false};
  std::atomic<int> progress_after_runtime{0};
  RuntimeOptions options;
  options.cache_path = dir.Sub("cache");
  options.tuning.mode = TuningMode::kBackground;
  options.tuning.trials_per_kernel = 100000;
  options.tuning.seconds_per_kernel = 600;
  options.tuning.progress = [&](const KernelTuning&) {
    if (runtime_gone.load()) progress_after_runtime.fetch_add(1);
    std::lock_guard<std::mutex> lock(mu);
    ++progress_calls;
    tuning_progressed.notify_all();
  };
  std::unique_ptr<Runtime> rt = testing::OpenRuntime(options);
  ASSERT_NE(rt, nullptr);
  ASSERT_TRUE(rt->stats().cache.persistent);
  auto fn = rt->JitTraced("tuned", 3, kProgram, DynamicRows());
  ASSERT_TRUE(fn.ok()) << fn.status();
  ExpectCorrect(**fn, 24);
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(
        tuning_progressed.wait_for(lock, testing::kDeadline, [&] { return progress_calls > 0; }));
  }
  testing::WithDeadline("destroying the Runtime", [&] {
    rt.reset();
    return 0;
  });
  runtime_gone = true;

  ExpectCorrect(**fn, 24);
  ExpectCorrect(**fn, 300);
  EXPECT_EQ((*fn)->stats().compiles, 2);
  EXPECT_EQ(progress_after_runtime.load(), 0);
  fn->reset();  // the last owner: the cache closes here

  std::unique_ptr<Runtime> again = testing::OpenRuntime({.cache_path = dir.Sub("cache")});
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->stats().cache.role, "writer");  // the first Runtime's store has let go
  auto reloaded = again->JitTraced("tuned", 3, kProgram, DynamicRows());
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  ExpectCorrect(**reloaded, 300);  // the shape class compiled after the first Runtime went
  EXPECT_EQ(again->stats().llvm_codegen_runs, 0);
  EXPECT_GE(again->stats().kernels_loaded, 2);
}

}  // namespace
}  // namespace pto
