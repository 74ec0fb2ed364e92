#include "tuner/measure.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace pto::tuner {
namespace {

absl::Status Annotate(const SearchSpace& space, const Config& config, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat("config ", space.ToString(config), ": ", s.message()));
}

absl::StatusOr<double> RunOnce(const SearchSpace& space, const Objective& objective,
                               const Config& config) {
  absl::StatusOr<double> seconds = objective(config);
  if (!seconds.ok()) return Annotate(space, config, seconds.status());
  if (!(*seconds >= 0) || !std::isfinite(*seconds)) {
    return absl::InternalError(absl::StrCat("config ", space.ToString(config),
                                            ": the objective returned ", *seconds, " seconds"));
  }
  return *seconds;
}

}  // namespace

double Median(std::vector<double> values) {
  assert(!values.empty());
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  if (values.size() % 2 == 1) return values[mid];
  const double upper = values[mid];
  const double lower = *std::max_element(values.begin(), values.begin() + mid);
  return (lower + upper) / 2;
}

absl::StatusOr<Timing> Measure(const SearchSpace& space, const Objective& objective,
                               const Config& config, const MeasureOptions& options) {
  for (int i = 0; i < options.warmup_runs; ++i) {
    absl::StatusOr<double> s = RunOnce(space, objective, config);
    if (!s.ok()) return s.status();
  }
  Timing timing;
  const int min_runs = std::max(1, options.min_runs);
  const int max_runs = std::max(min_runs, options.max_runs);
  double previous = 0;
  while (static_cast<int>(timing.samples.size()) < max_runs) {
    absl::StatusOr<double> s = RunOnce(space, objective, config);
    if (!s.ok()) return s.status();
    timing.samples.push_back(*s);
    const double median = Median(timing.samples);
    const bool stable = static_cast<int>(timing.samples.size()) > min_runs &&
                        std::abs(median - previous) <= options.stable_tolerance * previous;
    previous = median;
    if (stable) break;
  }
  timing.median_seconds = previous;
  return timing;
}

absl::StatusOr<Comparison> CompareInterleaved(const SearchSpace& space, const Objective& objective,
                                              const Config& candidate, const Config& incumbent,
                                              const CompareOptions& options) {
  Comparison result;
  auto fail = [&](const absl::Status& s) {
    result.verdict = Verdict::kCandidateFailed;
    result.candidate_status = s;
    return result;
  };
  for (int i = 0; i < options.warmup_runs; ++i) {
    absl::StatusOr<double> inc = RunOnce(space, objective, incumbent);
    if (!inc.ok()) return inc.status();
    absl::StatusOr<double> cand = RunOnce(space, objective, candidate);
    if (!cand.ok()) return fail(cand.status());
  }
  const int pairs = std::max(1, options.pairs);
  std::vector<double> inc_runs, cand_runs;
  absl::StatusOr<double> first = RunOnce(space, objective, incumbent);
  if (!first.ok()) return first.status();
  inc_runs.push_back(*first);
  for (int i = 0; i < pairs; ++i) {
    absl::StatusOr<double> cand = RunOnce(space, objective, candidate);
    if (!cand.ok()) return fail(cand.status());
    cand_runs.push_back(*cand);
    absl::StatusOr<double> inc = RunOnce(space, objective, incumbent);
    if (!inc.ok()) return inc.status();
    inc_runs.push_back(*inc);
  }
  for (int i = 0; i < pairs; ++i) {
    const double around = (inc_runs[i] + inc_runs[i + 1]) / 2;
    result.ratios.push_back(around > 0 ? cand_runs[i] / around : 1.0);
  }
  result.ratio = Median(result.ratios);
  result.candidate_median_seconds = Median(cand_runs);
  result.incumbent_median_seconds = Median(inc_runs);
  result.verdict = result.ratio <= 1 - options.min_improvement ? Verdict::kCandidateWins
                                                               : Verdict::kIncumbentStays;
  return result;
}

}  // namespace pto::tuner
