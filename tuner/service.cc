#include "tuner/service.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "device/release_memory.h"
#include "tbb/global_control.h"
#include "tbb/task_arena.h"
#include "tbb/task_scheduler_observer.h"

namespace pto::tuner {
namespace {

constexpr double kNoLimit = std::numeric_limits<double>::infinity();

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string ErrnoText(const char* what) { return absl::StrCat(what, ": ", strerror(errno)); }

bool IsTimeSharing(int policy) {
  const int base = policy & ~SCHED_RESET_ON_FORK;
  return base == SCHED_OTHER || base == SCHED_BATCH;
}

// Whether this process may switch a thread to SCHED_IDLE and back: tried on a scratch thread
// (leaving SCHED_IDLE needs CAP_SYS_NICE or a permissive RLIMIT_NICE, which a container or an
// unprivileged user may lack), whose nice is the least a thread must have to be switched.
struct IdleSupport {
  bool usable = false;
  int min_nice = 0;
  std::string error;
};

IdleSupport ProbeIdleSupport() {
  IdleSupport support;
  std::thread([&support] {
    errno = 0;
    const int nice = getpriority(PRIO_PROCESS, 0);  // this thread's (Linux)
    if (errno != 0) {
      support.error = ErrnoText("getpriority");
      return;
    }
    const int policy = sched_getscheduler(0);
    sched_param param{};
    if (policy < 0 || sched_getparam(0, &param) != 0) {
      support.error = ErrnoText("sched_getscheduler");
      return;
    }
    if ((policy & ~SCHED_RESET_ON_FORK) == SCHED_IDLE) {  // the process already runs idle
      support.usable = true;
      support.min_nice = std::numeric_limits<int>::min();
      return;
    }
    if (!IsTimeSharing(policy)) {
      support.error = absl::StrCat("threads run under scheduling policy ", policy,
                                   ", not SCHED_OTHER or SCHED_BATCH");
      return;
    }
    const sched_param idle{};
    if (sched_setscheduler(0, SCHED_IDLE, &idle) != 0) {
      support.error = ErrnoText("SCHED_IDLE refused");
      return;
    }
    if (sched_setscheduler(0, policy, &param) != 0) {
      support.error = ErrnoText("SCHED_IDLE cannot be undone");
      return;
    }
    support.usable = true;
    support.min_nice = nice;
  }).join();
  return support;
}

// Switches each thread entering the arena to SCHED_IDLE and back when it leaves.
class IdlePriorityObserver : public tbb::task_scheduler_observer {
 public:
  IdlePriorityObserver(tbb::task_arena& arena, int min_nice)
      : tbb::task_scheduler_observer(arena), min_nice_(min_nice) {}

  void on_scheduler_entry(bool /*is_worker*/) override {
    const pid_t tid = gettid();
    Saved saved;
    saved.policy = sched_getscheduler(0);
    if (saved.policy < 0 || sched_getparam(0, &saved.param) != 0) {
      return Fail(ErrnoText("sched_getscheduler"));
    }
    if ((saved.policy & ~SCHED_RESET_ON_FORK) == SCHED_IDLE) {  // nothing to undo
      std::lock_guard<std::mutex> lock(mu_);
      ++switched_;
      return;
    }
    if (!IsTimeSharing(saved.policy)) {
      return Fail(absl::StrCat("a thread under scheduling policy ", saved.policy, " left as is"));
    }
    errno = 0;
    const int nice = getpriority(PRIO_PROCESS, 0);
    if (errno != 0) return Fail(ErrnoText("getpriority"));
    if (nice < min_nice_) {
      return Fail(absl::StrCat("a thread at nice ", nice, " left as is (could not be restored)"));
    }
    const sched_param idle{};
    if (sched_setscheduler(0, SCHED_IDLE, &idle) != 0) return Fail(ErrnoText("SCHED_IDLE"));
    std::lock_guard<std::mutex> lock(mu_);
    saved_[tid] = saved;
    ++switched_;
  }

  void on_scheduler_exit(bool /*is_worker*/) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = saved_.find(gettid());
    if (it == saved_.end()) return;
    if (sched_setscheduler(0, it->second.policy, &it->second.param) != 0) {
      ++failures_;
      error_ = ErrnoText("restoring the scheduling policy");
    }
    saved_.erase(it);
  }

