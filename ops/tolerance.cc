#include "ops/tolerance.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace pto::ops {
namespace {

constexpr double kEps = FLT_EPSILON;  // 2^-23: one ulp at 1.0
// Kernels may run with flush-to-zero / denormals-are-zero: a subnormal result may become 0.
constexpr double kFtz = FLT_MIN;

// Error of an f32 accumulation of n terms (a sum, a dot product, a row statistic), as
// measured for plain sequential f32 summation, the worst order a kernel may use (vectorized
// kernels with 16+ accumulators do about 10x better):
// - same-sign terms (constant rows are the worst case: the rounding errors do not cancel)
//   reach a relative error of about 0.1 * n * eps, so rel = n * eps / 4;
// - terms in [-1, 1] with random signs cancel; the absolute error stayed below
//   0.4 * n * eps, so abs = n * eps.
Tolerance Accumulation(int64_t n) {
  const double len = n > 0 ? static_cast<double>(n) : 0.0;
  return {len * kEps, len * kEps / 4};
}

// The length OpTolerance takes: the reduced extent, the row length or K.
int64_t ReductionLength(ir::OpKind op, const ir::Attrs& attrs,
                        std::span<const HostTensor* const> inputs) {
  if (inputs.empty()) return 0;
  const std::vector<int64_t>& x = inputs[0]->shape;
  if (x.empty()) return 0;
  switch (op) {
    case ir::OpKind::kReduceSum:
    case ir::OpKind::kReduceMax:
    case ir::OpKind::kReduceMean: {
      const int64_t rank = static_cast<int64_t>(x.size());
      const int64_t axis = attrs.axis < 0 ? attrs.axis + rank : attrs.axis;
      return axis >= 0 && axis < rank ? x[axis] : 0;
    }
    case ir::OpKind::kSoftmax:
    case ir::OpKind::kLogSoftmax:
    case ir::OpKind::kLayerNorm:
    case ir::OpKind::kRmsNorm:
      return x.back();
    case ir::OpKind::kMatMul:
      return attrs.transpose_a && x.size() >= 2 ? x[x.size() - 2] : x.back();
    default:
      return 0;
  }
}

// Float values compare with float values whatever their width (f32 with f64), integers with
// integers.
bool ComparableDTypes(const HostTensor& a, const HostTensor& b) {
  return a.dtype == b.dtype || (IsFloatDType(a.dtype) && IsFloatDType(b.dtype));
}

double LargestMagnitude(const HostTensor& t) {
  double m = 0;
  for (int64_t i = 0; i < t.size(); ++i) {
    const double v = t.at(i);
    if (std::isfinite(v)) m = std::max(m, std::fabs(v));
  }
  return m;
}

}  // namespace

Tolerance NodeTolerance(ir::OpKind op, const ir::Attrs& attrs,
                        std::span<const HostTensor* const> inputs) {
  Tolerance tol = OpTolerance(op, ReductionLength(op, attrs, inputs));
  double scale = 1;
  if (op == ir::OpKind::kMatMul && inputs.size() == 2) {
    scale = LargestMagnitude(*inputs[0]) * LargestMagnitude(*inputs[1]);
  } else {
    const bool norm = op == ir::OpKind::kLayerNorm || op == ir::OpKind::kRmsNorm;
    for (size_t i = norm ? 1 : 0; i < inputs.size(); ++i) {
      scale = std::max(scale, LargestMagnitude(*inputs[i]));
    }
  }
  tol.abs *= std::max(scale, 1.0);
  return tol;
}

