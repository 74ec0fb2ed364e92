// Helpers for codegen tests: building tile IR by hand (tests/jit/ir/tile_ir_builders.h),
// compiling with OrcEngine, running a kernel over its grid (whole or split into tile ranges).
#ifndef PTO_TESTS_JIT_CODEGEN_KERNEL_TEST_UTIL_H_
#define PTO_TESTS_JIT_CODEGEN_KERNEL_TEST_UTIL_H_

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "device/device_info.h"
#include "jit/codegen/codegen_target.h"
#include "jit/ir/tile_ir.h"
#include "jit/kernel_abi.h"
#include "jit/orc/orc_engine.h"
#include "tests/jit/ir/tile_ir_builders.h"

namespace pto::jit::testing {

// The host, or the host restricted to `isa` (never wider than the host).
CodegenTarget TargetFor(device::Isa isa);
CodegenTarget HostTarget();

// Emits and compiles `kernel` with `engine` (with `options`: e.g. checked).
absl::StatusOr<CompiledObject> CompileKernel(OrcEngine& engine, const ir::Kernel& kernel,
                                             const CodegenOptions& options = {});
// Shared engine per ISA (created once per test process).
OrcEngine& EngineFor(device::Isa isa);
// A target of exactly `isa`, wider than the host's if asked: for code that is compiled and
// inspected, never run (ISA paths above the host are checked this way).
CodegenTarget CompileOnlyTargetFor(device::Isa isa);
// Shared engine of CompileOnlyTargetFor(isa): its objects must not be called.
OrcEngine& CompileOnlyEngineFor(device::Isa isa);
// The same for checked kernels: it binds the bounds-fault handler.
OrcEngine& CheckedEngineFor(device::Isa isa);
// Assembly text of `kernel` for `target`.
std::string KernelAssembly(const ir::Kernel& kernel, const CodegenTarget& target);
// Occurrences of `what` in `text` (instructions in an assembly listing).
size_t CountOf(const std::string& text, const std::string& what);
// Textual LLVM IR of `kernel` as emitted (before optimization).
std::string KernelIr(const ir::Kernel& kernel, const CodegenTarget& target);

// Runs fn over [lo, hi), with `scratch_bytes` of 64-byte aligned scratch (0: null scratch).
void RunRange(pto_kernel_fn fn, const std::vector<float*>& buffers,
              const std::vector<int64_t>& symbols, int64_t lo0, int64_t lo1, int64_t hi0,
              int64_t hi1, int64_t scratch_bytes = 0);
// Runs fn over the whole grid, or split into tiles of (tile0, tile1) (0: whole extent).
void RunGrid(pto_kernel_fn fn, const std::vector<float*>& buffers,
             const std::vector<int64_t>& symbols, int64_t rows, int64_t cols, int64_t tile0 = 0,
             int64_t tile1 = 0, int64_t scratch_bytes = 0);

std::vector<float> RandomVector(size_t n, uint32_t seed, float lo = -2.f, float hi = 2.f);

// Max |got - want| / max(1, |want|) over the arrays.
double MaxScaledError(const std::vector<float>& got, const std::vector<double>& want);

}  // namespace pto::jit::testing

#endif  // PTO_TESTS_JIT_CODEGEN_KERNEL_TEST_UTIL_H_
