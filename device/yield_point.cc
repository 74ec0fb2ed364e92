#include "device/yield_point.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace pto::device {
namespace {

// One per thread. The timer's signal carries its address, so the handler reaches it without a
// thread_local lookup (not async-signal-safe for every TLS model).
struct YieldState {
  std::atomic<const std::function<void()>*> hook{nullptr};  // atomic: the handler reads it
  std::atomic<bool> in_hook{false};
  std::atomic<double> yielded{0};
};

thread_local YieldState tls_state;
std::atomic<long> signals_handled_count{0};

void RunHook(YieldState& state) {
  const std::function<void()>* hook = state.hook.load(std::memory_order_relaxed);
  if (hook == nullptr || !*hook) return;
  if (state.in_hook.exchange(true, std::memory_order_relaxed)) return;  // the signal interrupted it
  std::atomic_signal_fence(std::memory_order_seq_cst);
  const auto start = std::chrono::steady_clock::now();
  (*hook)();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  state.yielded.store(state.yielded.load(std::memory_order_relaxed) + seconds,
                      std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  state.in_hook.store(false, std::memory_order_relaxed);
}

void OnYieldSignal(int /*signal*/, siginfo_t* info, void* /*context*/) {
  if (info == nullptr || info->si_code != SI_TIMER || info->si_value.sival_ptr == nullptr) return;
  const int saved_errno = errno;
  signals_handled_count.fetch_add(1, std::memory_order_relaxed);
  RunHook(*static_cast<YieldState*>(info->si_value.sival_ptr));
  errno = saved_errno;
}

// Installs the handler once; fails if someone else's handler owns the signal.
absl::Status InstallHandler() {
  static std::mutex mu;
  static bool installed = false;
  std::lock_guard<std::mutex> lock(mu);
  if (installed) return absl::OkStatus();
  struct sigaction old = {};
  if (sigaction(YieldSignal(), nullptr, &old) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot read the handler of signal ", YieldSignal(), ": errno ", errno));
  }
  const bool has_handler = (old.sa_flags & SA_SIGINFO) != 0
                               ? old.sa_sigaction != nullptr
                               : (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN);
  if (has_handler) {
    return absl::FailedPreconditionError(
        absl::StrCat("signal ", YieldSignal(),
                     " (SIGRTMIN+6) has a handler already: background work will not "
                     "be interrupted to yield"));
  }
  struct sigaction action = {};
  action.sa_sigaction = &OnYieldSignal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  if (sigaction(YieldSignal(), &action, nullptr) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot install the handler of signal ", YieldSignal(), ": errno ", errno));
  }
  installed = true;
  return absl::OkStatus();
}

}  // namespace

ScopedYieldHook::ScopedYieldHook(const std::function<void()>* hook)
    : previous_(tls_state.hook.load(std::memory_order_relaxed)) {
  tls_state.hook.store(hook, std::memory_order_relaxed);
}

ScopedYieldHook::~ScopedYieldHook() { tls_state.hook.store(previous_, std::memory_order_relaxed); }

bool HasYieldHook() {
  const std::function<void()>* hook = tls_state.hook.load(std::memory_order_relaxed);
  return hook != nullptr && *hook;
}

void YieldPoint() { RunHook(tls_state); }

double SecondsYielded() { return tls_state.yielded.load(std::memory_order_relaxed); }

int YieldSignal() { return SIGRTMIN + 6; }

absl::StatusOr<std::unique_ptr<ScopedYieldTimer>> ScopedYieldTimer::Start(
    std::chrono::microseconds period) {
  if (period.count() <= 0)
    return absl::InvalidArgumentError("the yield timer's period must be > 0");
  if (absl::Status s = InstallHandler(); !s.ok()) return s;
  sigevent event = {};
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = YieldSignal();
  event.sigev_value.sival_ptr = &tls_state;
  event._sigev_un._tid = static_cast<pid_t>(syscall(SYS_gettid));
  timer_t timer;
  if (timer_create(CLOCK_MONOTONIC, &event, &timer) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create the yield timer: errno ", errno));
  }
  // A thread that blocks the signal would only collect it pending.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, YieldSignal());
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  itimerspec spec = {};
  spec.it_interval.tv_sec = period.count() / 1000000;
  spec.it_interval.tv_nsec = (period.count() % 1000000) * 1000;
  spec.it_value = spec.it_interval;
  if (timer_settime(timer, 0, &spec, nullptr) != 0) {
    const int error = errno;
    timer_delete(timer);
    return absl::FailedPreconditionError(
        absl::StrCat("cannot start the yield timer: errno ", error));
  }
  return std::unique_ptr<ScopedYieldTimer>(new ScopedYieldTimer(timer));
}

ScopedYieldTimer::~ScopedYieldTimer() { timer_delete(timer_); }

long ScopedYieldTimer::signals_handled() {
  return signals_handled_count.load(std::memory_order_relaxed);
}

}  // namespace pto::device
