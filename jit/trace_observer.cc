#include "jit/trace_observer.h"

namespace pto::jit {

void TraceObserver::OnPiece(int kernel, const int64_t lo[2], const int64_t hi[2], int thread,
                            std::chrono::steady_clock::time_point start,
                            std::chrono::steady_clock::time_point end) {
  timeline_.AddPiece(plan_.kernels[kernel].name, kernel, lo, hi, thread, start, end);
}

}  // namespace pto::jit
