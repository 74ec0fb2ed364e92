// Which embedder code pto is running on this thread: the traced lambda, the log sink or the
// tuning progress callback. pto may hold its own locks, or be inside a tuning job, while that
// code runs, so calls from it that could wait for pto's work (a Function call, a new Function,
// writing the workload, waiting for tuning) are refused with FailedPrecondition instead of
// deadlocking. Read-only queries (stats, results, events) are not refused.
#ifndef PTO_JIT_CALLBACK_GUARD_H_
#define PTO_JIT_CALLBACK_GUARD_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace pto::detail {

enum class CallbackKind : uint8_t { kTracedLambda, kLogSink, kTuningProgress };

// Marks embedder code as running on this thread for the scope's lifetime (scopes nest).
class CallbackScope {
 public:
  // `function`: for kTracedLambda, the Function whose lambda runs (kept by reference).
  explicit CallbackScope(CallbackKind kind, absl::string_view function = {});
  ~CallbackScope();
  CallbackScope(const CallbackScope&) = delete;
  CallbackScope& operator=(const CallbackScope&) = delete;

 private:
  friend absl::Status RefuseInsideCallback(absl::string_view, absl::string_view);
  const CallbackScope* previous_;
  CallbackKind kind_;
  absl::string_view function_;
};

// True while embedder code runs on this thread (one thread-local read).
bool InsideCallback();

// OK outside embedder code. Inside it, FailedPrecondition: "<what> from inside <the code>"
// and why. `function` names the Function being called, if any (to recognize a lambda calling
// its own Function). Inside a traced lambda the trace fails with the same status, so the call
// being traced reports it even if the lambda drops it.
absl::Status RefuseInsideCallback(absl::string_view what, absl::string_view function = {});

// RefuseInsideCallback for a call of Function `function`; builds no message outside
// embedder code (the hot path of every call).
absl::Status RefuseFunctionCallInsideCallback(absl::string_view function);

}  // namespace pto::detail

#endif  // PTO_JIT_CALLBACK_GUARD_H_
