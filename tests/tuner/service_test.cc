#include "tuner/service.h"

#include <sched.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "device/sanitizers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pto::tuner {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr auto kPatience = std::chrono::seconds(20);  // only reached when a test fails

// Tests other than the idle-priority ones run at normal priority: ctest runs tests side by
// side, and a SCHED_IDLE thread gets next to no CPU while other tests keep the cores busy.

// What the jobs did, in order: "name:step" per step, and each job's Finish calls.
class Log {
 public:
  void Step(const std::string& name, int step) {
    std::lock_guard<std::mutex> lock(mu_);
    steps_.push_back(name + ":" + std::to_string(step));
  }
  void Finish(const std::string& name, JobEnd end) {
    std::lock_guard<std::mutex> lock(mu_);
    ends_[name].push_back(end);
    finish_order_.push_back(name);
  }
  std::vector<std::string> steps() const {
    std::lock_guard<std::mutex> lock(mu_);
    return steps_;
  }
  std::vector<JobEnd> ends(const std::string& name) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = ends_.find(name);
    return it == ends_.end() ? std::vector<JobEnd>{} : it->second;
  }
  std::vector<std::string> finish_order() const {
    std::lock_guard<std::mutex> lock(mu_);
    return finish_order_;
  }
  int steps_of(const std::string& name) const {
    std::lock_guard<std::mutex> lock(mu_);
    int n = 0;
    for (const std::string& s : steps_) n += s.rfind(name + ":", 0) == 0;
    return n;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> steps_;
  std::map<std::string, std::vector<JobEnd>> ends_;
  std::vector<std::string> finish_order_;
};

// step(stop, i) for the i-th step; done when it returns true.
using StepFn = std::function<bool(const std::atomic<bool>& stop, int step)>;

class TestJob : public TuningJob {
 public:
  TestJob(std::string name, Log& log, StepFn step)
      : name_(std::move(name)), log_(log), step_(std::move(step)) {}
  bool Step(const std::atomic<bool>& stop) override {
    log_.Step(name_, steps_);
    return step_(stop, steps_++);
  }
  void Finish(JobEnd end) override { log_.Finish(name_, end); }
  std::string name() const override { return name_; }

 private:
  std::string name_;
  Log& log_;
  StepFn step_;
  int steps_ = 0;
};

std::unique_ptr<TuningJob> Job(const std::string& name, Log& log, StepFn step) {
  return std::make_unique<TestJob>(name, log, std::move(step));
}

// A job done after `n` steps.
std::unique_ptr<TuningJob> StepsJob(const std::string& name, Log& log, int n) {
  return Job(name, log, [n](const std::atomic<bool>&, int step) { return step + 1 >= n; });
}