  // After observe(false): threads still in the arena get no exit call; restore them by id.
  void RestoreRemaining() {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [tid, saved] : saved_) {
      if (sched_setscheduler(tid, saved.policy, &saved.param) != 0) {
        ++failures_;
        error_ = ErrnoText("restoring the scheduling policy");
      }
    }
    saved_.clear();
  }

  void AddTo(ServiceStats& stats) const {
    std::lock_guard<std::mutex> lock(mu_);
    stats.idle_priority = failures_ == 0;
    stats.idle_priority_threads = switched_;
    stats.idle_priority_failures = failures_;
    stats.idle_priority_error = error_;
  }

 private:
  struct Saved {
    int policy = SCHED_OTHER;
    sched_param param{};
  };

  void Fail(std::string error) {
    std::lock_guard<std::mutex> lock(mu_);
    ++failures_;
    error_ = std::move(error);
  }

  const int min_nice_;
  mutable std::mutex mu_;
  absl::flat_hash_map<pid_t, Saved> saved_;  // threads in the arena at SCHED_IDLE
  int64_t switched_ = 0;
  int64_t failures_ = 0;
  std::string error_;
};

}  // namespace

const char* JobEndName(JobEnd end) {
  switch (end) {
    case JobEnd::kCompleted:
      return "completed";
    case JobEnd::kBudgetSpent:
      return "budget spent";
    case JobEnd::kCancelled:
      return "cancelled";
    case JobEnd::kShutdown:
      return "shutdown";
  }
  return "unknown";
}

// The state shared by the service and its tasks. Tasks hold it by shared_ptr, so the tail of a
// task that runs after the service is gone touches nothing freed.
struct TuningService::Core : std::enable_shared_from_this<Core> {
  struct Job {
    enum class Phase : uint8_t { kQueued, kRunning, kEnding };
    JobId id = kInvalidJobId;
    std::unique_ptr<TuningJob> job;
    std::string name;
    double weight = 1;
    Phase phase = Phase::kQueued;
    bool started = false;
    std::atomic<bool> stop{false};
    // Cancel or Shutdown while in a step: how it ends once the step returns.
    std::optional<JobEnd> requested_end;
    double allowance = kNoLimit;
    double seconds = 0;
    int64_t steps = 0;
    bool in_step = false;
    double step_start = 0;
  };
  using JobPtr = std::shared_ptr<Job>;
  using Ending = std::vector<std::pair<JobPtr, JobEnd>>;

  explicit Core(const ServiceOptions& o) : options(o) {
    // An arena asking for more workers than oneTBB has makes it print a warning, and gets
    // no more threads anyway.
    const int workers = static_cast<int>(tbb::global_control::active_value(
                            tbb::global_control::max_allowed_parallelism)) -
                        1;
    options.threads = std::clamp(options.threads, 1, std::max(workers, 1));
    if (!options.clock) options.clock = SteadySeconds;
  }

  // Starts queued jobs while a slot is free, or ends them all once the overall budget is spent.
  // Returns the jobs to end (with no lock held).
  Ending Pump() {
    Ending ending;
    if (shut_down) {  // after RequestShutdown (Shutdown empties the queue itself)
      for (JobPtr& job : queue) ending.emplace_back(Claim(job), JobEnd::kShutdown);
      queue.clear();
      return ending;
    }
    if (OverallSpent()) {
      for (JobPtr& job : queue) ending.emplace_back(Claim(job), JobEnd::kBudgetSpent);
      queue.clear();
      return ending;
    }
    while (static_cast<int>(running.size()) < options.threads && !queue.empty()) {
      queue.front()->allowance = AllowanceOf(*queue.front());  // counts it among the queued
      JobPtr job = std::move(queue.front());
      queue.pop_front();
      if (job->allowance <= 0) {
        ending.emplace_back(Claim(job), JobEnd::kBudgetSpent);
        continue;
      }
      job->phase = Job::Phase::kRunning;
      job->started = true;
      running.push_back(job);
      EnqueueStep(job);
    }
    return ending;
  }

  // For the job at the front of the queue (see the header's "Budgets").
  double AllowanceOf(const Job& job) const {
    double allowance = options.seconds_per_job > 0 ? options.seconds_per_job : kNoLimit;
    if (options.seconds_total > 0) {
      double weights = 0;
      for (const JobPtr& r : running) {
        if (r->phase == Job::Phase::kRunning) weights += r->weight;
      }
      for (const JobPtr& q : queue) weights += q->weight;
      const double remaining = std::max(0.0, options.seconds_total - spent_total);
      allowance = std::min(allowance, remaining * job.weight / weights);
    }
    return allowance;
  }

