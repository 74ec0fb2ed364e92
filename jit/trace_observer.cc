#include "jit/trace_observer.h"

#include "absl/strings/str_cat.h"

namespace pto::jit {

std::string GridRangeText(const int64_t lo[2], const int64_t hi[2]) {
  return absl::StrCat("rows [", lo[0], ", ", hi[0], ") cols [", lo[1], ", ", hi[1], ")");
}

void TraceObserver::OnPiece(int kernel, const int64_t lo[2], const int64_t hi[2], int thread,
                            std::chrono::steady_clock::time_point start,
                            std::chrono::steady_clock::time_point end) {
  timeline_.Add(plan_.kernels[kernel].name, EventCategory::kKernel, start, end,
                {{"grid", GridRangeText(lo, hi)},
                 {"kernel", absl::StrCat(kernel)},
                 {"arena slot", absl::StrCat(thread)},
                 {"shape class", shape_class_}});
}

}  // namespace pto::jit
