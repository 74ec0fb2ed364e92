// Elementwise, reduce and row-op kernels built by hand for codegen tests (the matmul's are in
// matmul_kernel_builder.h).
#ifndef PTO_TESTS_JIT_CODEGEN_KERNEL_BUILDERS_H_
#define PTO_TESTS_JIT_CODEGEN_KERNEL_BUILDERS_H_

#include <string>

#include "jit/ir/tile_ir.h"

namespace pto::jit::testing {

// out[i,j] = x[i,j] * y[i] + b[j]   (y broadcast along columns, b along rows); buffers x, y, b,
// out.
ir::Kernel BroadcastKernel(ir::SymExpr rows, ir::SymExpr cols, const std::string& name);

// out[.., 0, ..] = reduce_axis(2 * x) + bias[..., 0, ...]  over a rank-3 symbolic domain
// [s0, s1, s2]; buffers x, bias, out (bias and out: the shape without the axis, contiguous).
ir::Kernel ReduceKernel(int axis, ir::ReduceKind kind, int unroll, const std::string& name);

// Domain [s0, s1, s2]; x = in * scale; out = acc * w[c] + b[c]; buffers in, w, b, out.
ir::Kernel RowKernel(ir::RowOpKind op, int unroll, const std::string& name);

}  // namespace pto::jit::testing

#endif  // PTO_TESTS_JIT_CODEGEN_KERNEL_BUILDERS_H_
