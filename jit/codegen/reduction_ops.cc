#include "jit/codegen/reduction_ops.h"

#include <cmath>

#include "jit/codegen/vector_math.h"

namespace pto::jit {

llvm::Value* CombineIdentity(Combine c, llvm::Type* type) {
  return llvm::ConstantFP::get(type, c == Combine::kSum ? 0.0 : -INFINITY);
}

llvm::Value* CombineValues(llvm::IRBuilderBase& b, Combine c, llvm::Value* x, llvm::Value* y) {
  return c == Combine::kSum ? b.CreateFAdd(x, y) : EmitMax(b, x, y);
}

llvm::Value* CombineLanes(llvm::IRBuilderBase& b, Combine c, llvm::Value* v) {
  if (!v->getType()->isVectorTy()) return v;
  if (c == Combine::kMax) return b.CreateFPMaxReduce(v);
  llvm::IRBuilderBase::FastMathFlagGuard guard(b);
  llvm::FastMathFlags fmf;
  fmf.setAllowReassoc();
  b.setFastMathFlags(fmf);
  return b.CreateFAddReduce(llvm::ConstantFP::get(v->getType()->getScalarType(), -0.0), v);
}

llvm::Value* SplatTo(llvm::IRBuilderBase& b, llvm::Value* scalar, int width) {
  return width == 1 ? scalar : b.CreateVectorSplat(width, scalar);
}

}  // namespace pto::jit
