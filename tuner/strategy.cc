#include "tuner/strategy.h"

#include "tuner/evolutionary_strategy.h"
#include "tuner/exhaustive_strategy.h"
#include "tuner/random_strategy.h"

namespace pto::tuner {

const char* StrategyName(StrategyKind kind) {
  switch (kind) {
    case StrategyKind::kExhaustive:
      return "exhaustive";
    case StrategyKind::kRandom:
      return "random";
    case StrategyKind::kEvolutionary:
      return "evolutionary";
  }
  return "?";
}

std::unique_ptr<SearchStrategy> MakeStrategy(StrategyKind kind, const StrategyOptions& options) {
  switch (kind) {
    case StrategyKind::kExhaustive:
      return std::make_unique<ExhaustiveStrategy>();
    case StrategyKind::kRandom:
      return std::make_unique<RandomStrategy>();
    case StrategyKind::kEvolutionary:
      return std::make_unique<EvolutionaryStrategy>(options.evolutionary);
  }
  return nullptr;
}

}  // namespace pto::tuner
