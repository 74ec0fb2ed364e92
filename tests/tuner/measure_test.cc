#include "tuner/measure.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tuner/synthetic_objectives.h"
#include "tests/tuner/test_spaces.h"
#include "tuner/search_loop.h"
#include "tuner/strategy.h"

namespace pto::tuner {
namespace {

using ::testing::ElementsAre;

SearchSpace Grid() {
  absl::StatusOr<SearchSpace> space = SearchSpace::Create(GridSpec(2, 4));
  EXPECT_TRUE(space.ok()) << space.status();
  return *std::move(space);
}

const Config kA = {0, 0};
const Config kB = {1, 1};

TEST(MeasureTest, MedianOfOddAndEvenCounts) {
  EXPECT_EQ(Median({3}), 3);
  EXPECT_EQ(Median({5, 1, 3}), 3);
  EXPECT_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(Median({1, 100, 2, 3, 1000}), 3);  // outliers do not move it
}

TEST(MeasureTest, WarmUpIsDiscardedAndAStableMedianStopsEarly) {
  SearchSpace space = Grid();
  int calls = 0;
  auto objective = [&](const Config&) -> absl::StatusOr<double> {
    return ++calls == 1 ? 100.0 : 2.0;  // a cold first run
  };
  absl::StatusOr<Timing> t = Measure(space, objective, kA, {.warmup_runs = 1, .min_runs = 3});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->median_seconds, 2.0);
  // min_runs, then one more to see the median did not move.
  EXPECT_THAT(t->samples, ElementsAre(2.0, 2.0, 2.0, 2.0));
  EXPECT_EQ(calls, 5);
}

TEST(MeasureTest, AnUnstableMedianRunsToTheCap) {
  SearchSpace space = Grid();
  int calls = 0;
  auto objective = [&](const Config&) -> absl::StatusOr<double> {
    return ++calls % 2 == 0 ? 1.0 : 3.0;
  };
  absl::StatusOr<Timing> t =
      Measure(space, objective, kA, {.warmup_runs = 0, .min_runs = 3, .max_runs = 9});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->samples.size(), 9u);
  EXPECT_EQ(t->median_seconds, 3.0);  // five 3s and four 1s
}

TEST(MeasureTest, AFailingRunIsReturnedWithItsCodeAndTheConfig) {
  SearchSpace space = Grid();
  int calls = 0;
  auto objective = [&](const Config&) -> absl::StatusOr<double> {
    if (++calls == 3) return absl::InternalError("wrong answer at 17x33");
    return 1.0;
  };
  absl::StatusOr<Timing> t = Measure(space, objective, {1, 2});
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(t.status().message(), "config p0=1,p1=2: wrong answer at 17x33");

  auto negative = [](const Config&) -> absl::StatusOr<double> { return -1.0; };
  t = Measure(space, negative, {1, 2});
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(t.status().message(), "config p0=1,p1=2: the objective returned -1 seconds");
}

TEST(MeasureTest, InterleavedRunsAlternateStartingAndEndingWithTheIncumbent) {
  SearchSpace space = Grid();
  std::string order;
  auto objective = [&](const Config& c) -> absl::StatusOr<double> {
    order += c == kA ? 'I' : 'C';
    return 1.0;
  };
  absl::StatusOr<Comparison> cmp =
      CompareInterleaved(space, objective, kB, kA, {.warmup_runs = 1, .pairs = 3});
  ASSERT_TRUE(cmp.ok()) << cmp.status();
  EXPECT_EQ(order,
            "IC"
            "ICICICI");
  EXPECT_EQ(cmp->ratios.size(), 3u);
  // Equal speed: a tie keeps the incumbent.
  EXPECT_EQ(cmp->ratio, 1.0);
  EXPECT_EQ(cmp->verdict, Verdict::kIncumbentStays);
}

// The machine slows down 2% per run; B is truly 5% faster than A.
DriftingMachine Drifting() {
  return DriftingMachine([](const Config& c) { return c == kB ? 0.95e-3 : 1e-3; }, 0.02);
}

