// Tuning through the Runtime: blocking tuning before the first call returns, tuned
// configs persisted and used by the next Runtime, interrupted searches resumed, budgets, the
// deterministic mode, and shutdown while tuning. Plan swaps under concurrent calls:
// tuning_swap_test.cc.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cache/cache_store.h"
#include "device/device_info.h"
#include "gtest/gtest.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

using ops::HostTensor;

// ThreadSanitizer runs this code about ten times slower.
#if defined(__SANITIZE_THREAD__)
constexpr double kSanitizerSlowdown = 10;
#else
constexpr double kSanitizerSlowdown = 1;
#endif

// Two kernels: a matmul with a bias epilogue and a softmax.
const TraceFn kProgram = [](std::span<const Value> v) {
  return std::vector<Value>{softmax(matmul(v[0], v[1]) + v[2])};
};

std::vector<HostTensor> Inputs(int64_t rows = 24) {
  return {HostTensor::Random({rows, 40}, 1), HostTensor::Random({40, 72}, 2),
          HostTensor::Random({72}, 3)};
}

std::filesystem::path TempCache(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("pto_tuning_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

RuntimeOptions Tuned(TuningMode mode, int64_t trials, const std::string& cache = "") {
  RuntimeOptions o;
  o.cache_path = cache;
  o.tuning.mode = mode;
  o.tuning.trials_per_kernel = trials;
  o.tuning.seed = 7;
  return o;
}

void ExpectMatchesReference(Function& fn, int64_t rows = 24) {
  const std::vector<HostTensor> in = Inputs(rows);
  absl::StatusOr<std::vector<HostTensor>> got = testing::RunPto(fn, in);
  ASSERT_TRUE(got.ok()) << got.status();
  absl::StatusOr<std::vector<HostTensor>> want = testing::RunReference(kProgram, in);
  ASSERT_TRUE(want.ok()) << want.status();
  EXPECT_EQ(testing::Compare(*got, *want, ops::Tolerance{1e-5, 1e-5}), "");
}

TEST(Tuning, BlockingTunesEveryKernelBeforeTheFirstCallReturns) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime(Tuned(TuningMode::kBlocking, 3));
  auto fn = rt->JitTraced("mm_softmax", 3, kProgram, {});
  ASSERT_TRUE(fn.ok());
  ExpectMatchesReference(**fn);
  const std::vector<KernelTuning> results = rt->tuning_results();
  ASSERT_EQ(results.size(), 2u);
  for (const KernelTuning& r : results) {
    EXPECT_TRUE(r.finished) << r.kernel;
    EXPECT_EQ(r.ended, "completed") << r.kernel;
    EXPECT_EQ(r.function, "mm_softmax");
    EXPECT_EQ(r.shape_class, "static");
    EXPECT_LE(r.trials, 3) << r.kernel;
    EXPECT_GE(r.trials, 1) << r.kernel;
    EXPECT_EQ(static_cast<int64_t>(r.curve.size()), r.trials) << r.kernel;
    EXPECT_GT(r.default_seconds, 0) << r.kernel;
    EXPECT_LE(r.best_seconds, r.default_seconds) << r.kernel;
    EXPECT_FALSE(r.best_config.empty()) << r.kernel;
    EXPECT_EQ(r.kernels_queued, 2);
  }
  EXPECT_NE(results[0].kernel, results[1].kernel);
  // A second call runs the (possibly swapped) plan: still right, no more tuning.
  ExpectMatchesReference(**fn);
  EXPECT_EQ(rt->tuning_results().size(), 2u);
}

TEST(Tuning, KernelsOfOneNameAreToldApartByTheirSymbols) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime(Tuned(TuningMode::kBlocking, 1));
  // Two matmuls with a bias epilogue over other shapes: one name, two kernels.
  const TraceFn two_layers = [](std::span<const Value> v) {
    return std::vector<Value>{matmul(matmul(v[0], v[1]) + v[2], v[3]) + v[4]};
  };
  auto fn = rt->JitTraced("two_layers", 5, two_layers, {});
  ASSERT_TRUE(fn.ok());
  const std::vector<HostTensor> in = {HostTensor::Random({24, 40}, 1),
                                      HostTensor::Random({40, 72}, 2), HostTensor::Random({72}, 3),
                                      HostTensor::Random({72, 16}, 4), HostTensor::Random({16}, 5)};
  ASSERT_TRUE(testing::RunPto(**fn, in).ok());
  const std::vector<KernelTuning> results = rt->tuning_results();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].kernel, "f32_matmul_add");
  EXPECT_EQ(results[1].kernel, "f32_matmul_add");
  EXPECT_NE(results[0].symbol, results[1].symbol);
  // Each is the symbol its kernel was first compiled under, with its default config.
  const std::vector<KernelEvent> events = rt->kernel_events();
  for (const KernelTuning& r : results) {
    EXPECT_EQ(r.symbol.rfind("f32_matmul_add_", 0), 0u) << r.symbol;
    EXPECT_TRUE(std::any_of(events.begin(), events.end(), [&](const KernelEvent& e) {
      return e.kernel == r.symbol;
    })) << r.symbol;
  }
}

