// The search-strategy interface, with an explicit lifecycle (like TVM MetaSchedule's
// search_strategy/):
//
//   strategy->Start(space, budget, seed);
//   while (!strategy->Done()) {
//     std::vector<Config> batch = strategy->Propose(8);   // empty: nothing more to try
//     if (batch.empty()) break;
//     ... measure each config (tuner/measure.h) ...
//     strategy->Report(measurements);
//   }
//   strategy->Best();
//
// A strategy never proposes a config twice, nor one outside the space. Given the same space,
// budget, seed and reports, it proposes the same configs in the same order. Start may be called
// again to begin a new search; the space must outlive the search. A strategy is not
// thread-safe: one thread drives it (the measurements themselves may run anywhere).
//
// Implementations, one file each: exhaustive_strategy.h, random_strategy.h,
// evolutionary_strategy.h (guided by cost_model.h). MakeStrategy is the factory.
#ifndef PTO_TUNER_STRATEGY_H_
#define PTO_TUNER_STRATEGY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner/cost_model.h"
#include "tuner/search_space.h"

namespace pto::tuner {

// Seconds on a monotonic clock. Tests inject a fake one.
using Clock = std::function<double()>;

struct Budget {
  // Configs that may be proposed in all (failures count). 0: no limit.
  int64_t max_trials = 0;
  // Seconds from Start after which nothing more is proposed. 0: no limit.
  double max_seconds = 0;
  // The clock max_seconds is measured on. Empty: std::chrono::steady_clock.
  Clock clock;
};

// The outcome of trying one config: its time in seconds (as the measurement procedure defines
// it, e.g. a median) or why it failed (did not compile, wrong answer, crashed...). A failed
// config is never Best.
struct Measurement {
  Config config;
  absl::StatusOr<double> seconds;
};

enum class StrategyKind : uint8_t { kExhaustive = 0, kRandom = 1, kEvolutionary = 2 };
const char* StrategyName(StrategyKind kind);  // "exhaustive", "random", "evolutionary"

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;

  virtual StrategyKind kind() const = 0;
  // Begins a search of `space` (which must outlive it), forgetting any previous one.
  virtual void Start(const SearchSpace& space, const Budget& budget, uint64_t seed) = 0;
  // Up to max_batch configs not proposed or reported before, within the budget. Empty when
  // Done (or before Start).
  virtual std::vector<Config> Propose(int max_batch) = 0;
  // Results for proposed configs, in any order and batching. A result for a config that was
  // not proposed is taken as prior knowledge (e.g. the default config's time): it can be Best
  // and the config will not be proposed. A result for a config outside the space is ignored.
  virtual void Report(const std::vector<Measurement>& results) = 0;
  // True when nothing more will be proposed: the budget is spent or every config was tried.
  virtual bool Done() const = 0;
  // The fastest successful measurement reported so far (the first on ties).
  virtual std::optional<Measurement> Best() const = 0;
  // Configs proposed since Start.
  virtual int64_t trials() const = 0;
};

struct EvolutionaryOptions {
  // The first this-many proposals are uniform random (the cost model has nothing to learn yet).
  int initial_random = 16;
  // Parents are drawn from the best this-many successful measurements.
  int parents = 8;
  // Candidates bred per Propose (mutations and crossovers of the parents, plus the best
  // config's neighbours) before the cost model ranks them.
  int pool_size = 512;
  // Share of the candidates bred by mutation; the rest by uniform crossover of two parents.
  double mutation_share = 0.8;
  // Share of each batch drawn uniformly at random instead of by prediction (exploration).
  double epsilon = 0.1;
  CostModelOptions cost_model;
};

struct StrategyOptions {
  EvolutionaryOptions evolutionary;
};

std::unique_ptr<SearchStrategy> MakeStrategy(StrategyKind kind,
                                             const StrategyOptions& options = {});

}  // namespace pto::tuner

#endif  // PTO_TUNER_STRATEGY_H_
