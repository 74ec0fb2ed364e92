// Reference loops of the unary and binary elementwise ops.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "ops/reference_kernels.h"

namespace pto::ops::internal {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

Dims BroadcastStrides(const Dims& shape, size_t rank) {
  Dims strides(rank, 0);
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[rank - shape.size() + i] = shape[i] == 1 ? 0 : s;
    s *= shape[i];
  }
  return strides;
}

double UnaryValue(ir::OpKind op, double x) {
  switch (op) {
    case ir::OpKind::kNeg:
      return -x;
    case ir::OpKind::kAbs:
      return std::fabs(x);
    case ir::OpKind::kExp:
      return std::exp(x);
    case ir::OpKind::kLog:
      return std::log(x);
    case ir::OpKind::kSqrt:
      return std::sqrt(x);
    case ir::OpKind::kRsqrt:
      return 1.0 / std::sqrt(x);
    case ir::OpKind::kTanh:
      return std::tanh(x);
    case ir::OpKind::kSigmoid:
      return Sigmoid(x);
    case ir::OpKind::kRelu:
      return BinaryValue(ir::OpKind::kMax, x, 0.0);
    case ir::OpKind::kGeluTanh: {
      const double k = std::sqrt(2.0 / M_PI);
      return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
    }
    case ir::OpKind::kGeluErf:
      return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case ir::OpKind::kSilu:
      return x * Sigmoid(x);
    case ir::OpKind::kErf:
      return std::erf(x);
    case ir::OpKind::kGeluErfGrad:
      return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))) +
             x * std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
    case ir::OpKind::kCast:
      return x;  // to the input dtype (f32 -> f32, f64 -> f64)
    default:
      return kNaN;  // not a unary op: EvaluateOp never gets here
  }
}

double BinaryValue(ir::OpKind op, double a, double b) {
  switch (op) {
    case ir::OpKind::kAdd:
      return a + b;
    case ir::OpKind::kSub:
      return a - b;
    case ir::OpKind::kMul:
      return a * b;
    case ir::OpKind::kDiv:
      return a / b;
    case ir::OpKind::kMax:
      if (std::isnan(a) || std::isnan(b)) return kNaN;
      return a > b ? a : b;
    case ir::OpKind::kMin:
      if (std::isnan(a) || std::isnan(b)) return kNaN;
      return a < b ? a : b;
    default:
      return kNaN;  // not a binary op: EvaluateOp never gets here
  }
}

HostTensor Unary(ir::OpKind op, const HostTensor& x) {
  return ByStorage(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T>& in = Values<T>(x);
    HostTensor out = Result(x.shape, x.dtype);
    std::vector<T>& y = Values<T>(out);
    y.resize(in.size());
    for (size_t i = 0; i < in.size(); ++i) y[i] = static_cast<T>(UnaryValue(op, in[i]));
    return out;
  });
}

HostTensor Binary(ir::OpKind op, const HostTensor& a, const HostTensor& b, const Dims& out_shape) {
  return ByStorage(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T>& va = Values<T>(a);
    const std::vector<T>& vb = Values<T>(b);
    HostTensor out = Result(out_shape, a.dtype);
    std::vector<T>& y = Values<T>(out);
    y.reserve(NumElements(out_shape));
    const Dims strides[2] = {BroadcastStrides(a.shape, out_shape.size()),
                             BroadcastStrides(b.shape, out_shape.size())};
    std::vector<int64_t> offsets;
    ForEachIndex(out_shape, strides, offsets, [&](const std::vector<int64_t>& off) {
      y.push_back(static_cast<T>(BinaryValue(op, va[off[0]], vb[off[1]])));
    });
    return out;
  });
}

}  // namespace pto::ops::internal