TEST(MeasureTest, DriftFoolsSequentialTimingButNotTheInterleavedRatio) {
  SearchSpace space = Grid();
  {
    // Sequential: A's median, then B's, on a machine that got slower in between.
    DriftingMachine machine = Drifting();
    absl::StatusOr<Timing> a = Measure(space, machine, kA);
    absl::StatusOr<Timing> b = Measure(space, machine, kB);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_GT(b->median_seconds, a->median_seconds) << "sequential timing should be fooled";
  }
  {
    DriftingMachine machine = Drifting();
    absl::StatusOr<Comparison> cmp = CompareInterleaved(space, machine, kB, kA);
    ASSERT_TRUE(cmp.ok()) << cmp.status();
    EXPECT_EQ(cmp->verdict, Verdict::kCandidateWins);
    // A linear drift cancels exactly against the mean of the incumbent runs around each
    // candidate run.
    EXPECT_NEAR(cmp->ratio, 0.95, 1e-12);
    for (double r : cmp->ratios) EXPECT_NEAR(r, 0.95, 1e-12);
  }
  {
    // And the other way round: the slower candidate does not replace the incumbent.
    DriftingMachine machine = Drifting();
    absl::StatusOr<Comparison> cmp = CompareInterleaved(space, machine, kA, kB);
    ASSERT_TRUE(cmp.ok()) << cmp.status();
    EXPECT_EQ(cmp->verdict, Verdict::kIncumbentStays);
    EXPECT_NEAR(cmp->ratio, 1 / 0.95, 1e-12);
  }
}

TEST(MeasureTest, InterleavedRatioHoldsUnderDriftAndNoise) {
  SearchSpace space = Grid();
  int wins = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Rng rng(seed);
    DriftingMachine machine = Drifting();
    // +-3% noise per run, on top of a 2% per run drift.
    auto noisy = [&](const Config& c) -> absl::StatusOr<double> {
      return *machine(c) * (1 + 0.03 * (2 * rng.UniformDouble() - 1));
    };
    absl::StatusOr<Comparison> cmp =
        CompareInterleaved(space, noisy, kB, kA, {.warmup_runs = 1, .pairs = 9});
    ASSERT_TRUE(cmp.ok()) << cmp.status();
    EXPECT_NEAR(cmp->ratio, 0.95, 0.03) << "seed " << seed;
    wins += cmp->verdict == Verdict::kCandidateWins;
  }
  EXPECT_GE(wins, 19);
}

TEST(MeasureTest, AFailingCandidateNeverWins) {
  SearchSpace space = Grid();
  for (int fail_at : {1, 2, 5}) {  // during warm-up, at the first and a later timed run
    SCOPED_TRACE(fail_at);
    int candidate_calls = 0;
    auto objective = [&](const Config& c) -> absl::StatusOr<double> {
      if (c == kB && ++candidate_calls == fail_at) {
        return absl::FailedPreconditionError("output differs from the reference");
      }
      return c == kB ? 0.1 : 1.0;  // it would have been 10x faster
    };
    absl::StatusOr<Comparison> cmp = CompareInterleaved(space, objective, kB, kA);
    ASSERT_TRUE(cmp.ok()) << cmp.status();
    EXPECT_EQ(cmp->verdict, Verdict::kCandidateFailed);
    EXPECT_EQ(cmp->candidate_status.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_EQ(cmp->candidate_status.message(),
              "config p0=1,p1=1: output differs from the reference");
  }
}

TEST(MeasureTest, AFailingIncumbentIsAnError) {
  SearchSpace space = Grid();
  auto objective = [&](const Config& c) -> absl::StatusOr<double> {
    if (c == kA) return absl::UnavailableError("kernel unloaded");
    return 1.0;
  };
  absl::StatusOr<Comparison> cmp = CompareInterleaved(space, objective, kB, kA);
  EXPECT_EQ(cmp.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(cmp.status().message(), "config p0=0,p1=0: kernel unloaded");
}

TEST(MeasureTest, SearchWithMeasuredMediansFindsTheOptimumUnderNoise) {
  absl::StatusOr<SearchSpace> space = SearchSpace::Create(MatmulLikeSpec(TestDevice(16)));
  ASSERT_TRUE(space.ok()) << space.status();
  // 10% noise per run; the medians of the measurement still rank the bowl right.
  BowlObjective objective(*space, {2, 1, 1, 1, 1}, {1, 1, 1, 1, 1}, 0.10, 5);
  auto evaluate = [&](const Config& c) -> absl::StatusOr<double> {
    absl::StatusOr<Timing> t = Measure(*space, objective, c, {.min_runs = 5});
    if (!t.ok()) return t.status();
    return t->median_seconds;
  };
  std::unique_ptr<SearchStrategy> s = MakeStrategy(StrategyKind::kExhaustive);
  SearchResult result = RunSearch(*s, *space, Budget{}, 1, evaluate);
  ASSERT_TRUE(result.best.has_value());
  EXPECT_EQ(result.best->config, objective.optimum());
}

}  // namespace
}  // namespace pto::tuner
