// Runtime::JitGrad end to end: the outputs' order, a vector-Jacobian product, auxiliary
// outputs, a bias whose broadcast dim is 1 in one call and n in the next, shape classes over a
// symbolic batch, determinism across runs and thread counts, and the errors.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "gtest/gtest.h"
#include "ops/host_tensor.h"
#include "pto/runtime.h"
#include "tests/jit/e2e/gradient_check.h"
#include "tests/jit/e2e/test_util.h"

namespace pto::testing {
namespace {

using ops::HostTensor;

// mean((tanh(x w1 + b1) w2 - y)^2): a small regression MLP.
std::vector<Value> MlpLoss(std::span<const Value> v) {
  Value h = tanh(matmul(v[0], v[1]) + v[2]);
  Value err = matmul(h, v[3]) - v[4];
  return {reduce_mean(reduce_mean(err * err, 1), 0)};
}

TEST(JitGrad, MlpGradientsMatchFiniteDifferences) {
  std::unique_ptr<Runtime> rt = OpenRuntime();
  std::vector<HostTensor> in = {HostTensor::Random({6, 5}, 1), HostTensor::Random({5, 7}, 2),
                                HostTensor::Random({7}, 3), HostTensor::Random({7, 3}, 4),
                                HostTensor::Random({6, 3}, 5)};
  absl::StatusOr<GradientCheckResult> r = CheckGradients(*rt, MlpLoss, in, {1, 2, 3, 0});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_LE(r->worst_ratio, 1.0) << r->worst;
  EXPECT_LE(r->loss_difference, 1e-6);
}

TEST(JitGrad, OutputsAreTheLambdasThenOneGradientPerWrtInputInOrder) {
  std::unique_ptr<Runtime> rt = OpenRuntime();
  // Output 0 the loss sum(x * w), output 1 an auxiliary value x * 2 returned as it is.
  auto fn = rt->JitGrad("aux",
                        [](Value x, Value w) {
                          return std::vector<Value>{reduce_sum(reshape(x * w, {-1}), 0), x * 2.0f};
                        },
                        {.wrt = {1, 0}});
  ASSERT_TRUE(fn.ok()) << fn.status();
  HostTensor x = HostTensor::Random({2, 3}, 7), w = HostTensor::Random({3}, 8);
  absl::StatusOr<std::vector<HostTensor>> out = RunPto(**fn, {x, w});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 4u);
  EXPECT_EQ((*out)[1].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ((*out)[2].shape, (std::vector<int64_t>{3}));     // d/dw = sum over rows of x
  EXPECT_EQ((*out)[3].shape, (std::vector<int64_t>{2, 3}));  // d/dx = w broadcast
  for (int j = 0; j < 3; ++j) {
    EXPECT_FLOAT_EQ((*out)[2].data[j], x.data[j] + x.data[3 + j]);
    for (int i = 0; i < 2; ++i) {
      EXPECT_FLOAT_EQ((*out)[1].data[i * 3 + j], 2 * x.data[i * 3 + j]);
      EXPECT_EQ((*out)[3].data[i * 3 + j], w.data[j]);
    }
  }
}

TEST(JitGrad, VectorJacobianProductWithCotangentsOfASymbolicShape) {
  std::unique_ptr<Runtime> rt = OpenRuntime();
  Dim batch("batch", 1, 64);
  // y = x * x * 3 elementwise; the cotangent c has y's shape: x's gradient is 6 x c.
  auto fn = rt->JitGrad("vjp", [](Value x) { return x * x * 3.0f; }, {.wrt = {0}, .cotangents = 1},
                        {.dynamic = {{0, 0, batch}, {1, 0, batch}}});
  ASSERT_TRUE(fn.ok()) << fn.status();
  for (int64_t b : {5, 9}) {
    HostTensor x = HostTensor::Random({b, 4}, b), c = HostTensor::Random({b, 4}, b + 100);
    absl::StatusOr<std::vector<HostTensor>> out = RunPto(**fn, {x, c});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 2u);
    for (int64_t i = 0; i < b * 4; ++i) {
      EXPECT_NEAR((*out)[1].data[i], 6.0 * x.data[i] * c.data[i], 1e-6) << i;
    }
  }
  EXPECT_EQ((*fn)->stats().compiles, 2) << "batch 5 and 9 fall in two buckets";
}

TEST(JitGrad, ABiasBroadcastInOneCallAndFullInTheNextGetsEachItsGradient) {
  std::unique_ptr<Runtime> rt = OpenRuntime();
  // loss = sum((x + bias) * r): the bias's gradient is r summed over what it was broadcast along.
  auto fn = rt->JitGrad(
      "bias",
      [](Value x, Value bias, Value r) { return reduce_sum(reduce_sum((x + bias) * r, 1), 0); },
      {.wrt = {1}});
  ASSERT_TRUE(fn.ok()) << fn.status();
  const int64_t rows = 3, n = 6;
  HostTensor x = HostTensor::Random({rows, n}, 1), r = HostTensor::Random({rows, n}, 2);
  // First bias [1] (broadcast along both axes), then [n] (automatic dynamic makes the dim
  // symbolic: a new trace where it is not 1).
  absl::StatusOr<std::vector<HostTensor>> one = RunPto(**fn, {x, HostTensor::Random({1}, 3), r});
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_EQ((*one)[1].shape, (std::vector<int64_t>{1}));
  double all = 0;
  for (float v : r.data) all += v;
  EXPECT_NEAR((*one)[1].data[0], all, 1e-5);
  absl::StatusOr<std::vector<HostTensor>> full = RunPto(**fn, {x, HostTensor::Random({n}, 4), r});
  ASSERT_TRUE(full.ok()) << full.status();
  ASSERT_EQ((*full)[1].shape, (std::vector<int64_t>{n}));
  for (int64_t j = 0; j < n; ++j) {
    double column = 0;
    for (int64_t i = 0; i < rows; ++i) column += r.data[i * n + j];
    EXPECT_NEAR((*full)[1].data[j], column, 1e-5) << j;
  }
  // And back to a broadcast bias: the first variant serves it again.
  absl::StatusOr<std::vector<HostTensor>> again = RunPto(**fn, {x, HostTensor::Random({1}, 5), r});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_NEAR((*again)[1].data[0], all, 1e-5);
}

// concat(b [3, 4], a [batch, 4], c [2, 4]) with a symbolic batch: b's gradient is a slice
// counted from the front, c's from the back, a's from both (start 3, end -2).
TEST(JitGrad, ConcatInputsAroundOneOfSymbolicSizeGetTheirSlices) {
  std::unique_ptr<Runtime> rt = OpenRuntime();
  Dim batch("batch", 1, 64);
  auto fn = rt->JitGrad("concat",
                        [](Value b, Value a, Value c, Value w) {
                          const Value x = concat({b, a, c}, 0);
                          return reduce_sum(reduce_sum(x * x * w, 1), 0);
                        },
                        {.wrt = {0, 1, 2}}, {.dynamic = {{1, 0, batch}}});
  ASSERT_TRUE(fn.ok()) << fn.status();
  const HostTensor b = HostTensor::Random({3, 4}, 1), c = HostTensor::Random({2, 4}, 2);
  const HostTensor w = HostTensor::Random({4}, 3);
  for (int64_t n : {5, 9}) {
    const HostTensor a = HostTensor::Random({n, 4}, 10 + n);
    absl::StatusOr<std::vector<HostTensor>> out = RunPto(**fn, {b, a, c, w});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 4u);
    const HostTensor* inputs[3] = {&b, &a, &c};
    for (int i = 0; i < 3; ++i) {
      const HostTensor& g = (*out)[1 + i];
      ASSERT_EQ(g.shape, inputs[i]->shape) << "input " << i << " batch " << n;
      for (size_t e = 0; e < g.data.size(); ++e) {
        EXPECT_NEAR(g.data[e], 2.0 * inputs[i]->data[e] * w.data[e % 4], 1e-6)
            << "input " << i << " element " << e << " batch " << n;
      }
    }
  }
}

