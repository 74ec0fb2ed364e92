// Random search: valid configs drawn uniformly without replacement (a lazily built, seeded
// Fisher-Yates permutation of the space), so it ends after size() proposals at the latest.
#ifndef PTO_TUNER_RANDOM_STRATEGY_H_
#define PTO_TUNER_RANDOM_STRATEGY_H_

#include <optional>

#include "absl/container/flat_hash_map.h"
#include "tuner/strategy.h"
#include "tuner/trial_log.h"

namespace pto::tuner {

class RandomStrategy final : public SearchStrategy {
 public:
  StrategyKind kind() const override { return StrategyKind::kRandom; }
  void Start(const SearchSpace& space, const Budget& budget, uint64_t seed) override;
  std::vector<Config> Propose(int max_batch) override;
  void Report(const std::vector<Measurement>& results) override;
  bool Done() const override;
  std::optional<Measurement> Best() const override { return log_.best(); }
  int64_t trials() const override { return log_.proposed(); }

 private:
  const SearchSpace* space_ = nullptr;
  TrialLog log_;
  std::optional<Rng> rng_;
  int64_t next_ = 0;                               // permutation positions [0, next_) are drawn
  absl::flat_hash_map<int64_t, int64_t> swapped_;  // permutation entries that moved
};

}  // namespace pto::tuner

#endif  // PTO_TUNER_RANDOM_STRATEGY_H_
