#include "jit/passes/lower_scatter_add.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "jit/graph/limits.h"
#include "ops/graph_builder.h"

namespace pto::jit {
namespace {

using graph::kMaxRank;
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
  const SymExpr n = like[axis], m = Product(indices, 0, indices.size());
  // like's own dims around the axis, so that the sum has like's shape; flattened to [P] and
  // [Q] when the post dims are none (the summed axis would be the last) or the domain would
  // pass kMaxRank.
  Shape pre(like.begin(), like.begin() + axis), post(like.begin() + axis + 1, like.end());
  if (post.empty() || like.size() + 1 > static_cast<size_t>(kMaxRank)) {
    pre = {Product(like, 0, axis)};
    post = {Product(like, axis + 1, like.size())};
  }
  auto with = [&](const SymExpr& at_n, const SymExpr& at_m, bool ones) {
    Shape shape;
    for (const SymExpr& d : pre) shape.push_back(ones ? SymExpr(1) : d);
    shape.push_back(at_n);
    shape.push_back(at_m);
    for (const SymExpr& d : post) shape.push_back(ones ? SymExpr(1) : d);
    return shape;
  };
  const int64_t summed = static_cast<int64_t>(pre.size()) + 1;
  const int idx = b.ReshapeTo(s.inputs[2], with(SymExpr(1), m, /*ones=*/true));
  ir::Attrs along_n;
  along_n.axis = summed - 1;
  const int j = b.Op(OpKind::kIota, {b.BroadcastTo(idx, with(n, m, false))}, along_n);
  const int updates = b.ReshapeTo(s.inputs[1], with(SymExpr(1), m, false));
  const int match = b.Compare(OpKind::kEq, idx, j);
  const int zero = b.Constant(0);
  const int picked = b.Where(match, updates, zero);
  return b.ReshapeTo(b.Sum(picked, summed, /*keepdims=*/false), like);
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
