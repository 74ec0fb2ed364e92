// The one C ABI of every generated kernel. Its version is part of the compiler fingerprint:
// bump kKernelAbiVersion whenever the layout or meaning below changes.
//
//   void kernel(const pto_kernel_args* args, const int64_t lo[2], const int64_t hi[2],
//               void* scratch);
//
// - args->buffers[i]: base pointer of kernel-local buffer slot i (ir::Access::buffer). Buffers
//   are 64-byte aligned when pto allocates them; caller buffers need only element alignment.
//   An output never aliases an input of the same kernel, except the pairs in its call's
//   ir::KernelCall::in_place (jit/passes/mark_in_place.h): an elementwise or row-op output
//   written over a dying input that the kernel reads at exactly the index it writes, every
//   read of a point (a row op: of its row) before that point's store. Codegen must keep that
//   order (a store's value depends on those loads). A Function output declared in place of
//   an input (jit/passes/plan_in_place_outputs.h) may alias that input under the same rule.
//   Matmul and reduction outputs never alias.
// - args->symbols[s]: runtime value of graph symbol s (static dims are compiled as constants
//   and never read from here). A symbol derived from others (a slice's start or length,
//   ops/derived_symbols.h) is computed by the plan before the call: kernels read it alike.
// - [lo, hi): the 2-D tile range of ir::KernelGrid to run. The plan splits the grid on
//   multiples of the kernel's TileConfig grain; any range with lo <= hi inside the grid is
//   valid.
// - scratch: per-thread scratch memory (may be null when the kernel declares it needs none).
#ifndef PTO_JIT_KERNEL_ABI_H_
#define PTO_JIT_KERNEL_ABI_H_

#include <cstdint>

extern "C" {

typedef struct pto_kernel_args {
  void* const* buffers;
  const int64_t* symbols;
} pto_kernel_args;

typedef void (*pto_kernel_fn)(const pto_kernel_args* args, const int64_t lo[2],
                              const int64_t hi[2], void* scratch);

}  // extern "C"

namespace pto::jit {
inline constexpr int kKernelAbiVersion = 1;
}  // namespace pto::jit

#endif  // PTO_JIT_KERNEL_ABI_H_
