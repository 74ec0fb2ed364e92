#include "jit/passes/fusion_groups.h"

#include <cassert>
#include <optional>

#include "jit/passes/graph_rewrite.h"
#include "ops/lowering.h"

namespace pto::jit {

using ir::OpKind;

bool IsIndexView(OpKind op) { return op == OpKind::kTranspose || op == OpKind::kSlice; }

bool ReadsFromMemory(const ir::Graph& graph, int consumer, int input) {
  const ir::Node& c = graph.nodes[consumer];
  // A gather reads its x (input 0) at rows the indices choose: x must be in memory. A
  // scatter_add's kernel reads its updates and indices (inputs 1 and 2) from memory.
  const bool gathered = c.op == OpKind::kGather && c.inputs[0] == input;
  const bool scattered = c.op == OpKind::kScatterAdd && c.inputs[0] != input;
  return c.op == OpKind::kMatMul || c.op == OpKind::kReshape || gathered || scattered;
}

namespace {

// What the roles are decided from.
struct Uses {
  std::vector<int> uses;
  std::vector<bool> is_output;
  std::vector<std::vector<int>> consumers;
  // Uses seen through transposes and slices (which recompute their input per use), and
  // whether some consumer, through such views, needs the value in memory (matmul operands and
  // reshapes).
  std::vector<int> effective_uses;
  std::vector<bool> needs_buffer;
  // Values computed from indices and constants alone (a causal mask from two iotas): reading
  // them from memory costs more than computing them again, so every consumer inlines them.
  std::vector<bool> reads_nothing;
};

Uses AnalyzeUses(const ir::Graph& graph) {
  const int n = static_cast<int>(graph.nodes.size());
  Uses u;
  u.uses = CountUses(graph);
  u.is_output.assign(n, false);
  for (int o : graph.outputs) u.is_output[o] = true;
  u.consumers = Consumers(graph);
  u.effective_uses.assign(n, 0);
  u.needs_buffer.assign(n, false);
  u.reads_nothing.assign(n, false);
  for (int i = 0; i < n; ++i) {
    const ir::Node& node = graph.nodes[i];
    if (node.op == OpKind::kIota || node.op == OpKind::kConstant) {
      u.reads_nothing[i] = true;  // an iota reads only its `like` input's shape
    } else if (ops::ElementwiseExprOp(node.op).has_value()) {
      bool all = true;
      for (int in : node.inputs) all = all && u.reads_nothing[in];
      u.reads_nothing[i] = all;
    }
  }
  for (int i = n - 1; i >= 0; --i) {
    u.effective_uses[i] = u.is_output[i] ? 1 : 0;
    for (int c : u.consumers[i]) {
      const OpKind op = graph.nodes[c].op;
      if (IsIndexView(op)) {
        u.effective_uses[i] += u.effective_uses[c];
        u.needs_buffer[i] = u.needs_buffer[i] || u.needs_buffer[c] || u.is_output[c];
      } else {
        u.effective_uses[i] += 1;
        u.needs_buffer[i] = u.needs_buffer[i] || ReadsFromMemory(graph, c, i);
      }
    }
  }
  return u;
}

// The role of a node that is in no anchor's group.
NodeRole UngroupedRole(const ir::Graph& graph, const Uses& u, int i) {
  switch (graph.nodes[i].op) {
    case OpKind::kInput:
      return NodeRole::kInput;
    case OpKind::kConstant:
      return NodeRole::kConstant;
    case OpKind::kTranspose:
    case OpKind::kSlice:
    case OpKind::kReshape:
      return NodeRole::kView;
    case OpKind::kConcat:
    case OpKind::kScatterAdd:  // a kernel of its own kind
      return NodeRole::kRoot;
    default: {
      const bool inline_ok =
          (u.effective_uses[i] == 1 || u.reads_nothing[i]) && !u.is_output[i] && !u.needs_buffer[i];
      return inline_ok ? NodeRole::kInline : NodeRole::kRoot;
    }
  }
}

// Bounds the cost of every kernel's expression by options.max_group_cost. One walk in
// topological order: each node's inline cost is known before its consumers are visited. Where
// a kernel would cost too much, the inputs it inlines are given buffers, largest first (each
// was checked when it was visited, so an input alone never exceeds the cap); where an
// epilogue's own chain would, the epilogue ends before the node that would exceed it.
class GroupCapper {
 public:
  GroupCapper(const ir::Graph& graph, const Uses& uses, const FusionOptions& options,
              FusionGroups& groups)
      : g_(graph),
        u_(uses),
        options_(options),
        groups_(groups),
        group_cost_(graph.nodes.size(), 0) {}

