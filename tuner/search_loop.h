// Drives a strategy to the end of its budget against an evaluation callback: the loop of
// strategy.h's comment, for warm-up tuning and tests. The background service will drive
// strategies itself (it interleaves kernels and compares against the incumbent).
#ifndef PTO_TUNER_SEARCH_LOOP_H_
#define PTO_TUNER_SEARCH_LOOP_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner/strategy.h"

namespace pto::tuner {

struct SearchOptions {
  int batch_size = 8;  // configs asked of the strategy per Propose
};

struct SearchResult {
  std::optional<Measurement> best;
  std::vector<Measurement> trials;  // every evaluated config, in proposal order
};

// Start(space, budget, seed), then Propose / evaluate each / Report until the strategy is Done
// or proposes nothing. `evaluate` gives a config's seconds (e.g. Measure's median) or an error,
// reported as a failure.
SearchResult RunSearch(SearchStrategy& strategy, const SearchSpace& space, const Budget& budget,
                       uint64_t seed,
                       const std::function<absl::StatusOr<double>(const Config&)>& evaluate,
                       const SearchOptions& options = {});

}  // namespace pto::tuner

#endif  // PTO_TUNER_SEARCH_LOOP_H_
