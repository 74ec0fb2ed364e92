// The backward row operators (softmax_grad, log_softmax_grad, layer_norm_grad, rms_norm_grad)
// and logsumexp: compiled against the ops/ reference, against finite differences of the
// forward ops' reference, one kernel each, and their shape errors.
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "jit/trace.h"
#include "ops/reference.h"
#include "ops/shape_rules.h"
#include "tests/jit/e2e/gradient_check.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

using ir::OpKind;
using ops::HostTensor;
using Shapes = std::vector<std::vector<int64_t>>;

constexpr float kEps = 1e-5f;

// Records a backward row op in the running trace (they have no public Value function).
Value GradOp(OpKind op, std::vector<Value> inputs, float eps = kEps) {
  ir::Attrs attrs;
  attrs.eps = eps;
  return inputs[0].state()->AddNode(op, attrs, inputs);
}

bool IsNorm(OpKind op) { return op == OpKind::kLayerNormGrad || op == OpKind::kRmsNormGrad; }

TraceFn GradTrace(OpKind op) {
  return [op](std::span<const Value> v) {
    return std::vector<Value>{GradOp(op, std::vector<Value>(v.begin(), v.end()))};
  };
}

// Inputs of `op` for rows of `len`: (y, dy) or (x, weight, dy); y is a softmax's output (in
// [0, 1]) or a log_softmax's (<= 0); x has mean `x_mean`.
std::vector<HostTensor> GradInputs(OpKind op, const std::vector<int64_t>& shape, uint64_t seed,
                                   float x_mean = 0) {
  std::vector<HostTensor> in;
  switch (op) {
    case OpKind::kSoftmaxGrad:
      in.push_back(HostTensor::Random(shape, seed, 0, 1));
      break;
    case OpKind::kLogSoftmaxGrad:
      in.push_back(HostTensor::Random(shape, seed, -6, 0));
      break;
    default:
      in.push_back(HostTensor::Random(shape, seed, x_mean - 2, x_mean + 2));
      in.push_back(HostTensor::Random({shape.back()}, seed + 1, -2, 2));
      break;
  }
  in.push_back(HostTensor::Random(shape, seed + 2, -2, 2));
  return in;
}

const OpKind kGradOps[] = {OpKind::kSoftmaxGrad, OpKind::kLogSoftmaxGrad, OpKind::kLayerNormGrad,
                           OpKind::kRmsNormGrad};

class RowGrad : public ::testing::TestWithParam<TargetIsa> {};

