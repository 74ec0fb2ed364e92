#include "tuner/search_loop.h"

namespace pto::tuner {

SearchResult RunSearch(SearchStrategy& strategy, const SearchSpace& space, const Budget& budget,
                       uint64_t seed,
                       const std::function<absl::StatusOr<double>(const Config&)>& evaluate,
                       const SearchOptions& options) {
  SearchResult result;
  strategy.Start(space, budget, seed);
  while (!strategy.Done()) {
    std::vector<Config> batch = strategy.Propose(options.batch_size);
    if (batch.empty()) break;
    std::vector<Measurement> measured;
    measured.reserve(batch.size());
    for (Config& config : batch) {
      absl::StatusOr<double> seconds = evaluate(config);
      measured.push_back({std::move(config), std::move(seconds)});
    }
    strategy.Report(measured);
    result.trials.insert(result.trials.end(), measured.begin(), measured.end());
  }
  result.best = strategy.Best();
  return result;
}

}  // namespace pto::tuner
