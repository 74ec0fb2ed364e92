// A RunObserver that puts each piece of each kernel's grid on a Timeline, on the thread that
// ran it: the kernel's name, its index in the plan, the thread's arena slot and the range.
#ifndef PTO_JIT_TRACE_OBSERVER_H_
#define PTO_JIT_TRACE_OBSERVER_H_

#include <chrono>
#include <cstdint>

#include "jit/plan.h"
#include "jit/timeline.h"

namespace pto::jit {

class TraceObserver : public RunObserver {
 public:
  // `plan` and `timeline` must outlive the observer.
  TraceObserver(const Plan& plan, Timeline& timeline) : plan_(plan), timeline_(timeline) {}

  bool wants_pieces() const override { return true; }
  void OnPiece(int kernel, const int64_t lo[2], const int64_t hi[2], int thread,
               std::chrono::steady_clock::time_point start,
               std::chrono::steady_clock::time_point end) override;

 private:
  const Plan& plan_;
  Timeline& timeline_;
};

}  // namespace pto::jit

#endif  // PTO_JIT_TRACE_OBSERVER_H_
