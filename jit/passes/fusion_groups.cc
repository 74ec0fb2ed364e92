#include "jit/passes/fusion_groups.h"

#include "jit/passes/graph_rewrite.h"

namespace pto::jit {
namespace {

using ir::OpKind;

bool IsIndexView(OpKind op) { return op == OpKind::kTranspose || op == OpKind::kSlice; }

}  // namespace

bool IsAnchorOp(OpKind op) {
  switch (op) {
    case OpKind::kMatMul:
    case OpKind::kReduceSum:
    case OpKind::kReduceMax:
    case OpKind::kReduceMean:
    case OpKind::kSoftmax:
    case OpKind::kLogSoftmax:
    case OpKind::kLayerNorm:
    case OpKind::kRmsNorm:
      return true;
    default:
      return false;
  }
}

FusionGroups FormFusionGroups(const ir::Graph& graph) {
  const int n = static_cast<int>(graph.nodes.size());
  std::vector<int> uses = CountUses(graph);
  std::vector<bool> is_output(n, false);
  for (int o : graph.outputs) is_output[o] = true;
  const std::vector<std::vector<int>> consumers = Consumers(graph);

  // Uses seen through transposes and slices (which recompute their input per use), and whether
  // some consumer, through such views, needs the value in memory (matmul operands and reshapes).
  std::vector<int> effective_uses(n, 0);
  std::vector<bool> needs_buffer(n, false);
  for (int i = n - 1; i >= 0; --i) {
    effective_uses[i] = is_output[i] ? 1 : 0;
    for (int c : consumers[i]) {
      const OpKind op = graph.nodes[c].op;
      if (IsIndexView(op)) {
        effective_uses[i] += effective_uses[c];
        needs_buffer[i] = needs_buffer[i] || needs_buffer[c] || is_output[c];
      } else {
        effective_uses[i] += 1;
        needs_buffer[i] = needs_buffer[i] || op == OpKind::kMatMul || op == OpKind::kReshape;
      }
    }
  }

  FusionGroups groups;
  groups.role.assign(n, NodeRole::kRoot);
  groups.anchor.assign(n, -1);
  // Epilogue chains first: they take precedence over inlining.
  for (int i = 0; i < n; ++i) {
    if (!IsAnchorOp(graph.nodes[i].op)) continue;
    int tail = i;
    while (uses[tail] == 1 && !is_output[tail] && consumers[tail].size() == 1) {
      const int c = consumers[tail][0];
      const ir::Node& cn = graph.nodes[c];
      const bool elementwise = ir::IsUnaryElementwise(cn.op) || ir::IsBinaryElementwise(cn.op);
      if (!elementwise || cn.shape != graph.nodes[tail].shape) break;
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
    const ir::Node& node = graph.nodes[i];
    if (groups.anchor[i] >= 0) continue;
    switch (node.op) {
      case OpKind::kInput: groups.role[i] = NodeRole::kInput; break;
      case OpKind::kConstant: groups.role[i] = NodeRole::kConstant; break;
      case OpKind::kTranspose:
      case OpKind::kSlice:
      case OpKind::kReshape: groups.role[i] = NodeRole::kView; break;
      case OpKind::kConcat: groups.role[i] = NodeRole::kRoot; break;
      default: {
        const bool inline_ok = effective_uses[i] == 1 && !is_output[i] && !needs_buffer[i];
        groups.role[i] = inline_ok ? NodeRole::kInline : NodeRole::kRoot;
      }
    }
  }
  return groups;
}

}  // namespace pto::jit
