// The rule families of ops/gradient_rules.h (internal to ops/).
#ifndef PTO_OPS_GRADIENT_RULES_INTERNAL_H_
#define PTO_OPS_GRADIENT_RULES_INTERNAL_H_

#include <vector>

#include "ops/gradient_rules.h"

namespace pto::ops::internal {

// No gradient flows: comparisons, iota, one_hot, constants.
void NoGradient(GraphBuilder& b, const VjpArgs& args, std::vector<int>& grads);
// add, sub, mul, div, max, min, where, broadcast_to, cast.
void BinaryVjp(GraphBuilder& b, const VjpArgs& args, std::vector<int>& grads);
void WhereVjp(GraphBuilder& b, const VjpArgs& args, std::vector<int>& grads);
void BroadcastToVjp(GraphBuilder& b, const VjpArgs& args, std::vector<int>& grads);
// neg, abs, exp, log, sqrt, rsqrt, tanh, sigmoid, relu, gelu (both), silu, erf, cast.
void UnaryVjp(GraphBuilder& b, const VjpArgs& args, std::vector<int>& grads);
// reduce_sum, reduce_mean, reduce_max, logsumexp.
void ReduceVjp(GraphBuilder& b, const VjpArgs& args, std::vector<int>& grads);
// softmax, log_softmax, layer_norm, rms_norm.
void RowOpVjp(GraphBuilder& b, const VjpArgs& args, std::vector<int>& grads);
void MatMulVjp(GraphBuilder& b, const VjpArgs& args, std::vector<int>& grads);
// transpose, reshape, concat, slice, gather, scatter_add.
void MovementVjp(GraphBuilder& b, const VjpArgs& args, std::vector<int>& grads);

}  // namespace pto::ops::internal

#endif  // PTO_OPS_GRADIENT_RULES_INTERNAL_H_
