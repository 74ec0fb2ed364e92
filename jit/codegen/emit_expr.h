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

// Checks operand indices, access indices, where kAcc may appear, the operands' dtypes, and
// that kIota's axis is a dim of the domain (of rank `domain_rank`).
absl::Status ValidateProgram(const std::vector<ir::ExprNode>& program, int num_accesses,
                             bool acc_allowed, const std::string& what, int domain_rank = 8);

// Loads accesses[access] at the current point with the program's width (in the access's
// dtype).
using LoadFn = std::function<llvm::Value*(int access)>;
// The i32 index of the current point (with the program's width) along domain dim `dim`.
using IndexFn = std::function<llvm::Value*(int dim)>;
// Loads the gather access `access` at the current point moved by the i32 `index` (of the
// program's width): NaN in the lanes whose index is out of range.
using GatherFn = std::function<llvm::Value*(int access, llvm::Value* index)>;

// Emits the nodes of a (validated) `program` that `roots` depend on, with values of type
// `type` (float or <N x float>; i32 nodes get i32 of the same width); `acc` is the value of
// kAcc, `index` gives kIota's values and `gather` kGather's. Every emitter passes both: any
// kernel's program may hold an iota or a gather (a recomputed mask fused into a backward row
// op, say). Returns one value per node (null for unused nodes).
std::vector<llvm::Value*> EmitProgram(llvm::IRBuilderBase& b,
                                      const std::vector<ir::ExprNode>& program,
                                      std::span<const int> roots, llvm::Type* type,
                                      const LoadFn& load, llvm::Value* acc, const IndexFn& index,
                                      const GatherFn& gather);

}  // namespace pto::jit

#endif  // PTO_JIT_CODEGEN_EMIT_EXPR_H_