TEST_P(RowGrad, CompiledMatchesReference) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntimeForIsa(GetParam());
  if (rt == nullptr) GTEST_SKIP() << "this CPU cannot run the requested ISA";
  uint64_t seed = 11;
  int checked = 0;
  for (OpKind op : kGradOps) {
    const TraceFn trace = GradTrace(op);
    int rows = 1;
    for (int64_t len : {1, 3, 8, 17, 64, 129, 1000}) {
      // Rows 1..7, some as a rank-3 batch.
      std::vector<int64_t> shape = {rows, len};
      if (rows % 2 == 0) shape = {2, rows / 2, len};
      rows = rows % 7 + 1;
      std::vector<float> means = {0};
      if (op == OpKind::kLayerNormGrad) means.push_back(1000);  // a large mean
      for (float mean : means) {
        SCOPED_TRACE(std::string(ir::OpName(op)) + " rows of " + std::to_string(len) + ", mean " +
                     std::to_string(mean));
        // A Function per case: its first call compiles for its static shape (rows of up to
        // 16 vectors are then kept in registers, longer ones make two passes over memory).
        absl::StatusOr<std::unique_ptr<Function>> fn =
            rt->JitTraced(ir::OpName(op), IsNorm(op) ? 3 : 2, trace, FunctionOptions{});
        ASSERT_TRUE(fn.ok()) << fn.status();
        const std::vector<HostTensor> in = GradInputs(op, shape, seed += 3, mean);
        EXPECT_EQ(testing::DiffFromReference(**fn, trace, in, ops::OpTolerance(op, len)), "");
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 4 * 7 + 7);
}

INSTANTIATE_TEST_SUITE_P(Isa, RowGrad, ::testing::Values(TargetIsa::kHost, TargetIsa::kSse2),
                         [](const ::testing::TestParamInfo<TargetIsa>& info) {
                           return std::string(info.param == TargetIsa::kHost ? "Host" : "Sse2");
                         });

// The forward op of `op` by the reference, on x (and the weight): y, f64 when x is.
HostTensor Forward(OpKind op, const HostTensor& x, const HostTensor* weight) {
  ir::Attrs attrs;
  attrs.eps = kEps;
  absl::StatusOr<HostTensor> y;
  switch (op) {
    case OpKind::kSoftmaxGrad:
    case OpKind::kLogSoftmaxGrad: {
      const HostTensor* in[] = {&x};
      y = ops::EvaluateOp(op == OpKind::kSoftmaxGrad ? OpKind::kSoftmax : OpKind::kLogSoftmax,
                          attrs, in);
      break;
    }
    case OpKind::kLayerNormGrad: {
      const HostTensor bias = HostTensor::Filled({x.shape.back()}, 0);
      const HostTensor* in[] = {&x, weight, &bias};
      y = ops::EvaluateOp(OpKind::kLayerNorm, attrs, in);
      break;
    }
    default: {
      const HostTensor* in[] = {&x, weight};
      y = ops::EvaluateOp(OpKind::kRmsNorm, attrs, in);
      break;
    }
  }
  EXPECT_TRUE(y.ok()) << y.status();
  return y.ok() ? *y : HostTensor{};
}

// dx of each backward op is the vector-Jacobian product of its forward op: element i of dx is
// d(sum(dy * f(x))) / dx_i, here by central differences of the forward op's reference (in
// f64, so the differences lose nothing to rounding).
TEST(RowGrad, MatchesFiniteDifferencesOfTheForwardOp) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  ASSERT_NE(rt, nullptr);
  uint64_t seed = 101;
  for (OpKind op : kGradOps) {
    const TraceFn trace = GradTrace(op);
    absl::StatusOr<std::unique_ptr<Function>> fn =
        rt->JitTraced(ir::OpName(op), IsNorm(op) ? 3 : 2, trace, FunctionOptions{});
    ASSERT_TRUE(fn.ok()) << fn.status();
    for (const std::vector<int64_t>& shape :
         std::vector<std::vector<int64_t>>{{1, 1}, {3, 5}, {2, 17}, {1, 64}}) {
      SCOPED_TRACE(std::string(ir::OpName(op)) + " rows of " + std::to_string(shape.back()));
      const HostTensor x = HostTensor::Random(shape, seed++, -2, 2);
      const HostTensor w = HostTensor::Random({shape.back()}, seed++, -2, 2);
      const HostTensor dy = HostTensor::Random(shape, seed++, -2, 2);
      // The compiled dx: the softmaxes' inputs are the forward op's output.
      std::vector<HostTensor> in;
      if (IsNorm(op)) {
        in = {x, w, dy};
      } else {
        in = {Forward(op, x.ToF64(), nullptr).ToF32(), dy};
      }
      absl::StatusOr<std::vector<HostTensor>> got = testing::RunPto(**fn, in);
      ASSERT_TRUE(got.ok()) << got.status();
      const HostTensor w64 = w.ToF64();
      const HostTensor dy64 = dy.ToF64();
      const double h = 1e-4;
      double worst = 0;
      for (int64_t i = 0; i < x.NumElements(); ++i) {
        auto objective = [&](double delta) {
          HostTensor xp = x.ToF64();
          xp.Set(i, xp.at(i) + delta);
          const HostTensor y = Forward(op, xp, &w64);
          double s = 0;
          for (int64_t j = 0; j < y.NumElements(); ++j) s += dy64.at(j) * y.at(j);
          return s;
        };
        const double fd = (objective(h) - objective(-h)) / (2 * h);
        worst = std::max(worst, std::fabs((*got)[0].at(i) - fd) / (1 + std::fabs(fd)));
      }
      // The compiled op's f32 rounding (its inputs, its sums) against an exact derivative.
      EXPECT_LT(worst, 1e-4);
    }
  }
}

// Kernels per call of `trace` on static shapes.
std::vector<std::string> KernelNames(const TraceFn& trace, const Shapes& shapes) {
  absl::StatusOr<jit::LoweredProgram> p = testing::LowerStatic(trace, shapes);
  EXPECT_TRUE(p.ok()) << p.status();
  std::vector<std::string> names;
  if (p.ok()) {
    for (const ir::KernelCall& call : p->tiles.calls) names.push_back(call.kernel.name);
  }
  return names;
}

