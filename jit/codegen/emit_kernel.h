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
class LLVMContext;
class Module;
}  // namespace llvm

namespace pto::jit {

// InvalidArgument for malformed kernels (bad indices, stride counts, programs), Unimplemented
// for dtypes other than f32.
absl::StatusOr<std::unique_ptr<llvm::Module>> EmitKernel(const ir::Kernel& kernel,
                                                         const CodegenTarget& target,
                                                         llvm::LLVMContext& context);

// The checks EmitKernel makes before emitting anything.
absl::Status ValidateKernel(const ir::Kernel& kernel);

}  // namespace pto::jit

#endif  // PTO_JIT_CODEGEN_EMIT_KERNEL_H_
