// Exhaustive search: every valid config, in enumeration order. For small spaces.
#ifndef PTO_TUNER_EXHAUSTIVE_STRATEGY_H_
#define PTO_TUNER_EXHAUSTIVE_STRATEGY_H_

#include "tuner/strategy.h"
#include "tuner/trial_log.h"

namespace pto::tuner {

class ExhaustiveStrategy final : public SearchStrategy {
 public:
  StrategyKind kind() const override { return StrategyKind::kExhaustive; }
  void Start(const SearchSpace& space, const Budget& budget, uint64_t seed) override;
  std::vector<Config> Propose(int max_batch) override;
  void Report(const std::vector<Measurement>& results) override;
  bool Done() const override;
  std::optional<Measurement> Best() const override { return log_.best(); }
  int64_t trials() const override { return log_.proposed(); }

 private:
  const SearchSpace* space_ = nullptr;
  TrialLog log_;
  int64_t next_ = 0;  // position in the space's enumeration
};

}  // namespace pto::tuner

#endif  // PTO_TUNER_EXHAUSTIVE_STRATEGY_H_
