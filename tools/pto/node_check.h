// `pto run --check`: every node of a GraphDef program, as a debug plan computes it
// (jit/materialize_every_node.h), compared with the ops/ reference on the same inputs.
//
// Each node is compared twice. Locally: with the reference of its op applied to pto's own
// values of its inputs, so the difference is that op's error alone; the verdict compares it
// with the op's tolerance (ops::NodeTolerance, element by element as ops::AllClose does).
// In total: with the reference run of the whole graph from the inputs, the errors of the
// nodes before it included (no per-op bound applies to that; it shows how far values drift).
#ifndef PTO_TOOLS_PTO_NODE_CHECK_H_
#define PTO_TOOLS_PTO_NODE_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "jit/ir/graph.h"
#include "ops/host_tensor.h"
#include "ops/tolerance.h"
#include "pto/pto.h"
#include "tools/npy.h"
#include "tools/pto/graph_program.h"

namespace pto::tools {

struct NodeCheck {
  int node = 0;      // the node's id in the GraphDef
  std::string name;  // its name there ("" when unnamed)
  ir::OpKind op = ir::OpKind::kInput;
  std::vector<int64_t> shape;
  ops::ErrorStats local;  // against the op's reference on pto's values of its inputs
  ops::ErrorStats total;  // against the reference of the whole graph
  ops::Tolerance tolerance;
  bool ok = false;  // the local difference is within the tolerance
};

// Runs the debug plan of `program` (compiled by `runtime` as `name`) and the reference on
// `inputs`, which CheckGraphInputs accepted; one row per node but the inputs, in GraphDef order.
absl::StatusOr<std::vector<NodeCheck>> CheckEveryNode(Runtime& runtime, const GraphProgram& program,
                                                      const std::string& name,
                                                      const std::vector<ops::HostTensor>& inputs);

// The report: a header saying what was compared and how, a table of the rows (node, name, op,
// shape, local abs and rel, total abs and rel, the tolerance's abs and rel, ok or EXCEEDS) and
// "N of M nodes within tolerance".
std::string NodeCheckText(const std::vector<NodeCheck>& rows);

// `pto run --check` after the real plan ran: CheckEveryNode, the report on stdout; returns the
// exit code: 0 when every node is within its tolerance, else 1 with "pto run: --check: N of M
// nodes exceed their tolerance" (or the error) on stderr.
int RunNodeCheck(Runtime& runtime, const GraphProgram& program, const std::string& name,
                 const std::vector<NpyArray>& inputs);

}  // namespace pto::tools

#endif  // PTO_TOOLS_PTO_NODE_CHECK_H_