// Slices with a step of a symbolic dim: x's gradient is 2 x at the sliced rows, 0 elsewhere.
TEST(JitGrad, StridedSlicesOfASymbolicDimScatterBackToTheirRows) {
  std::unique_ptr<Runtime> rt = OpenRuntime();
  Dim rows("rows", 5, 64);
  struct Slice {
    int64_t start, end, step;
  };
  for (const Slice& sl : {Slice{1, INT64_MAX, 3}, Slice{-5, INT64_MAX, 2}, Slice{0, 4, 2}}) {
    auto fn = rt->JitGrad("strided",
                          [sl](Value x) {
                            const Value y = slice(x, 0, sl.start, sl.end, sl.step);
                            return reduce_sum(reduce_sum(y * y, 1), 0);
                          },
                          {.wrt = {0}}, {.dynamic = {{0, 0, rows}}});
    ASSERT_TRUE(fn.ok()) << fn.status();
    for (int64_t n : {7, 10, 12}) {
      const HostTensor x = HostTensor::Random({n, 3}, n);
      absl::StatusOr<std::vector<HostTensor>> out = RunPto(**fn, {x});
      ASSERT_TRUE(out.ok()) << out.status();
      const int64_t start = sl.start < 0 ? sl.start + n : sl.start;
      const int64_t end = std::min(sl.end, n);
      for (int64_t r = 0; r < n; ++r) {
        const bool picked = r >= start && r < end && (r - start) % sl.step == 0;
        for (int64_t j = 0; j < 3; ++j) {
          EXPECT_NEAR((*out)[1].data[r * 3 + j], picked ? 2.0 * x.data[r * 3 + j] : 0.0, 1e-6)
              << "slice " << sl.start << ":" << sl.end << ":" << sl.step << " n " << n << " row "
              << r;
        }
      }
    }
  }
}

