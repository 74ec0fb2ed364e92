// Built instead of the LIBXSMM baseline when CMake did not find libxsmm-dev: every factory says
// so at run time.
#include "absl/status/status.h"
#include "tools/bench/baselines_libxsmm.h"

namespace pto::bench {

std::string LibxsmmDescription() {
  return "MISSING: libxsmm-dev (libxsmm.h, libxsmm.a) was not found when this bench was built";
}

BackendFactory LibxsmmMatmul(MatmulShape) {
  return [](const std::vector<IoSet>&, int) -> absl::StatusOr<Prepared> {
    return absl::UnavailableError("LIBXSMM missing");
  };
}

}  // namespace pto::bench
