#include "jit/codegen/reduction_ops.h"

#include <cmath>
#include <vector>

#include "jit/codegen/vector_math.h"

namespace pto::jit {

llvm::Value* CombineIdentity(Combine c, llvm::Type* type) {
  return llvm::ConstantFP::get(type, c == Combine::kSum ? 0.0 : -INFINITY);
}

namespace {
// x > y ? x : y: one maxps (y when either is NaN).
llvm::Value* RowMax(llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* y) {
  return b.CreateSelect(b.CreateFCmpOGT(x, y), x, y);
}
}  // namespace

llvm::Value* CombineValues(llvm::IRBuilderBase& b, Combine c, llvm::Value* x, llvm::Value* y) {
  switch (c) {
    case Combine::kSum:
      return b.CreateFAdd(x, y);
    case Combine::kMax:
      return EmitMax(b, x, y);
    case Combine::kRowMax:
      return RowMax(b, x, y);
  }
  return nullptr;
}

llvm::Value* IdentityOutsideMask(llvm::IRBuilderBase& b, Combine c, llvm::Value* v,
                                 llvm::Value* mask) {
  if (mask == nullptr) return v;
  return b.CreateSelect(mask, v, CombineIdentity(c, v->getType()));
}

llvm::Value* CombineLanes(llvm::IRBuilderBase& b, Combine c, llvm::Value* v) {
  if (!v->getType()->isVectorTy()) return v;
  if (c != Combine::kSum) {
    // A shuffle tree of CombineValues (llvm.vector.reduce.fmax ignores NaN and
    // llvm.vector.reduce.fmaximum expands to long sequences on x86). For an odd width the two
    // halves overlap by one lane, which max tolerates.
    int w = static_cast<int>(llvm::cast<llvm::FixedVectorType>(v->getType())->getNumElements());
    while (w > 1) {
      const int h = (w + 1) / 2;
      std::vector<int> lo(h), hi(h);
      for (int i = 0; i < h; ++i) {
        lo[i] = i;
        hi[i] = w - h + i;
      }
      v = CombineValues(b, c, b.CreateShuffleVector(v, lo), b.CreateShuffleVector(v, hi));
      w = h;
    }
    return b.CreateExtractElement(v, uint64_t{0});
  }
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