TEST(JitGrad, GradientsAreBitwiseEqualAcrossRunsAndThreadCountsWhenDeterministic) {
  std::vector<HostTensor> in = {HostTensor::Random({64, 48}, 1), HostTensor::Random({48, 96}, 2),
                                HostTensor::Random({96}, 3), HostTensor::Random({96, 10}, 4),
                                HostTensor::Random({64, 10}, 5)};
  std::vector<std::vector<HostTensor>> results;
  for (int threads : {1, 2, 2}) {
    std::unique_ptr<Runtime> rt = OpenRuntime({.intra_op_threads = threads, .deterministic = true});
    auto fn = rt->JitGradTraced("mlp", 5, MlpLoss, {.wrt = {0, 1, 2, 3}}, {});
    ASSERT_TRUE(fn.ok()) << fn.status();
    absl::StatusOr<std::vector<HostTensor>> out = RunPto(**fn, in);
    ASSERT_TRUE(out.ok()) << out.status();
    results.push_back(*std::move(out));
  }
  for (size_t run = 1; run < results.size(); ++run) {
    ASSERT_EQ(results[run].size(), results[0].size());
    for (size_t o = 0; o < results[0].size(); ++o) {
      ASSERT_EQ(results[run][o].data.size(), results[0][o].data.size());
      EXPECT_EQ(std::memcmp(results[run][o].data.data(), results[0][o].data.data(),
                            results[0][o].data.size() * sizeof(float)),
                0)
          << "run " << run << " output " << o;
    }
  }
}

