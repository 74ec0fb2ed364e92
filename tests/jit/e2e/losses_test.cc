// The losses of pto/losses.h: their values against the definitions computed here in double,
// their gradients (through JitGrad) against finite differences of the reference
// (gradient_check.h), a symbolic batch, and the exact messages for bad shapes and dtypes.
#include "pto/losses.h"

#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/host_tensor.h"
#include "pto/runtime.h"
#include "tests/jit/e2e/gradient_check.h"
#include "tests/jit/e2e/test_util.h"

namespace pto::testing {
namespace {

using ops::HostTensor;

std::vector<Value> CrossEntropyLoss(std::span<const Value> v) {
  return {cross_entropy(v[0], v[1])};
}
std::vector<Value> CrossEntropyProbsLoss(std::span<const Value> v) {
  return {cross_entropy_probs(v[0], v[1])};
}
std::vector<Value> MseLoss(std::span<const Value> v) { return {mse(v[0], v[1])}; }

// log(sum_c exp(row[c])) in double.
double LogSumExp(const HostTensor& logits, int64_t n, int64_t classes) {
  double m = -INFINITY, s = 0;
  for (int64_t c = 0; c < classes; ++c) m = std::max(m, logits.at(n * classes + c));
  for (int64_t c = 0; c < classes; ++c) s += std::exp(logits.at(n * classes + c) - m);
  return m + std::log(s);
}

double CrossEntropyOf(const HostTensor& logits, const std::vector<int32_t>& labels) {
  const int64_t batch = logits.shape[0], classes = logits.shape[1];
  double sum = 0;
  for (int64_t n = 0; n < batch; ++n) {
    sum += LogSumExp(logits, n, classes) - logits.at(n * classes + labels[n]);
  }
  return sum / batch;
}

// The loss (output 0) pto computes for `inputs`.
double PtoLoss(Runtime& rt, const TraceFn& loss, const std::vector<HostTensor>& inputs,
               FunctionOptions options = {}) {
  absl::StatusOr<std::unique_ptr<Function>> fn =
      rt.JitTraced("loss", static_cast<int>(inputs.size()), loss, std::move(options));
  EXPECT_TRUE(fn.ok()) << fn.status();
  if (!fn.ok()) return NAN;
  absl::StatusOr<std::vector<HostTensor>> out = RunPto(**fn, inputs);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return NAN;
  EXPECT_TRUE((*out)[0].shape.empty()) << (*out)[0].ShapeString();
  return (*out)[0].at(0);
}

TEST(Losses, CrossEntropyOverIntegerLabels) {
  std::unique_ptr<Runtime> rt = OpenRuntime();
  const std::vector<int32_t> labels = {3, 0, 4, 4, 1, 2, 0};
  const std::vector<HostTensor> in = {HostTensor::Random({7, 5}, 11, -2, 2),
                                      HostTensor::I32({7}, labels)};
  EXPECT_NEAR(PtoLoss(*rt, CrossEntropyLoss, in), CrossEntropyOf(in[0], labels), 1e-5);
  absl::StatusOr<GradientCheckResult> r =
      CheckGradients(*rt, CrossEntropyLoss, in, {0}, {.max_elements = 35});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->elements, 35);
  EXPECT_LE(r->worst_ratio, 1.0) << r->worst;
  EXPECT_LE(r->loss_difference, 1e-6);
}

TEST(Losses, CrossEntropyOverASymbolicBatch) {
  std::unique_ptr<Runtime> rt = OpenRuntime();
  const Dim batch("batch", 1, 64);
  const FunctionOptions options = {.dynamic = {{0, 0, batch}, {1, 0, batch}}};
  for (int64_t b : {3, 9}) {
    std::vector<int32_t> labels;
    for (int64_t n = 0; n < b; ++n) labels.push_back(static_cast<int32_t>((n * 7) % 10));
    const std::vector<HostTensor> in = {HostTensor::Random({b, 10}, b),
                                        HostTensor::I32({b}, labels)};
    EXPECT_NEAR(PtoLoss(*rt, CrossEntropyLoss, in, options), CrossEntropyOf(in[0], labels), 1e-5);
    absl::StatusOr<GradientCheckResult> r =
        CheckGradients(*rt, CrossEntropyLoss, in, {0}, {}, options);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_LE(r->worst_ratio, 1.0) << r->worst;
  }
}

TEST(Losses, CrossEntropyAgainstSoftTargets) {
  std::unique_ptr<Runtime> rt = OpenRuntime();
  const int64_t batch = 6, classes = 9;
  // Targets: rows of positive values summing to 1.
  HostTensor probs = HostTensor::Random({batch, classes}, 22, 0.1f, 1.0f);
  for (int64_t n = 0; n < batch; ++n) {
    float sum = 0;
    for (int64_t c = 0; c < classes; ++c) sum += probs.data[n * classes + c];
    for (int64_t c = 0; c < classes; ++c) probs.data[n * classes + c] /= sum;
  }
  const std::vector<HostTensor> in = {HostTensor::Random({batch, classes}, 21, -2, 2), probs};
  double want = 0;
  for (int64_t n = 0; n < batch; ++n) {
    const double lse = LogSumExp(in[0], n, classes);
    for (int64_t c = 0; c < classes; ++c) {
      want -= probs.at(n * classes + c) * (in[0].at(n * classes + c) - lse);
    }
  }
  want /= batch;
  EXPECT_NEAR(PtoLoss(*rt, CrossEntropyProbsLoss, in), want, 1e-5);
  // With one-hot targets it is cross_entropy over the labels.
  const std::vector<int32_t> labels = {8, 0, 2, 2, 5, 7};
  HostTensor hard = HostTensor::Filled({batch, classes}, 0);
  for (int64_t n = 0; n < batch; ++n) hard.data[n * classes + labels[n]] = 1;
  EXPECT_NEAR(PtoLoss(*rt, CrossEntropyProbsLoss, {in[0], hard}), CrossEntropyOf(in[0], labels),
              1e-5);
  absl::StatusOr<GradientCheckResult> r =
      CheckGradients(*rt, CrossEntropyProbsLoss, in, {0, 1}, {.max_elements = 54});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->elements, 108);
  EXPECT_LE(r->worst_ratio, 1.0) << r->worst;
  EXPECT_LE(r->loss_difference, 1e-6);
}

