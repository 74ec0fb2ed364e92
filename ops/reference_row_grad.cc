// Reference loops of the backward row operators (softmax_grad, log_softmax_grad,
// layer_norm_grad, rms_norm_grad) and of logsumexp: arithmetic in double, elements read and
// written through HostTensor::at and Set (f32 or f64, the inputs' dtype).
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "ops/reference_kernels.h"

namespace pto::ops::internal {

HostTensor RowGrad(ir::OpKind op, const HostTensor& a, const HostTensor* weight,
                   const HostTensor& dy, double eps) {
  // EvaluateOp gave every input one dtype (f64 when any was): the result's.
  HostTensor out = HostTensor::Zeros(a.shape, a.dtype);
  const int64_t len = a.shape.back();
  if (len == 0) return out;
  const int64_t rows = a.NumElements() / len;
  const double n = static_cast<double>(len);
  std::vector<double> x(len), g(len);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t base = r * len;
    for (int64_t i = 0; i < len; ++i) {
      x[i] = a.at(base + i);
      g[i] = dy.at(base + i) * (weight != nullptr ? weight->at(i) : 1.0);
    }
    switch (op) {
      case ir::OpKind::kSoftmaxGrad: {  // x is y = softmax
        double s = 0;
        for (int64_t i = 0; i < len; ++i) s += x[i] * g[i];
        for (int64_t i = 0; i < len; ++i) out.Set(base + i, x[i] * (g[i] - s));
        break;
      }
      case ir::OpKind::kLogSoftmaxGrad: {  // x is y = log_softmax
        double s = 0;
        for (int64_t i = 0; i < len; ++i) s += g[i];
        for (int64_t i = 0; i < len; ++i) out.Set(base + i, g[i] - std::exp(x[i]) * s);
        break;
      }
      case ir::OpKind::kLayerNormGrad: {
        double mean = 0;
        for (int64_t i = 0; i < len; ++i) mean += x[i];
        mean /= n;
        double var = 0;
        for (int64_t i = 0; i < len; ++i) var += (x[i] - mean) * (x[i] - mean);
        const double rstd = 1.0 / std::sqrt(var / n + eps);
        double mean_g = 0, mean_gxhat = 0;
        for (int64_t i = 0; i < len; ++i) {
          mean_g += g[i];
          mean_gxhat += g[i] * (x[i] - mean) * rstd;
        }
        mean_g /= n;
        mean_gxhat /= n;
        for (int64_t i = 0; i < len; ++i) {
          const double xhat = (x[i] - mean) * rstd;
          out.Set(base + i, rstd * (g[i] - mean_g - xhat * mean_gxhat));
        }
        break;
      }
      case ir::OpKind::kRmsNormGrad: {
        double ss = 0, gx = 0;
        for (int64_t i = 0; i < len; ++i) {
          ss += x[i] * x[i];
          gx += g[i] * x[i];
        }
        const double rinv = 1.0 / std::sqrt(ss / n + eps);
        const double c = rinv * rinv * rinv * gx / n;
        for (int64_t i = 0; i < len; ++i) out.Set(base + i, rinv * g[i] - x[i] * c);
        break;
      }
      default:
        break;  // not a backward row op: EvaluateOp never gets here
    }
  }
  return out;
}

HostTensor LogSumExp(const HostTensor& x, int64_t axis, const Dims& out_shape) {
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= x.shape[i];
  for (size_t i = axis + 1; i < x.shape.size(); ++i) inner *= x.shape[i];
  const int64_t len = x.shape[axis];
  HostTensor out = HostTensor::Zeros(out_shape, x.dtype);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t k) { return x.at((o * len + k) * inner + i); };
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < len; ++k) {
        if (!std::isnan(m) && (std::isnan(at(k)) || at(k) > m)) m = at(k);
      }
      // An infinite max shifts by 0: a row of -inf gives log(0) = -inf, one holding +inf +inf.
      const double shift = std::isinf(m) ? 0.0 : m;
      double sum = 0;
      for (int64_t k = 0; k < len; ++k) sum += std::exp(at(k) - shift);
      out.Set(o * inner + i, std::isnan(m) ? m : shift + std::log(sum));
    }
  }
  return out;
}

}  // namespace pto::ops::internal
