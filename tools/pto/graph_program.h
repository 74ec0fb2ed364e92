// A GraphDef (protobuf text) as a pto program: its inputs by name, its dynamic dims (from the
// graph's symbols), and a TraceFn that replays its nodes through the tracer, so shapes are
// checked by the same rules as C++ programs. The replay refuses, with InvalidArgument, an input
// whose rank or constant dims are not the declared ones (rather than broadcasting it), e.g.
//   "input 0 (x): shape [24, 29] does not match the declared shape [23, 29]: dim 0 is 24,
//    declared 23".
#ifndef PTO_TOOLS_PTO_GRAPH_PROGRAM_H_
#define PTO_TOOLS_PTO_GRAPH_PROGRAM_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "jit/ir/graph.h"
#include "pto/pto.h"

namespace pto::tools {

struct GraphProgram {
  ir::Graph graph;
  std::vector<std::string> input_names;   // by input index ("input<i>" when unnamed)
  std::vector<std::string> output_names;  // by output position ("output<i>" when unnamed)
  FunctionOptions options;                // dynamic dims from the graph's symbols
  TraceFn trace;
  // The graph node each node of the trace replays, by trace id: the inputs (by index), then
  // the graph's other nodes in order, one trace node each.
  std::vector<int> graph_node_of_trace;
};

// Reads a GraphDef text file (graph::LoadGraphFile) as a program.
absl::StatusOr<GraphProgram> LoadGraphProgram(const std::string& path);
// The same for a graph already in memory (e.g. one a workload file embeds, after
// graph::FromGraphDef).
GraphProgram GraphProgramFromGraph(ir::Graph graph);

// Parses repeated NAME=FILE flags into files ordered like `names`; InvalidArgument for unknown,
// repeated or missing names.
absl::StatusOr<std::vector<std::string>> BindNamedFiles(const std::vector<std::string>& flags,
                                                        const std::vector<std::string>& names,
                                                        const std::string& what);

}  // namespace pto::tools

#endif  // PTO_TOOLS_PTO_GRAPH_PROGRAM_H_
