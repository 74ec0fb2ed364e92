// Which op of a kernel first produced a non-finite value: the kernel's ops re-run one by one
// through the ops/ reference (ops::EvaluateOp), in graph order, on the values the kernel read.
#ifndef PTO_JIT_NUMERICS_LOCATE_OP_H_
#define PTO_JIT_NUMERICS_LOCATE_OP_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <span>

#include "absl/status/statusor.h"
#include "jit/ir/graph.h"
#include "jit/numerics/non_finite.h"

namespace pto::jit::numerics {

struct OpFinding {
  int node = -1;
  NonFinite first;  // its first non-finite element
};

// Re-runs the ops of graph nodes `nodes` (ascending) at the kernel symbols `symbols` and
// returns the first whose result holds a NaN or infinity (nullopt: none does, the kernel's
// approximations and the reference disagree). An operand outside `nodes` is read where
// `memory(node)` gives its values (row-major, the node's shape), else computed by the
// reference from its own operands in turn (views, constants, and, for a value the kernel read
// in another layout, the nodes it came from); a Function input must be in memory.
absl::StatusOr<std::optional<OpFinding>> FirstNonFiniteOp(
    const ir::Graph& graph, std::span<const int> nodes, std::span<const int64_t> symbols,
    const std::function<const float*(int node)>& memory);

}  // namespace pto::jit::numerics

#endif  // PTO_JIT_NUMERICS_LOCATE_OP_H_
