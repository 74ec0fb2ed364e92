#include "jit/callback_guard.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "jit/trace.h"

namespace pto::detail {
namespace {

thread_local const CallbackScope* innermost = nullptr;

}  // namespace

CallbackScope::CallbackScope(CallbackKind kind, absl::string_view function)
    : previous_(innermost), kind_(kind), function_(function) {
  innermost = this;
}

CallbackScope::~CallbackScope() { innermost = previous_; }

bool InsideCallback() { return innermost != nullptr; }

absl::Status RefuseInsideCallback(absl::string_view what, absl::string_view function) {
  const CallbackScope* scope = innermost;
  if (scope == nullptr) return absl::OkStatus();
  std::string where;
  switch (scope->kind_) {
    case CallbackKind::kTracedLambda:
      where = !function.empty() && function == scope->function_
                  ? "its own traced lambda"
                  : absl::StrCat("the traced lambda of '", scope->function_, "'");
      {
        absl::Status refused = absl::FailedPreconditionError(absl::StrCat(
            what, " from inside ", where,
            ": a traced lambda computes on symbolic pto::Values once per shape variant and "
            "cannot call into the Runtime (compose the Values instead)"));
        // The trace fails too, so the outer call reports it even if the lambda ignores it.
        if (TraceState* trace = TraceState::Current()) trace->Fail(refused);
        return refused;
      }
    case CallbackKind::kLogSink:
      where = "the log sink";
      break;
    case CallbackKind::kTuningProgress:
      where = "the tuning progress callback";
      break;
  }
  return absl::FailedPreconditionError(
      absl::StrCat(what, " from inside ", where,
                   ": pto may be compiling or tuning on this thread, so the callback can only "
                   "read stats and results (call from another thread)"));
}

absl::Status RefuseFunctionCallInsideCallback(absl::string_view function) {
  if (innermost == nullptr) return absl::OkStatus();
  return RefuseInsideCallback(absl::StrCat("function '", function, "' was called"), function);
}

}  // namespace pto::detail
