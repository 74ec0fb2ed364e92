#include "jit/passes/lower_scatter_add.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "ops/graph_builder.h"

namespace pto::jit {
namespace {

using ir::OpKind;
using ir::Shape;
using ir::SymExpr;

SymExpr Product(const Shape& shape, size_t begin, size_t end) {
  SymExpr p(1);
  for (size_t i = begin; i < end; ++i) p = p * shape[i];
  return p;
}

// Appends the expansion of scatter_add node `s` (its inputs already renumbered) to the graph
// behind `b`; returns the node standing for it.
int Expand(ops::GraphBuilder& b, const ir::Node& s) {
  const Shape like = b.shape(s.inputs[0]);
  const Shape indices = b.shape(s.inputs[2]);
  const size_t axis = static_cast<size_t>(s.attrs.axis);
  const SymExpr pre = Product(like, 0, axis), n = like[axis];
  const SymExpr post = Product(like, axis + 1, like.size());
  const SymExpr m = Product(indices, 0, indices.size());
  const Shape domain = {pre, n, m, post};
  const int idx = b.ReshapeTo(s.inputs[2], {SymExpr(1), SymExpr(1), m, SymExpr(1)});
  ir::Attrs along_n;
  along_n.axis = 1;
  const int j = b.Op(OpKind::kIota, {b.BroadcastTo(idx, domain)}, along_n);
  const int updates = b.ReshapeTo(s.inputs[1], {pre, SymExpr(1), m, post});
  const int picked = b.Where(b.Compare(OpKind::kEq, idx, j), updates, b.Constant(0));
  return b.ReshapeTo(b.Sum(picked, 2, /*keepdims=*/false), like);
}

}  // namespace

absl::Status LowerScatterAdd(ir::Graph& graph) {
  if (std::none_of(graph.nodes.begin(), graph.nodes.end(),
                   [](const ir::Node& n) { return n.op == OpKind::kScatterAdd; })) {
    return absl::OkStatus();
  }
  ir::Graph out = graph;
  out.nodes.clear();
  ops::GraphBuilder b(out);
  std::vector<int> new_id(graph.nodes.size(), -1);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    ir::Node node = graph.nodes[i];
    for (int& in : node.inputs) in = new_id[in];
    if (node.op != OpKind::kScatterAdd) {
      out.nodes.push_back(std::move(node));
      new_id[i] = static_cast<int>(out.nodes.size()) - 1;
      continue;
    }
    new_id[i] = Expand(b, node);
    if (!b.status().ok()) return b.status();
  }
  for (int& o : out.outputs) o = new_id[o];
  graph = std::move(out);
  return absl::OkStatus();
}

}  // namespace pto::jit
