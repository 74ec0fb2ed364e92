// Evolutionary search guided by a cost model. After EvolutionaryOptions::initial_random
// uniform proposals, each Propose fits the cost model (cost_model.h) to every successful
// measurement, breeds a pool of untried valid candidates from the fastest configs so far
// (the best config's neighbours, single- or double-parameter mutations, uniform crossovers),
// and fills the batch with the pool's best predictions; each slot is instead drawn uniformly
// from the untried configs with probability epsilon, so a wrong model cannot trap the search.
#ifndef PTO_TUNER_EVOLUTIONARY_STRATEGY_H_
#define PTO_TUNER_EVOLUTIONARY_STRATEGY_H_

#include <optional>

#include "tuner/cost_model.h"
#include "tuner/strategy.h"
#include "tuner/trial_log.h"

namespace pto::tuner {

class EvolutionaryStrategy final : public SearchStrategy {
 public:
  explicit EvolutionaryStrategy(const EvolutionaryOptions& options) : options_(options) {}

  StrategyKind kind() const override { return StrategyKind::kEvolutionary; }
  void Start(const SearchSpace& space, const Budget& budget, uint64_t seed) override;
  std::vector<Config> Propose(int max_batch) override;
  void Report(const std::vector<Measurement>& results) override;
  bool Done() const override;
  std::optional<Measurement> Best() const override { return log_.best(); }
  int64_t trials() const override { return log_.proposed(); }

 private:
  // Untried valid candidates bred from the fastest configs, best predictions first.
  std::vector<Config> RankedPool();
  Config Mutate(const Config& parent);
  Config Crossover(const Config& a, const Config& b);

  EvolutionaryOptions options_;
  const SearchSpace* space_ = nullptr;
  TrialLog log_;
  std::optional<Rng> rng_;
  std::optional<CostModel> model_;
};

}  // namespace pto::tuner

#endif  // PTO_TUNER_EVOLUTIONARY_STRATEGY_H_
