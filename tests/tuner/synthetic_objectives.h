// Synthetic objectives for the tuner tests: known optima, seeded noise, a machine whose
// speed drifts, configs that fail, and a fake clock.
#ifndef PTO_TESTS_TUNER_SYNTHETIC_OBJECTIVES_H_
#define PTO_TESTS_TUNER_SYNTHETIC_OBJECTIVES_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner/rng.h"
#include "tuner/search_space.h"

namespace pto::tuner {

// seconds = base * (1 + sum_p weight_p * (index_p - optimum_index_p)^2) * (1 + noise * u),
// u uniform in [-1, 1) from a generator seeded with noise_seed (shared by copies). The
// optimum is given as value indices into each parameter's candidates.
class BowlObjective {
 public:
  BowlObjective(const SearchSpace& space, std::vector<int> optimum_index,
                std::vector<double> weights, double noise = 0, uint64_t noise_seed = 1);
  absl::StatusOr<double> operator()(const Config& config) const;
  // The noise-free time.
  double Exact(const Config& config) const;
  Config optimum() const;
  int64_t calls() const { return *calls_; }

 private:
  const SearchSpace* space_;
  std::vector<int> optimum_;
  std::vector<double> weights_;
  double noise_;
  std::shared_ptr<Rng> rng_;
  std::shared_ptr<int64_t> calls_;
};

// A machine getting slower: the n-th call (from 0) of any config takes
// base(config) * (1 + drift * n). The ratio between two configs run side by side is fixed.
class DriftingMachine {
 public:
  DriftingMachine(std::function<double(const Config&)> base, double drift)
      : base_(std::move(base)), drift_(drift), calls_(std::make_shared<int64_t>(0)) {}
  absl::StatusOr<double> operator()(const Config& config) const {
    return base_(config) * (1 + drift_ * static_cast<double>((*calls_)++));
  }
  int64_t calls() const { return *calls_; }

 private:
  std::function<double(const Config&)> base_;
  double drift_;
  std::shared_ptr<int64_t> calls_;
};

// A clock the test advances by hand.
class FakeClock {
 public:
  double Now() const { return *now_; }
  void Advance(double seconds) { *now_ += seconds; }
  std::function<double()> AsClock() const {
    return [now = now_] { return *now; };
  }

 private:
  std::shared_ptr<double> now_ = std::make_shared<double>(1000.0);
};

}  // namespace pto::tuner

#endif  // PTO_TESTS_TUNER_SYNTHETIC_OBJECTIVES_H_
