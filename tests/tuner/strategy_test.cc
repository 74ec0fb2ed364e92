#include "tuner/strategy.h"

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tuner/synthetic_objectives.h"
#include "tests/tuner/test_spaces.h"
#include "tuner/search_loop.h"

namespace pto::tuner {
namespace {

using ::testing::ElementsAreArray;

constexpr StrategyKind kAllKinds[] = {StrategyKind::kExhaustive, StrategyKind::kRandom,
                                      StrategyKind::kEvolutionary};

SearchSpace Create(SearchSpaceSpec spec) {
  absl::StatusOr<SearchSpace> space = SearchSpace::Create(std::move(spec));
  EXPECT_TRUE(space.ok()) << space.status();
  return *std::move(space);
}

// A 6-parameter grid of 6 values each (46656 configs) with an interior optimum.
struct BigBowl {
  SearchSpace space = Create(GridSpec(6, 6));
  BowlObjective objective{space, {4, 1, 3, 5, 2, 0}, {1, 0.5, 2, 0.25, 1, 0.1}};
};

TEST(StrategyTest, FactoryMakesEachKind) {
  for (StrategyKind kind : kAllKinds) {
    std::unique_ptr<SearchStrategy> s = MakeStrategy(kind);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->kind(), kind);
  }
  EXPECT_STREQ(StrategyName(StrategyKind::kExhaustive), "exhaustive");
  EXPECT_STREQ(StrategyName(StrategyKind::kRandom), "random");
  EXPECT_STREQ(StrategyName(StrategyKind::kEvolutionary), "evolutionary");
}

TEST(StrategyTest, NothingBeforeStart) {
  for (StrategyKind kind : kAllKinds) {
    std::unique_ptr<SearchStrategy> s = MakeStrategy(kind);
    EXPECT_TRUE(s->Propose(8).empty());
    EXPECT_TRUE(s->Done());
    EXPECT_FALSE(s->Best().has_value());
    EXPECT_EQ(s->trials(), 0);
  }
}

TEST(StrategyTest, ExhaustiveTriesEveryValidConfigInOrderAndFindsTheOptimum) {
  SearchSpace space = Create(MatmulLikeSpec(TestDevice(16)));
  // Optimum tile_rows=4, unroll=2, mr=4, nr_vectors=2, vector_width=8: valid (4*2+2+1 <= 16,
  // (4*128 + 128*2*8)*4 = 10240 <= 16384).
  BowlObjective objective(space, {2, 1, 1, 1, 1}, {1, 1, 1, 1, 1}, /*noise=*/0.01, 3);
  ASSERT_TRUE(space.IsValid(objective.optimum()));
  std::unique_ptr<SearchStrategy> s = MakeStrategy(StrategyKind::kExhaustive);
  SearchResult result = RunSearch(*s, space, Budget{}, 1, objective, {.batch_size = 7});
  std::vector<Config> proposed;
  for (const Measurement& m : result.trials) proposed.push_back(m.config);
  EXPECT_EQ(proposed, space.Enumerate());
  EXPECT_TRUE(s->Done());
  EXPECT_TRUE(s->Propose(8).empty());
  ASSERT_TRUE(result.best.has_value());
  EXPECT_EQ(result.best->config, objective.optimum());
  EXPECT_EQ(s->trials(), space.size());
}

TEST(StrategyTest, EveryStrategyProposesEachValidConfigAtMostOnce) {
  SearchSpace space = Create(MatmulLikeSpec(TestDevice(16)));
  BowlObjective objective(space, {0, 0, 0, 0, 0}, {1, 1, 1, 1, 1});
  for (StrategyKind kind : kAllKinds) {
    SCOPED_TRACE(StrategyName(kind));
    std::unique_ptr<SearchStrategy> s = MakeStrategy(kind);
    SearchResult result = RunSearch(*s, space, Budget{}, 5, objective, {.batch_size = 5});
    std::set<Config> seen;
    for (const Measurement& m : result.trials) {
      EXPECT_TRUE(space.IsValid(m.config)) << space.ToString(m.config);
      EXPECT_TRUE(seen.insert(m.config).second) << space.ToString(m.config);
    }
    // Without a budget, every strategy ends having tried the whole space.
    EXPECT_EQ(static_cast<int64_t>(seen.size()), space.size());
    EXPECT_TRUE(s->Done());
  }
}

std::vector<std::vector<Config>> ProposalBatches(StrategyKind kind, const SearchSpace& space,
                                                 uint64_t seed) {
  // The objective's noise is seeded too, so the reports are the same in both runs.
  BowlObjective objective(space, {4, 1, 3, 5, 2, 0}, {1, 0.5, 2, 0.25, 1, 0.1}, 0.05, 99);
  std::unique_ptr<SearchStrategy> s = MakeStrategy(kind);
  s->Start(space, {.max_trials = 96}, seed);
  std::vector<std::vector<Config>> batches;
  while (!s->Done()) {
    std::vector<Config> batch = s->Propose(8);
    if (batch.empty()) break;
    std::vector<Measurement> results;
    for (const Config& c : batch) results.push_back({c, objective(c)});
    s->Report(results);
    batches.push_back(std::move(batch));
  }
  return batches;
}

TEST(StrategyTest, SameSeedGivesTheSameProposals) {
  SearchSpace space = Create(GridSpec(6, 6));
  for (StrategyKind kind : {StrategyKind::kRandom, StrategyKind::kEvolutionary}) {
    SCOPED_TRACE(StrategyName(kind));
    std::vector<std::vector<Config>> a = ProposalBatches(kind, space, 42);
    std::vector<std::vector<Config>> b = ProposalBatches(kind, space, 42);
    std::vector<std::vector<Config>> c = ProposalBatches(kind, space, 43);
    EXPECT_EQ(a.size(), 12u);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
  }
}

TEST(StrategyTest, RandomAndEvolutionaryGetCloseToTheOptimumWithinTheBudget) {
  BigBowl bowl;
  const double optimum = bowl.objective.Exact(bowl.objective.optimum());
  const int kSeeds = 10;
  const int64_t kTrials = 200;  // 0.4% of the space
  double random_sum = 0, evolutionary_sum = 0;
  int evolutionary_exact = 0;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    std::unique_ptr<SearchStrategy> random = MakeStrategy(StrategyKind::kRandom);
    std::unique_ptr<SearchStrategy> evolutionary = MakeStrategy(StrategyKind::kEvolutionary);
    SearchResult r = RunSearch(*random, bowl.space, {.max_trials = kTrials}, seed, bowl.objective);
    SearchResult e =
        RunSearch(*evolutionary, bowl.space, {.max_trials = kTrials}, seed, bowl.objective);
    ASSERT_TRUE(r.best.has_value());
    ASSERT_TRUE(e.best.has_value());
    EXPECT_EQ(r.trials.size(), kTrials);
    EXPECT_EQ(e.trials.size(), kTrials);
    const double r_ratio = *r.best->seconds / optimum;
    const double e_ratio = *e.best->seconds / optimum;
    // Random sampling lands in the bowl's wide bottom; the guided search reaches the optimum
    // or a config within 10% of it (one step along the flattest parameter costs 10%).
    EXPECT_LE(r_ratio, 5.0) << "seed " << seed;
    EXPECT_LE(e_ratio, 1.10) << "seed " << seed;
    evolutionary_exact += e.best->config == bowl.objective.optimum();
    random_sum += r_ratio;
    evolutionary_sum += e_ratio;
  }
  EXPECT_LT(evolutionary_sum, random_sum);
  // Measured: 10 of 10 seeds reach the optimum itself; random search stays above 1.8x.
  EXPECT_GE(evolutionary_exact, 8);
}

