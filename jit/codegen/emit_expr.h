// Evaluation of ir::ExprNode programs on float or <N x float> values (internal).
#ifndef PTO_JIT_CODEGEN_EMIT_EXPR_H_
#define PTO_JIT_CODEGEN_EMIT_EXPR_H_

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "jit/ir/tile_ir.h"
#include "llvm/IR/IRBuilder.h"

namespace pto::jit {

// Checks operand indices, access indices and where kAcc may appear.
absl::Status ValidateProgram(const std::vector<ir::ExprNode>& program, int num_accesses,
                             bool acc_allowed, const std::string& what);

// Loads accesses[access] at the current point with the program's width.
using LoadFn = std::function<llvm::Value*(int access)>;

// Emits the nodes of a (validated) `program` that `roots` depend on, with values of type
// `type`; `acc` is the value of kAcc. Returns one value per node (null for unused nodes).
std::vector<llvm::Value*> EmitProgram(llvm::IRBuilderBase& b,
                                      const std::vector<ir::ExprNode>& program,
                                      std::span<const int> roots, llvm::Type* type,
                                      const LoadFn& load, llvm::Value* acc);

}  // namespace pto::jit

#endif  // PTO_JIT_CODEGEN_EMIT_EXPR_H_
