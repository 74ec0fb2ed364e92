#include "tools/bench/timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

namespace pto::bench {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// The q-quantile of sorted `v` with linear interpolation.
double Quantile(const std::vector<double>& v, double q) {
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

Timing TimeCalls(const std::function<void(int)>& run, int num_sets, const TimingOptions& options) {
  int set = 0;
  auto next = [&] {
    run(set);
    set = (set + 1) % num_sets;
  };
  // Warm-up: at least two calls and warmup_seconds; the fastest call estimates the cost.
  double per_call = 1e30;
  const auto warm_start = Clock::now();
  for (int i = 0; i < 2 || Seconds(Clock::now() - warm_start) < options.warmup_seconds; ++i) {
    const auto t = Clock::now();
    next();
    per_call = std::min(per_call, Seconds(Clock::now() - t));
    if (i > 1000) break;
  }
  Timing timing;
  timing.calls_per_rep =
      std::max(1, static_cast<int>(std::ceil(options.min_rep_seconds / std::max(per_call, 1e-9))));
  std::vector<double> samples;
  const auto start = Clock::now();
  while (static_cast<int>(samples.size()) < options.max_reps) {
    if (static_cast<int>(samples.size()) >= options.min_reps &&
        Seconds(Clock::now() - start) > options.budget_seconds)
      break;
    const auto t = Clock::now();
    for (int c = 0; c < timing.calls_per_rep; ++c) next();
    samples.push_back(Seconds(Clock::now() - t) / timing.calls_per_rep);
  }
  std::sort(samples.begin(), samples.end());
  timing.reps = static_cast<int>(samples.size());
  timing.median = Quantile(samples, 0.5);
  timing.p10 = Quantile(samples, 0.1);
  timing.p90 = Quantile(samples, 0.9);
  return timing;
}

}  // namespace pto::bench