TEST(StrategyTest, TrialBudgetStopsTheSearch) {
  SearchSpace space = Create(GridSpec(3, 5));
  BowlObjective objective(space, {1, 2, 3}, {1, 1, 1});
  for (StrategyKind kind : kAllKinds) {
    SCOPED_TRACE(StrategyName(kind));
    std::unique_ptr<SearchStrategy> s = MakeStrategy(kind);
    s->Start(space, {.max_trials = 10}, 7);
    std::vector<size_t> sizes;
    while (!s->Done()) {
      std::vector<Config> batch = s->Propose(4);
      if (batch.empty()) break;
      sizes.push_back(batch.size());
      std::vector<Measurement> results;
      for (const Config& c : batch) results.push_back({c, objective(c)});
      s->Report(results);
    }
    EXPECT_THAT(sizes, ElementsAreArray({4u, 4u, 2u}));
    EXPECT_EQ(s->trials(), 10);
    EXPECT_TRUE(s->Done());
    EXPECT_TRUE(s->Propose(4).empty());
  }
}

TEST(StrategyTest, TimeBudgetStopsTheSearchOnTheInjectedClock) {
  SearchSpace space = Create(GridSpec(3, 5));
  for (StrategyKind kind : kAllKinds) {
    SCOPED_TRACE(StrategyName(kind));
    for (int batch : {1, 4}) {
      SCOPED_TRACE(batch);
      FakeClock clock;
      // Each evaluation takes one second of the fake clock.
      auto evaluate = [&clock](const Config&) -> absl::StatusOr<double> {
        clock.Advance(1.0);
        return 1e-3;
      };
      std::unique_ptr<SearchStrategy> s = MakeStrategy(kind);
      Budget budget{.max_seconds = 5, .clock = clock.AsClock()};
      SearchResult result = RunSearch(*s, space, budget, 3, evaluate, {.batch_size = batch});
      // The clock is read before each batch: one at a time stops at 5 s, batches of 4 finish
      // the batch that started at 4 s.
      EXPECT_EQ(result.trials.size(), batch == 1 ? 5u : 8u);
      EXPECT_TRUE(s->Done());
    }
  }
}