  void Run() {
    groups_.inline_cost.assign(g_.nodes.size(), 1);
    for (int i = 0; i < static_cast<int>(g_.nodes.size()); ++i) Visit(i);
  }

 private:
  // What reading `node` adds to its consumer's expression.
  int Carried(int node) const {
    const NodeRole role = groups_.role[node];
    const bool recomputed = role == NodeRole::kInline || role == NodeRole::kStoredInline ||
                            (role == NodeRole::kView && IsIndexView(g_.nodes[node].op));
    return recomputed ? groups_.inline_cost[node] : 1;
  }

  // Gives the inline node that `input` recomputes (itself, or the base of its index views) a
  // buffer: reading `input` then costs a load.
  void Cut(int input) {
    int x = input;
    while (groups_.role[x] == NodeRole::kView) {
      groups_.inline_cost[x] = 1;
      x = g_.nodes[x].inputs[0];
    }
    assert(groups_.role[x] == NodeRole::kInline || groups_.role[x] == NodeRole::kStoredInline);
    groups_.role[x] = NodeRole::kRoot;
    groups_.inline_cost[x] = 1;
  }

  // The cost of node i's expression: `own` plus what its inputs carry (but input `skip`, the
  // epilogue's predecessor, counted in `own`), after cutting the largest inputs while it
  // exceeds the cap.
  int CappedCost(int i, int own, int skip) {
    const std::vector<int>& inputs = g_.nodes[i].inputs;
    int cost = own;
    for (int j = 0; j < static_cast<int>(inputs.size()); ++j) {
      if (j != skip) cost += Carried(inputs[j]);
    }
    while (cost > options_.max_group_cost) {
      int largest = -1;
      for (int j = 0; j < static_cast<int>(inputs.size()); ++j) {
        if (j == skip || Carried(inputs[j]) <= 1) continue;
        if (largest < 0 || Carried(inputs[j]) > Carried(inputs[largest])) largest = j;
      }
      if (largest < 0) break;
      cost -= Carried(inputs[largest]) - 1;
      Cut(inputs[largest]);
    }
    return cost;
  }

  // Ends the epilogue of `prev`'s group at `prev`: its consumer `c` and the rest of the chain
  // leave the group and take the roles of ungrouped nodes.
  void EndEpilogue(int prev, int c) {
    const int anchor = groups_.anchor[c];
    groups_.role[prev] = NodeRole::kRoot;
    for (int x = c; x >= 0;) {
      int next = -1;
      for (int consumer : u_.consumers[x]) {
        if (groups_.anchor[consumer] == anchor) next = consumer;
      }
      groups_.anchor[x] = -1;
      groups_.role[x] = UngroupedRole(g_, u_, x);
      x = next;
    }
  }

  void Visit(int i) {
    const ir::Node& node = g_.nodes[i];
    const int own = OpCost(node.op, options_);
    const int anchor = groups_.anchor[i];
    if (anchor == i) {
      group_cost_[i] = CappedCost(i, own, -1);
      return;
    }
    if (anchor >= 0) {  // an epilogue op: the chain so far, this op and its other inputs
      int skip = 0;
      while (groups_.anchor[node.inputs[skip]] != anchor) ++skip;
      // With every other input loaded (cost 1 each), does it fit?
      const int least = group_cost_[anchor] + own + static_cast<int>(node.inputs.size()) - 1;
      if (least <= options_.max_group_cost) {
        group_cost_[anchor] = CappedCost(i, group_cost_[anchor] + own, skip);
        return;
      }
      EndEpilogue(node.inputs[skip], i);
    }
    switch (groups_.role[i]) {
      case NodeRole::kInline:
      case NodeRole::kStoredInline:
        groups_.inline_cost[i] = CappedCost(i, own, -1);
        break;
      case NodeRole::kView:
        if (IsIndexView(node.op)) groups_.inline_cost[i] = Carried(node.inputs[0]);
        break;
      case NodeRole::kRoot:
        // An elementwise kernel of its own (a concat's inputs are each capped already; a
        // scatter_add loads its inputs).
        if (node.op != OpKind::kConcat && node.op != OpKind::kScatterAdd) CappedCost(i, own, -1);
        break;
      default:
        break;
    }
  }

