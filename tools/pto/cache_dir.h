// Where `pto` keeps its kernel cache when no --cache is given: $PTO_CACHE_DIR, else
// $HOME/.cache/pto. Environment variables are read here, in tools/, and nowhere below.
#ifndef PTO_TOOLS_PTO_CACHE_DIR_H_
#define PTO_TOOLS_PTO_CACHE_DIR_H_

#include <string>

#include "absl/status/statusor.h"

namespace pto::tools {

// $PTO_CACHE_DIR if set and not empty, else $HOME/.cache/pto; FailedPrecondition if neither
// variable is set.
absl::StatusOr<std::string> DefaultCacheDir();

}  // namespace pto::tools

#endif  // PTO_TOOLS_PTO_CACHE_DIR_H_
