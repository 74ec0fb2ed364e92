// Timing of one prepared backend: warm-up, repetitions over rotated operand copies, median and
// spread.
#ifndef PTO_TOOLS_BENCH_TIMING_H_
#define PTO_TOOLS_BENCH_TIMING_H_

#include <functional>
#include <vector>

namespace pto::bench {

struct TimingOptions {
  int max_reps = 31;            // repetitions at most (--reps)
  int min_reps = 3;             // and at least
  double budget_seconds = 1.0;  // repetitions stop early past this (never below min_reps)
  double warmup_seconds = 0.05;
  double min_rep_seconds = 0.002;  // short calls are batched into repetitions this long
};

struct Timing {
  double median = 0;  // seconds per call
  double p10 = 0, p90 = 0;
  int reps = 0;
  int calls_per_rep = 0;
  // (p90 - p10) / median
  double spread() const { return median > 0 ? (p90 - p10) / median : 0; }
};

// Times `run(set)`, cycling set through [0, num_sets).
Timing TimeCalls(const std::function<void(int)>& run, int num_sets, const TimingOptions& options);

// Warms `call` up (at least two calls and options.warmup_seconds) and returns how many calls
// make a repetition of at least options.min_rep_seconds, from the fastest call.
int CallsPerRep(const std::function<void()>& call, const TimingOptions& options);

// One side of an interleaved timing that times its own repetitions: a run in this process, or a
// baseline in a process of its own that is asked for one repetition at a time.
struct Contender {
  // Warms up; returns the calls per repetition (CallsPerRep).
  std::function<int()> calibrate;
  // One repetition; its seconds per call. `before_others` is false in a timing of one run.
  std::function<double(bool before_others)> repetition;
};

// A contender of calls made in this process: its calibration is CallsPerRep; each repetition
// makes one untimed call first when it has others and more than one call per repetition (so
// the waking of its thread pool, idle while the others ran, is not in it), then times its
// calls; `after`, when set, runs after each repetition, untimed.
Contender CallsContender(std::function<void()> call, const TimingOptions& options,
                         std::function<void()> after = nullptr);

// Rounds in which every contender takes one repetition in turn (as TimeInterleaved), in the
// order TurnOrder gives each round, after each one's calibration; stops after max_reps rounds
// or past budget_seconds times their count.
std::vector<Timing> TimeContenders(const std::vector<Contender>& contenders,
                                   const TimingOptions& options);

// Times several `runs` side by side: after each one's warm-up, rounds in which every run takes
// one repetition in turn (after an untimed call when a repetition is several calls), so a
// machine whose speed drifts (shared, noisy) drifts for all of them alike. The runs share one
// rotation through the sets: every call takes the next set, whichever run makes it. Stops
// after max_reps rounds, or past budget_seconds times the number of runs.
std::vector<Timing> TimeInterleaved(const std::vector<std::function<void(int)>>& runs, int num_sets,
                                    const TimingOptions& options);

}  // namespace pto::bench

#endif  // PTO_TOOLS_BENCH_TIMING_H_
