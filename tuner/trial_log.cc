#include "tuner/trial_log.h"

#include <algorithm>
#include <chrono>

namespace pto::tuner {
namespace {

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

void TrialLog::Start(const SearchSpace& space, const Budget& budget) {
  space_ = &space;
  budget_ = budget;
  if (!budget_.clock) budget_.clock = SteadySeconds;
  start_seconds_ = budget_.clock();
  tried_.clear();
  proposed_ = 0;
  successes_.clear();
  best_.reset();
}

double TrialLog::ElapsedSeconds() const {
  return space_ == nullptr ? 0 : budget_.clock() - start_seconds_;
}

bool TrialLog::BudgetSpent() const {
  if (space_ == nullptr) return true;
  if (budget_.max_trials > 0 && proposed_ >= budget_.max_trials) return true;
  if (budget_.max_seconds > 0 && ElapsedSeconds() >= budget_.max_seconds) return true;
  return false;
}

int TrialLog::Allowance(int max_batch) const {
  if (max_batch <= 0 || BudgetSpent()) return 0;
  int64_t allowance = max_batch;
  if (budget_.max_trials > 0) allowance = std::min(allowance, budget_.max_trials - proposed_);
  return static_cast<int>(allowance);
}

void TrialLog::MarkProposed(const Config& config) {
  tried_.insert(space_->Code(config));
  ++proposed_;
}

void TrialLog::Record(const Measurement& m) {
  if (space_ == nullptr || !space_->IsValid(m.config)) return;
  tried_.insert(space_->Code(m.config));
  if (!m.seconds.ok()) return;
  successes_.emplace_back(m.config, *m.seconds);
  if (!best_.has_value() || *m.seconds < *best_->seconds) best_ = m;
}

std::optional<Config> SampleUntried(const SearchSpace& space, const TrialLog& log, Rng& rng) {
  const int64_t untried = space.size() - log.tried_count();
  if (untried <= 0) return std::nullopt;
  if (untried * 2 >= space.size()) {
    // At least half is untried: each draw succeeds with probability >= 1/2.
    for (;;) {
      const int64_t i = rng.UniformIndex(space.size());
      if (!log.Tried(space.CodeAt(i))) return space.At(i);
    }
  }
  std::vector<int64_t> positions;
  positions.reserve(untried);
  for (int64_t i = 0; i < space.size(); ++i) {
    if (!log.Tried(space.CodeAt(i))) positions.push_back(i);
  }
  if (positions.empty()) return std::nullopt;
  return space.At(positions[rng.UniformIndex(static_cast<int64_t>(positions.size()))]);
}

}  // namespace pto::tuner
