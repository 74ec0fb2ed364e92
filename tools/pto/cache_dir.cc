#include "tools/pto/cache_dir.h"

#include <cstdlib>

#include "absl/status/status.h"

namespace pto::tools {

absl::StatusOr<std::string> DefaultCacheDir() {
  const char* dir = std::getenv("PTO_CACHE_DIR");
  if (dir != nullptr && *dir != '\0') return std::string(dir);
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') return std::string(home) + "/.cache/pto";
  return absl::FailedPreconditionError(
      "no cache directory: pass --cache DIR, or set PTO_CACHE_DIR or HOME");
}

}  // namespace pto::tools
