// The tuner's background service: runs tuning jobs (e.g. "tune this fusion group at this
// bucket") on threads of its own while the embedder keeps working, within time budgets, and
// stops promptly on Shutdown.
//
// Jobs. A TuningJob is driven step by step: Step does one bounded piece of work (compile and
// measure one batch of candidates) and says whether the job is done. Jobs start in FIFO order
// of Submit, at most `threads` at a time; a started job keeps its place until it ends (it is
// never paused for a queued one), so with threads = 1 jobs run one after the other. One thread
// at a time steps a given job, but successive steps may run on different threads: every step is
// one oneTBB task, and the next step is enqueued when it returns. Between steps the thread goes
// back to oneTBB, which may hand it to a higher-priority arena that wants it (the embedder's):
// a long job holds a thread the embedder needs for one step at most, not to its end.
//
// Threads. Jobs run in a tbb::task_arena of the service's own (max_concurrency = threads, no
// slot reserved for external threads, priority low), so the embedder's own arena is served
// first. Its threads are oneTBB's shared workers, of which oneTBB keeps
// max_allowed_parallelism - 1 for the whole process (by default cores - 1: one on a 2-core
// machine); `threads` is capped to that number when the service is made (stats().threads),
// so an embedder that wants more raises tbb::global_control::max_allowed_parallelism first.
// The service never runs a job on the caller's thread: with max_allowed_parallelism = 1 there
// is no worker, and jobs wait (Shutdown still ends them).
//
// Idle priority. With idle_priority, every thread entering the arena switches itself to Linux
// SCHED_IDLE (it only gets a core nobody else wants) and, since oneTBB workers are shared with
// other arenas, restores its previous policy when it leaves; threads still inside the arena at
// Shutdown are restored from outside. Leaving SCHED_IDLE needs CAP_SYS_NICE or a RLIMIT_NICE of
// 20 for a thread at nice 0, so the service first tries the round trip on a scratch thread: if
// SCHED_IDLE is refused (e.g. EPERM under seccomp) or cannot be undone, jobs run at normal
// priority and stats() says why. A thread whose policy is neither SCHED_OTHER nor SCHED_BATCH
// (e.g. real-time), or whose nice is below the scratch thread's, is left as it is.
//
// Budgets, in seconds of wall time spent inside a job's steps (measured on options.clock):
//  - A job's allowance is fixed when it starts:
//        allowance = min(seconds_per_job, remaining * weight / active_weight)
//    where a term whose limit is 0 ("none") is left out, `remaining` is seconds_total minus the
//    seconds spent by all jobs so far, and active_weight is the sum of the weights of the jobs
//    queued or running, this one included. So with weights 3 and 1 queued together and 10 s in
//    all, the jobs get 7.5 s and 2.5 s, whether they run one after the other or side by side;
//    time a job does not use goes to the jobs that start after it. A job cannot know of jobs
//    submitted after it starts: seconds_per_job is what keeps an early job from taking all.
//  - When a job's time in steps reaches its allowance, its `stop` is raised (also in the middle
//    of a step: a watchdog thread watches running steps), and once the step returns it ends
//    with kBudgetSpent.
//  - Once the steps of all jobs have spent seconds_total, every running step gets `stop` and
//    its job, every queued job, and any job submitted later end with kBudgetSpent. Jobs running
//    side by side may thus end before their allowances, never long after seconds_total (only
//    by the time their steps take to return after `stop`).
//  A step that returns true ends its job with kCompleted even if the budget ran out meanwhile.
//
// Ends. Every submitted job gets exactly one Finish call, after its last Step returned:
//  - kCompleted / kBudgetSpent: on a service thread (on the thread of Submit, or of the step
//    that spent seconds_total, for a job that ends before it starts);
//  - Cancel: a queued job, or a started job between two steps, is finished on the caller's
//    thread before Cancel returns; a job in a step gets `stop` and is finished by its service
//    thread when the step returns;
//  - Shutdown: the same, with kShutdown; Shutdown returns once every job has been finished.
// The service destroys a job right after its Finish returns, on the same thread. Wait and
// WaitIdle return after the Finish calls they wait for have returned.
//
// Thread safety: every method may be called from any thread, concurrently. Wait, WaitIdle and
// Shutdown (and so the destructor) must not be called from inside a job's Step or Finish (they
// would wait for themselves); Submit, Cancel and RequestShutdown may. options.clock must be safe to
// call from any thread.
#ifndef PTO_TUNER_SERVICE_H_
#define PTO_TUNER_SERVICE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tuner/strategy.h"

