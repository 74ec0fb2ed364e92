// Bookkeeping every strategy shares: the budget and its clock, which configs were proposed or
// reported (so none is proposed twice), the successful measurements, and the best one.
#ifndef PTO_TUNER_TRIAL_LOG_H_
#define PTO_TUNER_TRIAL_LOG_H_

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "tuner/search_space.h"
#include "tuner/strategy.h"

namespace pto::tuner {

class TrialLog {
 public:
  // Forgets everything and starts the budget's clock.
  void Start(const SearchSpace& space, const Budget& budget);
  bool started() const { return space_ != nullptr; }

  // True when the trial or time budget is spent.
  bool BudgetSpent() const;
  // How many configs may be proposed now: max_batch capped by the trials left; 0 if the
  // budget is spent.
  int Allowance(int max_batch) const;

  // Whether the config (by code) was proposed or reported.
  bool Tried(int64_t code) const { return tried_.contains(code); }
  int64_t tried_count() const { return static_cast<int64_t>(tried_.size()); }
  // Every valid config was proposed or reported.
  bool SpaceExhausted() const { return space_ != nullptr && tried_count() >= space_->size(); }

  void MarkProposed(const Config& config);
  void Record(const Measurement& m);

  int64_t proposed() const { return proposed_; }
  const std::optional<Measurement>& best() const { return best_; }
  // Successful measurements in the order reported.
  const std::vector<std::pair<Config, double>>& successes() const { return successes_; }
  double ElapsedSeconds() const;

 private:
  const SearchSpace* space_ = nullptr;
  Budget budget_;
  double start_seconds_ = 0;
  absl::flat_hash_set<int64_t> tried_;
  int64_t proposed_ = 0;
  std::vector<std::pair<Config, double>> successes_;
  std::optional<Measurement> best_;
};

// A uniformly random valid config not yet tried, or nullopt if there is none. Draws by
// rejection while most of the space is untried, then from the list of untried configs.
std::optional<Config> SampleUntried(const SearchSpace& space, const TrialLog& log, Rng& rng);

}  // namespace pto::tuner

#endif  // PTO_TUNER_TRIAL_LOG_H_
