// RuntimeOptions::FromEnvironment: the only place libpto reads the environment, and only when
// the embedder calls it.
#include <cstdlib>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "pto/options.h"

namespace pto {
namespace {

absl::StatusOr<LogLevel> ParseLogLevel(const std::string& text) {
  const std::string name = absl::AsciiStrToLower(text);
  if (name == "debug") return LogLevel::kDebug;
  if (name == "info") return LogLevel::kInfo;
  if (name == "warning") return LogLevel::kWarning;
  if (name == "error") return LogLevel::kError;
  if (name == "off") return LogLevel::kOff;
  return absl::InvalidArgumentError(
      absl::StrCat("PTO_LOG must be one of debug, info, warning, error or off; got '", text, "'"));
}

absl::StatusOr<bool> ParseCheckNumerics(const std::string& text) {
  const std::string value = absl::AsciiStrToLower(text);
  if (value == "1" || value == "true") return true;
  if (value == "0" || value == "false") return false;
  return absl::InvalidArgumentError(
      absl::StrCat("PTO_CHECK_NUMERICS must be one of 1, 0, true or false; got '", text, "'"));
}

absl::StatusOr<ThreadPinning> ParseThreadPinning(const std::string& text) {
  const std::string value = absl::AsciiStrToLower(text);
  if (value == "auto") return ThreadPinning::kAuto;
  if (value == "always") return ThreadPinning::kAlways;
  if (value == "never") return ThreadPinning::kNever;
  return absl::InvalidArgumentError(
      absl::StrCat("PTO_PIN_THREADS must be one of auto, always or never; got '", text, "'"));
}

}  // namespace

absl::StatusOr<RuntimeOptions> RuntimeOptions::FromEnvironment() {
  RuntimeOptions options;
  if (const char* dir = std::getenv("PTO_CACHE_DIR"); dir != nullptr && *dir != '\0') {
    options.cache_path = dir;
  }
  if (const char* level = std::getenv("PTO_LOG"); level != nullptr && *level != '\0') {
    absl::StatusOr<LogLevel> parsed = ParseLogLevel(level);
    if (!parsed.ok()) return parsed.status();
    options.log_level = *parsed;
  }
  if (const char* check = std::getenv("PTO_CHECK_NUMERICS"); check != nullptr && *check != '\0') {
    absl::StatusOr<bool> parsed = ParseCheckNumerics(check);
    if (!parsed.ok()) return parsed.status();
    options.check_numerics = *parsed;
  }
  if (const char* pin = std::getenv("PTO_PIN_THREADS"); pin != nullptr && *pin != '\0') {
    absl::StatusOr<ThreadPinning> parsed = ParseThreadPinning(pin);
    if (!parsed.ok()) return parsed.status();
    options.thread_pinning = *parsed;
  }
  return options;
}

}  // namespace pto
