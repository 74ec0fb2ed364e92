// Measuring configs against an objective: a callback that runs the config once and returns
// the seconds it took (or why it could not: a compile error, a wrong answer). Rotating the
// inputs so caches are not flattered, and checking outputs against the reference, are the
// objective's business; this file decides how many runs to make and what to conclude.
//
// Two procedures:
//  - Measure: warm-up runs, then repetitions until the median is stable (or a cap); the
//    result is the median, which ignores the occasional run disturbed by another process.
//  - CompareInterleaved: a candidate against the incumbent, runs interleaved
//    I C I C ... C I, each candidate run compared with the mean of the incumbent runs just
//    before and after it, and the decision taken on the median of those ratios. On a busy
//    machine (the embedder's loop runs beside the tuner; frequency and co-tenants change)
//    absolute times drift over seconds, so two medians measured one after the other compare
//    the machine's state as much as the configs; a ratio of runs taken side by side cancels
//    any drift that is slow next to one run (a linear drift exactly, thanks to the
//    before-and-after mean). DESIGN.md: compare only ratios measured side by side.
//
// A candidate whose objective returns an error is a failure and never wins.
#ifndef PTO_TUNER_MEASURE_H_
#define PTO_TUNER_MEASURE_H_

#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tuner/search_space.h"

namespace pto::tuner {

// Runs `config` once; returns the seconds the run took, or an error.
using Objective = std::function<absl::StatusOr<double>(const Config& config)>;

struct MeasureOptions {
  int warmup_runs = 1;  // run and discarded (code and data brought into caches)
  int min_runs = 3;     // timed runs always made
  int max_runs = 15;    // timed runs at most
  // After min_runs, stop once the median moved by at most this share since the previous run.
  double stable_tolerance = 0.02;
};

struct Timing {
  double median_seconds = 0;
  std::vector<double> samples;  // the timed runs, in order
};

// The median of the timed runs. An error from any run (warm-up included) is returned with its
// code, the message prefixed by "config <text>: " (the space gives the text).
absl::StatusOr<Timing> Measure(const SearchSpace& space, const Objective& objective,
                               const Config& config, const MeasureOptions& options = {});

struct CompareOptions {
  int warmup_runs = 1;  // of each, interleaved, discarded
  int pairs = 7;        // candidate runs; the incumbent runs pairs + 1 times
  // The candidate wins only if the median ratio candidate/incumbent is at most
  // 1 - min_improvement (a swap has a cost; noise should not cause one).
  double min_improvement = 0.01;
};

enum class Verdict : uint8_t {
  kCandidateWins = 0,
  kIncumbentStays = 1,
  kCandidateFailed = 2,
};

struct Comparison {
  Verdict verdict = Verdict::kIncumbentStays;
  // Median over the candidate runs of candidate / mean(incumbent run before, run after);
  // below 1: the candidate is faster. 0 when the candidate failed.
  double ratio = 0;
  std::vector<double> ratios;
  double candidate_median_seconds = 0;  // for reporting only: not drift-corrected
  double incumbent_median_seconds = 0;
  absl::Status candidate_status;  // the failure when verdict == kCandidateFailed
};

// An error only when the incumbent itself fails (there is nothing to compare against).
absl::StatusOr<Comparison> CompareInterleaved(const SearchSpace& space, const Objective& objective,
                                              const Config& candidate, const Config& incumbent,
                                              const CompareOptions& options = {});

// Median of a non-empty list (the mean of the middle two for an even count).
double Median(std::vector<double> values);

}  // namespace pto::tuner

#endif  // PTO_TUNER_MEASURE_H_
