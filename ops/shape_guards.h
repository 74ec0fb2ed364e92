// The conditions under which the shape rules accepted a graph's symbolic shapes
// (ir::ShapeGuard), checked when a call binds its symbols.
#ifndef PTO_OPS_SHAPE_GUARDS_H_
#define PTO_OPS_SHAPE_GUARDS_H_

#include <cstdint>
#include <span>

#include "absl/status/status.h"
#include "jit/ir/graph.h"

namespace pto::ops {

// OK when every guard's expression is >= 1 at `values` (the graph's symbol values); else
// InvalidArgument with the first failing guard's message and its value. Allocates nothing
// unless a guard fails.
absl::Status CheckShapeGuards(std::span<const ir::ShapeGuard> guards,
                              std::span<const int64_t> values);

}  // namespace pto::ops

#endif  // PTO_OPS_SHAPE_GUARDS_H_
