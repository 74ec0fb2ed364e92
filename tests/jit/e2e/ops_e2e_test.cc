// Every op compiled by pto against its ops/ reference, on random values and shapes that are not
// multiples of any tile, with size-1 and size-0 dims; per-op tolerances from ops/tolerance.h.
// The whole suite runs for the host ISA and again with the ISA narrowed to AVX2 and SSE2.
#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "jit/trace.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

using ops::HostTensor;
using Shapes = std::vector<std::vector<int64_t>>;

struct OpCase {
  std::string name;
  int arity;
  std::function<Value(std::span<const Value>)> fn;
  ir::OpKind kind;  // for the tolerance
  std::vector<Shapes> shapes;
  // Reduction length of a case (for the tolerance), from its input shapes.
  std::function<int64_t(const Shapes&)> reduction = [](const Shapes&) { return int64_t{1}; };
  float lo = -2.0f, hi = 2.0f;
};

const std::vector<Shapes> kUnaryShapes = {{{}},      {{0}},        {{1}},     {{7}},
                                          {{3, 17}}, {{2, 5, 33}}, {{1, 130}}};
const std::vector<Shapes> kBinaryShapes = {
    {{}, {}},           {{0}, {0}}, {{1}, {9}},       {{3, 17}, {3, 17}}, {{4, 1, 9}, {5, 1}},
    {{2, 5, 33}, {33}}, {{31}, {}}, {{6, 1}, {1, 19}}};
const std::vector<Shapes> kRowShapes = {{{1, 1}}, {{3, 17}}, {{2, 4, 33}}, {{5, 100}}, {{0, 8}}};

int64_t LastDim(const Shapes& s) { return s[0].empty() ? 1 : s[0].back(); }

