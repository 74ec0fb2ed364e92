// Sum / max accumulation helpers shared by the reduce and row-op emitters (internal).
#ifndef PTO_JIT_CODEGEN_REDUCTION_OPS_H_
#define PTO_JIT_CODEGEN_REDUCTION_OPS_H_

#include "llvm/IR/IRBuilder.h"

namespace pto::jit {

// kMax propagates NaN (the reduce op's max, as the ops/ reference's). kRowMax is x86's maxps,
// which may drop a NaN operand: for statistics that a NaN ruins anyway (softmax's row max: a
// NaN element's exp(x - max) is NaN, and so are the row's sum and every output, whichever max
// was taken), at a quarter of kMax's instructions.
enum class Combine { kSum, kMax, kRowMax };

// 0 for sums, -inf for maxima; `type` may be a vector type (splat).
llvm::Value* CombineIdentity(Combine c, llvm::Type* type);
llvm::Value* CombineValues(llvm::IRBuilderBase& b, Combine c, llvm::Value* x, llvm::Value* y);
// `v` in the lanes set in `mask`, c's identity in the others (a masked tail's lanes past the
// row); `v` itself when mask is null.
llvm::Value* IdentityOutsideMask(llvm::IRBuilderBase& b, Combine c, llvm::Value* v,
                                 llvm::Value* mask);
// Horizontal reduction of a vector to a scalar (a scalar passes through).
llvm::Value* CombineLanes(llvm::IRBuilderBase& b, Combine c, llvm::Value* v);
// Splat of a scalar to `width` lanes (width 1: the scalar).
llvm::Value* SplatTo(llvm::IRBuilderBase& b, llvm::Value* scalar, int width);

}  // namespace pto::jit

#endif  // PTO_JIT_CODEGEN_REDUCTION_OPS_H_
