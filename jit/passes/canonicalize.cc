#include "jit/passes/canonicalize.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>

#include "jit/passes/graph_rewrite.h"

namespace pto::jit {
namespace {

using ir::OpKind;

std::optional<double> ConstantValue(const ir::Graph& g, int id) {
  const ir::Node& n = g.nodes[id];
  if (n.op != OpKind::kConstant) return std::nullopt;
  return n.attrs.scalar;
}

std::optional<double> Fold(OpKind op, double a, double b) {
  // Folded in float, as the kernel would compute it.
  float x = static_cast<float>(a), y = static_cast<float>(b);
  switch (op) {
    case OpKind::kAdd:
      return x + y;
    case OpKind::kSub:
      return x - y;
    case OpKind::kMul:
      return x * y;
    case OpKind::kDiv:
      return x / y;
    case OpKind::kMax:
      return std::fmax(x, y);
    case OpKind::kMin:
      return std::fmin(x, y);
    default:
      return std::nullopt;
  }
}

// The same for i32 constants: wrapping two's complement, as the kernel computes it.
std::optional<double> FoldI32(OpKind op, double a, double b) {
  const uint32_t x = static_cast<uint32_t>(static_cast<int64_t>(a));
  const uint32_t y = static_cast<uint32_t>(static_cast<int64_t>(b));
  const int32_t sx = static_cast<int32_t>(x), sy = static_cast<int32_t>(y);
  switch (op) {
    case OpKind::kAdd:
      return static_cast<int32_t>(x + y);
    case OpKind::kSub:
      return static_cast<int32_t>(x - y);
    case OpKind::kMul:
      return static_cast<int32_t>(x * y);
    case OpKind::kMax:
      return std::max(sx, sy);
    case OpKind::kMin:
      return std::min(sx, sy);
    default:
      return std::nullopt;
  }
}

bool IsIdentityPermutation(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

}  // namespace

void Canonicalize(ir::Graph& graph) {
  std::vector<int> replacement(graph.nodes.size());
  std::iota(replacement.begin(), replacement.end(), 0);
  auto resolved = [&](int id) {
    while (replacement[id] != id) id = replacement[id];
    return id;
  };
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    ir::Node& n = graph.nodes[i];
    for (int& in : n.inputs) in = resolved(in);
    // Only rewrite to an operand whose shape is the result's (no broadcasting is dropped).
    auto same_shape = [&](int id) { return graph.nodes[id].shape == n.shape; };
    if (ir::IsBinaryElementwise(n.op)) {
      int a = n.inputs[0], b = n.inputs[1];
      std::optional<double> ca = ConstantValue(graph, a), cb = ConstantValue(graph, b);
      if (ca && cb) {
        const bool i32 = n.dtype == ir::DType::kI32;
        if (std::optional<double> folded = i32 ? FoldI32(n.op, *ca, *cb) : Fold(n.op, *ca, *cb)) {
          n.op = OpKind::kConstant;
          n.attrs = {};
          n.attrs.scalar = *folded;
          n.attrs.dtype = n.dtype;
          n.inputs.clear();
        }
        continue;
      }
      if ((n.op == OpKind::kAdd || n.op == OpKind::kSub) && cb == 0.0 && same_shape(a)) {
        replacement[i] = a;
      } else if (n.op == OpKind::kAdd && ca == 0.0 && same_shape(b)) {
        replacement[i] = b;
      } else if ((n.op == OpKind::kMul || n.op == OpKind::kDiv) && cb == 1.0 && same_shape(a)) {
        replacement[i] = a;
      } else if (n.op == OpKind::kMul && ca == 1.0 && same_shape(b)) {
        replacement[i] = b;
      }
      continue;
    }
    switch (n.op) {
      case OpKind::kNeg: {
        const ir::Node& in = graph.nodes[n.inputs[0]];
        if (in.op == OpKind::kNeg) replacement[i] = in.inputs[0];
        if (in.op == OpKind::kConstant) {
          double v = -in.attrs.scalar;
          if (n.dtype == ir::DType::kI32) {  // wraps: -INT32_MIN is INT32_MIN
            v = static_cast<int32_t>(0u -
                                     static_cast<uint32_t>(static_cast<int64_t>(in.attrs.scalar)));
          }
          n.op = OpKind::kConstant;
          n.attrs = {};
          n.attrs.scalar = v;
          n.attrs.dtype = n.dtype;
          n.inputs.clear();
        }
        break;
      }
      case OpKind::kTranspose:
        if (IsIdentityPermutation(n.attrs.ints)) replacement[i] = n.inputs[0];
        break;
      case OpKind::kReshape:
      case OpKind::kCast:
      case OpKind::kBroadcastTo:
        if (same_shape(n.inputs[0]) && graph.nodes[n.inputs[0]].dtype == n.dtype) {
          replacement[i] = n.inputs[0];
        }
        break;
      default:
        break;
    }
  }
  ApplyReplacements(graph, replacement);
}

}  // namespace pto::jit
