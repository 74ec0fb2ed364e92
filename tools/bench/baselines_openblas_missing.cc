// Built instead of the OpenBLAS baselines when CMake did not find libopenblas-dev: every
// factory says so at run time.
#include "absl/status/status.h"
#include "tools/bench/baselines_openblas.h"

namespace pto::bench {
namespace {

BackendFactory Missing() {
  return [](const std::vector<IoSet>&, int) -> absl::StatusOr<Prepared> {
    return absl::UnavailableError("OpenBLAS missing");
  };
}

}  // namespace

std::string OpenblasDescription() {
  return "MISSING: libopenblas-dev (cblas.h, libopenblas.so) was not found when this bench was "
         "built";
}
bool OpenblasAvailable() { return false; }
std::string OpenblasCoreOverride(device::Isa) { return ""; }
BackendFactory OpenblasMatmul(MatmulShape) { return Missing(); }
BackendFactory OpenblasLinearBiasGelu(int64_t, int64_t, int64_t) { return Missing(); }
BackendFactory OpenblasAttention(int64_t, int64_t, int64_t) { return Missing(); }

}  // namespace pto::bench