  const ir::Graph& g_;
  const Uses& u_;
  const FusionOptions& options_;
  FusionGroups& groups_;
  std::vector<int> group_cost_;  // per anchor: its group's cost so far
};

// Elementwise roots that are Function outputs read by one consumer, which computes them inline
// (itself inlined, through single uses, into an elementwise root of the same shape and dtype,
// not a concat, not in an anchor's group): that root's kernel computes and stores them
// (NodeRole::kStoredInline). In reverse order, so a chain of such outputs ends in one kernel.
void MarkStoredInline(const ir::Graph& graph, const Uses& u, FusionGroups& groups) {
  auto elementwise = [&](int id) {
    return groups.anchor[id] < 0 && ops::ElementwiseExprOp(graph.nodes[id].op).has_value();
  };
  for (int i = static_cast<int>(graph.nodes.size()) - 1; i >= 0; --i) {
    if (!u.is_output[i] || groups.role[i] != NodeRole::kRoot || !elementwise(i)) continue;
    const ir::Node& node = graph.nodes[i];
    int at = i;
    bool fits = true;
    do {  // to the kernel that would compute it: single consumers, inlined
      if (u.consumers[at].size() != 1) {
        fits = false;
        break;
      }
      at = u.consumers[at][0];
      fits = elementwise(at) && graph.nodes[at].shape == node.shape &&
             graph.nodes[at].dtype == node.dtype;
    } while (fits && groups.role[at] == NodeRole::kInline);
    const NodeRole end = groups.role[at];
    if (fits && (end == NodeRole::kRoot || end == NodeRole::kStoredInline)) {
      groups.role[i] = NodeRole::kStoredInline;
    }
  }
}

}  // namespace

bool IsAnchorOp(OpKind op) {
  switch (op) {
    case OpKind::kMatMul:
    case OpKind::kReduceSum:
    case OpKind::kReduceMax:
    case OpKind::kReduceMean:
    case OpKind::kLogSumExp:
    case OpKind::kSoftmax:
    case OpKind::kLogSoftmax:
    case OpKind::kLayerNorm:
    case OpKind::kRmsNorm:
    case OpKind::kSoftmaxGrad:
    case OpKind::kLogSoftmaxGrad:
    case OpKind::kLayerNormGrad:
    case OpKind::kRmsNormGrad:
      return true;
    default:
      return false;
  }
}

int OpCost(OpKind op, const FusionOptions& options) {
  // A norm's own expression: its result, times the weight (plus the bias).
  if (op == OpKind::kLayerNorm) return 3;
  if (op == OpKind::kRmsNorm) return 2;
  const std::optional<ir::ExprOp> expr = ops::ElementwiseExprOp(op);
  return expr.has_value() && ir::IsTranscendental(*expr) ? options.transcendental_cost : 1;
}

FusionGroups FormFusionGroups(const ir::Graph& graph, const FusionOptions& options) {
  const int n = static_cast<int>(graph.nodes.size());
  const Uses u = AnalyzeUses(graph);

  FusionGroups groups;
  groups.role.assign(n, NodeRole::kRoot);
  groups.anchor.assign(n, -1);
  groups.max_group_cost = options.max_group_cost;
  // Epilogue chains first: they take precedence over inlining.
  for (int i = 0; i < n; ++i) {
    if (!IsAnchorOp(graph.nodes[i].op)) continue;
    int tail = i;
    while (u.uses[tail] == 1 && !u.is_output[tail] && u.consumers[tail].size() == 1) {
      const int c = u.consumers[tail][0];
      const ir::Node& cn = graph.nodes[c];
      const bool elementwise = ir::IsUnaryElementwise(cn.op) || ir::IsBinaryElementwise(cn.op) ||
                               ir::IsComparison(cn.op) || cn.op == OpKind::kWhere;
      // f32 results only: anchored kernels may keep partial results in their output.
      if (!elementwise || cn.shape != graph.nodes[tail].shape || cn.dtype != ir::DType::kF32) {
        break;
      }
      // Already the epilogue of an earlier anchor (matmul(a, b) * matmul(c, d)): this anchor
      // keeps its own buffer, which that epilogue reads.
      if (groups.anchor[c] >= 0) break;
      groups.role[c] = NodeRole::kAbsorbed;
      groups.anchor[c] = i;
      tail = c;
    }
    groups.anchor[i] = i;
    if (tail != i) {
      groups.role[i] = NodeRole::kFusedAnchor;
      groups.role[tail] = NodeRole::kRoot;
    }
    groups.anchor[tail] = i;
  }
  for (int i = 0; i < n; ++i) {
    if (groups.anchor[i] < 0) groups.role[i] = UngroupedRole(graph, u, i);
  }
  MarkStoredInline(graph, u, groups);
  GroupCapper(graph, u, options, groups).Run();
  return groups;
}

}  // namespace pto::jit
