// Runtime::JitTrainStep end to end on a linear regression, against the optimizers written out
// here in double (PyTorch's formulas): SGD with momentum, Nesterov and weight decay, Adam with
// L2, AdamW with decoupled decay, gradient clipping by global norm; the optimizer adds a few
// kernels whatever the parameter count (the gradients are computed into one flat vector); a
// symbolic batch served by shape classes; a learning-rate change compiles nothing; the errors.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pto/pto.h"
#include "tests/jit/e2e/test_util.h"
#include "tools/pto/transformer_block.h"

namespace pto::testing {
namespace {

using ::testing::HasSubstr;

// loss = mean((x w + b - y)^2) over [n, 3] -> [n, 2].
const auto Regression = [](Value x, Value w, Value b, Value y) {
  const Value err = matmul(x, w) + b - y;
  return reduce_mean(reduce_mean(err * err, 1), 0);
};

struct Problem {
  int64_t n = 8;
  std::vector<float> x, y, w, b;
};

Problem MakeProblem(int64_t n, uint32_t seed) {
  Problem p;
  p.n = n;
  uint32_t state = seed;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return static_cast<float>((state >> 8) & 0xffff) / 65536.0f - 0.5f;
  };
  for (int64_t i = 0; i < n * 3; ++i) p.x.push_back(next());
  for (int64_t i = 0; i < n * 2; ++i) p.y.push_back(next());
  for (int i = 0; i < 6; ++i) p.w.push_back(next());
  for (int i = 0; i < 2; ++i) p.b.push_back(next());
  return p;
}

// The optimizer in double, parameters [w (6), b (2)] laid end to end.
class ReferenceOptimizer {
 public:
  ReferenceOptimizer(const Optimizer& o, std::vector<double> p)
      : o_(o), p_(std::move(p)), m_(p_.size(), 0.0), v_(p_.size(), 0.0) {}

  void Step(std::vector<double> g) {
    ++t_;
    if (o_.max_grad_norm > 0) {
      double sum = 0;
      for (double e : g) sum += e * e;
      const double coef = std::min(1.0, o_.max_grad_norm / (std::sqrt(sum) + 1e-6));
      for (double& e : g) e *= coef;
    }
    for (size_t i = 0; i < p_.size(); ++i) {
      double gi = g[i];
      if (o_.kind == Optimizer::Kind::kSgd) {
        gi += o_.weight_decay * p_[i];
        if (o_.momentum != 0) {
          m_[i] = t_ == 1 ? gi : o_.momentum * m_[i] + (1 - o_.dampening) * gi;
          gi = o_.nesterov ? gi + o_.momentum * m_[i] : m_[i];
        }
        p_[i] -= o_.lr * gi;
        continue;
      }
      if (o_.kind == Optimizer::Kind::kAdam) gi += o_.weight_decay * p_[i];
      if (o_.kind == Optimizer::Kind::kAdamW) p_[i] *= 1 - o_.lr * o_.weight_decay;
      m_[i] = o_.beta1 * m_[i] + (1 - o_.beta1) * gi;
      v_[i] = o_.beta2 * v_[i] + (1 - o_.beta2) * gi * gi;
      const double bc1 = 1 - std::pow(static_cast<double>(o_.beta1), t_);
      const double bc2 = 1 - std::pow(static_cast<double>(o_.beta2), t_);
      p_[i] -= o_.lr / bc1 * m_[i] / (std::sqrt(v_[i]) / std::sqrt(bc2) + o_.eps);
    }
  }
  const std::vector<double>& parameters() const { return p_; }

