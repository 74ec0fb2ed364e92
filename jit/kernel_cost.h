// What one run of a kernel costs at given symbol values: its floating-point operations and its
// compulsory memory traffic, the two axes of a roofline. Function::Profile divides them by a
// kernel's time.
#ifndef PTO_JIT_KERNEL_COST_H_
#define PTO_JIT_KERNEL_COST_H_

#include <cstdint>
#include <span>

#include "jit/ir/tile_ir.h"

namespace pto::jit {

struct KernelCost {
  // A matmul's 2*M*N*K (batch included) plus its epilogue; elsewhere FlopsOf of each operation
  // of the kernel's expressions at each point it is evaluated, plus the reduction or row
  // operation's own (ir::ReduceKind: 1 per point, mean 1 more per result, logsumexp a second
  // pass of the input program and 3 per point and 2 per result; ir::RowOpKind: RowOpFlops per
  // element).
  double flops = 0;
  // Every buffer slot's elements the kernel touches, read or written once (the largest of its
  // accesses' footprints: a broadcast dim, stride 0, counts once), times 4 bytes (f32) or the
  // access's element size.
  double bytes = 0;
};

// Flops counted for one evaluation of `op`: loads, constants and the accumulator 0; arithmetic,
// min, max, abs, neg, relu, sqrt and rsqrt 1; the polynomial transcendentals about the
// arithmetic their approximation does (exp 10, log 12, tanh 14, sigmoid 12, silu 13, gelu 20:
// the bench's count for gelu).
int FlopsOf(ir::ExprOp op);
// Per element of a row: softmax and log_softmax 5 (max, subtract, exp counted 1, sum, scale),
// layernorm 7 (sum, subtract, square, sum, normalize 3), rmsnorm 4 (square, sum, scale 2);
// softmax_grad 4 (y * dy, sum, dy - s, times y), log_softmax_grad 4 (sum, exp counted 1, times
// s, subtract), layer_norm_grad 13 (shift, square, sums of d, d^2, g and g * d: 7; xhat 2, dx
// 4), rms_norm_grad 7 (square, sum, g * x, sum; r * g, x * c, subtract). A backward op's input
// program (dy, dy * weight) counts apart, like any input program.
int RowOpFlops(ir::RowOpKind kind);

// The cost of one run of `kernel` over its whole grid; `symbols`: the kernel's symbol values
// (the plan's kernel symbols at the call).
KernelCost CostOf(const ir::Kernel& kernel, std::span<const int64_t> symbols);

}  // namespace pto::jit

#endif  // PTO_JIT_KERNEL_COST_H_