TEST(Tuning, TunedConfigsPersistAndTheNextRuntimeLoadsTheirKernels) {
  const std::filesystem::path dir = TempCache("persist");
  std::vector<std::string> configs;
  {
    std::unique_ptr<Runtime> rt =
        testing::OpenRuntime(Tuned(TuningMode::kBlocking, 4, dir.string()));
    auto fn = rt->JitTraced("mm_softmax", 3, kProgram, {});
    ASSERT_TRUE(fn.ok());
    ExpectMatchesReference(**fn);
    for (const KernelTuning& r : rt->tuning_results()) configs.push_back(r.best_config);
    ASSERT_EQ(configs.size(), 2u);
  }
  {
    // Tuning on, records complete: nothing is tuned again, every kernel (the tuned ones
    // included) comes from the kernel cache.
    std::unique_ptr<Runtime> rt =
        testing::OpenRuntime(Tuned(TuningMode::kBackground, 4, dir.string()));
    auto fn = rt->JitTraced("mm_softmax", 3, kProgram, {});
    ASSERT_TRUE(fn.ok());
    ExpectMatchesReference(**fn);
    EXPECT_TRUE(rt->tuning_results().empty());
    EXPECT_EQ((*fn)->stats().kernels_tuned_cached, 2);
    EXPECT_EQ((*fn)->stats().tuning_records_applied, 2);
    EXPECT_EQ(rt->stats().llvm_codegen_runs, 0);
    EXPECT_EQ((*fn)->stats().kernels_loaded, 2);
  }
  {
    // retune: tuned again from the start.
    RuntimeOptions o = Tuned(TuningMode::kBlocking, 2, dir.string());
    o.tuning.retune = true;
    std::unique_ptr<Runtime> rt = testing::OpenRuntime(o);
    auto fn = rt->JitTraced("mm_softmax", 3, kProgram, {});
    ASSERT_TRUE(fn.ok());
    ExpectMatchesReference(**fn);
    EXPECT_EQ(rt->tuning_results().size(), 2u);
  }
  std::filesystem::remove_all(dir);
}

// A symbolic dim: candidates are checked at the bucket's smallest and largest sizes and at one
// that is no multiple of the tiles, all within the shape class (3 vectors of rows: the bucket
// [2 * lanes, 4 * lanes), e.g. [16..31] on AVX2), and none of them fails.
TEST(Tuning, SymbolicShapeClassIsCheckedWithinItsBucket) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime(Tuned(TuningMode::kBlocking, 4));
  FunctionOptions options;
  options.dynamic.push_back({0, 0, Dim("rows", 1, 64)});
  auto fn = rt->JitTraced("mm_softmax", 3, kProgram, options);
  ASSERT_TRUE(fn.ok());
  const int64_t lanes = device::DetectHost().f32_lanes();
  ExpectMatchesReference(**fn, 3 * lanes);
  const std::string want_class = absl::StrCat("rows=[", 2 * lanes, "..", 4 * lanes - 1, "]");
  const std::vector<KernelTuning> results = rt->tuning_results();
  ASSERT_EQ(results.size(), 2u);
  for (const KernelTuning& r : results) {
    EXPECT_EQ(r.shape_class, want_class) << r.kernel;
    EXPECT_EQ(r.ended, "completed") << r.kernel;
    EXPECT_GE(r.trials, 1) << r.kernel;
    EXPECT_EQ(r.failed, 0) << r.kernel;
  }
}

