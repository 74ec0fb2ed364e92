// Pass (level 1, tensor graph): a matmul whose result (optionally plus a bias over its
// columns) is only read through column slices becomes one matmul per slice, each with the
// matching rows (transpose_b) or columns of the weight and slice of the bias. A fused
// projection such as QKV = linear(h, W_qkv, b_qkv) followed by slicing q, k and v then gives
// three buffers instead of one, and each dies with its last reader (q and k after the
// attention scores) instead of all living as long as v: less peak intermediate memory, the
// same arithmetic (the slices are views of the weight, no copy).
//
// Applies when: B is rank 2 (a weight), the columns N are static, every use of the result is
// a slice of its last axis with step 1, the slices together cover at most N columns (no
// arithmetic is added), there are at least two, and the result is not a graph output.
#ifndef PTO_JIT_PASSES_SPLIT_MATMUL_COLUMNS_H_
#define PTO_JIT_PASSES_SPLIT_MATMUL_COLUMNS_H_

#include "jit/ir/graph.h"

namespace pto::jit {

void SplitMatMulColumns(ir::Graph& graph);

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_SPLIT_MATMUL_COLUMNS_H_
