#include "tuner/exhaustive_strategy.h"

namespace pto::tuner {

void ExhaustiveStrategy::Start(const SearchSpace& space, const Budget& budget, uint64_t) {
  space_ = &space;
  log_.Start(space, budget);
  next_ = 0;
}

std::vector<Config> ExhaustiveStrategy::Propose(int max_batch) {
  std::vector<Config> out;
  if (space_ == nullptr) return out;
  const int allowance = log_.Allowance(max_batch);
  while (static_cast<int>(out.size()) < allowance && next_ < space_->size()) {
    const int64_t i = next_++;
    if (log_.Tried(space_->CodeAt(i))) continue;
    out.push_back(space_->At(i));
    log_.MarkProposed(out.back());
  }
  return out;
}

void ExhaustiveStrategy::Report(const std::vector<Measurement>& results) {
  for (const Measurement& m : results) log_.Record(m);
}

bool ExhaustiveStrategy::Done() const { return log_.BudgetSpent() || log_.SpaceExhausted(); }

}  // namespace pto::tuner
