// Pass: reverse-mode differentiation of a traced tensor graph, before shape specialization (its
// symbols stay symbols), so a gradient program gets shape classes, fusion across forward and
// backward, buffer planning, the cache and the tuner like any other. Each op's
// vector-Jacobian product comes from its rule (ops/gradient_rules.h); cotangents of a value
// used several times are summed in graph order (deterministic).
#ifndef PTO_JIT_PASSES_DIFFERENTIATE_H_
#define PTO_JIT_PASSES_DIFFERENTIATE_H_

#include <vector>

#include "absl/status/statusor.h"
#include "jit/ir/graph.h"

namespace pto::jit {

struct GradientSpec {
  // The Function inputs to differentiate with respect to (f32 inputs).
  std::vector<int> wrt;
  // Nodes to differentiate with respect to as well (f32 values; their gradients follow the
  // wrt inputs'): a training step's parameters, each a view of one flat input.
  std::vector<int> wrt_nodes;
  // 0: output 0 is a scalar loss (every dim the constant 1), differentiated with seed 1.
  // n > 0: the graph's last n inputs (before the accumulators) are the cotangents of outputs 0 ..
  // n-1 (each of its output's shape), and the gradients are their vector-Jacobian products.
  int cotangents = 0;
  // The graph's last wrt.size() inputs (after the cotangents) are accumulators, one per wrt
  // input and of its shape: each gradient output is its accumulator plus the gradient.
  bool accumulate = false;
};

// The graph with the gradients appended to its outputs, one per `wrt` entry in order, then one
// per `wrt_nodes` entry, each of its input's (node's) shape (zeros where the input does not reach
// the differentiated outputs). InvalidArgument for a bad spec (an index out of range, a repeated or
// non-f32 input, a loss that is not scalar, a cotangent whose shape differs from its output's);
// InvalidArgument naming the node for an op on the path that has no gradient rule; Unimplemented
// for a rule that cannot express this case (e.g. a slice with a step).
absl::StatusOr<ir::Graph> Differentiate(const ir::Graph& forward, const GradientSpec& spec);

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_DIFFERENTIATE_H_
