#include "tools/bench/timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <vector>

#include "tools/bench/turn_order.h"

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

std::vector<Timing> TimeContenders(const std::vector<Contender>& contenders,
                                   const TimingOptions& options) {
  const size_t n = contenders.size();
  std::vector<int> calls(n);
  for (size_t r = 0; r < n; ++r) calls[r] = contenders[r].calibrate();
  std::vector<std::vector<double>> samples(n);
  const auto start = Clock::now();
  for (int round = 0; round < options.max_reps; ++round) {
    if (round >= options.min_reps &&
        Seconds(Clock::now() - start) > options.budget_seconds * static_cast<double>(n)) {
      break;
    }
    for (size_t r : TurnOrder(n, round)) samples[r].push_back(contenders[r].repetition(n > 1));
  }
  std::vector<Timing> timings;
  for (size_t r = 0; r < n; ++r) timings.push_back(Summarize(std::move(samples[r]), calls[r]));
  return timings;
}

Contender CallsContender(std::function<void()> call, const TimingOptions& options,
                         std::function<void()> after) {
  auto calls = std::make_shared<int>(1);
  return {[calls, call, options] { return *calls = CallsPerRep(call, options); },
          [calls, call, after](bool before_others) {
            if (before_others && *calls > 1) call();
            const auto t = Clock::now();
            for (int c = 0; c < *calls; ++c) call();
            const double seconds = Seconds(Clock::now() - t) / *calls;
            if (after) after();
            return seconds;
          }};
}

std::vector<Timing> TimeInterleaved(const std::vector<std::function<void(int)>>& runs, int num_sets,
                                    const TimingOptions& options) {
  // One rotation for all the runs: each call takes the next operand set, so no run reads the
  // operands another run has just brought into the cache. (With a rotation per run, every run
  // after the first in a round found its sets warm from the first: in a config sweep the first
  // entry, the default, came out 1-7% slower than identical copies of itself.)
  int set = 0;
  std::vector<Contender> contenders;
  for (const std::function<void(int)>& run : runs) {
    contenders.push_back(CallsContender(
        [&run, &set, num_sets] {
          run(set);
          set = (set + 1) % num_sets;
        },
        options));
  }
  return TimeContenders(contenders, options);
}

Timing TimeCalls(const std::function<void(int)>& run, int num_sets, const TimingOptions& options) {
  return TimeInterleaved({run}, num_sets, options)[0];
}

}  // namespace pto::bench
