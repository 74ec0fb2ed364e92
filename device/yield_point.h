// Cooperative yield points for background work: a thread that installs a hook runs it at the
// safe points its work passes (between LLVM passes, between a plan's kernels, between reference
// ops). Background tuning's hook waits there while the callers' calls run
// (jit/tuning/yield_to_calls.h). Threads without a hook pay one thread-local load per point.
#ifndef PTO_DEVICE_YIELD_POINT_H_
#define PTO_DEVICE_YIELD_POINT_H_

#include <functional>

namespace pto::device {

// Installs `hook` (may be null: none) on this thread while it lives; nesting restores the outer
// one. The hook must not throw.
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
// Runs this thread's hook, if any.
void YieldPoint();
// Seconds this thread has spent inside its hooks so far (timed runs leave them out).
double SecondsYielded();

}  // namespace pto::device

#endif  // PTO_DEVICE_YIELD_POINT_H_
