// Background tuning stays out of the callers' way while a call runs.
//
// Idle priority alone is not enough: between a call's parallel kernels its oneTBB threads spin
// with sched_yield, and a yielding thread hands its core to any runnable thread, the idle-priority
// tuner included, which then keeps it until the scheduler's next tick: a call that should take
// 3.4 ms took up to twice as long (docs/tuning.md, "The caller's loop"). So the tuner waits at
// its yield points (between LLVM passes of a candidate's compile, before each check and timed
// run) until no call is inside the Runtime's plan epochs.
// A loop whose calls never pause (back-to-back on every core) would starve tuning: after one wait
// that saw calls running for `patience` seconds (polled), the rest of the step runs without
// waiting (idle priority alone decides then) and the next step waits again.
#ifndef PTO_JIT_TUNING_YIELD_TO_CALLS_H_
#define PTO_JIT_TUNING_YIELD_TO_CALLS_H_

#include <atomic>

#include "device/epoch.h"

namespace pto::jit {

class YieldToCalls {
 public:
  // `calls` null: never waits. `stop` ends a wait at once.
  YieldToCalls(const device::EpochDomain* calls, const std::atomic<bool>& stop,
               double patience_seconds);

  // Returns when no call runs, `stop` is set, or patience ran out (in this wait or an earlier one).
  void Wait();

  // Wall seconds spent waiting so far.
  double waited_seconds() const { return waited_seconds_; }

 private:
  const device::EpochDomain* calls_;
  const std::atomic<bool>& stop_;
  double patience_seconds_;
  double waited_seconds_ = 0;
  bool gave_up_ = false;
};

}  // namespace pto::jit

#endif  // PTO_JIT_TUNING_YIELD_TO_CALLS_H_
