#include "jit/passes/recompute_cheap_values.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "jit/passes/backward_copies.h"
#include "jit/passes/fusion_groups.h"
#include "jit/passes/min_cut.h"
#include "ops/derived_symbols.h"

namespace pto::jit {
namespace {

bool Elementwise(ir::OpKind op) {
  return ir::IsElementwise(op) || op == ir::OpKind::kBroadcastTo || op == ir::OpKind::kWhere;
}

bool Leaf(const ir::Node& n) { return n.op == ir::OpKind::kInput || n.op == ir::OpKind::kConstant; }

int64_t Elements(const ir::Node& node, std::span<const int64_t> symbol_values) {
  int64_t elements = 1;
  for (const ir::SymExpr& d : node.shape) elements *= d.Evaluate(symbol_values);
  return elements;
}

std::vector<int64_t> NominalSymbolValues(const ir::Graph& graph) {
  std::vector<int64_t> values(graph.symbols.size());
  for (size_t s = 0; s < values.size(); ++s) {
    const ir::SymbolInfo& info = graph.symbols[s];
    values[s] = std::clamp(kNominalSymbolValue, info.min, std::max(info.min, info.max));
  }
  ops::BindDerivedSymbols(graph.symbols, values);
  return values;
}

// Per forward node: a backward node reads it from memory (jit::ReadsFromMemory: a matmul
// operand, a reshape's input, ...), directly or through transposes and slices. Rebuilt for such
// a reader, a value takes a kernel and a buffer of its own, so recomputing it costs the time the
// cut assumes free; it is kept (AOTAutograd's ban on recomputing what the backward pass must
// materialize).
std::vector<bool> MaterializedInBackward(const ir::Graph& graph, int forward_nodes) {
  std::vector<bool> from_memory(graph.nodes.size(), false);
  for (int n = static_cast<int>(graph.nodes.size()) - 1; n >= forward_nodes; --n) {
    const ir::Node& node = graph.nodes[n];
    const bool read_view = IsIndexView(node.op) && from_memory[n];
    for (int in : node.inputs) {
      if (read_view || ReadsFromMemory(graph, n, in)) from_memory[in] = true;
    }
  }
  from_memory.resize(forward_nodes);
  return from_memory;
}

}  // namespace

int RecomputeCheapValues(ir::Graph& graph, int forward_nodes) {
  const std::vector<bool> read = ReadByBackward(graph, forward_nodes);
  std::vector<bool> is_output(graph.nodes.size(), false);
  for (int o : graph.outputs) is_output[o] = true;
  const std::vector<int64_t> symbols = NominalSymbolValues(graph);
  const std::vector<bool> materialized = MaterializedInBackward(graph, forward_nodes);

  // Vertices: v's "in" 2v and "out" 2v + 1, cutting between them keeps v; then source, sink.
  const int source = 2 * forward_nodes, sink = source + 1;
  FlowNetwork network(sink + 1);
  std::vector<int> depth(forward_nodes, 0);
  for (int v = 0; v < forward_nodes; ++v) {
    const ir::Node& node = graph.nodes[v];
    const bool leaf = Leaf(node);
    if (!leaf && Elementwise(node.op)) {
      for (int in : node.inputs) depth[v] = std::max(depth[v], depth[in] + 1);
    }
    const bool forward_only =
        leaf || is_output[v] || depth[v] == 0 || depth[v] > kMaxRecomputedDepth || materialized[v];
    // Kept for free: inputs, constants and outputs live through the step anyway. Between
    // values of equal bytes, keeping the one nearer the backward pass leaves less to recompute:
    // bytes are scaled so that this depth term (at most kMaxRecomputedDepth + 1) only breaks
    // ties.
    constexpr int64_t kBytesScale = 1024;
    const int64_t keep =
        leaf || is_output[v]
            ? 0
            : Elements(node, symbols) * 4 * kBytesScale +
                  (kMaxRecomputedDepth + 1 - std::min(depth[v], kMaxRecomputedDepth));
    if (forward_only) network.AddEdge(source, 2 * v, kUncuttable);
    network.AddEdge(2 * v, 2 * v + 1, keep);
    for (int in : node.inputs) network.AddEdge(2 * in + 1, 2 * v, kUncuttable);
    if (read[v]) network.AddEdge(2 * v + 1, sink, kUncuttable);
  }
  const std::vector<bool> side = network.MinCut(source, sink);
  std::vector<bool> kept(forward_nodes);
  for (int v = 0; v < forward_nodes; ++v) {
    kept[v] = Leaf(graph.nodes[v]) || (side[2 * v] && !side[2 * v + 1]);
  }

  // What the backward readers need rebuilt: each value they read that the cut did not keep,
  // and its ancestors up to kept values. The cut guarantees these are all elementwise (a value
  // that were not would simply be read where it is).
  std::vector<bool> recompute(forward_nodes, false);
  std::function<void(int)> need = [&](int v) {
    if (kept[v] || recompute[v] || !Elementwise(graph.nodes[v].op)) return;
    recompute[v] = true;
    for (int in : graph.nodes[v].inputs) need(in);
  };
  for (int v = 0; v < forward_nodes; ++v) {
    if (read[v]) need(v);
  }
  return CopyForBackward(graph, forward_nodes, recompute,
                         [&](int in, int /*node*/) { return recompute[in]; });
}

int64_t SavedBytes(const ir::Graph& graph, int forward_nodes,
                   std::span<const int64_t> symbol_values) {
  const std::vector<bool> saved = ReadByBackward(graph, forward_nodes);
  int64_t bytes = 0;
  for (int v = 0; v < forward_nodes; ++v) {
    if (saved[v] && !Leaf(graph.nodes[v])) bytes += Elements(graph.nodes[v], symbol_values) * 4;
  }
  return bytes;
}

}  // namespace pto::jit
