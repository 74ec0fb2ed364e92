// Forwards pto's messages to the embedder's LogSink, filtered by level.
// While the sink runs, calls from it into pto that could wait for pto are refused
// (jit/callback_guard.h).
#ifndef PTO_JIT_LOGGER_H_
#define PTO_JIT_LOGGER_H_

#include <string_view>

#include "jit/callback_guard.h"
#include "pto/options.h"

namespace pto::jit {

// The sink of a Runtime without one: each message as one line on stderr, after its level
// ("warning: ...").
LogSink StderrLogSink();

class Logger {
 public:
  Logger(LogSink sink, LogLevel min_level) : sink_(std::move(sink)), min_level_(min_level) {}
  bool Enabled(LogLevel level) const { return sink_ && level >= min_level_; }
  void Log(LogLevel level, std::string_view message) const {
    if (!Enabled(level)) return;
    const detail::CallbackScope scope(detail::CallbackKind::kLogSink);
    sink_(level, message);
  }

 private:
  LogSink sink_;
  LogLevel min_level_;
};

}  // namespace pto::jit

#endif  // PTO_JIT_LOGGER_H_
