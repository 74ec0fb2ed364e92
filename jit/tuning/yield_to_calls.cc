#include "jit/tuning/yield_to_calls.h"

#include <time.h>

#include <chrono>
#include <cstdint>
#include <thread>

namespace pto::jit {
namespace {

// Short enough to start soon after a call ends, long enough that polling costs nothing.
constexpr std::chrono::microseconds kPoll{100};

double ThreadCpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

}  // namespace

YieldToCalls::YieldToCalls(const device::EpochDomain* calls, const std::atomic<bool>& stop,
                           double patience_seconds, double burst_cpu_seconds)
    : calls_(calls),
      stop_(stop),
      patience_seconds_(patience_seconds),
      burst_cpu_seconds_(burst_cpu_seconds) {}

void YieldToCalls::Wait() {
  if (calls_ == nullptr) return;
  if (burst_end_cpu_ >= 0 && ThreadCpuSeconds() < burst_end_cpu_) return;
  burst_end_cpu_ = -1;
  if (!calls_->HasReaders()) return;
  const auto start = std::chrono::steady_clock::now();
  // Patience counts the polls that saw a call, not wall time: an idle-priority thread may not
  // run at all for a while, and that is not the callers' loop being busy.
  const int64_t patience_polls =
      static_cast<int64_t>(patience_seconds_ / std::chrono::duration<double>(kPoll).count());
  for (int64_t polls = 0; calls_->HasReaders() && !stop_.load(std::memory_order_relaxed); ++polls) {
    if (polls >= patience_polls) {
      burst_end_cpu_ = ThreadCpuSeconds() + burst_cpu_seconds_;
      break;
    }
    std::this_thread::sleep_for(kPoll);
  }
  waited_seconds_ +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace pto::jit
