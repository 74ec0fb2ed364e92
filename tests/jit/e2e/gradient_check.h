// Gradient checks: a JitGrad Function's gradients against central finite differences of the
// same program evaluated by the ops/ reference in double.
#ifndef PTO_TESTS_JIT_E2E_GRADIENT_CHECK_H_
#define PTO_TESTS_JIT_E2E_GRADIENT_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ops/host_tensor.h"
#include "pto/runtime.h"

namespace pto::testing {

struct GradientCheckOptions {
  // Central differences (L(x + h) - L(x - h)) / 2h with h = step * max(1, |x|), in double: the
  // truncation error is O(h^2) and the rounding error about 1e-16 / h, both far below the
  // tolerance.
  double step = 1e-3;
  // pto's f32 gradient g passes when |g - fd| <= atol + rtol * |fd|.
  double atol = 1e-4;
  double rtol = 1e-3;
  // Elements checked per input (all when it has no more; else the first, the last and a
  // random sample).
  int max_elements = 24;
  uint64_t seed = 1;
};

struct GradientCheckResult {
  int64_t elements = 0;        // gradient elements compared
  double worst_ratio = 0;      // max over them of |g - fd| / (atol + rtol |fd|); <= 1 passes
  std::string worst;           // where, for messages: "input 1 element 5: pto 0.25, fd 0.2500001"
  double loss_difference = 0;  // |pto's loss - the reference's|, relative to max(1, |ref|)
};

// Compiles `loss` (a program over `inputs` whose output 0 is a scalar) with Runtime::JitGrad
// with respect to `wrt`, runs it on `inputs` and compares each sampled gradient element with
// central differences of the reference. Errors: a failing compile or call, or a reference
// error.
absl::StatusOr<GradientCheckResult> CheckGradients(Runtime& rt, const TraceFn& loss,
                                                   const std::vector<ops::HostTensor>& inputs,
                                                   const std::vector<int>& wrt,
                                                   const GradientCheckOptions& options = {},
                                                   FunctionOptions function_options = {});

}  // namespace pto::testing

#endif  // PTO_TESTS_JIT_E2E_GRADIENT_CHECK_H_
