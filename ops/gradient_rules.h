// The vector-Jacobian product (reverse-mode derivative) of every differentiable op, written in
// terms of other ops with a GraphBuilder: rules are data for the graph, not a second compiler.
// The differentiation pass (jit/passes/differentiate.h) calls them from the loss back.
//
// Conventions (PyTorch's, so gradients compare with torch.autograd):
// - max/min: at a tie each input gets half the cotangent (torch.maximum); relu(x) passes the
//   cotangent where x > 0, 0 at x = 0 (threshold_backward); abs has derivative sign(x), 0 at 0.
// - reduce_max: the cotangent is shared evenly by the elements equal to the maximum (amax).
// - Broadcast inputs receive the cotangent summed over their broadcast axes.
// - Comparisons, iota, one_hot and integer inputs carry no gradient (zero).
#ifndef PTO_OPS_GRADIENT_RULES_H_
#define PTO_OPS_GRADIENT_RULES_H_

#include <vector>

#include "jit/ir/graph.h"
#include "ops/graph_builder.h"

namespace pto::ops {

struct VjpArgs {
  ir::Node node;             // the forward node (a copy: rules append to the graph)
  int output = -1;           // its id, the forward value y
  int cotangent = -1;        // d loss / d y: a node of y's shape and dtype
  std::vector<bool> wanted;  // per input: its gradient is needed
};

// Sets grads[i] (sized to the node's inputs, all -1 on entry) to a node of input i's shape
// holding d loss / d input i, for each wanted input that gets a gradient; leaves -1 where no
// gradient flows. Errors go to the builder.
using VjpRule = void (*)(GraphBuilder& b, const VjpArgs& args, std::vector<int>& grads);

// The rule of `op`; null when the op has none (a program that needs it cannot be
// differentiated).
VjpRule FindVjpRule(ir::OpKind op);

}  // namespace pto::ops

#endif  // PTO_OPS_GRADIENT_RULES_H_
