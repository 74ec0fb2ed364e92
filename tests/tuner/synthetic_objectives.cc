#include "tests/tuner/synthetic_objectives.h"

#include <cassert>

namespace pto::tuner {

BowlObjective::BowlObjective(const SearchSpace& space, std::vector<int> optimum_index,
                             std::vector<double> weights, double noise, uint64_t noise_seed)
    : space_(&space),
      optimum_(std::move(optimum_index)),
      weights_(std::move(weights)),
      noise_(noise),
      rng_(std::make_shared<Rng>(noise_seed)),
      calls_(std::make_shared<int64_t>(0)) {
  assert(static_cast<int>(optimum_.size()) == space.num_parameters());
  assert(static_cast<int>(weights_.size()) == space.num_parameters());
}

double BowlObjective::Exact(const Config& config) const {
  double bowl = 1;
  for (int p = 0; p < space_->num_parameters(); ++p) {
    const double d = space_->ValueIndex(p, config[p]) - optimum_[p];
    bowl += weights_[p] * d * d;
  }
  return 1e-3 * bowl;
}

absl::StatusOr<double> BowlObjective::operator()(const Config& config) const {
  ++*calls_;
  const double u = 2 * rng_->UniformDouble() - 1;
  return Exact(config) * (1 + noise_ * u);
}

Config BowlObjective::optimum() const {
  Config config(space_->num_parameters());
  for (int p = 0; p < space_->num_parameters(); ++p) {
    config[p] = space_->parameters()[p].values[optimum_[p]];
  }
  return config;
}

}  // namespace pto::tuner
