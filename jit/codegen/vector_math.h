// Transcendentals emitted inline as polynomial approximations on float or <N x float> values
// (no libm calls). Error bounds are for f32 inputs, measured against double-precision std::
// functions by tests/jit/codegen/vector_math_test.cc over a dense sweep (with and without FMA):
//
//   exp        relative error <= 2 ulp (3e-7) where the result is normal; results below
//              FLT_MIN are denormals correctly scaled (absolute error <= 1.5e-45); x > 88.73 ->
//              +inf, x < -104 -> 0, NaN -> NaN.
//   log        absolute error <= 1e-7 for x in [0.5, 2], relative <= 2 ulp elsewhere; denormal
//              inputs handled; 0 -> -inf, x < 0 -> NaN, +inf -> +inf.
//   tanh       absolute error <= 3e-7 and relative <= 4 ulp; +-inf -> +-1.
//   sigmoid    relative error <= 4 ulp (5e-7) where the result is >= FLT_MIN.
//   erf        absolute error <= 3e-7, relative error <= 1e-6.
//   gelu_tanh  x * sigmoid(2u), u = sqrt(2/pi)(x + 0.044715x^3): relative error <= 1e-6
//              (where the result is normal); no cancellation for negative x.
//   gelu_erf   0.5x * erfc(-x/sqrt2) for x < -sqrt2/2 (no cancellation):
//              relative error <= 1e-5 where |result| >= 1e-30, else absolute <= 1e-30.
//   silu       x * sigmoid(x): relative error <= 1e-6 where the result is normal.
//   sqrt       llvm.sqrt (correctly rounded); rsqrt = 1/sqrt (two roundings, <= 1 ulp).
#ifndef PTO_JIT_CODEGEN_VECTOR_MATH_H_
#define PTO_JIT_CODEGEN_VECTOR_MATH_H_

#include "llvm/IR/IRBuilder.h"

namespace pto::jit {

llvm::Value* EmitExp(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* EmitLog(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* EmitTanh(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* EmitSigmoid(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* EmitErf(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* EmitGeluTanh(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* EmitGeluErf(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* EmitSilu(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* EmitSqrt(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* EmitRsqrt(llvm::IRBuilderBase& b, llvm::Value* x);

// Helpers also used by the kernel emitters.
llvm::Value* EmitFMulAdd(llvm::IRBuilderBase& b, llvm::Value* a, llvm::Value* x, llvm::Value* c);
llvm::Value* EmitMax(llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* y);  // maxnum
llvm::Value* EmitMin(llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* y);  // minnum

}  // namespace pto::jit

#endif  // PTO_JIT_CODEGEN_VECTOR_MATH_H_
