// The task scheduler's choices on made-up workloads: fake kernel times and round costs, no
// clock, so every choice is exact.
#include "tuner/task_scheduler.h"

#include <algorithm>
#include <vector>

#include "gtest/gtest.h"

namespace pto::tuner {
namespace {

SchedulerTask Task(double seconds, double calls, int64_t trials_before = 0) {
  SchedulerTask t;
  t.seconds = seconds;
  t.calls = calls;
  t.trials_before = trials_before;
  return t;
}

RoundResult Result(int64_t trials, double before, double after, double wall) {
  RoundResult r;
  r.trials = trials;
  r.seconds_before = before;
  r.seconds_after = after;
  r.wall_seconds = wall;
  return r;
}

TEST(TaskSchedulerTest, HeaviestShareOfTheWorkloadGoesFirst) {
  // Shares: 1 x 1, 2 x 5 (the heaviest, though not the slowest per call), 4 x 2.
  TaskScheduler s({Task(1, 1), Task(2, 5), Task(4, 2)});
  EXPECT_DOUBLE_EQ(s.EstimatedSeconds(), 19);
  EXPECT_DOUBLE_EQ(s.InitialEstimatedSeconds(), 19);
  const Round r = s.Next(100);
  EXPECT_EQ(r.task, 1);
  EXPECT_EQ(r.trials, 16);
  EXPECT_DOUBLE_EQ(r.max_seconds, 100);
  EXPECT_DOUBLE_EQ(s.ExpectedSaving(1), 0.3 * 10);
  EXPECT_DOUBLE_EQ(s.ExpectedRoundSeconds(1), TaskSchedulerPolicy{}.prior_round_seconds);
}

TEST(TaskSchedulerTest, KernelThatStoppedImprovingYieldsToTheNext) {
  TaskScheduler s({Task(10, 1), Task(3, 1)});
  ASSERT_EQ(s.Next(100).task, 0);
  // 10 -> 8: the next round is expected to save 2 again, more than the 0.9 task 1's prior
  // promises at the same cost.
  s.Report(0, Result(16, 5, 4, 1));
  EXPECT_DOUBLE_EQ(s.tasks()[0].seconds, 8);
  EXPECT_DOUBLE_EQ(s.ExpectedSaving(0), 2);
  ASSERT_EQ(s.Next(100).task, 0);
  // Nothing gained: expected 0.01 x 8, so task 1 goes next.
  s.Report(0, Result(16, 4, 4, 1));
  EXPECT_DOUBLE_EQ(s.ExpectedSaving(0), 0.08);
  EXPECT_EQ(s.Next(100).task, 1);
  EXPECT_DOUBLE_EQ(s.EstimatedSeconds(), 11);
  EXPECT_EQ(s.tasks_tuned(), 1);
}

TEST(TaskSchedulerTest, BigFirstGainDoesNotPromiseAsMuchAgain) {
  TaskScheduler s({Task(10, 1), Task(1.5, 1)});
  s.Report(0, Result(16, 10, 2, 1));  // 5x: the default was poor
  // At most 0.3 x 2 is expected of its next round: more than task 1's 0.3 x 1.5.
  EXPECT_DOUBLE_EQ(s.ExpectedSaving(0), 0.6);
  EXPECT_EQ(s.Next(100).task, 0);
  s.Report(0, Result(16, 2, 1.2, 1));  // 0.8 saved, but at most 0.3 x 1.2 expected next
  EXPECT_DOUBLE_EQ(s.ExpectedSaving(0), 0.3 * 1.2);
  EXPECT_EQ(s.Next(100).task, 1);
}

TEST(TaskSchedulerTest, CheaperRoundsWinAtEqualSaving) {
  TaskScheduler s({Task(4, 1), Task(4, 1)});
  s.Report(0, Result(16, 4, 3, 8));  // saved 1 in 8 s
  s.Report(1, Result(16, 4, 3, 2));  // saved 1 in 2 s
  EXPECT_DOUBLE_EQ(s.ExpectedRoundSeconds(0), 8);
  EXPECT_DOUBLE_EQ(s.ExpectedRoundSeconds(1), 2);
  EXPECT_EQ(s.Next(100).task, 1);
}

TEST(TaskSchedulerTest, UntriedTasksCostTheMeanRoundSoFar) {
  TaskScheduler s({Task(4, 1), Task(1, 1)});
  s.Report(0, Result(8, 4, 4, 2));  // 0.25 s per trial
  EXPECT_DOUBLE_EQ(s.ExpectedRoundSeconds(1), 0.25 * 16);
}

TEST(TaskSchedulerTest, BudgetIsRespectedAndSpentByShare) {
  // Each trial costs 0.25 s of fake time and gains 0.5% until the task has made 32 trials.
  std::vector<SchedulerTask> tasks;
  for (int i = 0; i < 6; ++i) tasks.push_back(Task(1.0 + i, 1));
  TaskScheduler s(tasks);
  const double budget = 30;
  double spent = 0;
  std::vector<int> order;
  while (true) {
    const Round r = s.Next(budget - spent);
    if (r.task < 0) break;
    ASSERT_GT(r.trials, 0);
    ASSERT_LE(r.max_seconds, budget - spent);
    const int64_t trials = std::min<int64_t>(r.trials, static_cast<int64_t>(r.max_seconds / 0.25));
    const double before = s.tasks()[r.task].seconds;
    const double gain = s.tasks()[r.task].trials < 32 ? 0.005 * static_cast<double>(trials) : 0;
    s.Report(r.task,
             Result(trials, before, before * (1 - gain), 0.25 * static_cast<double>(trials)));
    spent += 0.25 * static_cast<double>(trials);
    order.push_back(r.task);
  }
  EXPECT_LE(spent, budget);
  EXPECT_GT(spent, budget - TaskSchedulerPolicy{}.min_round_seconds);
  // Largest first, then the others by size; then the heaviest again, twice (its rounds still
  // save about 6 x 8%, more than the lightest task's first round promises, 0.3 x 1); its
  // third round gains nothing (the fake stops improving at 32 trials), so task 4 takes the
  // last 2 s: 8 trials.
  EXPECT_EQ(order, (std::vector<int>{5, 4, 3, 2, 1, 5, 5, 4}));
  EXPECT_EQ(s.tasks()[5].trials, 48);
  EXPECT_EQ(s.tasks()[4].trials, 24);
  EXPECT_EQ(s.tasks_tuned(), 5);
  EXPECT_LT(s.EstimatedSeconds(), s.InitialEstimatedSeconds());
}

TEST(TaskSchedulerTest, NothingStartsWithoutTimeLeft) {
  TaskScheduler s({Task(1, 1)});
  EXPECT_EQ(s.Next(TaskSchedulerPolicy{}.min_round_seconds / 2).task, -1);
  EXPECT_EQ(s.Next(0).task, -1);
  EXPECT_EQ(s.Next(-1).task, -1);
}

TEST(TaskSchedulerTest, FinishedAndUnmeasuredTasksAreSkipped) {
  TaskScheduler s({Task(5, 1), Task(0, 1), Task(2, 1)});
  RoundResult done = Result(3, 5, 5, 1);
  done.finished = true;  // the space ran out
  s.Report(0, done);
  EXPECT_EQ(s.Next(100).task, 2);
  s.Report(2, done);
  EXPECT_EQ(s.Next(100).task, -1);
}

TEST(TaskSchedulerTest, TrialsAreCappedPerTaskAcrossRuns) {
  TaskSchedulerPolicy policy;
  policy.max_trials_per_task = 20;
  TaskScheduler s({Task(5, 1, 16), Task(1, 1, 20)}, policy);
  EXPECT_TRUE(s.tasks()[1].finished);
  const Round r = s.Next(100);
  EXPECT_EQ(r.task, 0);
  EXPECT_EQ(r.trials, 4);
  s.Report(0, Result(4, 5, 5, 1));
  EXPECT_TRUE(s.tasks()[0].finished);
  EXPECT_EQ(s.Next(100).task, -1);
}

TEST(TaskSchedulerTest, LaterRunStartsWithTasksTheEarlierLeftUntouched) {
  // First run: one round on the heaviest, cut short by the budget after 5 trials (10 -> 9).
  TaskScheduler first({Task(10, 1), Task(6, 1), Task(1, 1)});
  ASSERT_EQ(first.Next(100).task, 0);
  first.Report(0, Result(5, 10, 9, 3));
  // The second run profiles the kernels again and knows the trials the first made: one round
  // begun halves task 0's prior, so task 1 (6 > 9 / 2) goes first.
  TaskScheduler second({Task(9, 1, 5), Task(6, 1), Task(1, 1)});
  EXPECT_DOUBLE_EQ(second.ExpectedSaving(0), 0.3 * 9 / 2);
  EXPECT_EQ(second.Next(100).task, 1);
  // Two rounds' worth: a quarter.
  TaskScheduler third({Task(9, 1, 17), Task(2, 1)});
  EXPECT_DOUBLE_EQ(third.ExpectedSaving(0), 0.3 * 9 / 4);
  EXPECT_EQ(third.Next(100).task, 0);
}

}  // namespace
}  // namespace pto::tuner