ErrorStats MaxErrors(const HostTensor& got, const HostTensor& want) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (got.shape != want.shape || got.size() != want.size() || !ComparableDTypes(got, want)) {
    return {kInf, kInf};
  }
  ErrorStats e;
  for (int64_t i = 0; i < want.size(); ++i) {
    const double g = got.at(i), w = want.at(i);
    if (g == w || (std::isnan(g) && std::isnan(w))) continue;
    const double diff = std::isfinite(g) && std::isfinite(w) ? std::fabs(g - w) : kInf;
    e.max_abs = std::max(e.max_abs, diff);
    const double rel = std::isinf(diff) ? kInf : diff / std::max(std::fabs(w), double{FLT_MIN});
    e.max_rel = std::max(e.max_rel, rel);
  }
  return e;
}

Tolerance Combine(Tolerance a, Tolerance b) { return {a.abs + b.abs, a.rel + b.rel}; }

Tolerance OpTolerance(ir::OpKind op, int64_t reduction_length) {
  const Tolerance acc = Accumulation(reduction_length);
  switch (op) {
    // Pure data movement, sign or selection: the kernel must produce the very same bits
    // (max/min/relu select one of their operands; cast is f32 -> f32).
    case ir::OpKind::kInput:
    case ir::OpKind::kConstant:
    case ir::OpKind::kNeg:
    case ir::OpKind::kAbs:
    case ir::OpKind::kRelu:
    case ir::OpKind::kMax:
    case ir::OpKind::kMin:
    case ir::OpKind::kCast:
    case ir::OpKind::kTranspose:
    case ir::OpKind::kReshape:
    case ir::OpKind::kBroadcastTo:
    case ir::OpKind::kConcat:
    case ir::OpKind::kSlice:
    case ir::OpKind::kReduceMax:
    case ir::OpKind::kEq:
    case ir::OpKind::kNe:
    case ir::OpKind::kLt:
    case ir::OpKind::kLe:
    case ir::OpKind::kGt:
    case ir::OpKind::kGe:
    case ir::OpKind::kWhere:
    case ir::OpKind::kIota:
    case ir::OpKind::kGather:
    case ir::OpKind::kOneHot:
      return {0, 0};
    // IEEE operations, correctly rounded in both: 1e-6 (about 8 ulp) leaves room for FMA
    // contraction in a fused chain and a reciprocal-plus-Newton division (<= 2 ulp); kFtz
    // for flushed subnormals.
    case ir::OpKind::kAdd:
    case ir::OpKind::kSub:
    case ir::OpKind::kMul:
    case ir::OpKind::kDiv:
    case ir::OpKind::kSqrt:
      return {kFtz, 1e-6};
    // rsqrt may be an approximate reciprocal square root refined by one Newton step
    // (about 2-3 ulp).
    case ir::OpKind::kRsqrt:
      return {kFtz, 2e-6};
    // Transcendentals are vectorized polynomial approximations (a few ulp, plus the
    // argument reduction): rel 4e-6. abs 1e-6 absorbs results near zero where the
    // approximation's error is absolute (log near 1, gelu and silu for negative x,
    // sigmoid for very negative x).
    case ir::OpKind::kExp:
    case ir::OpKind::kLog:
    case ir::OpKind::kTanh:
    case ir::OpKind::kSigmoid:
    case ir::OpKind::kGeluTanh:
    case ir::OpKind::kGeluErf:
    case ir::OpKind::kSilu:
    case ir::OpKind::kErf:
    case ir::OpKind::kGeluErfGrad:
      return {1e-6, 4e-6};
    // A sum of n terms: Accumulation(n), with a 1e-6 floor.
    case ir::OpKind::kReduceSum:
    case ir::OpKind::kScatterAdd:
      return {1e-6 + acc.abs, 1e-6 + acc.rel};
    // The mean divides the sum's absolute error by n: abs becomes about eps.
    case ir::OpKind::kReduceMean:
      return {1e-6 + kEps, 1e-6 + acc.rel};
    // exp of each element (4e-6) divided by a sum of positive terms (acc.rel).
    case ir::OpKind::kSoftmax:
      return {1e-6, 4e-6 + acc.rel};
    // x - max - log(sum): the log turns the sum's relative error into an absolute one.
    case ir::OpKind::kLogSoftmax:
    case ir::OpKind::kLogSumExp:
      return {4e-6 + acc.rel, 1e-6};
    // The backward row operators: a row sum of products (acc) scaled per element, plus the
    // forward statistics they recompute (a transcendental or an rsqrt).
    case ir::OpKind::kSoftmaxGrad:
    case ir::OpKind::kLogSoftmaxGrad:
      return {1e-6 + acc.abs, 4e-6 + acc.rel};
    case ir::OpKind::kLayerNormGrad:
    case ir::OpKind::kRmsNormGrad:
      return {1e-5 + 2 * acc.rel, 1e-5 + 2 * acc.rel};
    // (x - mean) * rstd * w + b: the mean and the variance are accumulations of the row;
    // their errors reach the output relative to the row's spread, and the rsqrt adds a few
    // ulp. The outputs are O(1) for |x| <= 1, so abs and rel are alike.
    case ir::OpKind::kLayerNorm:
    case ir::OpKind::kRmsNorm:
      return {1e-5 + 2 * acc.rel, 1e-5 + acc.rel};
    // A dot product of length K with |a|, |b| <= 1 behaves like a sum of K terms (FMA only
    // removes the product's rounding).
    case ir::OpKind::kMatMul:
      return {1e-6 + acc.abs, 1e-6 + acc.rel};
  }
  return {0, 0};
}

