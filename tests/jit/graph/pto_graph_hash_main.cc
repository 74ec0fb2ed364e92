// pto_graph_hash FILE.pbtxt: prints the canonical hash of a GraphDef text file (hex, one line).
// The golden-hash test runs it as a separate process.
#include <cstdio>
#include <string>

#include "jit/graph/graph_hash.h"
#include "jit/graph/graph_text.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FILE.pbtxt\n", argv[0]);
    return 2;
  }
  absl::StatusOr<pto::ir::Graph> graph = pto::graph::LoadGraphFile(argv[1]);
  if (!graph.ok()) {
    std::fprintf(stderr, "%s\n", graph.status().ToString().c_str());
    return 1;
  }
  std::printf("%s\n", pto::graph::CanonicalGraphHash(*graph).Hex().c_str());
  return 0;
}
