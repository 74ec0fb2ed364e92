// Built instead of the oneDNN baselines when CMake did not find libdnnl-dev: every factory
// says so at run time.
#include "absl/status/status.h"
#include "tools/bench/baselines_onednn.h"

namespace pto::bench {
namespace {

BackendFactory Missing() {
  return [](const std::vector<IoSet>&, int) -> absl::StatusOr<Prepared> {
    return absl::UnavailableError("oneDNN missing");
  };
}

}  // namespace

std::string OnednnDescription() {
  return "MISSING: libdnnl-dev (dnnl.hpp, libdnnl.so) was not found when this bench was built";
}
bool OnednnAvailable() { return false; }
BackendFactory OnednnMatmul(MatmulShape) { return Missing(); }
BackendFactory OnednnLinearBiasGelu(int64_t, int64_t, int64_t, bool) { return Missing(); }
BackendFactory OnednnRowOp(RowOp, int64_t, int64_t) { return Missing(); }
BackendFactory OnednnBiasGeluResidual(int64_t, int64_t, bool) { return Missing(); }
BackendFactory OnednnLayerNormScaleShift(int64_t, int64_t, bool) { return Missing(); }
BackendFactory OnednnScaledMaskedSoftmax(int64_t, int64_t, float, bool) { return Missing(); }
BackendFactory OnednnAttention(int64_t, int64_t, int64_t, bool) { return Missing(); }
BackendFactory OnednnTransformerBlock(BlockShape, bool) { return Missing(); }

}  // namespace pto::bench