 private:
  Optimizer o_;
  std::vector<double> p_, m_, v_;
  int t_ = 0;
};

// d loss / d [w, b] of the regression, in double; and the loss.
double Gradient(const Problem& pr, const std::vector<double>& p, std::vector<double>& g) {
  g.assign(8, 0.0);
  double loss = 0;
  const double scale = 2.0 / static_cast<double>(pr.n * 2);
  for (int64_t r = 0; r < pr.n; ++r) {
    for (int c = 0; c < 2; ++c) {
      double pred = p[6 + c];
      for (int k = 0; k < 3; ++k) pred += pr.x[r * 3 + k] * p[k * 2 + c];
      const double err = pred - pr.y[r * 2 + c];
      loss += err * err / static_cast<double>(pr.n * 2);
      for (int k = 0; k < 3; ++k) g[k * 2 + c] += scale * err * pr.x[r * 3 + k];
      g[6 + c] += scale * err;
    }
  }
  return loss;
}

// Runs `steps` steps of pto and of the reference; returns the largest parameter difference.
double Compare(const Optimizer& o, int steps) {
  std::unique_ptr<Runtime> rt = OpenRuntime();
  const Problem pr = MakeProblem(8, 7);
  const TensorView init[2] = {TensorView::Dense(pr.w.data(), {3, 2}),
                              TensorView::Dense(pr.b.data(), {2})};
  auto step =
      rt->JitTrainStep("regression", Regression, init, {.parameters = {1, 2}, .optimizer = o});
  EXPECT_TRUE(step.ok()) << step.status();
  if (!step.ok()) return 1e9;
  std::vector<double> p(pr.w.begin(), pr.w.end());
  p.insert(p.end(), pr.b.begin(), pr.b.end());
  ReferenceOptimizer ref(o, p);
  const TensorView data[2] = {TensorView::Dense(pr.x.data(), {8, 3}),
                              TensorView::Dense(pr.y.data(), {8, 2})};
  double worst = 0;
  for (int s = 0; s < steps; ++s) {
    std::vector<double> g;
    const double want_loss = Gradient(pr, ref.parameters(), g);
    absl::StatusOr<float> loss = (**step)(data);
    EXPECT_TRUE(loss.ok()) << loss.status();
    if (!loss.ok()) return 1e9;
    EXPECT_NEAR(*loss, want_loss, 1e-5 * std::max(1.0, want_loss)) << "step " << s;
    ref.Step(g);
    for (int i = 0; i < 2; ++i) {
      const TensorView v = (*step)->parameter(i);
      const float* got = static_cast<const float*>(v.data);
      for (int64_t e = 0; e < v.num_elements(); ++e) {
        worst = std::max(worst, std::fabs(got[e] - ref.parameters()[i * 6 + e]));
      }
    }
  }
  EXPECT_EQ((*step)->steps(), steps);
  return worst;
}

TEST(TrainStep, SgdWithMomentumNesterovAndWeightDecayMatchesTheFormulas) {
  EXPECT_LT(Compare({.kind = Optimizer::Kind::kSgd, .lr = 0.1f}, 10), 1e-5);
  EXPECT_LT(Compare({.kind = Optimizer::Kind::kSgd,
                     .lr = 0.1f,
                     .momentum = 0.9f,
                     .dampening = 0.1f,
                     .weight_decay = 0.01f},
                    10),
            1e-5);
  EXPECT_LT(Compare({.kind = Optimizer::Kind::kSgd,
                     .lr = 0.05f,
                     .momentum = 0.8f,
                     .nesterov = true,
                     .weight_decay = 0.02f},
                    10),
            1e-5);
}

TEST(TrainStep, AdamAndAdamWMatchTheFormulas) {
  EXPECT_LT(Compare({.kind = Optimizer::Kind::kAdam, .lr = 0.01f, .weight_decay = 0.1f}, 20), 1e-5);
  EXPECT_LT(Compare({.kind = Optimizer::Kind::kAdamW, .lr = 0.01f, .weight_decay = 0.1f}, 20),
            1e-5);
}

TEST(TrainStep, ClippingByTheGlobalNormMatchesTheFormulas) {
  // A small max norm: every step clips.
  EXPECT_LT(Compare({.kind = Optimizer::Kind::kSgd, .lr = 0.1f, .max_grad_norm = 0.05f}, 10), 1e-5);
  EXPECT_LT(Compare({.kind = Optimizer::Kind::kAdamW,
                     .lr = 0.01f,
                     .weight_decay = 0.01f,
                     .max_grad_norm = 0.05f},
                    10),
            1e-5);
}

// The optimizer's kernels do not grow with the parameter count: an MLP of 2 and of 6 layers
// differ by the layers' forward and backward kernels only, none of them a copy of a gradient.
TEST(TrainStep, TheOptimizerIsAFewKernelsForAllParameters) {
  auto kernels = [](int layers) {
    std::unique_ptr<Runtime> rt = OpenRuntime();
    std::vector<std::vector<float>> weights(layers, std::vector<float>(16 * 16, 0.01f));
    std::vector<TensorView> init;
    std::vector<int> params;
    for (int l = 0; l < layers; ++l) {
      init.push_back(TensorView::Dense(weights[l].data(), {16, 16}));
      params.push_back(1 + l);
    }
    auto step = rt->JitTrainStepTraced(
        "mlp", 1 + layers,
        [layers](std::span<const Value> in) {
          Value h = in[0];
          for (int l = 0; l < layers; ++l) h = tanh(matmul(h, in[1 + l]));
          return std::vector<Value>{reduce_mean(reduce_mean(h * h, 1), 0)};
        },
        init, {.parameters = params, .optimizer = {.kind = Optimizer::Kind::kAdamW}}, {});
    EXPECT_TRUE(step.ok()) << step.status();
    std::vector<float> x(4 * 16, 0.5f);
    const TensorView data[1] = {TensorView::Dense(x.data(), {4, 16})};
    EXPECT_TRUE((**step)(data).ok());
    int count = 0, concats = 0;
    for (const KernelEvent& e : rt->kernel_events()) {
      ++count;
      if (e.kernel.find("concat") != std::string::npos) ++concats;
    }
    EXPECT_EQ(concats, 0) << "the gradients are computed in their windows";
    return count;
  };
  const int two = kernels(2), six = kernels(6);
  EXPECT_GT(six, two);
  // Each layer adds its forward and backward kernels (a matmul with its tanh, the matmuls of
  // both gradients with the tanh's derivative), 3 per layer; the optimizer none.
  EXPECT_EQ(six - two, 4 * 3);
}

TEST(TrainStep, ASymbolicBatchIsServedByShapeClassesAndALearningRateChangeCompilesNothing) {
  std::unique_ptr<Runtime> rt = OpenRuntime();
  Dim batch("batch", 1, 256);
  const Problem init = MakeProblem(1, 3);
  const TensorView params[2] = {TensorView::Dense(init.w.data(), {3, 2}),
                                TensorView::Dense(init.b.data(), {2})};
  auto step = rt->JitTrainStep(
      "regression", Regression, params,
      {.parameters = {1, 2}, .optimizer = {.kind = Optimizer::Kind::kSgd, .lr = 0.2f}},
      {.dynamic = {{0, 0, batch}, {3, 0, batch}}});
  ASSERT_TRUE(step.ok()) << step.status();
  float first = 0, last = 0;
  for (int s = 0; s < 30; ++s) {
    const int64_t n = s % 3 == 0 ? 5 : s % 3 == 1 ? 40 : 100;
    const Problem pr = MakeProblem(n, 11 + s);
    const TensorView data[2] = {TensorView::Dense(pr.x.data(), {n, 3}),
                                TensorView::Dense(pr.y.data(), {n, 2})};
    if (s == 15) (*step)->set_learning_rate(0.1f);
    absl::StatusOr<float> loss = (**step)(data);
    ASSERT_TRUE(loss.ok()) << loss.status();
    ASSERT_TRUE(std::isfinite(*loss));
    if (s == 0) first = *loss;
    last = *loss;
  }
  EXPECT_LT(last, first);
  EXPECT_FLOAT_EQ((*step)->learning_rate(), 0.1f);
  const FunctionStats st = (*step)->function().stats();
  EXPECT_LE(st.compiles, 3) << "batches 5, 40 and 100: one class each at most";
}

// The causal demo block with a head, checkpointed as one segment: the backward pass recomputes
// the block (its mask's iota included, fused into the backward row ops) and the steps give the
// losses of the plain step.
TEST(TrainStep, ACheckpointedBlockTrainsLikeThePlainOne) {
  const tools::BlockDims dims{.causal = true};
  const TraceFn block = tools::TransformerBlock(dims);
  const int n_block = 1 + static_cast<int>(tools::WeightShapes(dims).size());
  std::vector<std::vector<float>> weights;
  std::vector<TensorView> init;
  std::vector<int> params;
  uint32_t seed = 1;
  std::vector<std::vector<int64_t>> shapes = tools::WeightShapes(dims);
  shapes.push_back({3, dims.model});
  shapes.push_back({3});
  for (size_t i = 0; i < shapes.size(); ++i) {
    int64_t n = 1;
    for (int64_t d : shapes[i]) n *= d;
    weights.emplace_back(n);
    const bool norm_weight = i == 0 || i == 6;  // ln1_w, ln2_w: about 1
    for (float& v : weights.back()) {
      seed = seed * 1664525u + 1013904223u;
      v = (static_cast<float>(seed >> 9) / 8388608.0f - 0.5f) * 0.2f + (norm_weight ? 1.0f : 0.0f);
    }
    init.push_back(TensorView::Dense(weights.back().data(), shapes[i]));
    params.push_back(1 + static_cast<int>(i));
  }
  std::vector<float> x(2 * 16 * dims.model);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 11) * 0.1f - 0.5f;
  const std::vector<int32_t> labels = {0, 2};
  const TensorView data[2] = {TensorView::Dense(x.data(), {2, 16, dims.model}),
                              TensorView::Dense(labels.data(), {2})};
  std::vector<float> losses[2];
  for (bool checkpointed : {false, true}) {
    std::unique_ptr<Runtime> rt = OpenRuntime();
    auto step = rt->JitTrainStepTraced(
        "block", n_block + 3,
        [&](std::span<const Value> v) {
          auto body = [&](std::span<const Value> in) {
            const Value out = block(in.first(n_block))[0];
            return std::vector<Value>{cross_entropy(
                linear(reduce_mean(out, 1), in[n_block], in[n_block + 1]), in[n_block + 2])};
          };
          const std::vector<Value> in(v.begin(), v.end());
          return checkpointed ? checkpoint(body, in) : body(in);
        },
        init, {.parameters = params, .optimizer = {.kind = Optimizer::Kind::kAdamW}}, {});
    ASSERT_TRUE(step.ok()) << step.status();
    for (int s = 0; s < 3; ++s) {
      absl::StatusOr<float> loss = (**step)(data);
      ASSERT_TRUE(loss.ok()) << loss.status();
      losses[checkpointed].push_back(*loss);
    }
  }
  for (int s = 0; s < 3; ++s) {
    EXPECT_NEAR(losses[1][s], losses[0][s], 1e-5 * std::fabs(losses[0][s])) << "step " << s;
  }
}

