#include "jit/passes/fusion_groups.h"

#include <algorithm>
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
    groups_.stored[prev] = false;
    std::vector<int> leaving = {c};  // c and every group member downstream of it
    while (!leaving.empty()) {
      const int x = leaving.back();
      leaving.pop_back();
      if (groups_.anchor[x] != anchor) continue;
      for (int consumer : u_.consumers[x]) leaving.push_back(consumer);
      groups_.anchor[x] = -1;
      groups_.stored[x] = groups_.beside[x] = false;
      groups_.role[x] = UngroupedRole(g_, u_, x);
    }
  }

  // A node computed beside the chain that does not fit: the epilogue ends at the value it
  // reads, which becomes the group's root (stored before any later kernel reads it), and the
  // node leaves the group.
  void DropBeside(int x) {
    const int anchor = groups_.anchor[x];
    const int value = g_.nodes[x].inputs[0];
    groups_.anchor[x] = -1;
    groups_.stored[x] = groups_.beside[x] = false;
    groups_.role[x] = UngroupedRole(g_, u_, x);
    for (int c : u_.consumers[value]) {
      if (groups_.anchor[c] == anchor) {
        EndEpilogue(value, c);
        return;
      }
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
      if (groups_.beside[i]) {
        DropBeside(i);
      } else {
        EndEpilogue(node.inputs[skip], i);
      }
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

// A matmul whose K is a constant of at most kMaxStoredEpilogueK.
bool StoresEpilogueValues(const ir::Graph& graph, int anchor) {
  const ir::Node& mm = graph.nodes[anchor];
  if (mm.op != OpKind::kMatMul) return false;
  const ir::Shape& a = graph.nodes[mm.inputs[0]].shape;
  const ir::SymExpr& k = mm.attrs.transpose_a ? a[a.size() - 2] : a.back();
  return k.IsConstant() && k.constant() <= kMaxStoredEpilogueK;
}

// An anchor's epilogue: the chain from the anchor to the group's root, the chain's node other
// kernels read too (stored by the group), or the unary op of it computed beside the chain and
// stored instead.
struct Epilogue {
  std::vector<int> chain;
  int stored = -1;
  int beside = -1;
};

// The epilogue of `anchor` that takes candidate `choice` (in node order) where the chain may
// run past a value other kernels read; `*choices` gets how many candidates there were.
Epilogue EpilogueTaking(const ir::Graph& graph, const Uses& u, const FusionGroups& groups,
                        int anchor, int choice, int* choices) {
  // Whether c continues the chain at `tail`: an elementwise op of its shape, f32 (anchored
  // kernels may keep partial results in their output), not already the epilogue of an
  // earlier anchor (matmul(a, b) * matmul(c, d): this anchor keeps its own buffer, which
  // that epilogue reads).
  auto continues = [&](int tail, int c) {
    const ir::Node& cn = graph.nodes[c];
    const bool elementwise = ir::IsUnaryElementwise(cn.op) || ir::IsBinaryElementwise(cn.op) ||
                             ir::IsComparison(cn.op) || cn.op == OpKind::kWhere;
    return elementwise && cn.shape == graph.nodes[tail].shape && cn.dtype == ir::DType::kF32 &&
           groups.anchor[c] < 0;
  };
  Epilogue e;
  e.chain = {anchor};
  *choices = 0;
  const bool may_store = StoresEpilogueValues(graph, anchor);
  for (;;) {
    const int tail = e.chain.back();
    if (u.is_output[tail]) break;
    int next = -1;
    if (u.uses[tail] == 1 && u.consumers[tail].size() == 1) {
      next = u.consumers[tail][0];
    } else if (may_store && e.stored < 0 && tail != anchor) {
      // Past a value some other node reads too (not one consumer reading it twice).
      std::vector<int> candidates;
      for (int c : u.consumers[tail]) {
        if (continues(tail, c)) candidates.push_back(c);
      }
      std::sort(candidates.begin(), candidates.end());
      candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
      const bool read_elsewhere =
          !candidates.empty() && std::any_of(u.consumers[tail].begin(), u.consumers[tail].end(),
                                             [&](int c) { return c != candidates[0]; });
      *choices = static_cast<int>(candidates.size());
      if (!candidates.empty() && read_elsewhere && choice < *choices) {
        next = candidates[choice];
        e.stored = tail;
      }
    }
    if (next < 0 || !continues(tail, next)) break;
    e.chain.push_back(next);
  }
  if (e.stored < 0) return e;
  auto on_chain = [&](int x) {
    return std::find(e.chain.begin(), e.chain.end(), x) != e.chain.end();
  };
  // What reads `x` comes after the group's kernel (built at its root).
  auto read_later = [&](int x) {
    for (int c : u.consumers[x]) {
      if (c < e.chain.back() && !on_chain(c)) return false;
    }
    return true;
  };
  // The stored value's other readers, when they are one unary elementwise op of its shape read
  // later, are computed beside the chain and stored instead (a gelu's derivative beside the
  // gelu share their terms, and the backward pass reads the derivative, not the value).
  std::vector<int> others;
  for (int c : u.consumers[e.stored]) {
    if (!on_chain(c)) others.push_back(c);
  }
  const int o = others.size() == 1 ? others[0] : -1;
  if (o > e.stored && graph.nodes[o].inputs.size() == 1 && !u.is_output[o] &&
      continues(e.stored, o) && read_later(o)) {
    e.beside = o;
    e.stored = -1;
  } else if (!read_later(e.stored)) {
    // Else the chain ends at the stored node, its root.
    e.chain.resize(std::find(e.chain.begin(), e.chain.end(), e.stored) - e.chain.begin() + 1);
    e.stored = -1;
  }
  return e;
}

// The epilogue of `anchor`: of the chains through each candidate past a value other kernels
// read, the first that keeps it; else the chain that ends there.
Epilogue FormEpilogue(const ir::Graph& graph, const Uses& u, const FusionGroups& groups,
                      int anchor) {
  int choices = 0;
  Epilogue first = EpilogueTaking(graph, u, groups, anchor, 0, &choices);
  if (first.stored >= 0 || first.beside >= 0) return first;
  for (int choice = 1; choice < choices; ++choice) {
    int ignored = 0;
    Epilogue e = EpilogueTaking(graph, u, groups, anchor, choice, &ignored);
    if (e.stored >= 0 || e.beside >= 0) return e;
  }
  return first;
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
  groups.stored.assign(n, false);
  groups.beside.assign(n, false);
  // Epilogue chains first: they take precedence over inlining.
  for (int i = 0; i < n; ++i) {
    if (!IsAnchorOp(graph.nodes[i].op)) continue;
    const Epilogue e = FormEpilogue(graph, u, groups, i);
    for (size_t c = 1; c < e.chain.size(); ++c) {
      groups.role[e.chain[c]] = NodeRole::kAbsorbed;
      groups.anchor[e.chain[c]] = i;
    }
    const int tail = e.chain.back();
    groups.anchor[i] = i;
    if (tail != i) {
      groups.role[i] = NodeRole::kFusedAnchor;
      groups.role[tail] = NodeRole::kRoot;
    }
    if (e.beside >= 0) {
      groups.role[e.beside] = NodeRole::kAbsorbed;
      groups.anchor[e.beside] = i;
      groups.stored[e.beside] = true;
      groups.beside[e.beside] = true;
    } else if (e.stored >= 0) {
      groups.stored[e.stored] = true;
    }
  }
  for (int i = 0; i < n; ++i) {
    if (groups.anchor[i] < 0) groups.role[i] = UngroupedRole(graph, u, i);
  }
  MarkStoredInline(graph, u, groups);
  GroupCapper(graph, u, options, groups).Run();
  return groups;
}

}  // namespace pto::jit
