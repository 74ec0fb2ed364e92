// A RunObserver that puts each piece of each kernel's grid on a Timeline, on the thread that
// ran it: the kernel's name, its grid range, its index in the plan and the shape class.
#ifndef PTO_JIT_TRACE_OBSERVER_H_
#define PTO_JIT_TRACE_OBSERVER_H_

#include <chrono>
#include <cstdint>
#include <string>

#include "jit/plan.h"
#include "jit/timeline.h"

namespace pto::jit {

// "rows [0, 64) cols [0, 128)": a piece of a kernel's 2-D grid.
std::string GridRangeText(const int64_t lo[2], const int64_t hi[2]);

class TraceObserver : public RunObserver {
 public:
  // `plan` and `timeline` must outlive the observer; `shape_class` labels the events.
  TraceObserver(const Plan& plan, Timeline& timeline, std::string shape_class)
      : plan_(plan), timeline_(timeline), shape_class_(std::move(shape_class)) {}

  bool wants_pieces() const override { return true; }
  void OnPiece(int kernel, const int64_t lo[2], const int64_t hi[2], int thread,
               std::chrono::steady_clock::time_point start,
               std::chrono::steady_clock::time_point end) override;

 private:
  const Plan& plan_;
  Timeline& timeline_;
  std::string shape_class_;
};

}  // namespace pto::jit

#endif  // PTO_JIT_TRACE_OBSERVER_H_