TEST(JitGrad, FourMicroBatchesAccumulateInPlaceToTheGradientsOfOneBatch) {
  std::unique_ptr<Runtime> rt = OpenRuntime();
  Dim batch("batch", 1, 64);
  // A summed (not averaged) loss, so micro-batch gradients add up to the batch's.
  auto loss = [](Value x, Value w1, Value b1, Value w2, Value y) {
    Value err = matmul(tanh(matmul(x, w1) + b1), w2) - y;
    return reduce_sum(reduce_sum(err * err, 1), 0);
  };
  // Outputs: loss, then dw1, db1, dw2 (outputs 1-3), each added into its accumulator (inputs
  // 5-7) in place.
  FunctionOptions options{.dynamic = {{0, 0, batch}, {4, 0, batch}},
                          .in_place_outputs = {{1, 5}, {2, 6}, {3, 7}}};
  auto accumulating =
      rt->JitGrad("accumulate", loss, {.wrt = {1, 2, 3}, .accumulate = true}, options);
  ASSERT_TRUE(accumulating.ok()) << accumulating.status();
  auto whole =
      rt->JitGrad("whole", loss, {.wrt = {1, 2, 3}}, {.dynamic = {{0, 0, batch}, {4, 0, batch}}});
  ASSERT_TRUE(whole.ok()) << whole.status();

  const HostTensor x = HostTensor::Random({64, 20}, 1), y = HostTensor::Random({64, 8}, 2);
  const HostTensor w1 = HostTensor::Random({20, 32}, 3), b1 = HostTensor::Random({32}, 4),
                   w2 = HostTensor::Random({32, 8}, 5);
  absl::StatusOr<std::vector<HostTensor>> want = RunPto(**whole, {x, w1, b1, w2, y});
  ASSERT_TRUE(want.ok()) << want.status();

  std::vector<HostTensor> acc = {HostTensor::Filled({20, 32}, 0), HostTensor::Filled({32}, 0),
                                 HostTensor::Filled({32, 8}, 0)};
  for (int m = 0; m < 4; ++m) {
    HostTensor xm{{16, 20}, {x.data.begin() + m * 16 * 20, x.data.begin() + (m + 1) * 16 * 20}};
    HostTensor ym{{16, 8}, {y.data.begin() + m * 16 * 8, y.data.begin() + (m + 1) * 16 * 8}};
    std::vector<HostTensor> in = {xm, w1, b1, w2, ym};
    std::vector<TensorView> views = Views(in);
    for (HostTensor& a : acc) views.push_back(TensorView::Dense(a.data.data(), a.shape));
    HostTensor loss_out = HostTensor::Filled({}, 0);
    // The gradient outputs are views of the accumulators themselves.
    std::vector<TensorView> outs = {TensorView::Dense(loss_out.data.data(), loss_out.shape)};
    for (HostTensor& a : acc) outs.push_back(TensorView::Dense(a.data.data(), a.shape));
    ASSERT_TRUE((**accumulating)(views, outs).ok());
  }
  // Tolerance: the batch's sums over 64 rows and the micro-batches' four sums of 16 round
  // differently in f32: 1e-5 of the gradient's largest element.
  for (int k = 0; k < 3; ++k) {
    const HostTensor& w = (*want)[1 + k];
    double largest = 0;
    for (float v : w.data) largest = std::max(largest, static_cast<double>(std::fabs(v)));
    for (size_t i = 0; i < w.data.size(); ++i) {
      EXPECT_NEAR(acc[k].data[i], w.data[i], 1e-5 * largest) << "gradient " << k << " at " << i;
    }
  }
}

TEST(JitGrad, RefusesBadOptionsAtOnceAndANonScalarLossAtTheFirstCall) {
  std::unique_ptr<Runtime> rt = OpenRuntime();
  auto identity = [](Value x, Value y) { return x * y; };
  auto out_of_range = rt->JitGrad("bad", identity, {.wrt = {2}});
  ASSERT_EQ(out_of_range.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(out_of_range.status().message(), "JitGrad: wrt input 2 is out of range [0, 2)");
  auto none = rt->JitGrad("bad", identity, {.wrt = {}});
  EXPECT_EQ(none.status().message(), "JitGrad: wrt names no input to differentiate");
  auto negative = rt->JitGrad("bad", identity, {.wrt = {0}, .cotangents = -1});
  EXPECT_EQ(negative.status().message(), "JitGrad: cotangents is -1, must not be negative");

  auto not_scalar = rt->JitGrad("vector_loss", identity, {.wrt = {0}});
  ASSERT_TRUE(not_scalar.ok());
  absl::StatusOr<std::vector<HostTensor>> out =
      RunPto(**not_scalar, {HostTensor::Random({4}, 1), HostTensor::Random({4}, 2)});
  ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(),
            "gradient: output 0 (the loss) is f32[4]; a gradient is taken of a scalar f32 loss "
            "(reduce it with reduce_sum or reduce_mean, or pass cotangents for a "
            "vector-Jacobian product)");
}

}  // namespace
}  // namespace pto::testing