TEST(StrategyTest, FailedConfigsAreNeverBestNorRetried) {
  SearchSpace space = Create(GridSpec(3, 4));
  BowlObjective bowl(space, {1, 1, 1}, {1, 1, 1});
  // The optimum and everything with p0 == 3 fail (e.g. did not compile).
  auto objective = [&](const Config& c) -> absl::StatusOr<double> {
    if (c == bowl.optimum() || c[0] == 3) return absl::InternalError("compile failed");
    return bowl(c);
  };
  for (StrategyKind kind : kAllKinds) {
    SCOPED_TRACE(StrategyName(kind));
    std::unique_ptr<SearchStrategy> s = MakeStrategy(kind);
    SearchResult result = RunSearch(*s, space, Budget{}, 11, objective, {.batch_size = 3});
    EXPECT_EQ(static_cast<int64_t>(result.trials.size()), space.size());
    int failures = 0;
    for (const Measurement& m : result.trials) failures += !m.seconds.ok();
    EXPECT_EQ(failures, 1 + 16);
    ASSERT_TRUE(result.best.has_value());
    EXPECT_TRUE(result.best->seconds.ok());
    // Second best: one step from the optimum along any parameter (2e-3); the first found.
    EXPECT_DOUBLE_EQ(*result.best->seconds, 2e-3);
  }
}

TEST(StrategyTest, EvolutionarySurvivesWhenEverythingFails) {
  SearchSpace space = Create(GridSpec(3, 4));
  std::unique_ptr<SearchStrategy> s = MakeStrategy(StrategyKind::kEvolutionary);
  SearchResult result =
      RunSearch(*s, space, {.max_trials = 40}, 1,
                [](const Config&) -> absl::StatusOr<double> { return absl::InternalError("no"); });
  EXPECT_EQ(result.trials.size(), 40u);
  EXPECT_FALSE(result.best.has_value());
}

TEST(StrategyTest, ReportedPriorKnowledgeCountsAndIsNotProposed) {
  SearchSpace space = Create(GridSpec(2, 3));
  for (StrategyKind kind : kAllKinds) {
    SCOPED_TRACE(StrategyName(kind));
    std::unique_ptr<SearchStrategy> s = MakeStrategy(kind);
    s->Start(space, Budget{}, 1);
    const Config prior = {1, 1};
    s->Report({{prior, 0.5}});
    // Outside the space (a value that is not a candidate, a wrong arity): ignored.
    s->Report({{{9, 9}, 0.1}, {{1}, 0.1}});
    ASSERT_TRUE(s->Best().has_value());
    EXPECT_EQ(s->Best()->config, prior);
    std::vector<Config> all;
    while (!s->Done()) {
      std::vector<Config> batch = s->Propose(4);
      if (batch.empty()) break;
      std::vector<Measurement> results;
      for (const Config& c : batch) results.push_back({c, 1.0});
      s->Report(results);
      all.insert(all.end(), batch.begin(), batch.end());
    }
    EXPECT_EQ(all.size(), 8u);
    EXPECT_THAT(all, ::testing::Not(::testing::Contains(prior)));
    EXPECT_EQ(s->Best()->config, prior);
    // A new Start forgets the previous search.
    s->Start(space, Budget{}, 1);
    EXPECT_FALSE(s->Best().has_value());
    EXPECT_FALSE(s->Done());
    EXPECT_EQ(s->Propose(100).size(), 9u);
  }
}

}  // namespace
}  // namespace pto::tuner