TEST(TrainStep, Errors) {
  std::unique_ptr<Runtime> rt = OpenRuntime();
  const Problem pr = MakeProblem(8, 1);
  const TensorView init[2] = {TensorView::Dense(pr.w.data(), {3, 2}),
                              TensorView::Dense(pr.b.data(), {2})};
  auto expect = [&](absl::Span<const TensorView> params, TrainStepOptions options,
                    FunctionOptions fopts, const std::string& message) {
    auto step = rt->JitTrainStep("bad", Regression, params, std::move(options), std::move(fopts));
    ASSERT_EQ(step.status().code(), absl::StatusCode::kInvalidArgument) << message;
    EXPECT_THAT(std::string(step.status().message()), HasSubstr(message));
  };
  expect(init, {}, {}, "JitTrainStep 'bad': no parameters to train");
  expect(init, {.parameters = {1, 4}}, {}, "parameter input 4 is out of range [0, 4)");
  expect(init, {.parameters = {1, 1}}, {}, "parameters list input 1 twice");
  expect(absl::MakeConstSpan(init, 1), {.parameters = {1, 2}}, {},
         "2 parameters but 1 initial values");
  Dim d("d", 1, 8);
  expect(init, {.parameters = {1, 2}}, {.dynamic = {{1, 0, d}}},
         "parameter input 1 cannot have a dynamic dim");
  expect(init, {.parameters = {1, 2}}, {.constant_inputs = {2}},
         "parameter input 2 cannot be constant");
  expect(init, {.parameters = {1, 2}}, {.in_place_outputs = {{0, 0}}},
         "in_place_outputs are the step's own");
  expect(init, {.parameters = {1, 2}, .optimizer = {.beta1 = 1.0f}}, {},
         "invalid optimizer settings");
  const std::vector<int32_t> ints(6, 1);
  const TensorView int_init[2] = {TensorView::Dense(ints.data(), {3, 2}), init[1]};
  expect(int_init, {.parameters = {1, 2}}, {}, "initial parameter 0 is i32; parameters are f32");

  auto step = rt->JitTrainStep("regression", Regression, init, {.parameters = {1, 2}});
  ASSERT_TRUE(step.ok()) << step.status();
  const TensorView one[1] = {TensorView::Dense(pr.x.data(), {8, 3})};
  absl::StatusOr<float> loss = (**step)(one);
  ASSERT_EQ(loss.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(loss.status().message(), "train step 'regression' takes 2 data inputs, got 1");
  EXPECT_EQ((*step)->steps(), 0);
  EXPECT_EQ((*step)->num_parameters(), 2);
  EXPECT_EQ((*step)->parameter(2).data, nullptr);
  EXPECT_EQ((*step)->parameter(-1).data, nullptr);
  EXPECT_NE((*step)->parameter(1).data, nullptr);
  // A loss that is not scalar fails at the first step, naming it.
  auto vector_loss = rt->JitTrainStep("vector", [](Value x, Value w) { return matmul(x, w); },
                                      absl::MakeConstSpan(init, 1), {.parameters = {1}});
  ASSERT_TRUE(vector_loss.ok()) << vector_loss.status();
  loss = (**vector_loss)(one);
  ASSERT_EQ(loss.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(loss.status().message()), HasSubstr("output 0 (the loss) is f32[8, 2]"));
}

}  // namespace
}  // namespace pto::testing
