#include "jit/passes/append_optimizer_step.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/graph_builder.h"

namespace pto::jit {
namespace {

using ir::OpKind;

// torch.nn.utils.clip_grad_norm_'s epsilon.
constexpr double kClipEpsilon = 1e-6;

int InputNode(const ir::Graph& g, int index) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].op == OpKind::kInput && g.nodes[i].attrs.index == index) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

// The new parameters and state from the flat gradient g ([P]): the formulas of torch.optim's
// foreach implementations, in their order of operations.
std::vector<int> Update(ops::GraphBuilder& b, const Optimizer& o, int p, int g,
                        const std::vector<int>& state, int scalars) {
  auto scalar = [&](int i) { return b.Slice(scalars, 0, i, i + 1); };
  const int lr = scalar(kLearningRate);
  if (o.kind == Optimizer::Kind::kSgd) {
    if (o.weight_decay != 0) g = b.Add(g, b.Scale(p, o.weight_decay));
    int direction = g;
    int buffer = -1;
    if (o.momentum != 0) {
      buffer = b.Add(b.Mul(state[0], scalar(kBufferKeep)), b.Mul(g, scalar(kGradientShare)));
      direction = o.nesterov ? b.Add(g, b.Scale(buffer, o.momentum)) : buffer;
    }
    std::vector<int> out = {b.Sub(p, b.Mul(direction, lr))};
    if (buffer >= 0) out.push_back(buffer);
    return out;
  }
  const bool decoupled = o.kind == Optimizer::Kind::kAdamW;
  if (!decoupled && o.weight_decay != 0) g = b.Add(g, b.Scale(p, o.weight_decay));
  const int m = b.Add(b.Scale(state[0], o.beta1), b.Scale(g, 1.0 - o.beta1));
  const int v = b.Add(b.Scale(state[1], o.beta2), b.Scale(b.Mul(g, g), 1.0 - o.beta2));
  if (decoupled && o.weight_decay != 0) p = b.Mul(p, scalar(kDecay));
  const int denom =
      b.Add(b.Div(b.Unary(OpKind::kSqrt, v), scalar(kSqrtBiasCorrection2)), b.Constant(o.eps));
  const int updated = b.Sub(p, b.Mul(b.Div(m, denom), scalar(kStepSize)));
  return {updated, m, v};
}

}  // namespace

void FillOptimizerScalars(const Optimizer& o, int64_t step, std::span<float> s) {
  std::fill(s.begin(), s.end(), 0.0f);
  s[kLearningRate] = o.lr;
  if (o.kind == Optimizer::Kind::kSgd) {
    s[kBufferKeep] = step <= 1 ? 0.0f : o.momentum;
    s[kGradientShare] = step <= 1 ? 1.0f : 1.0f - o.dampening;
    return;
  }
  const double t = static_cast<double>(step);
  s[kStepSize] = static_cast<float>(o.lr / (1.0 - std::pow(static_cast<double>(o.beta1), t)));
  s[kSqrtBiasCorrection2] =
      static_cast<float>(std::sqrt(1.0 - std::pow(static_cast<double>(o.beta2), t)));
  s[kDecay] = static_cast<float>(1.0 - static_cast<double>(o.lr) * o.weight_decay);
}

int OptimizerStateCount(const Optimizer& o) {
  if (o.kind == Optimizer::Kind::kSgd) return o.momentum != 0 ? 1 : 0;
  return 2;
}

absl::Status AppendOptimizerStep(ir::Graph& graph, const OptimizerStepSpec& spec) {
  const int p = InputNode(graph, spec.parameters_input);
  const int scalars = InputNode(graph, spec.scalars_input);
  if (p < 0 || scalars < 0 || graph.outputs.empty()) {
    return absl::InvalidArgumentError("optimizer step: the parameter or scalar input is missing");
  }
  const ir::Shape flat = graph.nodes[p].shape;
  if (flat.size() != 1 || graph.nodes[scalars].shape != ir::Shape{ir::SymExpr(kOptimizerScalars)}) {
    return absl::InvalidArgumentError(absl::StrCat(
        "optimizer step: the parameters are ", ir::ShapeToString(flat, graph.SymbolNames()),
        " (want one flat vector) and the scalars ",
        ir::ShapeToString(graph.nodes[scalars].shape, graph.SymbolNames()), " (want [",
        int{kOptimizerScalars}, "])"));
  }
  std::vector<int> state;
  for (int k = 0; k < OptimizerStateCount(spec.optimizer); ++k) {
    const int s = InputNode(graph, spec.state_input + k);
    if (s < 0 || graph.nodes[s].shape != flat) {
      return absl::InvalidArgumentError(
          absl::StrCat("optimizer step: state ", k, " (input ", spec.state_input + k,
                       ") is missing or not of the parameters' shape"));
    }
    state.push_back(s);
  }
  ops::GraphBuilder b(graph);
  std::vector<int> parts;
  for (int grad : spec.gradients) {
    parts.push_back(b.ReshapeTo(grad, {ir::NumElements(b.shape(grad))}));
  }
  int g = parts.size() == 1 ? parts[0] : b.Concat(parts, 0);
  if (b.status().ok() && b.shape(g) != flat) {
    return absl::InvalidArgumentError(absl::StrCat(
        "optimizer step: the gradients hold ", ir::ShapeToString(b.shape(g), graph.SymbolNames()),
        " elements, the flat parameters ", ir::ShapeToString(flat, graph.SymbolNames())));
  }
  if (spec.optimizer.max_grad_norm > 0) {
    // min(1, max_norm / (norm + eps)), norm = sqrt(sum(g * g)).
    const int norm = b.Unary(OpKind::kSqrt, b.Sum(b.Mul(g, g), 0, /*keepdims=*/true));
    const int coef =
        b.Div(b.Constant(spec.optimizer.max_grad_norm), b.Add(norm, b.Constant(kClipEpsilon)));
    g = b.Mul(g, b.Op(OpKind::kMin, {coef, b.Constant(1.0)}));
  }
  const std::vector<int> updated = Update(b, spec.optimizer, p, g, state, scalars);
  if (!b.status().ok()) {
    return absl::Status(b.status().code(), absl::StrCat("optimizer step: ", b.status().message()));
  }
  std::vector<int> outputs = {graph.outputs[0]};
  outputs.insert(outputs.end(), updated.begin(), updated.end());
  graph.outputs = std::move(outputs);
  return absl::OkStatus();
}

}  // namespace pto::jit
