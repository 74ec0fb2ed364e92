// The evolutionary strategy's cost model: ridge regression of log(seconds) on one-hot
// features of the config (one feature per parameter value) and, optionally, of every pair of
// parameters (one feature per pair of values), so interactions such as mr x nr_vectors can be
// learnt. The fit is done in its dual (kernel) form: the feature vectors of two configs have
// dot product m + pair_weight * m*(m-1)/2, where m is the number of parameters on which they
// agree, so the cost is cubic in the number of measurements (hundreds), not in the number of
// features (which grows with the square of the candidate counts).
#ifndef PTO_TUNER_COST_MODEL_H_
#define PTO_TUNER_COST_MODEL_H_

#include <utility>
#include <vector>

#include "tuner/search_space.h"

namespace pto::tuner {

struct CostModelOptions {
  // Ridge penalty (on the weights of the unnormalized one-hot features). Must be positive.
  double ridge = 1.0;
  // Weight of the pairwise features relative to the one-hot ones; 0 = additive model only.
  double pair_weight = 0.5;
  // Fits on at most this many samples: the fastest ones (the region that matters).
  int max_samples = 512;
};

class CostModel {
 public:
  explicit CostModel(const SearchSpace& space, CostModelOptions options = {});

  // Fits log(seconds) of the samples (configs of the space, seconds > 0; others are skipped).
  // Replaces any previous fit. With no usable sample, predictions are 0.
  void Fit(const std::vector<std::pair<Config, double>>& samples);
  // Predicted log(seconds): lower is faster. Only the order of predictions is meaningful to
  // the strategy.
  double PredictLogSeconds(const Config& config) const;
  int num_samples() const { return static_cast<int>(configs_.size()); }

 private:
  double Kernel(const Config& a, const Config& b) const;

  const SearchSpace* space_;
  CostModelOptions options_;
  std::vector<Config> configs_;
  std::vector<double> alpha_;
  double mean_ = 0;
};

}  // namespace pto::tuner

#endif  // PTO_TUNER_COST_MODEL_H_
