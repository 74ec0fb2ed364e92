// The numbers that steer tuner/task_scheduler.h: how long a round is, and what the scheduler
// expects of a kernel it has not tuned yet or that has stopped improving.
#ifndef PTO_TUNER_TASK_SCHEDULER_POLICY_H_
#define PTO_TUNER_TASK_SCHEDULER_POLICY_H_

#include <cstdint>

namespace pto::tuner {

struct TaskSchedulerPolicy {
  // Trials one round of a task makes (Ansor measures 64 per round; a warm-up run with a budget
  // of tens of seconds affords rounds a quarter as long).
  int64_t trials_per_round = 16;
  // A task's trials over all rounds and runs, at most.
  int64_t max_trials_per_task = 64;
  // An untried task's next round is expected to save this share of its time (an optimistic
  // prior, so that every task of weight gets a first round before one that stopped improving
  // gets another). A task that earlier runs tuned for some trials gets half as much per
  // round of trials (begun) they made: a later run starts with the tasks the earlier ones left
  // untouched, unless one they touched is over twice as heavy.
  double untried_gain = 0.3;
  // A task whose last round gained (almost) nothing is still expected to save this share of
  // its time, so a heavy task can come back once the lighter ones are done.
  double stalled_gain = 0.01;
  // A round's wall time before any round was measured.
  double prior_round_seconds = 2;
  // No round starts with less than this much of the budget left.
  double min_round_seconds = 0.2;
};

}  // namespace pto::tuner

#endif  // PTO_TUNER_TASK_SCHEDULER_POLICY_H_