  bool OverallSpent() const {
    return options.seconds_total > 0 && spent_total >= options.seconds_total;
  }

  JobPtr Claim(JobPtr job) {
    job->phase = Job::Phase::kEnding;
    return job;
  }

  void EnqueueStep(const JobPtr& job) {
    arena->enqueue([core = shared_from_this(), job] { core->RunStep(job); });
  }

  // One step of a running job, as one oneTBB task.
  void RunStep(const JobPtr& job) {
    {
      std::unique_lock<std::mutex> lock(mu);
      if (job->phase != Job::Phase::kRunning) return;  // ended by Cancel or Shutdown meanwhile
      if (shut_down || OverallSpent()) {  // RequestShutdown, or the budget spent by another job
        Ending ending = {{Claim(job), shut_down ? JobEnd::kShutdown : JobEnd::kBudgetSpent}};
        Ending more = Pump();
        ending.insert(ending.end(), more.begin(), more.end());
        lock.unlock();
        End(std::move(ending));
        return;
      }
      job->in_step = true;
      job->step_start = options.clock();
      if (std::isfinite(job->allowance) || options.seconds_total > 0) watchdog_cv.notify_one();
    }
    const bool done = job->job->Step(job->stop);
    Ending ending;
    {
      std::lock_guard<std::mutex> lock(mu);
      const double seconds = std::max(0.0, options.clock() - job->step_start);
      job->in_step = false;
      job->seconds += seconds;
      ++job->steps;
      spent_total += seconds;
      ++steps;
      std::optional<JobEnd> end;
      if (done) {
        end = JobEnd::kCompleted;
      } else if (job->requested_end) {
        end = job->requested_end;
      } else if (job->stop || job->seconds >= job->allowance || OverallSpent()) {
        end = JobEnd::kBudgetSpent;
      }
      if (end) {
        ending.emplace_back(Claim(job), *end);
      } else {
        EnqueueStep(job);  // not shut down: Shutdown would have set requested_end
      }
      Ending more = Pump();
      ending.insert(ending.end(), more.begin(), more.end());
    }
    End(std::move(ending));
  }

  // Calls Finish (no lock held) and destroys the job, then removes it; its slot may start more
  // jobs, or the overall budget end them, which this loop ends too.
  void End(Ending ending) {
    for (size_t i = 0; i < ending.size(); ++i) {  // in order: FIFO for queued jobs
      const auto [job, end] = ending[i];
      job->job->Finish(end);
      job->job.reset();  // here, not wherever a stale task drops the last reference
      // A job compiles and times many candidates on buffers of its own; what it freed goes back
      // to the system rather than staying in the resident set of a process that tuned once.
      device::ReleaseFreedHeapMemory();
      std::lock_guard<std::mutex> lock(mu);
      live.erase(job->id);
      if (job->started) std::erase(running, job);
      switch (end) {
        case JobEnd::kCompleted:
          ++completed;
          break;
        case JobEnd::kBudgetSpent:
          ++budget_spent;
          break;
        case JobEnd::kCancelled:
          ++cancelled;
          break;
        case JobEnd::kShutdown:
          ++shutdown;
          break;
      }
      Ending more = Pump();
      ending.insert(ending.end(), more.begin(), more.end());
      changed_cv.notify_all();
    }
  }

  // Ends a queued job, or a started one between steps, now (returned); raises `stop` of a job
  // in a step, which its thread ends once the step returns.
  Ending EndOrStop(const JobPtr& job, JobEnd end) {
    Ending ending;
    if (job->phase == Job::Phase::kQueued) {
      std::erase(queue, job);
      ending.emplace_back(Claim(job), end);
    } else if (job->phase == Job::Phase::kRunning) {
      if (job->in_step) {
        if (!job->requested_end) job->requested_end = end;
        job->stop = true;
      } else {
        ending.emplace_back(Claim(job), end);  // its pending task will see kEnding and return
      }
    }
    return ending;
  }