TEST(RowGrad, EachOpIsOneKernelWithItsPrologueAndEpilogue) {
  for (OpKind op : kGradOps) {
    SCOPED_TRACE(ir::OpName(op));
    const Shapes shapes = IsNorm(op) ? Shapes{{4, 33}, {33}, {4, 33}} : Shapes{{4, 33}, {4, 33}};
    const std::vector<std::string> plain = KernelNames(GradTrace(op), shapes);
    ASSERT_EQ(plain.size(), 1u);
    EXPECT_EQ(plain[0].rfind("f32_" + std::string(ir::OpName(op)), 0), 0u) << plain[0];
    // dy scaled before, dx shifted after: still one kernel.
    const TraceFn fused = [op](std::span<const Value> v) {
      std::vector<Value> in(v.begin(), v.end());
      in.back() = in.back() * 0.5f;
      return std::vector<Value>{GradOp(op, in) + 1.0f};
    };
    EXPECT_EQ(KernelNames(fused, shapes).size(), 1u);
  }
  EXPECT_EQ(
      KernelNames([](std::span<const Value> v) { return std::vector<Value>{logsumexp(v[0], 1)}; },
                  {{3, 4, 5}})
          .size(),
      1u);
}

TEST(RowGrad, FusedEpilogueMatchesReference) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  ASSERT_NE(rt, nullptr);
  const TraceFn trace = [](std::span<const Value> v) {
    return std::vector<Value>{GradOp(OpKind::kLayerNormGrad, {v[0] + 1.0f, v[1], v[2] * 0.5f}) *
                              v[0]};
  };
  absl::StatusOr<std::unique_ptr<Function>> fn =
      rt->JitTraced("ln_grad_fused", 3, trace, FunctionOptions{});
  ASSERT_TRUE(fn.ok()) << fn.status();
  const std::vector<HostTensor> in = GradInputs(OpKind::kLayerNormGrad, {5, 129}, 7);
  const ops::Tolerance tol = ops::Combine(ops::OpTolerance(OpKind::kLayerNormGrad, 129),
                                          ops::OpTolerance(OpKind::kMul, 1));
  EXPECT_EQ(testing::DiffFromReference(**fn, trace, in, tol), "");
}

// dy made by a matmul (a temporary read by nothing after the backward op): dx may take its
// buffer in place, and must still read every row before writing it.
TEST(RowGrad, DyFromAMatmulMatchesReference) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  ASSERT_NE(rt, nullptr);
  for (OpKind op : kGradOps) {
    SCOPED_TRACE(ir::OpName(op));
    const TraceFn trace = [op](std::span<const Value> v) {
      std::vector<Value> in(v.begin(), v.end() - 2);
      in.push_back(matmul(v[v.size() - 2], v[v.size() - 1]));
      return std::vector<Value>{GradOp(op, in)};
    };
    absl::StatusOr<std::unique_ptr<Function>> fn =
        rt->JitTraced("dy_matmul", IsNorm(op) ? 4 : 3, trace, FunctionOptions{});
    ASSERT_TRUE(fn.ok()) << fn.status();
    std::vector<HostTensor> in = GradInputs(op, {9, 70}, 23);
    in.pop_back();
    in.push_back(HostTensor::Random({9, 16}, 24, -0.5f, 0.5f));
    in.push_back(HostTensor::Random({16, 70}, 25, -0.5f, 0.5f));
    const ops::Tolerance tol =
        ops::Combine(ops::OpTolerance(op, 70), ops::OpTolerance(OpKind::kMatMul, 16));
    EXPECT_EQ(testing::DiffFromReference(**fn, trace, in, tol), "");
  }
}

