#include "tuner/random_strategy.h"

namespace pto::tuner {

void RandomStrategy::Start(const SearchSpace& space, const Budget& budget, uint64_t seed) {
  space_ = &space;
  log_.Start(space, budget);
  rng_.emplace(seed);
  next_ = 0;
  swapped_.clear();
}

std::vector<Config> RandomStrategy::Propose(int max_batch) {
  std::vector<Config> out;
  if (space_ == nullptr) return out;
  const int allowance = log_.Allowance(max_batch);
  auto entry = [this](int64_t i) {
    auto it = swapped_.find(i);
    return it == swapped_.end() ? i : it->second;
  };
  while (static_cast<int>(out.size()) < allowance && next_ < space_->size()) {
    // One Fisher-Yates step: swap position next_ with a uniform position in [next_, size).
    const int64_t j = next_ + rng_->UniformIndex(space_->size() - next_);
    const int64_t picked = entry(j);
    swapped_[j] = entry(next_);
    swapped_.erase(next_);
    ++next_;
    if (log_.Tried(space_->CodeAt(picked))) continue;
    out.push_back(space_->At(picked));
    log_.MarkProposed(out.back());
  }
  return out;
}

void RandomStrategy::Report(const std::vector<Measurement>& results) {
  for (const Measurement& m : results) log_.Record(m);
}

bool RandomStrategy::Done() const { return log_.BudgetSpent() || log_.SpaceExhausted(); }

}  // namespace pto::tuner
