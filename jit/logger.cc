#include "jit/logger.h"

#include <cstdio>
#include <string>

namespace pto::jit {
namespace {

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kError:
    case LogLevel::kOff:
      break;
  }
  return "error";
}

}  // namespace

LogSink StderrLogSink() {
  return [](LogLevel level, std::string_view message) {
    // One write per line, so lines of threads that log at once do not interleave.
    const std::string line = std::string(LevelName(level)) + ": " + std::string(message) + "\n";
    std::fwrite(line.data(), 1, line.size(), stderr);
  };
}

}  // namespace pto::jit
