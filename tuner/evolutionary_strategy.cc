#include "tuner/evolutionary_strategy.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/container/flat_hash_set.h"

namespace pto::tuner {

void EvolutionaryStrategy::Start(const SearchSpace& space, const Budget& budget, uint64_t seed) {
  space_ = &space;
  log_.Start(space, budget);
  rng_.emplace(seed);
  model_.emplace(space, options_.cost_model);
}

Config EvolutionaryStrategy::Mutate(const Config& parent) {
  Config child = parent;
  const int np = space_->num_parameters();
  int changes = rng_->Bernoulli(0.3) ? 2 : 1;
  while (changes-- > 0) {
    const int p = static_cast<int>(rng_->UniformIndex(np));
    const std::vector<int64_t>& values = space_->parameters()[p].values;
    const int n = static_cast<int>(values.size());
    if (n < 2) continue;
    const int i = space_->ValueIndex(p, child[p]);
    int j;
    if (rng_->Bernoulli(0.5)) {  // an adjacent value
      j = rng_->Bernoulli(0.5) ? i - 1 : i + 1;
      if (j < 0) j = 1;
      if (j >= n) j = n - 2;
    } else {  // any other value
      j = static_cast<int>(rng_->UniformIndex(n - 1));
      if (j >= i) ++j;
    }
    child[p] = values[j];
  }
  return child;
}

Config EvolutionaryStrategy::Crossover(const Config& a, const Config& b) {
  Config child = a;
  for (size_t p = 0; p < child.size(); ++p) {
    if (rng_->Bernoulli(0.5)) child[p] = b[p];
  }
  return child;
}

std::vector<Config> EvolutionaryStrategy::RankedPool() {
  // Parents: the fastest successful configs, first reported first on ties.
  std::vector<std::pair<Config, double>> ranked = log_.successes();
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& x, const auto& y) { return x.second < y.second; });
  if (static_cast<int>(ranked.size()) > options_.parents) ranked.resize(options_.parents);
  std::vector<Config> pool;
  absl::flat_hash_set<int64_t> in_pool;
  auto consider = [&](Config config) {
    if (!space_->IsValid(config)) return;
    const int64_t code = space_->Code(config);
    if (log_.Tried(code) || !in_pool.insert(code).second) return;
    pool.push_back(std::move(config));
  };
  if (ranked.empty()) return pool;
  for (Config& n : space_->Neighbors(ranked.front().first)) consider(std::move(n));
  const int64_t n = static_cast<int64_t>(ranked.size());
  for (int attempt = 0;
       attempt < options_.pool_size * 4 && static_cast<int>(pool.size()) < options_.pool_size;
       ++attempt) {
    const Config& a = ranked[rng_->UniformIndex(n)].first;
    if (n < 2 || rng_->Bernoulli(options_.mutation_share)) {
      consider(Mutate(a));
    } else {
      const Config& b = ranked[rng_->UniformIndex(n)].first;
      consider(Crossover(a, b));
    }
  }
  model_->Fit(log_.successes());
  std::vector<double> predicted(pool.size());
  for (size_t i = 0; i < pool.size(); ++i) predicted[i] = model_->PredictLogSeconds(pool[i]);
  std::vector<size_t> order(pool.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return predicted[x] < predicted[y]; });
  std::vector<Config> out;
  out.reserve(pool.size());
  for (size_t i : order) out.push_back(std::move(pool[i]));
  return out;
}

std::vector<Config> EvolutionaryStrategy::Propose(int max_batch) {
  std::vector<Config> out;
  if (space_ == nullptr) return out;
  const int allowance = log_.Allowance(max_batch);
  if (allowance == 0) return out;
  std::vector<Config> pool;
  size_t next = 0;
  if (log_.proposed() >= options_.initial_random && !log_.successes().empty()) {
    pool = RankedPool();
  }
  while (static_cast<int>(out.size()) < allowance) {
    std::optional<Config> pick;
    const bool explore =
        log_.proposed() < options_.initial_random || rng_->Bernoulli(options_.epsilon);
    if (!explore) {
      while (next < pool.size() && log_.Tried(space_->Code(pool[next]))) ++next;
      if (next < pool.size()) pick = std::move(pool[next++]);
    }
    if (!pick.has_value()) pick = SampleUntried(*space_, log_, *rng_);
    if (!pick.has_value()) break;  // every config was tried
    log_.MarkProposed(*pick);
    out.push_back(std::move(*pick));
  }
  return out;
}

void EvolutionaryStrategy::Report(const std::vector<Measurement>& results) {
  for (const Measurement& m : results) log_.Record(m);
}

bool EvolutionaryStrategy::Done() const { return log_.BudgetSpent() || log_.SpaceExhausted(); }

}  // namespace pto::tuner