  // Raises `stop` of steps past their job's allowance, or of every step once they spend the
  // overall budget. Wakes when the earliest of these could happen; with an injected clock,
  // which may jump, it also polls.
  void Watchdog() {
    const bool injected = injected_clock;
    std::unique_lock<std::mutex> lock(mu);
    while (!watchdog_exit) {
      const double now = options.clock();
      double wait = kNoLimit;
      double in_flight = 0;  // seconds of the steps running now
      int in_steps = 0;
      for (const JobPtr& job : running) {
        if (!job->in_step) continue;
        in_flight += std::max(0.0, now - job->step_start);
        ++in_steps;
        if (job->stop || !std::isfinite(job->allowance)) continue;
        const double left = job->step_start + (job->allowance - job->seconds) - now;
        if (left <= 0) {
          job->stop = true;
        } else {
          wait = std::min(wait, left);
        }
      }
      if (options.seconds_total > 0 && in_steps > 0) {
        const double left = options.seconds_total - spent_total - in_flight;
        if (left <= 0) {
          for (const JobPtr& job : running) {
            if (job->in_step) job->stop = true;
          }
        } else {
          wait = std::min(wait, left / in_steps);  // all the steps spend it side by side
        }
      }
      if (injected && std::isfinite(wait)) wait = std::min(wait, 0.01);
      if (std::isfinite(wait)) {
        wait = std::min(wait, 60.0);  // no duration overflow for huge budgets
        watchdog_cv.wait_for(lock, std::chrono::duration<double>(wait));
      } else {
        watchdog_cv.wait(lock);
      }
    }
  }

  ServiceOptions options;
  bool injected_clock = false;
  tbb::task_arena* arena = nullptr;  // the service's; used only while !shut_down

  std::mutex mu;
  std::condition_variable changed_cv;   // a job left
  std::condition_variable watchdog_cv;  // a step started, or watchdog_exit
  std::deque<JobPtr> queue;
  std::vector<JobPtr> running;  // started, not yet ended
  absl::flat_hash_map<JobId, JobPtr> live;
  JobId next_id = 1;
  bool shut_down = false;
  bool watchdog_exit = false;
  double spent_total = 0;
  int64_t submitted = 0, completed = 0, budget_spent = 0, cancelled = 0, shutdown = 0;
  int64_t steps = 0;
};

struct TuningService::Impl {
  explicit Impl(const ServiceOptions& options)
      : core(std::make_shared<Core>(options)),
        arena(core->options.threads, /*reserved_for_masters=*/0, tbb::task_arena::priority::low) {}

  std::shared_ptr<Core> core;
  tbb::task_arena arena;
  std::unique_ptr<IdlePriorityObserver> observer;  // with idle priority, when usable
  std::string idle_error;                          // why idle priority is off
  std::thread watchdog;
  std::mutex shutdown_mu;
  bool torn_down = false;
};

TuningService::TuningService(const ServiceOptions& options)
    : impl_(std::make_unique<Impl>(options)) {
  Core& core = *impl_->core;
  core.injected_clock = static_cast<bool>(options.clock);
  impl_->arena.initialize();
  core.arena = &impl_->arena;
  if (options.idle_priority) {
    IdleSupport support = ProbeIdleSupport();
    if (support.usable) {
      impl_->observer = std::make_unique<IdlePriorityObserver>(impl_->arena, support.min_nice);
      impl_->observer->observe(true);
    } else {
      impl_->idle_error = std::move(support.error);
    }
  }
  if (options.seconds_per_job > 0 || options.seconds_total > 0) {
    impl_->watchdog = std::thread([&core] { core.Watchdog(); });
  }
}

TuningService::~TuningService() { Shutdown(); }

JobId TuningService::Submit(std::unique_ptr<TuningJob> job, double weight) {
  if (job == nullptr) return kInvalidJobId;
  Core& core = *impl_->core;
  Core::Ending ending;
  JobId id = kInvalidJobId;
  {
    std::lock_guard<std::mutex> lock(core.mu);
    ++core.submitted;
    if (core.shut_down) {
      ++core.shutdown;
    } else {
      auto entry = std::make_shared<Core::Job>();
      id = entry->id = core.next_id++;
      entry->name = job->name();
      entry->weight = std::isfinite(weight) && weight > 0 ? weight : 1;
      entry->job = std::move(job);
      core.live[id] = entry;
      core.queue.push_back(std::move(entry));
      ending = core.Pump();
    }
  }
  if (id == kInvalidJobId) {
    job->Finish(JobEnd::kShutdown);
    return kInvalidJobId;
  }
  core.End(std::move(ending));
  return id;
}

