// Runs a traced program through the ops/ reference implementation (no codegen): the oracle that
// tests, `pto demo` and the tuner check compiled kernels against.
#ifndef PTO_JIT_REFERENCE_RUNNER_H_
#define PTO_JIT_REFERENCE_RUNNER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "ops/host_tensor.h"
#include "pto/runtime.h"

namespace pto::jit {

// Traces `trace` on the inputs' static shapes and evaluates it with ops::RunReference.
absl::StatusOr<std::vector<ops::HostTensor>> RunReferenceOf(const TraceFn& trace,
                                                            const std::vector<ops::HostTensor>& inputs);

}  // namespace pto::jit

#endif  // PTO_JIT_REFERENCE_RUNNER_H_
