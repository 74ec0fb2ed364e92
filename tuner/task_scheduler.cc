#include "tuner/task_scheduler.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace pto::tuner {

TaskScheduler::TaskScheduler(std::vector<SchedulerTask> tasks, TaskSchedulerPolicy policy)
    : policy_(policy) {
  policy_.trials_per_round = std::max<int64_t>(1, policy_.trials_per_round);
  for (SchedulerTask& t : tasks) {
    TaskState s;
    s.task = t;
    s.seconds = std::max(0.0, t.seconds);
    s.finished = t.trials_before >= policy_.max_trials_per_task;
    initial_seconds_ += s.seconds * std::max(0.0, t.calls);
    tasks_.push_back(std::move(s));
  }
}

double TaskScheduler::ExpectedSaving(int task) const {
  const TaskState& s = tasks_[task];
  const double weight = std::max(0.0, s.task.calls);
  double gain = 0;
  if (s.rounds == 0) {
    // Halved for each round's worth of trials (begun) that earlier runs made.
    const int64_t rounds_before =
        (s.task.trials_before + policy_.trials_per_round - 1) / policy_.trials_per_round;
    gain = std::ldexp(policy_.untried_gain * s.seconds,
                      -static_cast<int>(std::min<int64_t>(rounds_before, 60)));
  } else {
    const double per_trial =
        s.last_trials > 0 ? s.last_gain / static_cast<double>(s.last_trials) : 0;
    // No more than the optimistic prior of its time now: a first round that found a much
    // better config says more about the default than about the next round.
    gain = std::min(policy_.untried_gain * s.seconds,
                    std::max(per_trial * static_cast<double>(policy_.trials_per_round),
                             policy_.stalled_gain * s.seconds));
  }
  return weight * gain;
}

double TaskScheduler::ExpectedRoundSeconds(int task) const {
  const TaskState& s = tasks_[task];
  if (s.rounds > 0 && s.last_wall_seconds > 0) return s.last_wall_seconds;
  if (round_trials_ > 0 && round_seconds_ > 0) {
    return round_seconds_ / static_cast<double>(round_trials_) *
           static_cast<double>(policy_.trials_per_round);
  }
  return policy_.prior_round_seconds;
}

Round TaskScheduler::Next(double seconds_left) const {
  Round round;
  if (!(seconds_left >= policy_.min_round_seconds)) return round;
  double best = -1;
  for (size_t i = 0; i < tasks_.size(); ++i) {
    const TaskState& s = tasks_[i];
    if (s.finished || !(s.seconds > 0)) continue;
    const int task = static_cast<int>(i);
    const double score = ExpectedSaving(task) / std::max(1e-9, ExpectedRoundSeconds(task));
    if (score > best) {  // the first on ties: the caller's order breaks them
      best = score;
      round.task = task;
    }
  }
  if (round.task < 0) return round;
  const TaskState& s = tasks_[round.task];
  round.trials = std::min(policy_.trials_per_round,
                          policy_.max_trials_per_task - s.task.trials_before - s.trials);
  round.max_seconds = seconds_left;
  return round;
}

void TaskScheduler::Report(int task, const RoundResult& r) {
  TaskState& s = tasks_[task];
  ++s.rounds;
  s.trials += r.trials;
  s.last_trials = r.trials;
  s.last_wall_seconds = r.wall_seconds;
  const double before = s.seconds;
  if (r.seconds_before > 0 && r.seconds_after > 0) {
    s.seconds = before * std::min(1.0, r.seconds_after / r.seconds_before);
  }
  s.last_gain = before - s.seconds;
  if (r.trials > 0 && r.wall_seconds > 0) {
    round_seconds_ += r.wall_seconds;
    round_trials_ += r.trials;
  }
  s.finished = r.finished || s.task.trials_before + s.trials >= policy_.max_trials_per_task;
}

double TaskScheduler::EstimatedSeconds() const {
  double total = 0;
  for (const TaskState& s : tasks_) total += s.seconds * std::max(0.0, s.task.calls);
  return total;
}

int64_t TaskScheduler::tasks_tuned() const {
  return std::count_if(tasks_.begin(), tasks_.end(),
                       [](const TaskState& s) { return s.rounds > 0; });
}

}  // namespace pto::tuner
