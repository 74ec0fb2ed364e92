// Machine code from an LLVM module: object files, assembly and optimized IR text, and the
// undefined symbols of object files (internal to jit/).
#ifndef PTO_JIT_ORC_OBJECT_CODE_H_
#define PTO_JIT_ORC_OBJECT_CODE_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "jit/codegen/codegen_target.h"

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace pto::jit {

// Codegen of an (already optimized) module into relocatable object bytes.
absl::StatusOr<std::string> EmitObject(llvm::Module& module, llvm::TargetMachine& tm);

// Runs the O2 pipeline on `module` (in place) and returns its assembly text
// (`pto dump --stage=asm`).
absl::StatusOr<std::string> EmitAssembly(llvm::Module& module, const CodegenTarget& target);
// Runs the O2 pipeline on `module` (in place) and returns the optimized IR text.
absl::StatusOr<std::string> EmitOptimizedIR(llvm::Module& module, const CodegenTarget& target);

// Names of the undefined symbols an object file references. InvalidArgument if the bytes are
// not an object file. (What a kernel object may contain: kernel_object_check.h.)
absl::StatusOr<std::vector<std::string>> UndefinedSymbols(std::string_view object);

}  // namespace pto::jit

#endif  // PTO_JIT_ORC_OBJECT_CODE_H_
