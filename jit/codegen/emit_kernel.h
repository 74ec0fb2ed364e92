// Tile IR -> LLVM IR: one ir::Kernel becomes one function named kernel.name with the kernel ABI
// of jit/kernel_abi.h, using explicit vector types of the target's f32 lane count (or
// kernel.config.vector_width when nonzero) and scalar tails, so any extent works (0 included).
#ifndef PTO_JIT_CODEGEN_EMIT_KERNEL_H_
#define PTO_JIT_CODEGEN_EMIT_KERNEL_H_

#include <memory>

#include "absl/status/statusor.h"
#include "jit/codegen/codegen_target.h"
#include "jit/ir/tile_ir.h"

namespace llvm {
class Function;
class LLVMContext;
class Module;
}  // namespace llvm

namespace pto::jit {

// InvalidArgument for malformed kernels (bad indices, stride counts, programs; a checked
// kernel without an extent per buffer slot), Unimplemented for dtypes other than f32.
absl::StatusOr<std::unique_ptr<llvm::Module>> EmitKernel(const ir::Kernel& kernel,
                                                         const CodegenTarget& target,
                                                         const CodegenOptions& options,
                                                         llvm::LLVMContext& context);
// With the default options (unchecked).
absl::StatusOr<std::unique_ptr<llvm::Module>> EmitKernel(const ir::Kernel& kernel,
                                                         const CodegenTarget& target,
                                                         llvm::LLVMContext& context);

// The code-generation attributes every generated function carries: target CPU and features,
// vector width, and "reciprocal-estimates" (vector divisions flagged arcp+ninf, see
// vector_math.h, become vrcp14ps plus one Newton step on AVX-512, whose divider is the
// bottleneck of gelu and sigmoid; exact divisions elsewhere).
void SetCodegenAttributes(const CodegenTarget& target, int lanes, llvm::Function& fn);

// Per-thread scratch bytes the kernel's code expects in its scratch argument (the plan
// provides them): packed panels of a matmul's B, softmax's exp row with streaming stores.
int64_t KernelScratchBytes(const ir::Kernel& kernel);

// The checks EmitKernel makes before emitting anything.
absl::Status ValidateKernel(const ir::Kernel& kernel);
// ... and for a checked kernel, its buffer extents: one per slot.
absl::Status ValidateBufferExtents(const ir::Kernel& kernel);

}  // namespace pto::jit

#endif  // PTO_JIT_CODEGEN_EMIT_KERNEL_H_
