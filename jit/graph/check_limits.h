// Checks of programs against the limits of jit/graph/limits.h, shared by the GraphDef reader
// (graph_def.cc) and the tracer (jit/trace.cc). Each is cheap and runs before anything
// proportional to the checked count is allocated. A violation is InvalidArgument naming the
// value, the limit and its number, e.g.
//   "node 3 (concat): input count 20000 exceeds the limit kMaxConcatInputs = 16384".
#ifndef PTO_JIT_GRAPH_CHECK_LIMITS_H_
#define PTO_JIT_GRAPH_CHECK_LIMITS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "jit/ir/graph.h"

namespace pto::graph {

// OK when value <= limit; else "<what> <value> exceeds the limit <limit_name> = <limit>".
absl::Status CheckLimit(absl::string_view what, int64_t value, int64_t limit,
                        absl::string_view limit_name);

// The counts of one node known before its shape: inputs (kMaxConcatInputs for a concat; other
// ops' arity is checked by their rules) and attribute ints (kMaxRank). `where` names the node.
absl::Status CheckNodeCounts(absl::string_view where, ir::OpKind op, int64_t inputs, int64_t ints);

// One dim: its term count (kMaxDimTerms) and the largest degree of a term (kMaxTermDegree).
absl::Status CheckDimCounts(absl::string_view where, int64_t terms, int64_t max_degree);

// A node's shape: rank (kMaxRank), each dim's terms and degrees, the product of the dims' term
// counts (kMaxShapeTerms), and the product over dims of the sum of their coefficients'
// magnitudes, a 0 dim counted as 1 (kMaxStaticElements): for a static shape without a 0 dim,
// its element count; for any shape, a bound on every coefficient of a product of its dims, so
// the shape arithmetic of later passes cannot overflow.
absl::Status CheckShape(absl::string_view where, const ir::Shape& shape);

}  // namespace pto::graph

#endif  // PTO_JIT_GRAPH_CHECK_LIMITS_H_