std::vector<OpCase> AllCases() {
  std::vector<OpCase> c;
  auto unary = [&](std::string name, ir::OpKind kind, Value (*f)(Value), float lo = -3,
                   float hi = 3) {
    c.push_back({name, 1, [f](std::span<const Value> v) { return f(v[0]); }, kind, kUnaryShapes,
                 [](const Shapes&) { return int64_t{1}; }, lo, hi});
  };
  unary("neg", ir::OpKind::kNeg, [](Value x) { return -x; });
  unary("abs", ir::OpKind::kAbs, [](Value x) { return pto::abs(x); });
  unary(
      "exp", ir::OpKind::kExp, [](Value x) { return pto::exp(x); }, -20, 20);
  unary(
      "log", ir::OpKind::kLog, [](Value x) { return pto::log(x); }, 1e-3f, 100);
  unary(
      "sqrt", ir::OpKind::kSqrt, [](Value x) { return pto::sqrt(x); }, 0, 100);
  unary(
      "rsqrt", ir::OpKind::kRsqrt, [](Value x) { return pto::rsqrt(x); }, 1e-2f, 100);
  unary(
      "tanh", ir::OpKind::kTanh, [](Value x) { return pto::tanh(x); }, -6, 6);
  unary(
      "sigmoid", ir::OpKind::kSigmoid, [](Value x) { return pto::sigmoid(x); }, -12, 12);
  unary("relu", ir::OpKind::kRelu, [](Value x) { return pto::relu(x); });
  unary(
      "gelu_erf", ir::OpKind::kGeluErf, [](Value x) { return pto::gelu(x); }, -6, 6);
  unary(
      "gelu_tanh", ir::OpKind::kGeluTanh,
      [](Value x) { return pto::gelu(x, GeluApproximation::kTanh); }, -6, 6);
  unary(
      "silu", ir::OpKind::kSilu, [](Value x) { return pto::silu(x); }, -10, 10);
  unary(
      "erf", ir::OpKind::kErf, [](Value x) { return pto::erf(x); }, -5, 5);
  // What gelu's gradient rule emits; no public Value function.
  unary(
      "gelu_erf_grad", ir::OpKind::kGeluErfGrad,
      [](Value x) {
        return x.state()->AddNode(ir::OpKind::kGeluErfGrad, {}, std::vector<Value>{x});
      },
      -6, 6);
  unary("cast_f32", ir::OpKind::kCast, [](Value x) { return pto::cast(x, DType::kF32); });
  auto binary = [&](std::string name, ir::OpKind kind, Value (*f)(Value, Value), float lo = -2,
                    float hi = 2) {
    c.push_back({name, 2, [f](std::span<const Value> v) { return f(v[0], v[1]); }, kind,
                 kBinaryShapes, [](const Shapes&) { return int64_t{1}; }, lo, hi});
  };
  binary("add", ir::OpKind::kAdd, [](Value a, Value b) { return a + b; });
  binary("sub", ir::OpKind::kSub, [](Value a, Value b) { return a - b; });
  binary("mul", ir::OpKind::kMul, [](Value a, Value b) { return a * b; });
  binary(
      "div", ir::OpKind::kDiv, [](Value a, Value b) { return a / b; }, 0.5f, 3);
  binary("max", ir::OpKind::kMax, [](Value a, Value b) { return maximum(a, b); });
  binary("min", ir::OpKind::kMin, [](Value a, Value b) { return minimum(a, b); });
  c.push_back({"scalar_affine", 1, [](std::span<const Value> v) { return 2.5f * v[0] - 1.0f; },
               ir::OpKind::kMul, kUnaryShapes});
  c.push_back({"scalar_div", 1, [](std::span<const Value> v) { return 1.0f / (v[0] + 3.0f); },
               ir::OpKind::kDiv, kUnaryShapes});
  const std::vector<Shapes> reduce_shapes = {{{7}}, {{3, 17}}, {{2, 5, 33}}, {{4, 0}}, {{1, 1}}};
  for (int axis : {0, -1, 1}) {
    for (bool keep : {false, true}) {
      auto filtered = reduce_shapes;
      if (axis == 1) filtered = {{{3, 17}}, {{2, 5, 33}}, {{4, 0}}, {{0, 3}}};
      auto red = [axis](const Shapes& s) {
        int a = axis < 0 ? static_cast<int>(s[0].size()) + axis : axis;
        return s[0][a];
      };
      std::string suffix = "_axis" + std::to_string(axis) + (keep ? "_keep" : "");
      c.push_back({"reduce_sum" + suffix, 1,
                   [axis, keep](std::span<const Value> v) { return reduce_sum(v[0], axis, keep); },
                   ir::OpKind::kReduceSum, filtered, red});
      c.push_back({"reduce_max" + suffix, 1,
                   [axis, keep](std::span<const Value> v) { return reduce_max(v[0], axis, keep); },
                   ir::OpKind::kReduceMax, filtered, red});
      c.push_back({"reduce_mean" + suffix, 1,
                   [axis, keep](std::span<const Value> v) { return reduce_mean(v[0], axis, keep); },
                   ir::OpKind::kReduceMean, filtered, red});
    }
  }
  c.push_back({"softmax", 1, [](std::span<const Value> v) { return softmax(v[0]); },
               ir::OpKind::kSoftmax, kRowShapes, LastDim, -8, 8});
  c.push_back({"log_softmax", 1, [](std::span<const Value> v) { return log_softmax(v[0]); },
               ir::OpKind::kLogSoftmax, kRowShapes, LastDim, -8, 8});
  auto with_params = [](const std::vector<Shapes>& rows, int params) {
    std::vector<Shapes> out;
    for (Shapes s : rows) {
      for (int p = 0; p < params; ++p) s.push_back({s[0].back()});
      out.push_back(s);
    }
    return out;
  };
  c.push_back({"layer_norm", 3,
               [](std::span<const Value> v) { return layer_norm(v[0], v[1], v[2]); },
               ir::OpKind::kLayerNorm, with_params(kRowShapes, 2), LastDim});
  c.push_back({"rms_norm", 2, [](std::span<const Value> v) { return rms_norm(v[0], v[1]); },
               ir::OpKind::kRmsNorm, with_params(kRowShapes, 1), LastDim});
  auto k_of = [](int which, bool transposed) {
    return [which, transposed](const Shapes& s) {
      const auto& a = s[which];
      return transposed ? a[a.size() - 2] : a.back();
    };
  };
  c.push_back({"matmul",
               2,
               [](std::span<const Value> v) { return matmul(v[0], v[1]); },
               ir::OpKind::kMatMul,
               {{{1, 1}, {1, 1}},
                {{3, 5}, {5, 7}},
                {{17, 33}, {33, 19}},
                {{1, 64}, {64, 40}},
                {{0, 4}, {4, 3}},
                {{4, 0}, {0, 3}},
                {{2, 9, 13}, {2, 13, 11}},
                {{3, 2, 9, 13}, {13, 10}},
                {{40, 70}, {70, 100}}},
               k_of(0, false)});
  c.push_back({"matmul_ta",
               2,
               [](std::span<const Value> v) { return matmul(v[0], v[1], {.transpose_a = true}); },
               ir::OpKind::kMatMul,
               {{{5, 3}, {5, 7}}, {{33, 17}, {33, 19}}, {{2, 13, 9}, {2, 13, 11}}},
               k_of(0, true)});
  c.push_back({"matmul_tb",
               2,
               [](std::span<const Value> v) { return matmul(v[0], v[1], {.transpose_b = true}); },
               ir::OpKind::kMatMul,
               {{{3, 5}, {7, 5}}, {{17, 33}, {19, 33}}, {{2, 9, 13}, {11, 13}}},
               k_of(0, false)});
  c.push_back({"linear",
               3,
               [](std::span<const Value> v) { return linear(v[0], v[1], v[2]); },
               ir::OpKind::kMatMul,
               {{{5, 12}, {7, 12}, {7}}, {{2, 3, 20}, {9, 20}, {9}}},
               k_of(0, false)});
  c.push_back({"transpose",
               1,
               [](std::span<const Value> v) {
                 return transpose(v[0], {2, 0, 1});
               },
               ir::OpKind::kTranspose,
               {{{2, 3, 5}}, {{1, 7, 9}}, {{4, 0, 3}}}});
  c.push_back({"transpose_then_exp",
               1,
               [](std::span<const Value> v) { return pto::exp(transpose(v[0], 0, 1)); },
               ir::OpKind::kExp,
               {{{3, 17}}, {{9, 1}}}});
  c.push_back({"reshape",
               1,
               [](std::span<const Value> v) {
                 return reshape(v[0], {-1, 6});
               },
               ir::OpKind::kReshape,
               {{{4, 3, 2}}, {{6}}, {{0, 6}}}});
  c.push_back({"reshape_of_transpose",
               1,
               [](std::span<const Value> v) { return reshape(transpose(v[0], 0, 1), {-1}); },
               ir::OpKind::kReshape,
               {{{3, 5}}, {{4, 1}}}});
  // Copies that transpose their last two dims move blocks of vector-width rows and columns
  // through registers; rows and columns outside whole blocks (and runs of the inner row dim
  // that end inside a block) take the element path.
  c.push_back({"transpose",
               1,
               [](std::span<const Value> v) { return transpose(v[0], 0, 1); },
               ir::OpKind::kTranspose,
               {{{19, 37}}, {{64, 40}}, {{3, 2}}}});
  c.push_back({"transpose_inner",
               1,
               [](std::span<const Value> v) { return transpose(v[0], 1, 2); },
               ir::OpKind::kTranspose,
               {{{3, 17, 21}}, {{2, 16, 9}}}});
  c.push_back({"reshape_of_wide_transpose",
               1,
               [](std::span<const Value> v) { return reshape(transpose(v[0], 1, 2), {-1}); },
               ir::OpKind::kReshape,
               {{{2, 37, 19}}, {{1, 64, 24}}}});
  c.push_back({"matmul_transposed_a",
               2,
               [](std::span<const Value> v) { return matmul(transpose(v[0], 0, 1), v[1]); },
               ir::OpKind::kMatMul,
               {{{13, 11}, {13, 260}}, {{40, 33}, {40, 257}}},
               [](const Shapes& s) { return s[0][0]; }});
  c.push_back({"concat",
               3,
               [](std::span<const Value> v) {
                 return concat({v[0], v[1], v[2]}, 1);
               },
               ir::OpKind::kConcat,
               {{{2, 3}, {2, 1}, {2, 5}}, {{3, 0, 2}, {3, 4, 2}, {3, 1, 2}}}});
  c.push_back({"slice",
               1,
               [](std::span<const Value> v) { return slice(v[0], -1, 1, 8, 2); },
               ir::OpKind::kSlice,
               {{{3, 10}}, {{2, 4, 9}}, {{5, 1}}}});
  c.push_back({"slice_relu",
               1,
               [](std::span<const Value> v) { return relu(slice(v[0], 0, 1, INT64_MAX)); },
               ir::OpKind::kRelu,
               {{{3, 10}}, {{9, 4}}}});
  return c;
}

