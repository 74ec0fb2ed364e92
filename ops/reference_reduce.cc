// Reference loops of the reductions and of the row operators (softmax, norms).
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "ops/reference_kernels.h"

namespace pto::ops::internal {

HostTensor Reduce(ir::OpKind op, const HostTensor& x, int64_t axis, const Dims& out_shape) {
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= x.shape[i];
  for (size_t i = axis + 1; i < x.shape.size(); ++i) inner *= x.shape[i];
  const int64_t len = x.shape[axis];
  return ByStorage(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T>& in = Values<T>(x);
    HostTensor out = Result(out_shape, x.dtype);
    std::vector<T>& y = Values<T>(out);
    y.resize(outer * inner);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        double acc = op == ir::OpKind::kReduceMax ? -std::numeric_limits<double>::infinity() : 0.0;
        for (int64_t k = 0; k < len; ++k) {
          const double v = in[(o * len + k) * inner + i];
          if (op != ir::OpKind::kReduceMax) {
            acc += v;
          } else if (!std::isnan(acc) && (std::isnan(v) || v > acc)) {
            acc = v;  // once NaN, stays NaN (like numpy.max)
          }
        }
        if (op == ir::OpKind::kReduceMean) acc /= static_cast<double>(len);  // 0/0 = NaN
        y[o * inner + i] = static_cast<T>(acc);
      }
    }
    return out;
  });
}

namespace {

// One row of softmax, log_softmax, layer_norm or rms_norm: `len` values from `in` to `y`.
template <typename T>
void Row(ir::OpKind op, const T* in, T* y, int64_t len, const T* weight, const T* bias,
         double eps) {
  switch (op) {
    case ir::OpKind::kSoftmax:
    case ir::OpKind::kLogSoftmax: {
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i < len; ++i) max = std::fmax(max, in[i]);
      double sum = 0;
      for (int64_t i = 0; i < len; ++i) sum += std::exp(in[i] - max);
      const double log_sum = std::log(sum);
      for (int64_t i = 0; i < len; ++i) {
        y[i] = static_cast<T>(op == ir::OpKind::kSoftmax ? std::exp(in[i] - max) / sum
                                                         : in[i] - max - log_sum);
      }
      break;
    }
    case ir::OpKind::kLayerNorm: {
      double mean = 0;
      for (int64_t i = 0; i < len; ++i) mean += in[i];
      mean /= static_cast<double>(len);
      double var = 0;
      for (int64_t i = 0; i < len; ++i) var += (in[i] - mean) * (in[i] - mean);
      var /= static_cast<double>(len);
      const double rstd = 1.0 / std::sqrt(var + eps);
      for (int64_t i = 0; i < len; ++i) {
        y[i] = static_cast<T>((in[i] - mean) * rstd * weight[i] + bias[i]);
      }
      break;
    }
    case ir::OpKind::kRmsNorm: {
      double sum_sq = 0;
      for (int64_t i = 0; i < len; ++i) sum_sq += static_cast<double>(in[i]) * in[i];
      const double inv = 1.0 / std::sqrt(sum_sq / static_cast<double>(len) + eps);
      for (int64_t i = 0; i < len; ++i) y[i] = static_cast<T>(in[i] * inv * weight[i]);
      break;
    }
    default:
      break;  // not a row op: EvaluateOp never gets here
  }
}

}  // namespace

HostTensor RowOp(ir::OpKind op, const HostTensor& x, const HostTensor* weight,
                 const HostTensor* bias, double eps) {
  return ByStorage(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    HostTensor out = Result(x.shape, x.dtype);
    Values<T>(out).resize(Values<T>(x).size());
    const int64_t len = x.shape.back();
    if (len == 0) return out;
    const int64_t rows = x.NumElements() / len;
    const T* w = weight == nullptr ? nullptr : Values<T>(*weight).data();
    const T* b = bias == nullptr ? nullptr : Values<T>(*bias).data();
    for (int64_t r = 0; r < rows; ++r) {
      Row<T>(op, Values<T>(x).data() + r * len, Values<T>(out).data() + r * len, len, w, b, eps);
    }
    return out;
  });
}

}  // namespace pto::ops::internal
