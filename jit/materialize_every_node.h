// The debug plan of a program: every value its trace computes returned as an output, so each
// gets a buffer of its own and none stays in a fused kernel's registers. `pto run --check`
// compares each of them with the ops/ reference. The plan is slower than the real one and its
// values are the real plan's up to the order of floating-point operations (fusion decides
// that order; an output is never fused away).
#ifndef PTO_JIT_MATERIALIZE_EVERY_NODE_H_
#define PTO_JIT_MATERIALIZE_EVERY_NODE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "jit/ir/graph.h"
#include "ops/host_tensor.h"
#include "pto/runtime.h"

namespace pto::jit {

// The nodes of `traced` the debug plan returns: every node but the inputs, in id order, in
// groups of at most `max_outputs` (a Function returns at most graph::kMaxOutputs values).
std::vector<std::vector<int>> MaterializedNodeGroups(const ir::Graph& traced, int64_t max_outputs);

// A program that runs `program` and returns the values of its trace's nodes `nodes` (ids in
// that trace) in place of its outputs. A node the trace does not have fails the trace with
// InvalidArgument.
TraceFn MaterializeNodes(TraceFn program, std::vector<int> nodes);

struct NodeValues {
  ir::Graph traced;                     // `program` traced on the inputs' static shapes
  std::vector<int> nodes;               // the nodes returned: every node but the inputs
  std::vector<ops::HostTensor> values;  // values[i] is node nodes[i]'s value
};

// Runs the debug plan of `program` (compiled by `runtime` with `options`, as `name`) on
// `inputs`: one Function per MaterializedNodeGroups group. A Function's errors come back as
// they are; FailedPrecondition when a value's shape is not its node's in the static trace (a
// program that traces differently with symbolic shapes).
absl::StatusOr<NodeValues> RunEveryNode(Runtime& runtime, const std::string& name,
                                        const TraceFn& program, const FunctionOptions& options,
                                        const std::vector<ops::HostTensor>& inputs);

}  // namespace pto::jit

#endif  // PTO_JIT_MATERIALIZE_EVERY_NODE_H_