TEST(Losses, MseOverEveryElementWithBroadcasting) {
  std::unique_ptr<Runtime> rt = OpenRuntime();
  for (const auto& [sa, sb] : std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
           {{4, 6}, {4, 6}}, {{2, 3, 5}, {5}}, {{7}, {7}}}) {
    const std::vector<HostTensor> in = {HostTensor::Random(sa, 31), HostTensor::Random(sb, 32)};
    // b broadcasts along a's leading dims: element i of a meets element i % |b| of b.
    double want = 0;
    const int64_t n = in[0].NumElements(), nb = in[1].NumElements();
    for (int64_t i = 0; i < n; ++i) {
      const double d = in[0].at(i) - in[1].at(i % nb);
      want += d * d;
    }
    want /= n;
    EXPECT_NEAR(PtoLoss(*rt, MseLoss, in), want, 1e-6) << in[0].ShapeString();
    absl::StatusOr<GradientCheckResult> r = CheckGradients(*rt, MseLoss, in, {0, 1});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_LE(r->worst_ratio, 1.0) << in[0].ShapeString() << ": " << r->worst;
    EXPECT_LE(r->loss_difference, 1e-6);
  }
}

// The status of the first call of `loss` on `inputs`.
absl::Status FirstCallStatus(Runtime& rt, const TraceFn& loss,
                             const std::vector<HostTensor>& inputs) {
  absl::StatusOr<std::unique_ptr<Function>> fn =
      rt.JitTraced("bad", static_cast<int>(inputs.size()), loss, {});
  if (!fn.ok()) return fn.status();
  return RunPto(**fn, inputs).status();
}

TEST(Losses, BadShapesAndDtypesAreInvalidArgumentNamingTheLossAndTheArgument) {
  std::unique_ptr<Runtime> rt = OpenRuntime();
  const HostTensor logits = HostTensor::Random({4, 3}, 1);
  const HostTensor labels = HostTensor::I32({4}, {0, 1, 2, 0});
  struct Case {
    TraceFn loss;
    std::vector<HostTensor> inputs;
    std::string message;
  };
  const std::vector<Case> cases = {
      {CrossEntropyLoss,
       {logits, HostTensor::Random({4}, 2)},
       "cross_entropy: labels must be i32, got f32"},
      {CrossEntropyLoss,
       {HostTensor::Random({2, 2, 3}, 3), labels},
       "cross_entropy: logits must have rank 2 [batch, classes], got [2, 2, 3]"},
      {CrossEntropyLoss, {labels, labels}, "cross_entropy: logits must be f32, got i32"},
      {CrossEntropyLoss,
       {logits, HostTensor::I32({2, 2}, {0, 1, 2, 0})},
       "cross_entropy: labels must have rank 1 [batch], got [2, 2]"},
      {CrossEntropyLoss,
       {logits, HostTensor::I32({1}, {0})},
       "cross_entropy: labels [1] and logits [4, 3] must have the same batch dim"},
      {CrossEntropyProbsLoss,
       {logits, HostTensor::Random({4, 1}, 4)},
       "cross_entropy_probs: probs [4, 1] and logits [4, 3] must have the same shape"},
      {CrossEntropyProbsLoss, {logits, labels}, "cross_entropy_probs: probs must be f32, got i32"},
      {CrossEntropyProbsLoss,
       {HostTensor::Random({12}, 5), logits},
       "cross_entropy_probs: logits must have rank 2 [batch, classes], got [12]"},
      {MseLoss, {logits, labels}, "mse: b must be f32, got i32"},
  };
  for (const Case& c : cases) {
    absl::Status s = FirstCallStatus(*rt, c.loss, c.inputs);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_EQ(s.message(), c.message);
  }
}

TEST(Losses, ASymbolicClassDimIsRefused) {
  std::unique_ptr<Runtime> rt = OpenRuntime();
  const Dim classes("classes", 1, 64);
  absl::StatusOr<std::unique_ptr<Function>> fn =
      rt->JitTraced("bad", 2, CrossEntropyLoss, {.dynamic = {{0, 1, classes}}});
  ASSERT_TRUE(fn.ok()) << fn.status();
  absl::Status s =
      RunPto(**fn, {HostTensor::Random({4, 3}, 1), HostTensor::I32({4}, {0, 1, 2, 0})}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(s.message(), "cross_entropy: the class dim of logits must be static, got [4, classes]");
}

}  // namespace
}  // namespace pto::testing