// i32 inputs are tuned on indices within what they index (here: 10 rows of the table) and an
// i32 output is compared exactly: every candidate of every kernel passes its check.
TEST(Tuning, IntegerInputsAndOutputsAreTunedLikeFloatOnes) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime(Tuned(TuningMode::kBlocking, 3));
  const TraceFn program = [](std::span<const Value> v) {
    return std::vector<Value>{gather(softmax(v[0]), v[1], 0) * 2.0f, v[1] * 3 + 1};
  };
  FunctionOptions options;
  options.input_dtypes = {DType::kF32, DType::kI32};
  auto fn = rt->JitTraced("gather_rows", 2, program, options);
  ASSERT_TRUE(fn.ok()) << fn.status();
  const std::vector<HostTensor> in = {HostTensor::Random({10, 48}, 1),
                                      HostTensor::I32({40}, std::vector<int32_t>(40, 9))};
  absl::StatusOr<std::vector<HostTensor>> got = testing::RunPto(**fn, in);
  ASSERT_TRUE(got.ok()) << got.status();
  absl::StatusOr<std::vector<HostTensor>> want = testing::RunReference(program, in);
  ASSERT_TRUE(want.ok()) << want.status();
  EXPECT_EQ(testing::Compare(*got, *want, ops::Tolerance{1e-5, 1e-5}), "");
  const std::vector<KernelTuning> results = rt->tuning_results();
  ASSERT_GE(results.size(), 2u);
  for (const KernelTuning& r : results) {
    EXPECT_EQ(r.ended, "completed") << r.kernel;
    EXPECT_GE(r.trials, 1) << r.kernel;
    EXPECT_EQ(r.failed, 0) << r.kernel;
  }
}

TEST(Tuning, DeterministicModeFreezesTuning) {
  RuntimeOptions o = Tuned(TuningMode::kBackground, 8);
  o.deterministic = true;
  std::unique_ptr<Runtime> rt = testing::OpenRuntime(o);
  auto fn = rt->JitTraced("mm_softmax", 3, kProgram, {});
  ASSERT_TRUE(fn.ok());
  ExpectMatchesReference(**fn);
  ASSERT_TRUE(rt->WaitForTuning().ok());
  EXPECT_TRUE(rt->tuning_results().empty());
  EXPECT_EQ((*fn)->stats().plans_swapped, 0);
}

TEST(Tuning, TrialBudgetBoundsEveryKernel) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime(Tuned(TuningMode::kBlocking, 2));
  auto fn = rt->JitTraced("mm_softmax", 3, kProgram, {});
  ASSERT_TRUE(fn.ok());
  ExpectMatchesReference(**fn);
  for (const KernelTuning& r : rt->tuning_results()) {
    EXPECT_LE(r.trials, 2) << r.kernel;
    EXPECT_EQ(r.max_trials, 2) << r.kernel;
  }
}

TEST(Tuning, TimeBudgetEndsASearchEarly) {
  RuntimeOptions o = Tuned(TuningMode::kBlocking, 100000);
  o.tuning.seconds_per_kernel = 1.0;
  std::unique_ptr<Runtime> rt = testing::OpenRuntime(o);
  auto fn = rt->JitTraced("mm_softmax", 3, kProgram, {});
  ASSERT_TRUE(fn.ok());
  const auto start = std::chrono::steady_clock::now();
  ExpectMatchesReference(**fn);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::vector<KernelTuning> results = rt->tuning_results();
  ASSERT_EQ(results.size(), 2u);
  for (const KernelTuning& r : results) {
    std::printf("[ budget   ] %s: %lld trials in %.2f s, ended %s\n", r.kernel.c_str(),
                static_cast<long long>(r.trials), r.elapsed_seconds, r.ended.c_str());
    EXPECT_EQ(r.ended, "budget") << r.kernel;
    EXPECT_LT(r.trials, 100000) << r.kernel;
  }
  // Two kernels of one second each, plus compiling and one step past the allowance.
  EXPECT_LT(seconds, 20.0 * kSanitizerSlowdown);
}