class OpsEndToEnd : public ::testing::TestWithParam<TargetIsa> {};

TEST_P(OpsEndToEnd, EveryOpMatchesItsReference) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntimeForIsa(GetParam());
  if (rt == nullptr) GTEST_SKIP() << "this CPU cannot run the requested ISA";
  uint64_t seed = 1;
  int checked = 0;
  for (const OpCase& op : AllCases()) {
    for (const Shapes& shapes : op.shapes) {
      SCOPED_TRACE(op.name + " on input 0 of rank " + std::to_string(shapes[0].size()));
      TraceFn trace = [f = op.fn](std::span<const Value> in) { return std::vector<Value>{f(in)}; };
      std::vector<HostTensor> inputs;
      for (const auto& s : shapes) inputs.push_back(HostTensor::Random(s, seed++, op.lo, op.hi));
      absl::StatusOr<std::unique_ptr<Function>> fn =
          rt->JitTraced(op.name, op.arity, trace, FunctionOptions{});
      ASSERT_TRUE(fn.ok()) << fn.status();
      absl::StatusOr<std::vector<HostTensor>> got = testing::RunPto(**fn, inputs);
      absl::StatusOr<std::vector<HostTensor>> want = testing::RunReference(trace, inputs);
      if (!got.ok() || !want.ok()) {
        ADD_FAILURE() << "pto: " << got.status() << "; reference: " << want.status();
        continue;
      }
      const ops::Tolerance tol = ops::OpTolerance(op.kind, op.reduction(shapes));
      EXPECT_EQ(testing::Compare(*got, *want, tol), "");
      ++checked;
    }
  }
  EXPECT_GT(checked, 150);
}

INSTANTIATE_TEST_SUITE_P(Isa, OpsEndToEnd,
                         ::testing::Values(TargetIsa::kHost, TargetIsa::kAvx2, TargetIsa::kSse2),
                         [](const ::testing::TestParamInfo<TargetIsa>& info) {
                           switch (info.param) {
                             case TargetIsa::kHost:
                               return std::string("Host");
                             case TargetIsa::kAvx2:
                               return std::string("Avx2");
                             case TargetIsa::kSse2:
                               return std::string("Sse2");
                             default:
                               return std::string("Other");
                           }
                         });

}  // namespace
}  // namespace pto
