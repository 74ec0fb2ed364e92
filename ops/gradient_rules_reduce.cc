// Gradient rules of the reductions and the row operators.
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/gradient_rules_internal.h"
#include "ops/shape_rules.h"

namespace pto::ops::internal {
namespace {

using ir::OpKind;

// The axis in [0, rank).
// `shape` with `axis` kept as size 1.
ir::Shape KeptShape(ir::Shape shape, int64_t axis) {
  shape[axis] = ir::SymExpr(1);
  return shape;
}

// x summed over every axis but the last: a norm's weight and bias gradients.
int SumRows(GraphBuilder& b, int x) {
  while (b.rank(x) > 1) x = b.Sum(x, 0, /*keepdims=*/false);
  return x;
}

// The gradient of a matrix B shared by every batch of A ([batch..., M, K] @ [K, N], A not
// transposed) as ONE matmul over the batch folded into the rows: A as [P, K] and G as [P, N],
// P = batch... x M, so dB = A^T G (or G^T A for a transposed B) sums over the batch in its K
// loop. Per batch it would be batch-many [K, N] products and a reduction over them: more
// written and read, and short K loops. -1 when the shapes are not of that form.
//
// The product comes out in B's stored layout (A^T G, or G^T A for a transposed B), though the
// matmul then copies the operand it reads across K to rows (jit/passes/build_tile_graph), the
// wider of the two as often as not. Taking it as (G^T A)^T or (A^T G)^T instead, to copy the
// narrower, leaves the narrower side as the matmul's M, B as wide rows it packs, and the
// result to be stored transposed, which costs more than the wider copy saves (measurements:
// docs/training.md).
int FoldedWeightGradient(GraphBuilder& b, int a, int g, bool ta, bool tb, const ir::Shape& m) {
  const ir::Shape as = b.shape(a), gs = b.shape(g);
  if (ta || m.size() != 2 || as.size() < 3 || gs.size() != as.size()) return -1;
  ir::SymExpr rows(1);
  for (size_t i = 0; i + 1 < as.size(); ++i) rows = rows * as[i];
  const int a2 = b.ReshapeTo(a, {rows, as.back()});
  const int g2 = b.ReshapeTo(g, {rows, gs.back()});
  // dB = G^T A for a transposed B, A^T G otherwise.
  return tb ? b.MatMul(g2, a2, true, false) : b.MatMul(a2, g2, true, false);
}

}  // namespace

void ReduceVjp(GraphBuilder& b, const VjpArgs& args, std::vector<int>& grads) {
  if (!args.wanted[0]) return;
  const int x = args.node.inputs[0];
  const ir::Shape shape = b.shape(x);
  const int64_t axis = NormalizedAxis(args.node.attrs.axis, shape.size());
  const ir::Shape kept = KeptShape(shape, axis);
  // The cotangent and the result with the reduced axis kept (size 1), to broadcast along it.
  const int g = b.ReshapeTo(args.cotangent, kept);
  switch (args.node.op) {
    case OpKind::kReduceSum:
      grads[0] = b.BroadcastTo(g, shape);
      return;
    case OpKind::kReduceMean: {
      const std::optional<int64_t> n = shape[axis].AsConstant();
      // A symbolic axis length comes from the program: a sum of ones along it.
      const int scaled = n.has_value() ? b.Scale(g, 1.0 / static_cast<double>(*n))
                                       : b.Div(g, b.Sum(b.Filled(1, shape), axis, true));
      grads[0] = b.BroadcastTo(scaled, shape);
      return;
    }
    case OpKind::kReduceMax: {  // torch.amax: ties share the cotangent evenly
      const int y = b.ReshapeTo(args.output, kept);
      const int is_max = b.Compare(OpKind::kEq, x, y);
      const int ties = b.Sum(is_max, axis, /*keepdims=*/true);
      grads[0] = b.Mul(is_max, b.Div(g, ties));
      return;
    }
    case OpKind::kLogSumExp: {  // softmax along the axis
      const int y = b.ReshapeTo(args.output, kept);
      grads[0] = b.Mul(g, b.Unary(OpKind::kExp, b.Sub(x, y)));
      return;
    }
    default:
      return;
  }
}

void RowOpVjp(GraphBuilder& b, const VjpArgs& args, std::vector<int>& grads) {
  const std::vector<int>& in = args.node.inputs;
  const int g = args.cotangent;
  ir::Attrs eps;
  eps.eps = args.node.attrs.eps;
  switch (args.node.op) {
    case OpKind::kSoftmax:
      if (args.wanted[0]) grads[0] = b.Op(OpKind::kSoftmaxGrad, {args.output, g});
      return;
    case OpKind::kLogSoftmax:
      if (args.wanted[0]) grads[0] = b.Op(OpKind::kLogSoftmaxGrad, {args.output, g});
      return;
    case OpKind::kLayerNorm:
    case OpKind::kRmsNorm: {
      const bool layer = args.node.op == OpKind::kLayerNorm;
      if (args.wanted[0]) {
        grads[0] =
            b.Op(layer ? OpKind::kLayerNormGrad : OpKind::kRmsNormGrad, {in[0], in[1], g}, eps);
      }
      if (args.wanted[1]) {
        // The normalized rows again (one fused row kernel), weighted by the cotangent.
        const ir::Shape w = b.shape(in[1]);
        const int normalized =
            layer ? b.Op(OpKind::kLayerNorm, {in[0], b.Filled(1, w), b.Filled(0, w)}, eps)
                  : b.Op(OpKind::kRmsNorm, {in[0], b.Filled(1, w)}, eps);
        grads[1] = SumRows(b, b.Mul(g, normalized));
      }
      if (layer && args.wanted[2]) grads[2] = SumRows(b, g);
      return;
    }
    default:
      return;
  }
}

void MatMulVjp(GraphBuilder& b, const VjpArgs& args, std::vector<int>& grads) {
  // C = op(A) op(B), op transposing the last two axes when the attribute says so:
  // d op(A) = G op(B)^T and d op(B) = op(A)^T G, written so that each result comes out in
  // its input's stored layout; batch axes an input was broadcast along are summed.
  const int a = args.node.inputs[0], m = args.node.inputs[1], g = args.cotangent;
  const bool ta = args.node.attrs.transpose_a, tb = args.node.attrs.transpose_b;
  if (args.wanted[0]) {
    const int ga = ta ? b.MatMul(m, g, tb, true) : b.MatMul(g, m, false, !tb);
    grads[0] = b.SumTo(ga, b.shape(a));
  }
  if (args.wanted[1]) {
    if (const int folded = FoldedWeightGradient(b, a, g, ta, tb, b.shape(m)); folded >= 0) {
      grads[1] = folded;
      return;
    }
    const int gb = tb ? b.MatMul(g, a, true, ta) : b.MatMul(a, g, !ta, false);
    grads[1] = b.SumTo(gb, b.shape(m));
  }
}

}  // namespace pto::ops::internal