// A scheduler's rounds (TuningOptions::trials_now, as `pto tune` uses it): one kernel at a
// time, a few trials per round, each round resuming the kernel's incomplete record; complete
// once trials_per_kernel are made.
TEST(Tuning, RoundsTuneOneKernelAtATimeAndResume) {
  const std::filesystem::path dir = TempCache("rounds");
  struct Seen {
    int call = 0;
    int64_t trials = 0;
  };
  auto round = [&](int call, int64_t trials, std::vector<Seen>& seen) {
    RuntimeOptions o = Tuned(TuningMode::kBlocking, 4, dir.string());
    o.tuning.trials_now = [&seen, call, trials](const KernelTuning& k) -> int64_t {
      seen.push_back({k.call, k.trials});
      return k.call == call ? trials : 0;
    };
    std::unique_ptr<Runtime> rt = testing::OpenRuntime(o);
    auto fn = rt->JitTraced("mm_softmax", 3, kProgram, {});
    EXPECT_TRUE(fn.ok());
    ExpectMatchesReference(**fn);
    return rt->tuning_results();
  };
  // Round 1: 3 trials of the second kernel (call 1); the first is asked about and left alone.
  std::vector<Seen> seen;
  std::vector<KernelTuning> results = round(1, 3, seen);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].call, 0);
  EXPECT_EQ(seen[1].call, 1);
  EXPECT_EQ(seen[1].trials, 0);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].call, 1);
  EXPECT_EQ(results[0].trials, 3);
  EXPECT_EQ(results[0].max_trials, 3);
  EXPECT_EQ(results[0].ended, "completed");
  // Round 2: it resumes at 3 trials and makes its last one (4 in all): complete.
  seen.clear();
  results = round(1, 3, seen);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].trials, 3);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].trials, 4);
  EXPECT_EQ(results[0].max_trials, 4);
  // Round 3: only the first kernel is left to ask about.
  seen.clear();
  results = round(0, 2, seen);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].call, 0);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].call, 0);
  EXPECT_EQ(results[0].trials, 2);
  std::filesystem::remove_all(dir);
}

// Destroying the Function (then the Runtime) while its kernels are being tuned in the
// background ends promptly, and what was found so far is kept as an incomplete record that
// the next Runtime resumes.
TEST(Tuning, ShutdownDuringTuningKeepsResultsAndTheNextRuntimeResumes) {
  const std::filesystem::path dir = TempCache("shutdown");
  std::mutex mu;
  std::condition_variable cv;
  int64_t trials_seen = 0;
  RuntimeOptions o = Tuned(TuningMode::kBackground, 100000, dir.string());
  o.tuning.progress = [&](const KernelTuning& t) {
    std::lock_guard<std::mutex> lock(mu);
    trials_seen = std::max(trials_seen, t.trials);
    cv.notify_all();
  };
  double shutdown_seconds = 0;
  {
    std::unique_ptr<Runtime> rt = testing::OpenRuntime(o);
    auto fn = rt->JitTraced("mm_softmax", 3, kProgram, {});
    ASSERT_TRUE(fn.ok());
    ExpectMatchesReference(**fn);
    {
      std::unique_lock<std::mutex> lock(mu);
      ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return trials_seen >= 2; }));
    }
    ExpectMatchesReference(**fn);  // calls keep working while tuning runs
    const auto start = std::chrono::steady_clock::now();
    fn->reset();
    rt.reset();
    shutdown_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  // A running step ends at its next run of the program, or when its compile or check ends.
  std::printf("[ shutdown ] %.3f s\n", shutdown_seconds);
  EXPECT_LT(shutdown_seconds, 5.0 * kSanitizerSlowdown);
  {
    // The first kernel's record: incomplete, with the trials made so far.
    RuntimeOptions again = Tuned(TuningMode::kBlocking, 3, dir.string());
    std::unique_ptr<Runtime> rt = testing::OpenRuntime(again);
    auto fn = rt->JitTraced("mm_softmax", 3, kProgram, {});
    ASSERT_TRUE(fn.ok());
    ExpectMatchesReference(**fn);
    const std::vector<KernelTuning> results = rt->tuning_results();
    // The interrupted kernel resumes with its >= 2 trials counted (its curve holds only this
    // run's trials), so a budget of 3 leaves it at most one more.
    ASSERT_FALSE(results.empty());
    int resumed = 0;
    for (const KernelTuning& r : results) {
      EXPECT_TRUE(r.finished) << r.kernel;
      EXPECT_LE(r.trials, 3) << r.kernel;
      if (r.trials > static_cast<int64_t>(r.curve.size())) {
        ++resumed;
        EXPECT_LE(r.curve.size(), 1u) << r.kernel;
      }
    }
    EXPECT_EQ(resumed, 1);
    // The interrupted kernel's record was applied too, though incomplete.
    EXPECT_GE((*fn)->stats().tuning_records_applied, 1);
    EXPECT_EQ((*fn)->stats().kernels_tuned_cached, 0);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pto