// The tuner's candidates (the row-op space: vector width, unroll, streaming stores, grain) for
// the backward ops: each is checked against the reference by the tuner, and none fails.
TEST(RowGrad, TunerCandidatesAreAllCorrect) {
  RuntimeOptions options;
  options.tuning.mode = TuningMode::kBlocking;
  options.tuning.trials_per_kernel = 8;
  options.tuning.seed = 3;
  std::unique_ptr<Runtime> rt = testing::OpenRuntime(options);
  ASSERT_NE(rt, nullptr);
  for (OpKind op : {OpKind::kSoftmaxGrad, OpKind::kLayerNormGrad}) {
    const TraceFn trace = GradTrace(op);
    absl::StatusOr<std::unique_ptr<Function>> fn =
        rt->JitTraced(ir::OpName(op), IsNorm(op) ? 3 : 2, trace, FunctionOptions{});
    ASSERT_TRUE(fn.ok()) << fn.status();
    const std::vector<HostTensor> in = GradInputs(op, {6, 300}, 41);
    EXPECT_EQ(testing::DiffFromReference(**fn, trace, in, ops::OpTolerance(op, 300)), "");
  }
  const std::vector<KernelTuning> results = rt->tuning_results();
  ASSERT_EQ(results.size(), 2u);
  for (const KernelTuning& r : results) {
    EXPECT_EQ(r.ended, "completed") << r.kernel;
    EXPECT_GE(r.trials, 2) << r.kernel;
    EXPECT_EQ(r.failed, 0) << r.kernel;
  }
}

// logsumexp over each axis of a rank-3 tensor, with a fiber of -inf (-inf), one holding 1e30
// (exp would overflow without the max's shift: 1e30), and one holding a NaN (NaN).
TEST(LogSumExp, EveryAxisWithInfiniteHugeAndNaNFibers) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  ASSERT_NE(rt, nullptr);
  const std::vector<int64_t> shape = {3, 4, 5};
  const float inf = std::numeric_limits<float>::infinity();
  for (int axis : {0, 1, 2, -1}) {
    for (bool keep : {false, true}) {
      SCOPED_TRACE("axis " + std::to_string(axis) + (keep ? " keepdims" : ""));
      const int a = axis < 0 ? axis + 3 : axis;
      HostTensor x = HostTensor::Random(shape, 5 + a, -2, 2);
      // Fibers along the axis at the other dims' indices (0, 0), (1, 1) and (2, 2).
      auto fiber = [&](int other, int64_t k) {
        int64_t idx[3] = {other, other, other};
        idx[a] = k;
        return (idx[0] * 4 + idx[1]) * 5 + idx[2];
      };
      for (int64_t k = 0; k < shape[a]; ++k) x.data[fiber(0, k)] = -inf;
      x.data[fiber(1, 1)] = 1e30f;
      x.data[fiber(2, 0)] = std::nanf("");
      const TraceFn trace = [axis, keep](std::span<const Value> v) {
        return std::vector<Value>{logsumexp(v[0], axis, keep)};
      };
      absl::StatusOr<std::unique_ptr<Function>> fn =
          rt->JitTraced("logsumexp", 1, trace, FunctionOptions{});
      ASSERT_TRUE(fn.ok()) << fn.status();
      absl::StatusOr<std::vector<HostTensor>> got = testing::RunPto(**fn, {x});
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(testing::Compare(*got, *testing::RunReference(trace, {x}),
                                 ops::OpTolerance(OpKind::kLogSumExp, shape[a])),
                "");
      // The result's element at the other dims' indices (o, o).
      auto result = [&](int o) {
        int64_t out_shape[3] = {3, 4, 5}, idx[3] = {o, o, o};
        out_shape[a] = 1;
        idx[a] = 0;
        return (*got)[0].data[(idx[0] * out_shape[1] + idx[1]) * out_shape[2] + idx[2]];
      };
      EXPECT_EQ(result(0), -inf);
      EXPECT_EQ(result(1), 1e30f);
      EXPECT_TRUE(std::isnan(result(2)));
    }
  }
}

