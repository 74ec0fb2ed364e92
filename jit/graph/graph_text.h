// The text form of a graph: a proto::GraphDef in protobuf text format (.pbtxt), as used for
// checked-in test graphs and `pto dump`.
#ifndef PTO_JIT_GRAPH_GRAPH_TEXT_H_
#define PTO_JIT_GRAPH_GRAPH_TEXT_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "jit/ir/graph.h"

namespace google::protobuf {
class Message;
}

namespace pto::graph {

// Parses protobuf text format into `message`. Malformed text is InvalidArgument naming the
// 1-based position of the first error, e.g. "line 12, column 5: Expected identifier, got: }"
// (`what` names the message kind when the parser gives no position).
absl::Status ParseTextProto(std::string_view text, std::string_view what,
                            google::protobuf::Message* message);

// Parses a GraphDef in text format and converts it with FromGraphDef. Malformed text is
// InvalidArgument naming the 1-based position, e.g.
//   "line 12, column 5: Expected identifier, got: }".
absl::StatusOr<ir::Graph> ParseGraphText(std::string_view pbtxt);

// The text format of ToGraphDef(graph); ParseGraphText reads it back.
std::string GraphToText(const ir::Graph& graph);

// Reads and parses a .pbtxt file. NotFound (naming the path) when it does not exist; other
// errors are prefixed with the path.
absl::StatusOr<ir::Graph> LoadGraphFile(const std::string& path);

}  // namespace pto::graph

#endif  // PTO_JIT_GRAPH_GRAPH_TEXT_H_
