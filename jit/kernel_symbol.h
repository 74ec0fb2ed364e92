// A compiled kernel's symbol: what the kernel is, then a hash of what makes its code.
#ifndef PTO_JIT_KERNEL_SYMBOL_H_
#define PTO_JIT_KERNEL_SYMBOL_H_

#include <cstdint>
#include <string>

#include "device/device_info.h"
#include "jit/ir/tile_ir.h"

namespace pto::jit {

// The register tile one step of the kernel's inner loop works on, from its config, with
// vector_width 0 read as `target_lanes` (the target's natural width in f32 lanes):
//   matmul:                       <mr>x<columns>, columns = nr_vectors x lanes ("6x16", "6x64")
//   elementwise, reduce, row op:  u<unroll>x<lanes>, unroll vectors of lanes each ("u4x8")
std::string KernelTileShape(const ir::Kernel& kernel, int target_lanes);

// <kernel.name>_<tile shape>_<isa>_<hash>[_checked], e.g. "f32_matmul_add_6x16_avx2_" plus 16
// hex digits. kernel.name (from the tile graph builder) states the dtype, kind and first fused
// ops ("f32_matmul_add"; "f32_kernel" when empty). The hash (of the kernel's description, see
// KernelCompiler) is last but for the checked kernels' "_checked", which ends their symbols.
std::string KernelSymbol(const ir::Kernel& kernel, device::Isa isa, int target_lanes, uint64_t hash,
                         bool checked);

}  // namespace pto::jit

#endif  // PTO_JIT_KERNEL_SYMBOL_H_
