// Reference reductions and row operators against hand-computed values.
#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "jit/ir/graph.h"
#include "ops/reference.h"
#include "reference_test_util.h"

namespace pto::ops {
namespace {

using ir::OpKind;
using testing::AxisAttrs;
using testing::Eval;
using testing::ExpectTensor;
using testing::T;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(ReferenceReduceTest, SumMaxMeanOverEachAxis) {
  const HostTensor x = T({2, 3}, {1, 2, 3, 4, 5, -6});
  ExpectTensor(Eval(OpKind::kReduceSum, AxisAttrs(0), {x}), {3}, {5, 7, -3});
  ExpectTensor(Eval(OpKind::kReduceSum, AxisAttrs(1), {x}), {2}, {6, 3});
  ExpectTensor(Eval(OpKind::kReduceSum, AxisAttrs(-1, true), {x}), {2, 1}, {6, 3});
  ExpectTensor(Eval(OpKind::kReduceMax, AxisAttrs(-2), {x}), {3}, {4, 5, 3});
  ExpectTensor(Eval(OpKind::kReduceMax, AxisAttrs(1, true), {x}), {2, 1}, {3, 5});
  ExpectTensor(Eval(OpKind::kReduceMean, AxisAttrs(0, true), {x}), {1, 3}, {2.5, 3.5, -1.5});
  ExpectTensor(Eval(OpKind::kReduceMean, AxisAttrs(1), {x}), {2}, {2, 1});
}

TEST(ReferenceReduceTest, MiddleAxisOfRank3) {
  // x[i][j][k] = 100i + 10j + k, shape [2, 3, 2].
  std::vector<float> data;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) data.push_back(100 * i + 10 * j + k);
  ExpectTensor(Eval(OpKind::kReduceSum, AxisAttrs(1), {T({2, 3, 2}, data)}), {2, 2},
               {30, 33, 330, 333});
  ExpectTensor(Eval(OpKind::kReduceMax, AxisAttrs(-2, true), {T({2, 3, 2}, data)}), {2, 1, 2},
               {20, 21, 120, 121});
}

TEST(ReferenceReduceTest, EmptyAxisLikeNumpy) {
  const HostTensor x = T({2, 0}, {});
  ExpectTensor(Eval(OpKind::kReduceSum, AxisAttrs(1), {x}), {2}, {0, 0});
  ExpectTensor(Eval(OpKind::kReduceMax, AxisAttrs(1), {x}), {2}, {-kInf, -kInf});
  ExpectTensor(Eval(OpKind::kReduceMean, AxisAttrs(-1), {x}), {2}, {kNaN, kNaN});
  // Reducing a non-empty axis of an empty tensor gives an empty result.
  ExpectTensor(Eval(OpKind::kReduceSum, AxisAttrs(0), {x}), {0}, {});
  ExpectTensor(Eval(OpKind::kReduceSum, AxisAttrs(0, true), {x}), {1, 0}, {});
}

TEST(ReferenceReduceTest, ScalarResultAndNaN) {
  ExpectTensor(Eval(OpKind::kReduceSum, AxisAttrs(0), {T({1}, {7})}), {}, {7});
  ExpectTensor(Eval(OpKind::kReduceMax, AxisAttrs(0), {T({3}, {1, static_cast<float>(kNaN), 5})}),
               {}, {kNaN});
}

TEST(ReferenceReduceTest, SumAccumulatesInDouble) {
  // 2^24 + 1 + 1 ... is lost in f32 accumulation, kept in double.
  std::vector<float> data(1001, 1.0f);
  data[0] = 16777216.0f;
  ExpectTensor(Eval(OpKind::kReduceSum, AxisAttrs(0), {T({1001}, data)}), {}, {16778216.0}, 0);
}

TEST(ReferenceRowOpTest, Softmax) {
  const double e1 = std::exp(1.0), e2 = std::exp(2.0);
  const double s = 1 + e1 + e2;
  ExpectTensor(Eval(OpKind::kSoftmax, {}, {T({2, 3}, {0, 1, 2, 5, 5, 5})}), {2, 3},
               {1 / s, e1 / s, e2 / s, 1.0 / 3, 1.0 / 3, 1.0 / 3});
  // Stable for large values.
  ExpectTensor(Eval(OpKind::kSoftmax, {}, {T({3}, {1000, 1001, 1002})}), {3},
               {1 / s, e1 / s, e2 / s});
  ExpectTensor(Eval(OpKind::kSoftmax, {}, {T({2, 1}, {-3, 40})}), {2, 1}, {1, 1});
  ExpectTensor(Eval(OpKind::kSoftmax, {}, {T({3, 0}, {})}), {3, 0}, {});
  ExpectTensor(Eval(OpKind::kSoftmax, {}, {T({0, 4}, {})}), {0, 4}, {});
}

TEST(ReferenceRowOpTest, LogSoftmax) {
  const double lse = std::log(1 + std::exp(1.0) + std::exp(2.0));
  ExpectTensor(Eval(OpKind::kLogSoftmax, {}, {T({3}, {0, 1, 2})}), {3}, {-lse, 1 - lse, 2 - lse});
  ExpectTensor(Eval(OpKind::kLogSoftmax, {}, {T({1, 3}, {-1000, -999, -998})}), {1, 3},
               {-lse, 1 - lse, 2 - lse});
  ExpectTensor(Eval(OpKind::kLogSoftmax, {}, {T({2, 2}, {7, 7, 3, 3})}), {2, 2},
               {-M_LN2, -M_LN2, -M_LN2, -M_LN2});
  ExpectTensor(Eval(OpKind::kLogSoftmax, {}, {T({1}, {12})}), {1}, {0});
}

TEST(ReferenceRowOpTest, LayerNorm) {
  ir::Attrs attrs;
  attrs.eps = 1e-5f;
  const HostTensor w = T({4}, {1, 2, 1, 0.5});
  const HostTensor b = T({4}, {0, 0, 1, -1});
  // Row [1, 2, 3, 4]: mean 2.5, biased variance 1.25.
  const double rstd = 1 / std::sqrt(1.25 + static_cast<double>(1e-5f));
  const std::vector<double> want = {-1.5 * rstd, -0.5 * 2 * rstd, 0.5 * rstd + 1,
                                    1.5 * 0.5 * rstd - 1};
  ExpectTensor(Eval(OpKind::kLayerNorm, attrs, {T({4}, {1, 2, 3, 4}), w, b}), {4}, want);
  // A row with a large mean (exact in f32): the two-pass variance keeps full accuracy, where
  // E[x^2] - E[x]^2 would lose it entirely in f32.
  ExpectTensor(
      Eval(OpKind::kLayerNorm, attrs, {T({2, 4}, {10001, 10002, 10003, 10004, 1, 2, 3, 4}), w, b}),
      {2, 4}, {want[0], want[1], want[2], want[3], want[0], want[1], want[2], want[3]}, 1e-6);
  // A constant row normalizes to 0: y = b.
  ExpectTensor(Eval(OpKind::kLayerNorm, attrs, {T({1, 4}, {3, 3, 3, 3}), w, b}), {1, 4},
               {0, 0, 1, -1});
  // Row length 1.
  ExpectTensor(Eval(OpKind::kLayerNorm, attrs, {T({2, 1}, {5, -2}), T({1}, {3}), T({1}, {0.5})}),
               {2, 1}, {0.5, 0.5});
  ExpectTensor(Eval(OpKind::kLayerNorm, attrs, {T({0, 4}, {}), w, b}), {0, 4}, {});
  ExpectTensor(Eval(OpKind::kLayerNorm, attrs, {T({2, 0}, {}), T({0}, {}), T({0}, {})}), {2, 0},
               {});
}

TEST(ReferenceRowOpTest, LayerNormEpsMatters) {
  ir::Attrs attrs;
  attrs.eps = 1.0f;
  // Row [-1, 1]: mean 0, variance 1: y = x / sqrt(2).
  ExpectTensor(Eval(OpKind::kLayerNorm, attrs, {T({2}, {-1, 1}), T({2}, {1, 1}), T({2}, {0, 0})}),
               {2}, {-M_SQRT1_2, M_SQRT1_2});
}

TEST(ReferenceRowOpTest, RmsNorm) {
  ir::Attrs attrs;
  attrs.eps = 1e-6f;
  // Row [3, 4]: mean of squares 12.5.
  const double inv = 1 / std::sqrt(12.5 + static_cast<double>(1e-6f));
  ExpectTensor(Eval(OpKind::kRmsNorm, attrs, {T({2, 2}, {3, 4, 0, 0}), T({2}, {1, 2})}), {2, 2},
               {3 * inv, 8 * inv, 0, 0});
  // Constant row: x / |x| * w.
  ExpectTensor(Eval(OpKind::kRmsNorm, attrs, {T({3}, {-2, -2, -2}), T({3}, {1, 1, 3})}), {3},
               {-1, -1, -3});
  ExpectTensor(Eval(OpKind::kRmsNorm, attrs, {T({0, 2}, {}), T({2}, {1, 2})}), {0, 2}, {});
}

}  // namespace
}  // namespace pto::ops