void TuningService::Cancel(JobId id) {
  Core& core = *impl_->core;
  Core::Ending ending;
  {
    std::lock_guard<std::mutex> lock(core.mu);
    auto it = core.live.find(id);
    if (it == core.live.end()) return;
    ending = core.EndOrStop(it->second, JobEnd::kCancelled);
  }
  core.End(std::move(ending));
}

bool TuningService::Wait(JobId id, double timeout_seconds) {
  Core& core = *impl_->core;
  std::unique_lock<std::mutex> lock(core.mu);
  auto gone = [&] { return !core.live.contains(id); };
  if (timeout_seconds > 1e9) {  // effectively forever (and no duration overflow)
    core.changed_cv.wait(lock, gone);
    return true;
  }
  return core.changed_cv.wait_for(
      lock, std::chrono::duration<double>(std::max(timeout_seconds, 0.0)), gone);
}

void TuningService::WaitIdle() {
  Core& core = *impl_->core;
  std::unique_lock<std::mutex> lock(core.mu);
  core.changed_cv.wait(lock, [&] { return core.live.empty(); });
}

void TuningService::Shutdown() {
  std::lock_guard<std::mutex> shutdown_lock(impl_->shutdown_mu);
  if (impl_->torn_down) return;
  Core& core = *impl_->core;
  Core::Ending ending;
  {
    std::lock_guard<std::mutex> lock(core.mu);
    core.shut_down = true;
    std::vector<Core::JobPtr> jobs(core.running.begin(), core.running.end());
    jobs.insert(jobs.end(), core.queue.begin(), core.queue.end());
    for (const Core::JobPtr& job : jobs) {
      Core::Ending now = core.EndOrStop(job, JobEnd::kShutdown);
      ending.insert(ending.end(), now.begin(), now.end());
    }
  }
  core.End(std::move(ending));
  {
    std::unique_lock<std::mutex> lock(core.mu);
    core.changed_cv.wait(lock, [&] { return core.live.empty(); });
    core.watchdog_exit = true;
    core.arena = nullptr;
    core.watchdog_cv.notify_all();
  }
  if (impl_->watchdog.joinable()) impl_->watchdog.join();
  if (impl_->observer != nullptr) {
    impl_->observer->observe(false);  // waits for callbacks in progress
    impl_->observer->RestoreRemaining();
  }
  impl_->torn_down = true;
}

void TuningService::RequestShutdown() {
  Core& core = *impl_->core;
  std::lock_guard<std::mutex> lock(core.mu);
  core.shut_down = true;
  // Steps in progress stop; jobs between steps end at their next step's task, queued ones
  // when a running job ends (Pump): all on service threads.
  for (const Core::JobPtr& job : core.running) {
    if (!job->in_step) continue;
    if (!job->requested_end) job->requested_end = JobEnd::kShutdown;
    job->stop = true;
  }
}

ServiceStats TuningService::stats() const {
  ServiceStats stats;
  const Core& core = *impl_->core;
  stats.threads = core.options.threads;
  {
    std::lock_guard<std::mutex> lock(impl_->core->mu);
    stats.submitted = core.submitted;
    stats.queued = static_cast<int64_t>(core.queue.size());
    stats.completed = core.completed;
    stats.budget_spent = core.budget_spent;
    stats.cancelled = core.cancelled;
    stats.shutdown = core.shutdown;
    stats.steps = core.steps;
    stats.seconds = core.spent_total;
    auto add = [&](const Core::JobPtr& job) {
      stats.jobs.push_back({.id = job->id,
                            .name = job->name,
                            .weight = job->weight,
                            .running = job->started,
                            .steps = job->steps,
                            .seconds = job->seconds,
                            .allowance_seconds = job->started ? job->allowance : kNoLimit});
    };
    for (const Core::JobPtr& job : core.running) add(job);
    for (const Core::JobPtr& job : core.queue) add(job);
    stats.running = static_cast<int64_t>(core.running.size());
  }
  if (impl_->observer != nullptr) {
    impl_->observer->AddTo(stats);
  } else {
    stats.idle_priority_error = impl_->idle_error;
  }
  return stats;
}

}  // namespace pto::tuner
