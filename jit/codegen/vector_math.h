// Transcendentals emitted inline as polynomial approximations on float or <N x float> values
// (no libm calls). Error bounds for f32 inputs, asserted by tests/jit/codegen/vector_math_test.cc
// against double-precision std:: functions over dense sweeps, with FMA and without (SSE2);
// measured maxima in brackets:
//
//   exp        relative <= 3e-7 [7.6e-8] where the result is >= FLT_MIN; x < -87.3365 (results
//              below FLT_MIN) -> 0; x > 88.73 -> +inf, NaN -> NaN.
//   log        absolute <= 1e-7 [3.9e-8] on [0.5, 2]; relative <= 2.4e-7 [8e-8] elsewhere;
//              denormal inputs handled; 0 -> -inf, x < 0 -> NaN, +inf -> +inf.
//   tanh       absolute <= 3e-7 [7.1e-8], relative <= 4.8e-7 [1.3e-7]; +-inf -> +-1.
//   sigmoid    relative <= 6e-7 [1.5e-7] where the result is >= FLT_MIN; x < -87.3365 -> 0.
//   erf        absolute <= 3e-7 [1.5e-7], relative <= 1e-6 [2.8e-7] for |x| >= FLT_MIN.
//   gelu_tanh  computed as x * sigmoid(2u), u = sqrt(2/pi)(x + 0.044715x^3) (no cancellation):
//              relative <= 3e-6 [2.5e-6] for x >= -5; <= 3e-5 [1.3e-5] in the ill-conditioned tail
//              where |result| >= 1e-36.
//   gelu_erf   0.5x * erfc(-x/sqrt2) everywhere (erfc(|z|) for x < 0, 2 - erfc(z) for x >= 0: no
//              cancellation either way): relative <= 3e-6 [2.2e-6] for x >= -5 (the rounding of
//              x/sqrt2, amplified by the tail's slope, dominates); <= 1e-6 [4.3e-7] on [-0.8, 0.8];
//              <= 2e-5 [1.7e-5] where |result| >= 1e-30.
//   gelu_erf_grad  Phi(x) + x phi(x) from one exp (gelu_erf's parts): absolute <= 3e-7 [2.1e-7];
//              relative <= 1.5e-6 [7e-7] outside (-1, -0.5), around its zero at -0.7518.
//   silu       x * sigmoid(x): relative <= 1e-6 [1.7e-7] where |result| >= 1e-36.
//   sqrt       llvm.sqrt (correctly rounded); rsqrt = 1/sqrt (two roundings, <= 1 ulp).
// Approximations: exp: Cody-Waite ln2 split + Cephes degree-6 polynomial (Estrin's scheme, for
// a short dependency chain), 2^n by vscalefps on AVX-512 (1 instruction; exp was throughput
// bound) and from exponent bits in two halves elsewhere; log: Cephes logf (mantissa in
// [sqrt(1/2), sqrt(2)), degree-9 polynomial); tanh: Cephes tanhf odd polynomial below 0.625, 1 -
// 2/(exp(2|x|)+1) above; erf: Taylor series below 0.5, 1 - erfc above with Numerical Recipes' erfc
// Chebyshev fit (relative error 1.2e-7; its degree-9 polynomial by Estrin's scheme; erfc(z) for
// z > 9 is 0, absolute error < 4.2e-37). gelu_erf and gelu_erf_grad use erfc alone.
// Subnormal numbers: no function here returns one for an input that is not one (results below
// FLT_MIN are flushed to 0, as oneDNN's eltwise kernels do), because every instruction that
// produces or reads a subnormal takes a microcode assist on Intel cores (about 100x an FMA:
// gelu over [-100, -10] ran 7x slower, softmax over [-100, 0] 10x).
// Divisions by a finite denominator (erfc's 1/(1 + z/2), sigmoid's, tanh's) may use a reciprocal
// estimate: on AVX-512 vrcp14ps and one Newton step (the bounds above are measured with it;
// vdivps zmm was gelu's bottleneck, 16 cycles on one port), exact divisions on other targets.
#ifndef PTO_JIT_CODEGEN_VECTOR_MATH_H_
#define PTO_JIT_CODEGEN_VECTOR_MATH_H_

#include "llvm/IR/IRBuilder.h"

namespace pto::jit {

// exp(x) is 0 below kExpFlushBelow: the float nearest ln(FLT_MIN) from above, the smallest
// input whose exp is normal (by 4.5e-6 relative, far more than the approximation's error).
inline constexpr double kExpFlushBelow = -87.33654022216797;
// erfc(z) is 0 above this (erfc(9) = 4.1e-37: its products with x stay normal).
inline constexpr double kErfcZeroAbove = 9.0;

// exp(x); 0 for x < flush_below (at least kExpFlushBelow). Softmax passes a higher bound, so
// that exp(x - max) times 1/sum stays normal too.
llvm::Value* EmitExp(llvm::IRBuilderBase& b, llvm::Value* x, double flush_below = kExpFlushBelow);
llvm::Value* EmitLog(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* EmitTanh(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* EmitSigmoid(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* EmitErf(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* EmitGeluTanh(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* EmitGeluErf(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* EmitGeluErfGrad(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* EmitSilu(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* EmitSqrt(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* EmitRsqrt(llvm::IRBuilderBase& b, llvm::Value* x);

// Helpers also used by the kernel emitters.
llvm::Value* EmitFMulAdd(llvm::IRBuilderBase& b, llvm::Value* a, llvm::Value* x, llvm::Value* c);
// max/min as in the ops/ reference (numpy): NaN if either operand is NaN, else x > y ? x : y
// (x < y ? x : y); signed zeros are not ordered.
llvm::Value* EmitMax(llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* y);
llvm::Value* EmitMin(llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* y);

}  // namespace pto::jit

#endif  // PTO_JIT_CODEGEN_VECTOR_MATH_H_