bool AllClose(const HostTensor& got, const HostTensor& want, Tolerance tol,
              std::string* first_mismatch) {
  auto fail = [&](std::string why) {
    if (first_mismatch != nullptr) *first_mismatch = std::move(why);
    return false;
  };
  if (!ComparableDTypes(got, want)) {
    return fail(absl::StrCat("dtype ", std::string(ir::DTypeName(got.dtype)), " vs expected ",
                             std::string(ir::DTypeName(want.dtype))));
  }
  if (got.shape != want.shape) {
    return fail(absl::StrCat("shape ", got.ShapeString(), " vs expected ", want.ShapeString()));
  }
  if (got.size() != want.size() || want.size() != want.NumElements()) {
    return fail(absl::StrCat("data sizes ", got.size(), " vs expected ", want.size(), " for shape ",
                             want.ShapeString()));
  }
  for (int64_t i = 0; i < want.size(); ++i) {
    const double g = got.at(i), w = want.at(i);
    if (g == w || (std::isnan(g) && std::isnan(w))) continue;  // also equal infinities
    const double diff = std::fabs(g - w);
    const double bound = tol.abs + tol.rel * std::fabs(w);
    // A NaN or an infinity must match exactly (handled above): inf <= inf must not pass.
    if (std::isfinite(g) && std::isfinite(w) && diff <= bound) continue;
    // Coordinates of flat index i.
    std::vector<int64_t> coords(want.shape.size());
    int64_t rest = static_cast<int64_t>(i);
    for (size_t d = want.shape.size(); d-- > 0;) {
      coords[d] = rest % want.shape[d];
      rest /= want.shape[d];
    }
    // Enough digits to tell the values apart: 9 for f32 (and i32), 17 when either is f64.
    const int digits = got.dtype == ir::DType::kF64 || want.dtype == ir::DType::kF64 ? 17 : 9;
    const std::string dtypes =
        got.dtype == want.dtype
            ? ""
            : absl::StrCat(" [got ", std::string(ir::DTypeName(got.dtype)), ", expected ",
                           std::string(ir::DTypeName(want.dtype)), "]");
    return fail(absl::StrFormat(
        "index %d [%s]: got %.*g, expected %.*g (|diff| %.3g > %.3g = abs %.3g + rel %.3g * "
        "|expected|)%s",
        i, absl::StrJoin(coords, ", "), digits, g, digits, w, diff, bound, tol.abs, tol.rel,
        dtypes));
  }
  return true;
}

}  // namespace pto::ops
