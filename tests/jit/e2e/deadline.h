// Runs a call that must not hang (a deadlock regression) on a thread of its own. If it has not
// returned in time, the test process reports it and exits with status 1: a deadlocked thread
// can be neither joined nor cancelled, and ctest then records a failure instead of waiting.
#ifndef PTO_TESTS_JIT_E2E_DEADLINE_H_
#define PTO_TESTS_JIT_E2E_DEADLINE_H_

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <thread>
#include <utility>

namespace pto::testing {

// Sanitizers run pto several times slower; no call here takes more than a few seconds.
inline constexpr std::chrono::seconds kDeadline{120};

template <typename F>
auto WithDeadline(const char* what, F fn) -> decltype(fn()) {
  using Result = decltype(fn());
  std::packaged_task<Result()> task(std::move(fn));
  std::future<Result> result = task.get_future();
  std::thread runner(std::move(task));
  if (result.wait_for(kDeadline) != std::future_status::ready) {
    std::fprintf(stderr, "FAILED: %s did not return within %lld s (a deadlock)\n", what,
                 static_cast<long long>(kDeadline.count()));
    std::fflush(stderr);
    std::_Exit(1);
  }
  runner.join();
  return result.get();
}

}  // namespace pto::testing

#endif  // PTO_TESTS_JIT_E2E_DEADLINE_H_
