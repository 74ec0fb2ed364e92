// The LLVM O2 pipeline (new pass manager) for a kernel module.
#ifndef PTO_JIT_CODEGEN_OPTIMIZE_H_
#define PTO_JIT_CODEGEN_OPTIMIZE_H_

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace pto::jit {

// Sets the module's data layout and triple from `tm` and runs the default O2 pipeline, with
// target-specific cost models from `tm`.
void OptimizeModule(llvm::Module& module, llvm::TargetMachine& tm);

}  // namespace pto::jit

#endif  // PTO_JIT_CODEGEN_OPTIMIZE_H_