// A counter threads can wait on.
class Signal {
 public:
  void Notify() {
    std::lock_guard<std::mutex> lock(mu_);
    ++count_;
    cv_.notify_all();
  }
  // False if `count` notifications did not come in time.
  bool WaitFor(int count) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, kPatience, [&] { return count_ >= count; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int count_ = 0;
};

// The service sets `stop` without notifying anyone: a step waiting for it polls.
bool AwaitStop(const std::atomic<bool>& stop) {
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (!stop.load()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

class FakeClock {
 public:
  Clock clock() {
    return [this] { return now_.load(); };
  }
  void Advance(double seconds) { now_.fetch_add(seconds); }

 private:
  std::atomic<double> now_{1000};
};

JobStats StatsOf(const TuningService& service, JobId id) {
  for (const JobStats& job : service.stats().jobs) {
    if (job.id == id) return job;
  }
  ADD_FAILURE() << "job " << id << " is not live";
  return {};
}

TEST(TuningServiceTest, JobEndNames) {
  EXPECT_STREQ(JobEndName(JobEnd::kCompleted), "completed");
  EXPECT_STREQ(JobEndName(JobEnd::kBudgetSpent), "budget spent");
  EXPECT_STREQ(JobEndName(JobEnd::kCancelled), "cancelled");
  EXPECT_STREQ(JobEndName(JobEnd::kShutdown), "shutdown");
}

// First, so that in a run of the whole binary the process has a single oneTBB worker.
TEST(TuningServiceTest, StepsRunAtIdlePriorityAndTheWorkerIsRestoredAfterwards) {
  // One worker in the process: the plain arena below gets the thread that ran the steps.
  tbb::global_control one_worker(tbb::global_control::max_allowed_parallelism, 2);
  const int own_policy = sched_getscheduler(0);  // workers start with their creator's
  ASSERT_NE(own_policy, SCHED_IDLE);
  Log log;
  std::atomic<int> policy_in_step{-1};
  std::atomic<pid_t> step_thread{0};
  auto service = std::make_unique<TuningService>(ServiceOptions{.idle_priority = true});
  service->Submit(Job("idle", log, [&](const std::atomic<bool>&, int) {
    policy_in_step = sched_getscheduler(0);
    step_thread = gettid();
    return true;
  }));
  service->WaitIdle();
  ASSERT_THAT(log.ends("idle"), ElementsAre(JobEnd::kCompleted));
  ServiceStats stats = service->stats();
  if (stats.idle_priority) {
    EXPECT_EQ(policy_in_step.load(), SCHED_IDLE);
    EXPECT_GE(stats.idle_priority_threads, 1);
    EXPECT_EQ(stats.idle_priority_failures, 0);
    EXPECT_THAT(stats.idle_priority_error, IsEmpty());
  } else {  // e.g. a container that refuses SCHED_IDLE: the job ran all the same
    EXPECT_NE(policy_in_step.load(), SCHED_IDLE);
    EXPECT_FALSE(stats.idle_priority_error.empty());
  }
  EXPECT_NE(step_thread.load(), gettid());  // never on the caller's thread

  // The worker leaves the service's arena for a plain one: back at its own policy there.
  tbb::task_arena plain(1, /*reserved_for_masters=*/0);
  auto policy_in_plain_arena = [&] {
    auto result = std::make_shared<std::promise<std::pair<pid_t, int>>>();
    std::future<std::pair<pid_t, int>> future = result->get_future();
    plain.enqueue([result] { result->set_value({gettid(), sched_getscheduler(0)}); });
    EXPECT_EQ(future.wait_for(kPatience), std::future_status::ready);
    return future.get();
  };
  auto [plain_thread, plain_policy] = policy_in_plain_arena();
  EXPECT_EQ(plain_thread, step_thread.load());
  EXPECT_EQ(plain_policy, own_policy);

  // Run again, then destroy the service while its worker may still be in its arena.
  service->Submit(Job("again", log, [](const std::atomic<bool>&, int) { return true; }));
  service->WaitIdle();
  service.reset();
  EXPECT_EQ(sched_getscheduler(step_thread.load()), own_policy);
  std::tie(plain_thread, plain_policy) = policy_in_plain_arena();
  EXPECT_EQ(plain_policy, own_policy);
}

TEST(TuningServiceTest, ThreadsAreCappedToOneTbbsWorkers) {
  {
    tbb::global_control one_worker(tbb::global_control::max_allowed_parallelism, 2);
    EXPECT_EQ(TuningService({.threads = 4}).stats().threads, 1);
  }
  tbb::global_control three_workers(tbb::global_control::max_allowed_parallelism, 4);
  EXPECT_EQ(TuningService({.threads = 2}).stats().threads, 2);
  EXPECT_EQ(TuningService({.threads = 0}).stats().threads, 1);
}

TEST(TuningServiceTest, WithoutIdlePriorityStepsKeepTheirPolicy) {
  Log log;
  std::atomic<int> policy_in_step{-1};
  const int own_policy = sched_getscheduler(0);
  TuningService service({.idle_priority = false});
  service.Submit(Job("plain", log, [&](const std::atomic<bool>&, int) {
    policy_in_step = sched_getscheduler(0);
    return true;
  }));
  service.WaitIdle();
  EXPECT_EQ(policy_in_step.load(), own_policy);
  ServiceStats stats = service.stats();
  EXPECT_FALSE(stats.idle_priority);
  EXPECT_EQ(stats.idle_priority_threads, 0);
  EXPECT_THAT(stats.idle_priority_error, IsEmpty());
}

TEST(TuningServiceTest, AJobStepsUntilDoneAndIsFinishedOnce) {
  Log log;
  TuningService service({.idle_priority = false});
  const JobId id = service.Submit(StepsJob("a", log, 5));
  EXPECT_NE(id, kInvalidJobId);
  EXPECT_TRUE(service.Wait(id, 20));
  EXPECT_THAT(log.steps(), ElementsAre("a:0", "a:1", "a:2", "a:3", "a:4"));
  EXPECT_THAT(log.ends("a"), ElementsAre(JobEnd::kCompleted));
  ServiceStats stats = service.stats();
  EXPECT_EQ(stats.submitted, 1);
  EXPECT_EQ(stats.completed, 1);
  EXPECT_EQ(stats.queued, 0);
  EXPECT_EQ(stats.running, 0);
  EXPECT_EQ(stats.steps, 5);
  EXPECT_THAT(stats.jobs, IsEmpty());
  EXPECT_TRUE(service.Wait(id, 0));
  EXPECT_TRUE(service.Wait(12345, 0));  // never issued: not live
  service.Shutdown();
  EXPECT_THAT(log.ends("a"), ElementsAre(JobEnd::kCompleted));  // not finished again
}

// This process's resident anonymous memory (RssAnon of /proc/self/status), in bytes; -1 if
// unreadable.
int64_t ResidentAnonBytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    int64_t kib = 0;
    if (key == "RssAnon:" && status >> kib) return kib << 10;
  }
  return -1;
}

// A job's step allocates 64 MiB in blocks of 64 KiB (below glibc's mmap threshold: they come
// from the step thread's heap) with a small allocation that outlives the job between each two,
// and frees the blocks: the freed blocks lie between live chunks, so no heap shrinks by
// itself. When the job has ended, the service has given their pages back to the system.
TEST(TuningServiceTest, WhatAJobFreedLeavesTheResidentSetWhenItEnds) {
#if PTO_UNDER_ASAN || PTO_UNDER_TSAN || PTO_UNDER_MSAN
  GTEST_SKIP() << "the sanitizers' allocators keep freed memory (quarantine), not glibc's heap";
#endif
  constexpr int kBlocks = 1024;
  constexpr size_t kBlockBytes = 64 << 10;
  Log log;
  TuningService service({.idle_priority = false});
  std::vector<std::unique_ptr<char[]>> pins;  // outlive the job
  const int64_t before = ResidentAnonBytes();
  ASSERT_GT(before, 0);
  int64_t during = 0;
  const JobId id = service.Submit(Job("heap", log, [&](const std::atomic<bool>&, int) {
    std::vector<std::unique_ptr<char[]>> blocks;
    for (int i = 0; i < kBlocks; ++i) {
      blocks.emplace_back(new char[kBlockBytes]);
      std::memset(blocks.back().get(), 1, kBlockBytes);
      pins.emplace_back(new char[64]);
    }
    during = ResidentAnonBytes();
    return true;
  }));
  ASSERT_TRUE(service.Wait(id, 20));
  const int64_t after = ResidentAnonBytes();
  EXPECT_GT(during - before, int64_t{48} << 20) << "the blocks were not resident";
  EXPECT_LT(after - before, int64_t{16} << 20)
      << "resident anonymous memory " << (before >> 20) << " MiB before the job, " << (during >> 20)
      << " during, " << (after >> 20) << " after";
}

TEST(TuningServiceTest, OneThreadRunsJobsInSubmitOrder) {
  Log log;
  Signal release;
  TuningService service({.threads = 1, .idle_priority = false});
  // The first job holds the thread until all three are queued.
  service.Submit(Job("a", log, [&](const std::atomic<bool>&, int step) {
    if (step == 0) {
      EXPECT_TRUE(release.WaitFor(1));
    }
    return step == 1;
  }));
  service.Submit(StepsJob("b", log, 2));
  service.Submit(StepsJob("c", log, 2));
  ServiceStats stats = service.stats();
  EXPECT_EQ(stats.running, 1);
  EXPECT_EQ(stats.queued, 2);
  ASSERT_EQ(stats.jobs.size(), 3u);
  EXPECT_EQ(stats.jobs[0].name, "a");
  EXPECT_TRUE(stats.jobs[0].running);
  EXPECT_EQ(stats.jobs[1].name, "b");
  EXPECT_FALSE(stats.jobs[1].running);
  release.Notify();
  service.WaitIdle();
  EXPECT_THAT(log.steps(), ElementsAre("a:0", "a:1", "b:0", "b:1", "c:0", "c:1"));
  EXPECT_THAT(log.finish_order(), ElementsAre("a", "b", "c"));
}

TEST(TuningServiceTest, TwoThreadsRunTwoJobsAtOnceAndNoMore) {
  // oneTBB keeps cores - 1 workers by default; make room for two however many cores there are.
  tbb::global_control workers(tbb::global_control::max_allowed_parallelism, 4);
  Log log;
  std::mutex mu;
  std::condition_variable cv;
  int in_step = 0, max_in_step = 0, arrived = 0;
  // Each job's first step waits until two jobs are in their first step: only possible if they
  // overlap. Later steps count how many steps run at once.
  auto step = [&](const std::atomic<bool>&, int i) {
    std::unique_lock<std::mutex> lock(mu);
    max_in_step = std::max(max_in_step, ++in_step);
    if (i == 0) {
      ++arrived;
      cv.notify_all();
      EXPECT_TRUE(cv.wait_for(lock, kPatience, [&] { return arrived >= 2; }));
    }
    --in_step;
    return i == 3;
  };
  TuningService service({.threads = 2, .idle_priority = false});
  for (const char* name : {"a", "b", "c"}) service.Submit(Job(name, log, step));
  service.WaitIdle();
  EXPECT_EQ(max_in_step, 2);
  for (const char* name : {"a", "b", "c"}) {
    EXPECT_THAT(log.ends(name), ElementsAre(JobEnd::kCompleted)) << name;
    EXPECT_EQ(log.steps_of(name), 4) << name;
  }
}

TEST(TuningServiceTest, AJobThatNeverEndsStopsAtItsAllowance) {
  Log log;
  FakeClock clock;
  TuningService service({.idle_priority = false, .seconds_per_job = 2, .clock = clock.clock()});
  const JobId id = service.Submit(Job("forever", log, [&](const std::atomic<bool>&, int) {
    clock.Advance(0.5);
    return false;
  }));
  ASSERT_TRUE(service.Wait(id, 20));
  EXPECT_THAT(log.ends("forever"), ElementsAre(JobEnd::kBudgetSpent));
  EXPECT_EQ(log.steps_of("forever"), 4);
  ServiceStats stats = service.stats();
  EXPECT_EQ(stats.budget_spent, 1);
  EXPECT_EQ(stats.seconds, 2.0);
}

TEST(TuningServiceTest, AStepPastItsAllowanceIsToldToStop) {
  Log log;
  FakeClock clock;
  std::atomic<bool> saw_stop{false};
  TuningService service({.idle_priority = false, .seconds_per_job = 2, .clock = clock.clock()});
  const JobId id = service.Submit(Job("long step", log, [&](const std::atomic<bool>& stop, int) {
    EXPECT_FALSE(stop.load());
    clock.Advance(5);
    saw_stop = AwaitStop(stop);
    return false;
  }));
  ASSERT_TRUE(service.Wait(id, 30));
  EXPECT_TRUE(saw_stop.load());
  EXPECT_THAT(log.ends("long step"), ElementsAre(JobEnd::kBudgetSpent));
  EXPECT_EQ(log.steps_of("long step"), 1);
}

TEST(TuningServiceTest, TheOverallBudgetIsSplitByWeight) {
  Log log;
  FakeClock clock;
  Signal release;
  TuningService service(
      {.threads = 1, .idle_priority = false, .seconds_total = 10, .clock = clock.clock()});
  // Holds the thread, spending no time, until both weighted jobs are queued.
  service.Submit(Job("gate", log, [&](const std::atomic<bool>&, int) {
    EXPECT_TRUE(release.WaitFor(1));
    return true;
  }));
  double allowance_a = 0, allowance_b = 0;
  JobId a = 0, b = 0;
  a = service.Submit(Job("a", log,
                         [&](const std::atomic<bool>&, int) {
                           allowance_a = StatsOf(service, a).allowance_seconds;
                           clock.Advance(0.5);
                           return false;
                         }),
                     3);
  b = service.Submit(Job("b", log,
                         [&](const std::atomic<bool>&, int) {
                           allowance_b = StatsOf(service, b).allowance_seconds;
                           clock.Advance(0.5);
                           return false;
                         }),
                     1);
  EXPECT_EQ(StatsOf(service, a).weight, 3);
  release.Notify();
  service.WaitIdle();
  EXPECT_EQ(allowance_a, 7.5);  // 10 * 3 / (3 + 1)
  EXPECT_EQ(allowance_b, 2.5);  // what is left, and b is the only job left
  EXPECT_EQ(log.steps_of("a"), 15);
  EXPECT_EQ(log.steps_of("b"), 5);
  EXPECT_THAT(log.ends("a"), ElementsAre(JobEnd::kBudgetSpent));
  EXPECT_THAT(log.ends("b"), ElementsAre(JobEnd::kBudgetSpent));
  EXPECT_EQ(service.stats().seconds, 10.0);

  // The overall budget is spent: a new job ends at once, never stepped.
  const JobId late = service.Submit(StepsJob("late", log, 1));
  EXPECT_NE(late, kInvalidJobId);
  EXPECT_THAT(log.ends("late"), ElementsAre(JobEnd::kBudgetSpent));
  EXPECT_EQ(log.steps_of("late"), 0);
  ServiceStats stats = service.stats();
  EXPECT_EQ(stats.budget_spent, 3);
  EXPECT_EQ(stats.completed, 1);
  EXPECT_EQ(stats.submitted, 4);
}

TEST(TuningServiceTest, CancelEndsQueuedAndRunningJobs) {
  Log log;
  Signal entered;
  std::atomic<bool> saw_stop{false};
  TuningService service({.threads = 1, .idle_priority = false});
  const JobId running = service.Submit(Job("running", log, [&](const std::atomic<bool>& stop, int) {
    entered.Notify();
    saw_stop = AwaitStop(stop);
    return false;
  }));
  const JobId queued = service.Submit(StepsJob("queued", log, 1));
  ASSERT_TRUE(entered.WaitFor(1));
  EXPECT_FALSE(service.Wait(running, 0.01));

  service.Cancel(queued);  // finished before Cancel returns, never stepped
  EXPECT_THAT(log.ends("queued"), ElementsAre(JobEnd::kCancelled));
  EXPECT_TRUE(service.Wait(queued, 0));

  service.Cancel(running);
  EXPECT_TRUE(service.Wait(running, 20));
  EXPECT_TRUE(saw_stop.load());
  EXPECT_THAT(log.ends("running"), ElementsAre(JobEnd::kCancelled));
  EXPECT_EQ(log.steps_of("queued"), 0);

  service.Cancel(running);  // finished: ignored
  service.Cancel(999);      // unknown: ignored
  ServiceStats stats = service.stats();
  EXPECT_EQ(stats.cancelled, 2);
  EXPECT_EQ(stats.submitted, 2);
  EXPECT_THAT(log.ends("running"), ElementsAre(JobEnd::kCancelled));
}

TEST(TuningServiceTest, ShutdownStopsAStepAndFinishesEveryJobOnce) {
  Log log;
  Signal entered;
  std::atomic<bool> saw_stop{false};
  TuningService service({.threads = 1, .idle_priority = false});
  service.Submit(Job("running", log, [&](const std::atomic<bool>& stop, int) {
    entered.Notify();
    saw_stop = AwaitStop(stop);
    return false;
  }));
  service.Submit(StepsJob("q1", log, 1));
  service.Submit(StepsJob("q2", log, 1));
  ASSERT_TRUE(entered.WaitFor(1));

  const auto start = std::chrono::steady_clock::now();
  service.Shutdown();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(saw_stop.load());
  for (const char* name : {"running", "q1", "q2"}) {
    EXPECT_THAT(log.ends(name), ElementsAre(JobEnd::kShutdown)) << name;
  }
  EXPECT_EQ(log.steps_of("q1") + log.steps_of("q2"), 0);
  std::vector<std::string> order = log.finish_order();
  EXPECT_LT(std::find(order.begin(), order.end(), "q1"),
            std::find(order.begin(), order.end(), "q2"));

  service.Shutdown();  // idempotent
  ServiceStats stats = service.stats();
  EXPECT_EQ(stats.shutdown, 3);
  EXPECT_EQ(stats.running, 0);
  EXPECT_EQ(stats.queued, 0);
  EXPECT_EQ(log.finish_order().size(), 3u);
}

// RequestShutdown from inside a step (e.g. a progress callback that decides tuning has done
// enough): it must not wait for the step it is called from, and every job still ends once.
TEST(TuningServiceTest, RequestShutdownFromInsideAStepEndsEveryJobWithoutWaiting) {
  Log log;
  Signal go, requested;
  std::atomic<bool> saw_stop{false};
  TuningService service({.threads = 1, .idle_priority = false});
  service.Submit(Job("asker", log, [&](const std::atomic<bool>& stop, int) {
    EXPECT_TRUE(go.WaitFor(1));
    service.RequestShutdown();  // returns at once: Shutdown here would wait for this step
    requested.Notify();
    saw_stop = AwaitStop(stop);
    return false;
  }));
  service.Submit(StepsJob("q1", log, 1));
  service.Submit(StepsJob("q2", log, 1));
  go.Notify();
  ASSERT_TRUE(requested.WaitFor(1));

  // The jobs end by themselves, on the service's thread: nobody calls Shutdown.
  std::future<void> idle = std::async(std::launch::async, [&] { service.WaitIdle(); });
  EXPECT_EQ(idle.wait_for(kPatience), std::future_status::ready);
  service.Shutdown();  // (ends them if the request did not, so the test cannot hang)
  idle.get();
  EXPECT_TRUE(saw_stop.load());
  for (const char* name : {"asker", "q1", "q2"}) {
    EXPECT_THAT(log.ends(name), ElementsAre(JobEnd::kShutdown)) << name;
  }
  EXPECT_EQ(log.steps_of("asker"), 1);
  EXPECT_EQ(log.steps_of("q1") + log.steps_of("q2"), 0);
  EXPECT_EQ(service.Submit(StepsJob("late", log, 1)), kInvalidJobId);
  EXPECT_EQ(service.stats().shutdown, 4);
}

TEST(TuningServiceTest, SubmitAfterShutdownIsRefusedAndFinished) {
  Log log;
  TuningService service({.idle_priority = false});
  service.Shutdown();
  EXPECT_EQ(service.Submit(StepsJob("late", log, 1)), kInvalidJobId);
  EXPECT_THAT(log.ends("late"), ElementsAre(JobEnd::kShutdown));
  EXPECT_EQ(log.steps_of("late"), 0);
  EXPECT_EQ(service.Submit(nullptr), kInvalidJobId);
  ServiceStats stats = service.stats();
  EXPECT_EQ(stats.submitted, 1);
  EXPECT_EQ(stats.shutdown, 1);
  service.WaitIdle();  // returns: nothing is live
}

TEST(TuningServiceTest, TheDestructorFinishesRunningAndQueuedJobs) {
  Log log;
  Signal entered;
  {
    TuningService service({.threads = 1, .idle_priority = false});
    service.Submit(Job("running", log, [&](const std::atomic<bool>& stop, int) {
      entered.Notify();
      EXPECT_TRUE(AwaitStop(stop));
      return false;
    }));
    for (int i = 0; i < 5; ++i) service.Submit(StepsJob("queued" + std::to_string(i), log, 3));
    ASSERT_TRUE(entered.WaitFor(1));
  }
  EXPECT_THAT(log.ends("running"), ElementsAre(JobEnd::kShutdown));
  for (int i = 0; i < 5; ++i) {
    EXPECT_THAT(log.ends("queued" + std::to_string(i)), ElementsAre(JobEnd::kShutdown));
  }
  EXPECT_EQ(log.finish_order().size(), 6u);
}

TEST(TuningServiceTest, EightThreadsSubmitAtOnce) {
  constexpr int kThreads = 8, kJobsEach = 25;
  Log log;
  TuningService service({.threads = 2, .idle_priority = false});
  std::mutex ids_mu;
  std::set<JobId> ids;
  std::vector<std::thread> submitters;
  for (int t = 0; t < kThreads; ++t) {
    submitters.emplace_back([&, t] {
      for (int i = 0; i < kJobsEach; ++i) {
        const JobId id = service.Submit(
            StepsJob("t" + std::to_string(t) + "j" + std::to_string(i), log, 1 + i % 3));
        EXPECT_NE(id, kInvalidJobId);
        std::lock_guard<std::mutex> lock(ids_mu);
        EXPECT_TRUE(ids.insert(id).second) << "id " << id << " issued twice";
        if (i % 5 == 0) {
          EXPECT_LE(service.stats().running, 2);
        }
      }
    });
  }
  for (std::thread& t : submitters) t.join();
  service.WaitIdle();
  EXPECT_EQ(ids.size(), static_cast<size_t>(kThreads * kJobsEach));
  int64_t expected_steps = 0;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kJobsEach; ++i) {
      const std::string name = "t" + std::to_string(t) + "j" + std::to_string(i);
      EXPECT_THAT(log.ends(name), ElementsAre(JobEnd::kCompleted)) << name;
      expected_steps += 1 + i % 3;
    }
  }
  ServiceStats stats = service.stats();
  EXPECT_EQ(stats.submitted, kThreads * kJobsEach);
  EXPECT_EQ(stats.completed, kThreads * kJobsEach);
  EXPECT_EQ(stats.steps, expected_steps);
}

}  // namespace
}  // namespace pto::tuner
