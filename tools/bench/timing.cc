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

// Warm-up: at least two calls and warmup_seconds; calls per repetition from the fastest call.
int CallsPerRep(const std::function<void()>& next, const TimingOptions& options) {
  double per_call = 1e30;
  const auto warm_start = Clock::now();
  for (int i = 0; i < 2 || Seconds(Clock::now() - warm_start) < options.warmup_seconds; ++i) {
    const auto t = Clock::now();
    next();
    per_call = std::min(per_call, Seconds(Clock::now() - t));
    if (i > 1000) break;
  }
  return std::max(1,
                  static_cast<int>(std::ceil(options.min_rep_seconds / std::max(per_call, 1e-9))));
}

Timing Summarize(std::vector<double> samples, int calls_per_rep) {
  Timing timing;
  std::sort(samples.begin(), samples.end());
  timing.calls_per_rep = calls_per_rep;
  timing.reps = static_cast<int>(samples.size());
  timing.median = Quantile(samples, 0.5);
  timing.p10 = Quantile(samples, 0.1);
  timing.p90 = Quantile(samples, 0.9);
  return timing;
}

}  // namespace

std::vector<Timing> TimeInterleaved(const std::vector<std::function<void(int)>>& runs, int num_sets,
                                    const TimingOptions& options) {
  const size_t n = runs.size();
  std::vector<int> calls(n);
  // One rotation for all the runs: each call takes the next operand set, so no run reads the
  // operands another run has just brought into the cache. (With a rotation per run, every run
  // after the first in a round found its sets warm from the first: in a config sweep the first
  // entry, the default, came out 1-7% slower than identical copies of itself.)
  int set = 0;
  auto next = [&](size_t r) {
    runs[r](set);
    set = (set + 1) % num_sets;
  };
  for (size_t r = 0; r < n; ++r) calls[r] = CallsPerRep([&] { next(r); }, options);
  std::vector<std::vector<double>> samples(n);
  const auto start = Clock::now();
  for (int round = 0; round < options.max_reps; ++round) {
    if (round >= options.min_reps &&
        Seconds(Clock::now() - start) > options.budget_seconds * static_cast<double>(n)) {
      break;
    }
    for (size_t r = 0; r < n; ++r) {
      // Short calls: one untimed call first, so the waking of this run's thread pool (idle
      // while the others ran) is not in its repetition.
      if (n > 1 && calls[r] > 1) next(r);
      const auto t = Clock::now();
      for (int c = 0; c < calls[r]; ++c) next(r);
      samples[r].push_back(Seconds(Clock::now() - t) / calls[r]);
    }
  }
  std::vector<Timing> timings;
  for (size_t r = 0; r < n; ++r) timings.push_back(Summarize(std::move(samples[r]), calls[r]));
  return timings;
}

Timing TimeCalls(const std::function<void(int)>& run, int num_sets, const TimingOptions& options) {
  int set = 0;
  auto next = [&] {
    run(set);
    set = (set + 1) % num_sets;
  };
  const int calls_per_rep = CallsPerRep(next, options);
  std::vector<double> samples;
  const auto start = Clock::now();
  while (static_cast<int>(samples.size()) < options.max_reps) {
    if (static_cast<int>(samples.size()) >= options.min_reps &&
        Seconds(Clock::now() - start) > options.budget_seconds)
      break;
    const auto t = Clock::now();
    for (int c = 0; c < calls_per_rep; ++c) next();
    samples.push_back(Seconds(Clock::now() - t) / calls_per_rep);
  }
  return Summarize(std::move(samples), calls_per_rep);
}

}  // namespace pto::bench
