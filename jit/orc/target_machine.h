// LLVM target initialization and TargetMachine creation for a CodegenTarget (internal to jit/).
#ifndef PTO_JIT_ORC_TARGET_MACHINE_H_
#define PTO_JIT_ORC_TARGET_MACHINE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "jit/codegen/codegen_target.h"

namespace llvm {
class TargetMachine;
}  // namespace llvm

namespace pto::jit {

// Initializes the native target, asm printer and parser once per process (thread-safe).
void InitializeNativeTargetOnce();

// A TargetMachine for `target`: O2 codegen, PIC, small code model. TargetMachines are not
// shared between threads: create one per compilation.
absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine(
    const CodegenTarget& target);

}  // namespace pto::jit

#endif  // PTO_JIT_ORC_TARGET_MACHINE_H_
