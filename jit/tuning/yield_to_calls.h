// Background tuning stays out of the callers' way while a call runs.
//
// Idle priority alone is not enough: between a call's parallel kernels its oneTBB threads spin
// with sched_yield, and a yielding thread hands its core to any runnable thread, the idle-priority
// tuner included, which then keeps it until the scheduler's next tick: a call that should take
// 3.4 ms took up to twice as long (docs/tuning.md, "The caller's loop"). So the tuner waits at
// its yield points (between LLVM passes of a candidate's compile, before each check and timed
// run) until no call is inside the Runtime's plan epochs.
// A loop whose calls never pause (back-to-back on every core) would starve tuning: after one wait
// that saw calls running for `patience` seconds (polled), the tuner runs `burst` seconds of its
// own CPU time without waiting (idle priority alone decides then), then waits again: tuning
// still progresses, and takes little of a busy loop's time.
#ifndef PTO_JIT_TUNING_YIELD_TO_CALLS_H_
#define PTO_JIT_TUNING_YIELD_TO_CALLS_H_

#include <atomic>

#include "device/epoch.h"

namespace pto::jit {

class YieldToCalls {
 public:
  // `calls` null: never waits. `stop` ends a wait at once. Call Wait on one thread only (the
  // burst is that thread's CPU time).
  YieldToCalls(const device::EpochDomain* calls, const std::atomic<bool>& stop,
               double patience_seconds, double burst_cpu_seconds);

  // Returns when no call runs, `stop` is set, patience ran out, or a burst is under way.
  void Wait();

  // Wall seconds spent waiting so far.
  double waited_seconds() const { return waited_seconds_; }

 private:
  const device::EpochDomain* calls_;
  const std::atomic<bool>& stop_;
  double patience_seconds_;
  double burst_cpu_seconds_;
  double waited_seconds_ = 0;
  double burst_end_cpu_ = -1;  // this thread's CPU time when the current burst ends
};

}  // namespace pto::jit

#endif  // PTO_JIT_TUNING_YIELD_TO_CALLS_H_
