// Shares a tuning budget among the kernels of a workload, Ansor-style (Zheng et al., OSDI 2020,
// "task scheduler"): the workload is profiled once, so each task (a kernel at a shape class)
// has its time per call and its calls per pass over the workload; its weight in the
// workload's time is their product. Tuning then goes in rounds of a few trials each, and each
// round goes to the task with the largest expected saving of workload time per second of
// tuning:
//
//   saving(task)  = calls x expected gain of its next round (seconds per call)
//   gain          = untried:   untried_gain x its time, halved per round (begun) of trials
//                              that earlier runs made
//                   otherwise: its last round's gain per trial x trials_per_round, at least
//                              stalled_gain x its time, at most untried_gain x its time
//   round cost    = its last round's wall time, else the mean round time so far per trial x
//                   trials_per_round, else prior_round_seconds
//
// So the heaviest kernel is tuned first, a kernel that stopped improving yields to the next,
// and a short budget is spent where the workload's time is. The scheduler only decides: the
// caller runs each round (within the seconds it is given) and reports how it went. Policy
// numbers: tuner/task_scheduler_policy.h. Deterministic: no clock, no randomness.
#ifndef PTO_TUNER_TASK_SCHEDULER_H_
#define PTO_TUNER_TASK_SCHEDULER_H_

#include <cstdint>
#include <vector>

#include "tuner/task_scheduler_policy.h"

namespace pto::tuner {

// A task as profiled before tuning.
struct SchedulerTask {
  double seconds = 0;         // per call, at its current (best known) config; <= 0: not measured
  double calls = 1;           // per pass over the workload
  int64_t trials_before = 0;  // made by earlier runs (an incomplete tuning record)
};

// What one round of a task did.
struct RoundResult {
  int64_t trials = 0;         // made in this round
  double seconds_before = 0;  // per call at the round's start (its own measurement)
  double seconds_after = 0;   // per call, the best at its end (same units as seconds_before)
  double wall_seconds = 0;    // the round's cost
  bool finished = false;      // nothing more to try (trials spent, space exhausted, failed)
};

// The next round's orders.
struct Round {
  int task = -1;           // -1: nothing to do (the budget is spent, or every task finished)
  int64_t trials = 0;      // to make at most
  double max_seconds = 0;  // of wall time at most (what is left of the budget)
};

class TaskScheduler {
 public:
  TaskScheduler(std::vector<SchedulerTask> tasks, TaskSchedulerPolicy policy = {});

  // The round to run now, with `seconds_left` of the budget.
  Round Next(double seconds_left) const;
  // The round Next gave ended. The task's time scales by seconds_after / seconds_before.
  void Report(int task, const RoundResult& result);

  // Expected saving of workload seconds (per pass) of the task's next round, and its cost.
  double ExpectedSaving(int task) const;
  double ExpectedRoundSeconds(int task) const;

  // Sum over the tasks of time per call x calls: now, and as profiled.
  double EstimatedSeconds() const;
  double InitialEstimatedSeconds() const { return initial_seconds_; }

  struct TaskState {
    SchedulerTask task;
    double seconds = 0;  // per call now
    int64_t trials = 0;  // in this run
    int rounds = 0;
    double last_gain = 0;          // seconds per call its last round saved
    int64_t last_trials = 0;       // trials of its last round
    double last_wall_seconds = 0;  // its last round's cost
    bool finished = false;
  };
  const std::vector<TaskState>& tasks() const { return tasks_; }
  int64_t tasks_tuned() const;  // with at least one round

 private:
  TaskSchedulerPolicy policy_;
  std::vector<TaskState> tasks_;
  double initial_seconds_ = 0;
  double round_seconds_ = 0;  // measured rounds' wall time, summed
  int64_t round_trials_ = 0;  // and their trials
};

}  // namespace pto::tuner

#endif  // PTO_TUNER_TASK_SCHEDULER_H_
