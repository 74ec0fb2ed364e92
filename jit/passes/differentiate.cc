#include "jit/passes/differentiate.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "jit/passes/sum_padded_cotangents.h"
#include "ops/gradient_rules.h"
#include "ops/graph_builder.h"

namespace pto::jit {
namespace {

std::string ShapeText(const ir::Graph& g, const ir::Shape& shape) {
  return ir::ShapeToString(shape, g.SymbolNames());
}

bool IsScalarShape(const ir::Shape& shape) {
  return std::all_of(shape.begin(), shape.end(),
                     [](const ir::SymExpr& d) { return d.AsConstant() == 1; });
}

// The node id of each Function input.
absl::StatusOr<std::vector<int>> InputNodes(const ir::Graph& g) {
  std::vector<int> node(g.num_inputs, -1);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& n = g.nodes[i];
    if (n.op == ir::OpKind::kInput && n.attrs.index >= 0 && n.attrs.index < g.num_inputs) {
      node[n.attrs.index] = static_cast<int>(i);
    }
  }
  for (int i = 0; i < g.num_inputs; ++i) {
    if (node[i] < 0) return absl::InternalError(absl::StrCat("input ", i, " has no node"));
  }
  return node;
}

absl::Status CheckSpec(const ir::Graph& g, const GradientSpec& spec,
                       const std::vector<int>& input_node) {
  const int accumulators = spec.accumulate ? static_cast<int>(spec.wrt.size()) : 0;
  const int differentiable = g.num_inputs - spec.cotangents - accumulators;
  if (spec.cotangents < 0 || spec.cotangents > static_cast<int>(g.outputs.size()) ||
      differentiable < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("gradient: ", spec.cotangents, " cotangents for a program with ",
                     g.outputs.size(), " outputs and ", g.num_inputs, " inputs"));
  }
  if (spec.wrt.empty() && spec.wrt_nodes.empty()) {
    return absl::InvalidArgumentError("gradient: no input to differentiate with respect to");
  }
  if (spec.accumulate && !spec.wrt_nodes.empty()) {
    return absl::InvalidArgumentError("gradient: accumulators are for wrt inputs, not nodes");
  }
  for (int node : spec.wrt_nodes) {
    if (node < 0 || node >= static_cast<int>(g.nodes.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("gradient: wrt node %", node, " is not a node of the graph"));
    }
    if (g.nodes[node].dtype != ir::DType::kF32) {
      return absl::InvalidArgumentError(absl::StrCat(
          "gradient: wrt node %", node, " is ", std::string(ir::DTypeName(g.nodes[node].dtype)),
          "; gradients are taken of f32 values"));
    }
  }
  std::vector<bool> seen(differentiable, false);
  for (int i : spec.wrt) {
    if (i < 0 || i >= differentiable) {
      return absl::InvalidArgumentError(absl::StrCat(
          "gradient: wrt input ", i, " is out of range [0, ", differentiable, ")",
          spec.cotangents > 0 ? " (the cotangents are not differentiable inputs)" : ""));
    }
    if (seen[i]) {
      return absl::InvalidArgumentError(absl::StrCat("gradient: wrt lists input ", i, " twice"));
    }
    seen[i] = true;
    const ir::DType dtype = g.nodes[input_node[i]].dtype;
    if (dtype != ir::DType::kF32) {
      return absl::InvalidArgumentError(
          absl::StrCat("gradient: wrt input ", i, " is ", std::string(ir::DTypeName(dtype)),
                       "; gradients are taken with respect to f32 inputs"));
    }
  }
  for (int k = 0; k < accumulators; ++k) {
    const int input = differentiable + spec.cotangents + k;
    const ir::Node& acc = g.nodes[input_node[input]];
    const ir::Node& x = g.nodes[input_node[spec.wrt[k]]];
    if (acc.shape != x.shape || acc.dtype != x.dtype) {
      return absl::InvalidArgumentError(absl::StrCat(
          "gradient: accumulator ", k, " (input ", input, ") is ",
          std::string(ir::DTypeName(acc.dtype)), ShapeText(g, acc.shape), " but wrt input ",
          spec.wrt[k], " is ", std::string(ir::DTypeName(x.dtype)), ShapeText(g, x.shape),
          "; give their symbolic dims the same pto::Dim so they are one symbol"));
    }
  }
  if (spec.cotangents == 0) {
    const ir::Node& loss = g.nodes[g.outputs[0]];
    if (!IsScalarShape(loss.shape) || loss.dtype != ir::DType::kF32) {
      return absl::InvalidArgumentError(
          absl::StrCat("gradient: output 0 (the loss) is ", std::string(ir::DTypeName(loss.dtype)),
                       ShapeText(g, loss.shape),
                       "; a gradient is taken of a scalar f32 loss (reduce it with reduce_sum or "
                       "reduce_mean, or pass cotangents for a vector-Jacobian product)"));
    }
    return absl::OkStatus();
  }
  for (int k = 0; k < spec.cotangents; ++k) {
    const int input = differentiable + k;
    const ir::Node& c = g.nodes[input_node[input]];
    const ir::Node& out = g.nodes[g.outputs[k]];
    if (c.shape != out.shape || c.dtype != out.dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat("gradient: cotangent ", k, " (input ", input, ") is ",
                       std::string(ir::DTypeName(c.dtype)), ShapeText(g, c.shape), " but output ",
                       k, " is ", std::string(ir::DTypeName(out.dtype)), ShapeText(g, out.shape),
                       "; give their symbolic dims the same pto::Dim so they are one symbol"));
    }
    if (out.dtype != ir::DType::kF32) {
      return absl::InvalidArgumentError(absl::StrCat("gradient: output ", k, " is ",
                                                     std::string(ir::DTypeName(out.dtype)),
                                                     "; only f32 outputs take cotangents"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ir::Graph> Differentiate(const ir::Graph& forward, const GradientSpec& spec) {
  absl::StatusOr<std::vector<int>> input_node = InputNodes(forward);
  if (!input_node.ok()) return input_node.status();
  if (absl::Status s = CheckSpec(forward, spec, *input_node); !s.ok()) return s;

  ir::Graph g = forward;
  ops::GraphBuilder b(g);
  const int n = static_cast<int>(forward.nodes.size());
  const int accumulators = spec.accumulate ? static_cast<int>(spec.wrt.size()) : 0;

  // Values that depend on a wrt input: only their cotangents are needed.
  std::vector<bool> needs(n, false);
  for (int i : spec.wrt) needs[(*input_node)[i]] = true;
  for (int node : spec.wrt_nodes) needs[node] = true;
  for (int id = 0; id < n; ++id) {
    for (int in : forward.nodes[id].inputs) needs[id] = needs[id] || needs[in];
  }

  // adjoint[id]: the node holding d loss / d value id, once some consumer contributed.
  std::vector<int> adjoint(n, -1);
  auto accumulate = [&](int id, int grad) {
    if (adjoint[id] < 0) {
      adjoint[id] = grad;
    } else if (const int merged = SumPaddedCotangents(b, adjoint[id], grad); merged >= 0) {
      adjoint[id] = merged;
    } else {
      adjoint[id] = b.Add(adjoint[id], grad);
    }
  };
  if (spec.cotangents == 0) {
    const int loss = forward.outputs[0];
    accumulate(loss, b.Filled(1, forward.nodes[loss].shape));
  } else {
    for (int k = 0; k < spec.cotangents; ++k) {
      const int input = forward.num_inputs - accumulators - spec.cotangents + k;
      accumulate(forward.outputs[k], (*input_node)[input]);
    }
  }

  for (int id = n - 1; id >= 0; --id) {
    if (adjoint[id] < 0 || !needs[id]) continue;
    const ir::Node& node = forward.nodes[id];
    if (node.op == ir::OpKind::kInput) continue;
    const std::string where =
        absl::StrCat("gradient of node %", id, " (", ir::OpName(node.op), ")");
    ops::VjpRule rule = ops::FindVjpRule(node.op);
    if (rule == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": ", ir::OpName(node.op), " has no gradient rule"));
    }
    ops::VjpArgs args;
    args.node = node;
    args.output = id;
    args.cotangent = adjoint[id];
    for (int in : node.inputs) {
      args.wanted.push_back(needs[in] && forward.nodes[in].dtype == ir::DType::kF32);
    }
    std::vector<int> grads(node.inputs.size(), -1);
    rule(b, args, grads);
    if (!b.status().ok()) {
      return absl::Status(b.status().code(), absl::StrCat(where, ": ", b.status().message()));
    }
    for (size_t i = 0; i < grads.size(); ++i) {
      if (grads[i] < 0 || !args.wanted[i]) continue;
      const int in = node.inputs[i];
      if (g.nodes[grads[i]].shape != forward.nodes[in].shape) {
        return absl::InternalError(
            absl::StrCat(where, ": the rule gave input ", i, " a gradient of shape ",
                         ShapeText(g, g.nodes[grads[i]].shape), " for its shape ",
                         ShapeText(g, forward.nodes[in].shape)));
      }
      accumulate(in, grads[i]);
    }
  }

  for (size_t k = 0; k < spec.wrt.size(); ++k) {
    const int node = (*input_node)[spec.wrt[k]];
    int grad = adjoint[node];
    if (spec.accumulate) {
      const int acc = (*input_node)[forward.num_inputs - accumulators + static_cast<int>(k)];
      grad = grad >= 0 ? b.Add(acc, grad) : acc;
    } else if (grad < 0) {
      grad = b.Filled(0, forward.nodes[node].shape);
    }
    g.outputs.push_back(grad);
  }
  for (int node : spec.wrt_nodes) {
    g.outputs.push_back(adjoint[node] >= 0 ? adjoint[node]
                                           : b.Filled(0, forward.nodes[node].shape));
  }
  if (!b.status().ok()) {
    return absl::Status(b.status().code(), absl::StrCat("gradient: ", b.status().message()));
  }
  return g;
}

}  // namespace pto::jit
