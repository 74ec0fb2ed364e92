// Cooperative yield points for background work: a thread that installs a hook runs it at the
// safe points its work passes (between LLVM passes, between a plan's kernels, between reference
// ops). Background tuning's hook waits there while the callers' calls run
// (jit/tuning/yield_to_calls.h). Threads without a hook pay one thread-local load per point.
// A ScopedYieldTimer also runs the hook between those points, from a signal handler, so work
// that cannot stop by itself (one long LLVM pass, one reference op) still yields within a period.
#ifndef PTO_DEVICE_YIELD_POINT_H_
#define PTO_DEVICE_YIELD_POINT_H_

#include <time.h>

#include <chrono>
#include <functional>
#include <memory>

#include "absl/status/statusor.h"

namespace pto::device {

// Installs `hook` (may be null: none) on this thread while it lives; nesting restores the outer
// one. The hook must not throw; under a ScopedYieldTimer it must also be async-signal-safe
// (atomics, clock_gettime, nanosleep: no locks, no allocation).
class ScopedYieldHook {
 public:
  explicit ScopedYieldHook(const std::function<void()>* hook);
  ~ScopedYieldHook();
  ScopedYieldHook(const ScopedYieldHook&) = delete;
  ScopedYieldHook& operator=(const ScopedYieldHook&) = delete;

 private:
  const std::function<void()>* previous_;
};

// True when this thread has a hook.
bool HasYieldHook();
// Runs this thread's hook, if any (not again while it runs: a timer signal then returns at once).
void YieldPoint();
// Seconds this thread has spent inside its hooks so far (timed runs leave them out).
double SecondsYielded();

// While it lives, a POSIX timer sends this thread YieldSignal() every `period` of wall time and
// the handler runs the thread's hook. A signal that arrives while the thread waits for a core
// runs the hook as soon as the thread gets one, so a thread that is handed a core it should not
// keep gives it back within microseconds. Interrupted system calls restart (SA_RESTART).
class ScopedYieldTimer {
 public:
  // Fails (FailedPrecondition) when YieldSignal() already has another handler in this process,
  // or when the timer cannot be created.
  static absl::StatusOr<std::unique_ptr<ScopedYieldTimer>> Start(std::chrono::microseconds period);
  ~ScopedYieldTimer();
  ScopedYieldTimer(const ScopedYieldTimer&) = delete;
  ScopedYieldTimer& operator=(const ScopedYieldTimer&) = delete;

  // Timer signals handled so far in this process (all threads): for tests.
  static long signals_handled();

 private:
  explicit ScopedYieldTimer(timer_t timer) : timer_(timer) {}
  timer_t timer_;
};

// The real-time signal the yield timers use: SIGRTMIN + 6.
int YieldSignal();

}  // namespace pto::device

#endif  // PTO_DEVICE_YIELD_POINT_H_
