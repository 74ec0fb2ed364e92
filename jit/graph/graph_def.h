// Conversion between the tensor graph (ir::Graph) and its protobuf form (proto::GraphDef).
//
// ToGraphDef is total. FromGraphDef validates everything a consumer relies on structurally and
// returns InvalidArgument naming the offending node (or symbol, or output) and field:
//   - the limits of jit/graph/limits.h (inputs, nodes, outputs, symbols; per node: concat
//     inputs, ints, rank, terms and degrees of the dims, static size), each checked before
//     anything proportional to it is allocated;
//   - symbols: non-empty unique names, 0 <= min <= max; a derived symbol has a known kind,
//     step >= 1 and a dim over symbols defined before it;
//   - nodes: known op; dtype and cast_dtype known and supported (only DT_F32 is compiled
//     today: any other is rejected, not ignored); inputs refer to earlier nodes; the number of
//     inputs the op takes; input nodes have an index in [0, num_inputs) used by no other input
//     node; shape dims use only defined symbols, have no repeated monomial, and constant dims
//     are not negative;
//   - outputs refer to defined nodes; num_inputs is not negative.
// Shapes and dtypes are taken as given (the tracer computed them): whether they agree with the
// ops' shape rules is checked by the ops library, not here.
#ifndef PTO_JIT_GRAPH_GRAPH_DEF_H_
#define PTO_JIT_GRAPH_GRAPH_DEF_H_

#include "absl/status/statusor.h"
#include "jit/ir/graph.h"
#include "proto/graph.pb.h"

namespace pto::graph {

// The GraphDef of `graph`. ir::Graph has no name: GraphDef.name is left empty for the caller
// to set. Attributes equal to their ir::Attrs default are not set where the field has
// presence (eps, step), so text dumps stay short.
proto::GraphDef ToGraphDef(const ir::Graph& graph);

// The ir::Graph of `def`, or InvalidArgument, e.g.
//   "node 3 (add): input 1 refers to node 7, which is not defined before it".
// Absent optional fields take the ir defaults (symbol min 1, max INT64_MAX; eps 1e-5; step 1).
absl::StatusOr<ir::Graph> FromGraphDef(const proto::GraphDef& def);

}  // namespace pto::graph

#endif  // PTO_JIT_GRAPH_GRAPH_DEF_H_