// The forward row ops and logsumexp differentiated by JitGrad (which emits the backward row
// ops, and the weight and bias gradients as reductions) against central differences of the
// reference in double: loss = sum(f(inputs) * r).
TEST(RowGrad, JitGradOfTheForwardOpsMatchesFiniteDifferences) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  ASSERT_NE(rt, nullptr);
  struct Case {
    std::string name;
    int arity;
    std::function<Value(std::span<const Value>)> fn;
    Shapes shapes;  // the inputs', then r's
  };
  std::vector<Case> cases = {
      {"softmax", 1, [](std::span<const Value> v) { return softmax(v[0]); }, {{3, 17}, {3, 17}}},
      {"log_softmax",
       1,
       [](std::span<const Value> v) { return log_softmax(v[0]); },
       {{2, 2, 9}, {2, 2, 9}}},
      {"layer_norm",
       3,
       [](std::span<const Value> v) { return layer_norm(v[0], v[1], v[2]); },
       {{4, 33}, {33}, {33}, {4, 33}}},
      {"rms_norm",
       2,
       [](std::span<const Value> v) { return rms_norm(v[0], v[1]); },
       {{5, 8}, {8}, {5, 8}}},
  };
  for (int axis : {0, 1, 2}) {
    Shapes shapes = {{3, 4, 5}, {3, 4, 5}};
    shapes[1].erase(shapes[1].begin() + axis);
    cases.push_back({"logsumexp axis " + std::to_string(axis), 1,
                     [axis](std::span<const Value> v) { return logsumexp(v[0], axis); }, shapes});
  }
  uint64_t seed = 300;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const TraceFn loss = [c](std::span<const Value> v) {
      const Value weighted = c.fn(v.first(c.arity)) * v[c.arity];
      return std::vector<Value>{reduce_sum(reshape(weighted, {-1}), 0)};
    };
    std::vector<HostTensor> in;
    for (const auto& s : c.shapes) in.push_back(HostTensor::Random(s, seed++, -1, 1));
    std::vector<int> wrt;
    for (int i = 0; i < c.arity; ++i) wrt.push_back(i);
    absl::StatusOr<testing::GradientCheckResult> r = testing::CheckGradients(*rt, loss, in, wrt);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_GT(r->elements, 0);
    EXPECT_LE(r->worst_ratio, 1.0) << r->worst;
  }
}

absl::Status ShapeError(OpKind op, const Shapes& shapes) {
  std::vector<ir::Shape> in;
  for (const auto& s : shapes) in.emplace_back(s.begin(), s.end());
  return ops::InferShape(op, ir::Attrs{}, in).status();
}

TEST(RowGrad, ShapeErrors) {
  EXPECT_EQ(ShapeError(OpKind::kSoftmaxGrad, {{2, 3}, {2, 4}}).message(),
            "softmax_grad: input 1 (dy) shape [2, 4] does not match input 0 (y) shape [2, 3]");
  EXPECT_EQ(ShapeError(OpKind::kLogSoftmaxGrad, {{}, {}}).message(),
            "log_softmax_grad: input 0 shape [] has rank 0; expected rank >= 1");
  EXPECT_EQ(ShapeError(OpKind::kLayerNormGrad, {{2, 3}, {4}, {2, 3}}).message(),
            "layer_norm_grad: input 1 (weight) shape [4] does not match the last dim of input 0 "
            "shape [2, 3] (expected [3])");
  EXPECT_EQ(ShapeError(OpKind::kRmsNormGrad, {{2, 3}, {3}, {3}}).message(),
            "rms_norm_grad: input 2 (dy) shape [3] does not match input 0 (x) shape [2, 3]");
  EXPECT_EQ(ShapeError(OpKind::kRmsNormGrad, {{2, 3}, {3}}).message(),
            "rms_norm_grad: expects 3 inputs, got 2");
  EXPECT_EQ(ShapeError(OpKind::kSoftmaxGrad, {{2, 3}}).message(),
            "softmax_grad: expects 2 inputs, got 1");
  const absl::Status s = ShapeError(OpKind::kLogSumExp, {{2, 3}});
  EXPECT_TRUE(s.ok()) << s;
  ir::Attrs axis3;
  axis3.axis = 3;
  const ir::Shape x = {ir::SymExpr(2), ir::SymExpr(3)};
  EXPECT_EQ(ops::InferShape(OpKind::kLogSumExp, axis3, {&x, 1}).status().message(),
            "logsumexp: axis 3 is out of range for input 0 shape [2, 3] (rank 2: expected -2 <= "
            "axis < 2)");
  const ir::DType f16[] = {ir::DType::kF16, ir::DType::kF16};
  EXPECT_EQ(ops::InferDType(OpKind::kSoftmaxGrad, {}, f16).status().message(),
            "softmax_grad: input 0 dtype f16 is not supported yet (only f32 and i32)");
}

}  // namespace
}  // namespace pto
