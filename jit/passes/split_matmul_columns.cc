#include "jit/passes/split_matmul_columns.h"

#include <optional>
#include <vector>

#include "jit/passes/graph_rewrite.h"

namespace pto::jit {
namespace {

using ir::OpKind;

struct Split {
  int matmul = -1;
  int bias = -1;  // the bias node (its add is the sliced result), or -1
  int result = -1;
};

std::optional<Split> FindSplit(const ir::Graph& g, int m,
                               const std::vector<std::vector<int>>& consumers,
                               const std::vector<bool>& is_output) {
  const ir::Node& mm = g.nodes[m];
  if (mm.op != OpKind::kMatMul || mm.inputs.size() != 2 || mm.shape.empty()) return std::nullopt;
  const ir::Node& w = g.nodes[mm.inputs[1]];
  if (w.shape.size() != 2) return std::nullopt;
  const std::optional<int64_t> n = mm.shape.back().AsConstant();
  if (!n) return std::nullopt;
  Split s{m, -1, m};
  if (consumers[m].size() == 1 && !is_output[m]) {
    const ir::Node& add = g.nodes[consumers[m][0]];
    if (add.op == OpKind::kAdd && add.inputs.size() == 2 && add.inputs[0] == m &&
        add.inputs[1] != m && add.shape == mm.shape) {
      const ir::Node& bias = g.nodes[add.inputs[1]];
      if (bias.shape.size() == 1 && bias.shape[0] == ir::SymExpr(*n)) {
        s.bias = add.inputs[1];
        s.result = consumers[m][0];
      }
    }
  }
  if (is_output[s.result] || consumers[s.result].size() < 2) return std::nullopt;
  const int64_t last = static_cast<int64_t>(mm.shape.size()) - 1;
  int64_t columns = 0;
  for (int c : consumers[s.result]) {
    const ir::Node& sl = g.nodes[c];
    if (sl.op != OpKind::kSlice || sl.attrs.axis != last || sl.attrs.step != 1) return std::nullopt;
    if (sl.attrs.start < 0 || sl.attrs.end > *n || sl.attrs.start >= sl.attrs.end) {
      return std::nullopt;
    }
    columns += sl.attrs.end - sl.attrs.start;
  }
  if (columns > *n) return std::nullopt;
  return s;
}

}  // namespace

void SplitMatMulColumns(ir::Graph& graph) {
  const int n = static_cast<int>(graph.nodes.size());
  const std::vector<std::vector<int>> consumers = Consumers(graph);
  std::vector<bool> is_output(n, false);
  for (int o : graph.outputs) is_output[o] = true;
  // The split that each slice node belongs to.
  std::vector<int> split_of(n, -1);
  std::vector<Split> splits;
  for (int i = 0; i < n; ++i) {
    std::optional<Split> s = FindSplit(graph, i, consumers, is_output);
    if (!s) continue;
    for (int c : consumers[s->result]) split_of[c] = static_cast<int>(splits.size());
    splits.push_back(*s);
  }
  if (splits.empty()) return;

  // Rebuild in order; each slice is preceded by its own weight slice, matmul (and bias slice
  // and add), which then stand for it. The old matmul, add and slices become dead (DCE).
  std::vector<ir::Node> nodes;
  std::vector<int> new_id(n, -1);
  auto add_node = [&](ir::Node node) {
    nodes.push_back(std::move(node));
    return static_cast<int>(nodes.size()) - 1;
  };
  for (int i = 0; i < n; ++i) {
    ir::Node node = graph.nodes[i];
    for (int& in : node.inputs) in = new_id[in];
    if (split_of[i] < 0) {
      new_id[i] = add_node(std::move(node));
      continue;
    }
    const Split& s = splits[split_of[i]];
    const ir::Node& mm = graph.nodes[s.matmul];
    const ir::Node& w = graph.nodes[mm.inputs[1]];
    const int64_t start = node.attrs.start, end = node.attrs.end;
    ir::Node wslice;
    wslice.op = OpKind::kSlice;
    wslice.inputs = {new_id[mm.inputs[1]]};
    wslice.attrs.axis = mm.attrs.transpose_b ? 0 : 1;
    wslice.attrs.start = start;
    wslice.attrs.end = end;
    wslice.dtype = w.dtype;
    wslice.shape = w.shape;
    wslice.shape[wslice.attrs.axis] = ir::SymExpr(end - start);
    const int wid = add_node(std::move(wslice));
    ir::Node part = mm;
    part.inputs = {new_id[mm.inputs[0]], wid};
    part.shape = node.shape;
    part.name.clear();
    int id = add_node(std::move(part));
    if (s.bias >= 0) {
      const ir::Node& bias = graph.nodes[s.bias];
      ir::Node bslice;
      bslice.op = OpKind::kSlice;
      bslice.inputs = {new_id[s.bias]};
      bslice.attrs.axis = 0;
      bslice.attrs.start = start;
      bslice.attrs.end = end;
      bslice.dtype = bias.dtype;
      bslice.shape = {ir::SymExpr(end - start)};
      const int bid = add_node(std::move(bslice));
      ir::Node add = graph.nodes[s.result];
      add.inputs = {id, bid};
      add.shape = node.shape;
      add.name = node.name;
      id = add_node(std::move(add));
    }
    new_id[i] = id;
  }
  graph.nodes = std::move(nodes);
  for (int& out : graph.outputs) out = new_id[out];
}

}  // namespace pto::jit
