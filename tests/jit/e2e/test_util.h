// Shared helpers of the end-to-end tests: run a pto Function on host tensors and compare it
// with the ops/ reference evaluation of the same program.
#ifndef PTO_TESTS_JIT_E2E_TEST_UTIL_H_
#define PTO_TESTS_JIT_E2E_TEST_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "device/device_info.h"
#include "jit/pipeline.h"
#include "ops/host_tensor.h"
#include "ops/tolerance.h"
#include "pto/pto.h"

namespace pto::testing {

std::unique_ptr<Runtime> OpenRuntime(RuntimeOptions options = {});
// A Runtime generating code for `isa` (RuntimeOptions::isa); null when this CPU cannot run it
// (the caller skips), and then, for TargetIsa::kHost, which must always open, a test failure.
std::unique_ptr<Runtime> OpenRuntimeForIsa(TargetIsa isa);

// Views of f32 tensors' data.
std::vector<TensorView> Views(const std::vector<ops::HostTensor>& tensors);

// Runs `fn` through the allocating call (i32 inputs and outputs as i32 host tensors).
absl::StatusOr<std::vector<ops::HostTensor>> RunPto(Function& fn,
                                                    const std::vector<ops::HostTensor>& inputs);

// The ops/ reference result of `trace` on these inputs (traced with their static shapes).
absl::StatusOr<std::vector<ops::HostTensor>> RunReference(
    const TraceFn& trace, const std::vector<ops::HostTensor>& inputs);

// Empty when every output is within `tol`, else a description of the first mismatch.
std::string Compare(const std::vector<ops::HostTensor>& got,
                    const std::vector<ops::HostTensor>& want, ops::Tolerance tol);

// Runs `fn` and the reference of `trace` on `inputs`: empty when both succeed and agree within
// `tol`, else what went wrong (a status or the first mismatch).
std::string DiffFromReference(Function& fn, const TraceFn& trace,
                              const std::vector<ops::HostTensor>& inputs, ops::Tolerance tol);

// Levels 1-4 of `trace` on inputs of these static shapes, for this host (no code generation).
absl::StatusOr<jit::LoweredProgram> LowerStatic(const TraceFn& trace,
                                                const std::vector<std::vector<int64_t>>& shapes,
                                                const jit::FusionOptions& fusion = {});
// The same for `device` (which may be another machine's, e.g. wider than the host's), with
// `constant_inputs` as FunctionOptions::constant_inputs.
absl::StatusOr<jit::LoweredProgram> LowerStatic(const TraceFn& trace,
                                                const std::vector<std::vector<int64_t>>& shapes,
                                                const device::DeviceInfo& device,
                                                const std::vector<int>& constant_inputs,
                                                const jit::FusionOptions& fusion = {});
// The assembly of every kernel of `program` generated for `device`: compiled, never run, so
// the device may have an ISA the host lacks.
absl::StatusOr<std::string> ProgramAssembly(const jit::LoweredProgram& program,
                                            const device::DeviceInfo& device);
// An AVX-512 machine like the Emerald Rapids guest the default configs were measured on
// (2 cores, 2 MiB L2), for tests of those configs that must hold on any host.
device::DeviceInfo Avx512Device();

}  // namespace pto::testing

#endif  // PTO_TESTS_JIT_E2E_TEST_UTIL_H_
