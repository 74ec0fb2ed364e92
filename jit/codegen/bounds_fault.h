// The handler checked kernels call when a load or store falls outside its buffer
// (CodegenOptions::bounds_checks). Kernels reference it by kBoundsFaultSymbol; the JIT engine
// of a checked compiler binds that name to this function (OrcEngineOptions::runtime_symbols),
// so a stored checked kernel loads in any process that has libpto, and an unchecked engine
// refuses objects that reference it.
#ifndef PTO_JIT_CODEGEN_BOUNDS_FAULT_H_
#define PTO_JIT_CODEGEN_BOUNDS_FAULT_H_

#include <cstdint>
#include <string>

namespace pto::jit {

inline constexpr char kBoundsFaultSymbol[] = "pto_kernel_bounds_fault";

// The access touched elements first..last (in either order) of `buffer`, which has `extent`
// elements; at least one of first and last lies outside [0, extent). Prints one line naming
// the kernel, the buffer, the index outside it and the extent to stderr, and aborts.
[[noreturn]] void BoundsFault(const char* kernel, const char* buffer, int64_t first, int64_t last,
                              int64_t extent, int32_t is_store);

// The line BoundsFault prints (without its newline).
std::string BoundsFaultMessage(const char* kernel, const char* buffer, int64_t first, int64_t last,
                               int64_t extent, bool is_store);

// Address of the function kernels call: BoundsFault.
const void* BoundsFaultAddress();

}  // namespace pto::jit

#endif  // PTO_JIT_CODEGEN_BOUNDS_FAULT_H_