namespace pto::tuner {

enum class JobEnd : uint8_t {
  kCompleted = 0,    // Step returned true
  kBudgetSpent = 1,  // its allowance, or the overall budget, is spent
  kCancelled = 2,    // TuningService::Cancel
  kShutdown = 3,     // TuningService::Shutdown (or Submit after it)
};
const char* JobEndName(JobEnd end);  // "completed", "budget spent", "cancelled", "shutdown"

class TuningJob {
 public:
  virtual ~TuningJob() = default;
  // One bounded step (e.g. compile and measure one batch of candidates); returns true when the
  // job has nothing more to do. Called by one service thread at a time. `stop` becomes true
  // when the service shuts down, the job is cancelled or its time allowance is spent: long
  // steps check it and return early.
  virtual bool Step(const std::atomic<bool>& stop) = 0;
  // Called exactly once when the job leaves the service, never during a Step. Keeps the
  // results found so far (e.g. writes them out).
  virtual void Finish(JobEnd end) = 0;
  // For stats and progress lines.
  virtual std::string name() const = 0;
};

using JobId = uint64_t;
inline constexpr JobId kInvalidJobId = 0;

struct ServiceOptions {
  int threads = 1;  // jobs running at once (at least 1)
  bool idle_priority = true;
  double seconds_total = 0;    // overall budget; 0: no overall limit
  double seconds_per_job = 0;  // each job's budget; 0: none
  Clock clock;                 // the budgets' clock; empty: std::chrono::steady_clock
};

struct JobStats {
  JobId id = kInvalidJobId;
  std::string name;
  double weight = 1;
  bool running = false;  // false: queued
  int64_t steps = 0;
  double seconds = 0;  // in its steps so far
  // Fixed when it starts; infinity when no budget applies (and while queued).
  double allowance_seconds = 0;
};

struct ServiceStats {
  int threads = 0;  // jobs that can run at once: options.threads, capped (see "Threads")
  // Once idle: submitted == completed + budget_spent + cancelled + shutdown.
  int64_t submitted = 0;  // every Submit of a job, those refused after Shutdown included
  int64_t queued = 0;
  int64_t running = 0;  // started and not yet finished
  int64_t completed = 0;
  int64_t budget_spent = 0;
  int64_t cancelled = 0;
  int64_t shutdown = 0;
  int64_t steps = 0;   // Step calls, all jobs
  double seconds = 0;  // in steps, all jobs
  // Idle priority is in effect: asked for, SCHED_IDLE works and can be undone here, and no
  // thread that entered the service's arena failed to switch.
  bool idle_priority = false;
  int64_t idle_priority_threads = 0;   // arena entries switched to SCHED_IDLE
  int64_t idle_priority_failures = 0;  // arena entries left at their own priority
  std::string idle_priority_error;     // why idle priority is off, or the last failure
  std::vector<JobStats> jobs;          // queued and running jobs, running first, in FIFO order
};

class TuningService {
 public:
  explicit TuningService(const ServiceOptions& options = {});
  // Shutdown.
  ~TuningService();
  TuningService(const TuningService&) = delete;
  TuningService& operator=(const TuningService&) = delete;

  // Queues a job. `weight` (> 0; anything else counts as 1) is its share of the overall
  // budget, e.g. its kernel's share of the embedder's run time. After Shutdown, returns
  // kInvalidJobId having called job->Finish(kShutdown); a null job is ignored (kInvalidJobId).
  JobId Submit(std::unique_ptr<TuningJob> job, double weight = 1);
  // Ends a job with kCancelled (see "Ends" above). Unknown or finished ids are ignored.
  void Cancel(JobId id);
  // True once the job has been finished (also for ids that are not live: finished long ago or
  // never issued); false if timeout_seconds passed first. A negative timeout does not wait.
  bool Wait(JobId id, double timeout_seconds);
  // Until nothing is queued or running (blocking tuning submits its jobs and waits here).
  void WaitIdle();
  // Raises `stop` for running jobs, waits for their steps to return, and finishes every job
  // not yet finished with kShutdown. Idempotent; later Submits are refused.
  void Shutdown();
  // Shutdown without waiting, callable from inside a job's Step or Finish: later Submits are
  // refused, steps in progress get `stop`, and every job ends with kShutdown as the service's
  // threads reach it (never on the caller's thread). Shutdown (or the destructor) still waits
  // for them; WaitIdle returns once they have ended.
  void RequestShutdown();

  ServiceStats stats() const;

 private:
  struct Core;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pto::tuner

#endif  // PTO_TUNER_SERVICE_H_
