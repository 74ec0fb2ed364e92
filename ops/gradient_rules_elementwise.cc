// Gradient rules of the elementwise ops: the local derivative times the cotangent, summed back
// over the axes an input was broadcast along.
#include <cmath>
#include <vector>

#include "ops/gradient_rules_internal.h"

namespace pto::ops::internal {

using ir::OpKind;

void NoGradient(GraphBuilder&, const VjpArgs&, std::vector<int>&) {}

void BinaryVjp(GraphBuilder& b, const VjpArgs& args, std::vector<int>& grads) {
  const int x = args.node.inputs[0], y = args.node.inputs[1], g = args.cotangent;
  int gx = -1, gy = -1;  // before summing to the inputs' shapes
  switch (args.node.op) {
    case OpKind::kAdd:
      gx = g;
      gy = g;
      break;
    case OpKind::kSub:
      gx = g;
      if (args.wanted[1]) gy = b.Neg(g);
      break;
    case OpKind::kMul:
      if (args.wanted[0]) gx = b.Mul(g, y);
      if (args.wanted[1]) gy = b.Mul(g, x);
      break;
    case OpKind::kDiv:  // x / y: 1 / y and -x / y^2 = -out / y
      if (args.wanted[0]) gx = b.Div(g, y);
      if (args.wanted[1]) gy = b.Neg(b.Div(b.Mul(g, args.output), y));
      break;
    case OpKind::kMax:
    case OpKind::kMin: {
      // torch.maximum / torch.minimum: the larger (smaller) input takes the cotangent, a tie
      // splits it in halves.
      const OpKind wins = args.node.op == OpKind::kMax ? OpKind::kGt : OpKind::kLt;
      const OpKind loses = args.node.op == OpKind::kMax ? OpKind::kLt : OpKind::kGt;
      const int half_tie = b.Scale(b.Compare(OpKind::kEq, x, y), 0.5);
      if (args.wanted[0]) gx = b.Mul(g, b.Add(b.Compare(wins, x, y), half_tie));
      if (args.wanted[1]) gy = b.Mul(g, b.Add(b.Compare(loses, x, y), half_tie));
      break;
    }
    default:
      break;
  }
  if (args.wanted[0] && gx >= 0) grads[0] = b.SumTo(gx, b.shape(x));
  if (args.wanted[1] && gy >= 0) grads[1] = b.SumTo(gy, b.shape(y));
}

void WhereVjp(GraphBuilder& b, const VjpArgs& args, std::vector<int>& grads) {
  const int condition = args.node.inputs[0], g = args.cotangent;
  for (int i : {1, 2}) {
    if (!args.wanted[i]) continue;
    const int zero = b.Constant(0);
    const int selected = i == 1 ? b.Where(condition, g, zero) : b.Where(condition, zero, g);
    grads[i] = b.SumTo(selected, b.shape(args.node.inputs[i]));
  }
}

void BroadcastToVjp(GraphBuilder& b, const VjpArgs& args, std::vector<int>& grads) {
  if (args.wanted[0]) grads[0] = b.SumTo(args.cotangent, b.shape(args.node.inputs[0]));
}

void UnaryVjp(GraphBuilder& b, const VjpArgs& args, std::vector<int>& grads) {
  if (!args.wanted[0]) return;
  const int x = args.node.inputs[0], y = args.output, g = args.cotangent;
  int d = -1;  // the local derivative dy/dx; -1 when the rule writes the gradient itself
  switch (args.node.op) {
    case OpKind::kNeg:
      grads[0] = b.Neg(g);
      return;
    case OpKind::kCast:  // f32 -> f32
      grads[0] = g;
      return;
    case OpKind::kAbs:  // sign(x), 0 at 0
      d = b.Sub(b.Compare(OpKind::kGt, x, b.Constant(0)), b.Compare(OpKind::kLt, x, b.Constant(0)));
      break;
    case OpKind::kRelu:  // 1 where x > 0; 0 at 0
      d = b.Compare(OpKind::kGt, x, b.Constant(0));
      break;
    case OpKind::kExp:
      d = y;
      break;
    case OpKind::kLog:
      grads[0] = b.Div(g, x);
      return;
    case OpKind::kSqrt:  // 1 / (2 sqrt(x))
      grads[0] = b.Scale(b.Div(g, y), 0.5);
      return;
    case OpKind::kRsqrt:  // -1/2 x^(-3/2) = -y^3 / 2
      d = b.Scale(b.Mul(b.Mul(y, y), y), -0.5);
      break;
    case OpKind::kTanh:  // 1 - y^2
      d = b.Sub(b.Constant(1), b.Mul(y, y));
      break;
    case OpKind::kSigmoid:  // y (1 - y)
      d = b.Mul(y, b.Sub(b.Constant(1), y));
      break;
    case OpKind::kSilu: {  // s (1 + x (1 - s)), s = sigmoid(x)
      const int s = b.Unary(OpKind::kSigmoid, x);
      d = b.Mul(s, b.Add(b.Constant(1), b.Mul(x, b.Sub(b.Constant(1), s))));
      break;
    }
    case OpKind::kErf:  // 2/sqrt(pi) exp(-x^2)
      d = b.Scale(b.Unary(OpKind::kExp, b.Neg(b.Mul(x, x))), 2.0 / std::sqrt(M_PI));
      break;
    case OpKind::kGeluErf:  // Phi(x) + x phi(x), one kernel op that computes exp once for both
      d = b.Unary(OpKind::kGeluErfGrad, x);
      break;
    case OpKind::kGeluErfGrad:  // 2 phi(x) + x phi'(x) = phi(x) (2 - x^2)
      d = b.Mul(
          b.Scale(b.Unary(OpKind::kExp, b.Scale(b.Mul(x, x), -0.5)), 1.0 / std::sqrt(2 * M_PI)),
          b.Sub(b.Constant(2), b.Mul(x, x)));
      break;
    case OpKind::kGeluTanh: {
      // y = x/2 (1 + t), t = tanh(k (x + c x^3)): dy/dx = (1 + t)/2 + x/2 (1 - t^2) k (1 + 3c x^2)
      // (PyTorch's GeluBackward for approximate='tanh').
      const double k = std::sqrt(2.0 / M_PI), c = 0.044715;
      const int x2 = b.Mul(x, x);
      const int t = b.Unary(OpKind::kTanh, b.Scale(b.Add(x, b.Scale(b.Mul(x2, x), c)), k));
      const int left = b.Scale(b.Add(b.Constant(1), t), 0.5);
      const int dinner = b.Scale(b.Add(b.Constant(1), b.Scale(x2, 3 * c)), k);
      const int right = b.Mul(b.Mul(b.Scale(x, 0.5), b.Sub(b.Constant(1), b.Mul(t, t))), dinner);
      d = b.Add(left, right);
      break;
    }
    default:
      return;
  }
  grads[0] = b.Mul(g, d);
}

}  // namespace pto::ops::internal
