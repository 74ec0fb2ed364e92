// Shared helpers of the end-to-end tests: run a pto Function on host tensors and compare it
// with the ops/ reference evaluation of the same program.
#ifndef PTO_TESTS_JIT_E2E_TEST_UTIL_H_
#define PTO_TESTS_JIT_E2E_TEST_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "jit/pipeline.h"
#include "ops/host_tensor.h"
#include "ops/tolerance.h"
#include "pto/pto.h"

namespace pto::testing {

std::unique_ptr<Runtime> OpenRuntime(RuntimeOptions options = {});

std::vector<TensorView> Views(const std::vector<ops::HostTensor>& tensors);

// Runs `fn` through the allocating call.
absl::StatusOr<std::vector<ops::HostTensor>> RunPto(Function& fn,
                                                    const std::vector<ops::HostTensor>& inputs);

// The ops/ reference result of `trace` on these inputs (traced with their static shapes).
absl::StatusOr<std::vector<ops::HostTensor>> RunReference(
    const TraceFn& trace, const std::vector<ops::HostTensor>& inputs);

// Empty when every output is within `tol`, else a description of the first mismatch.
std::string Compare(const std::vector<ops::HostTensor>& got,
                    const std::vector<ops::HostTensor>& want, ops::Tolerance tol);

// Levels 1-4 of `trace` on inputs of these static shapes, for this host (no code generation).
absl::StatusOr<jit::LoweredProgram> LowerStatic(const TraceFn& trace,
                                                const std::vector<std::vector<int64_t>>& shapes,
                                                const jit::FusionOptions& fusion = {});

}  // namespace pto::testing

#endif  // PTO_TESTS_JIT_E2E_TEST_UTIL_H_
