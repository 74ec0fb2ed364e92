// How ops map onto tile IR (jit/ir/tile_ir.h): the scalar expression op of each elementwise
// op, and the reduction and row-operator kinds. The tile-graph builder in jit/ uses these;
// matmul and data movement have no expression op (kernels and accesses express them).
#ifndef PTO_OPS_LOWERING_H_
#define PTO_OPS_LOWERING_H_

#include <optional>

#include "jit/ir/graph.h"
#include "jit/ir/tile_ir.h"

namespace pto::ops {

// The ExprOp computing `op` for add, sub, mul, div, max, min, neg, abs, exp, log, sqrt, rsqrt,
// tanh, sigmoid, relu, gelu_tanh, gelu_erf, silu, the comparisons, where (kSelect) and cast
// (kCast; a cast to the operand's own dtype is an identity the caller forwards); nullopt for
// every other op (iota and one_hot are built from the domain's indices by the caller).
std::optional<ir::ExprOp> ElementwiseExprOp(ir::OpKind op);

// kSum, kMax, kMean, kLogSumExp for reduce_sum, reduce_max, reduce_mean, logsumexp; nullopt
// otherwise.
std::optional<ir::ReduceKind> ReduceKindOf(ir::OpKind op);

// kSoftmax, kLogSoftmax, kLayerNorm, kRmsNorm for the row operators and the kinds of the same
// names for their backward ops (softmax_grad...); nullopt otherwise.
std::optional<ir::RowOpKind> RowOpKindOf(ir::OpKind op);

}  // namespace pto::ops

#endif  // PTO_OPS_LOWERING_H_
