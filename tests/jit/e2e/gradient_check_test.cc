// Every differentiable op's gradient rule, compiled through JitGrad, against central finite
// differences of the reference in double (tests/jit/e2e/gradient_check.h states the step and
// the tolerance), on shapes with broadcasting, size-1 dims and widths that are not multiples
// of the vector width. The summary printed at the end lists each op's cases and its worst
// error as a fraction of the tolerance.
#include "tests/jit/e2e/gradient_check.h"

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "jit/trace.h"
#include "ops/host_tensor.h"
#include "pto/runtime.h"
#include "tests/jit/e2e/test_util.h"

namespace pto::testing {
namespace {

using Shape = std::vector<int64_t>;
using OpFn = std::function<Value(std::span<const Value>)>;

struct GradCase {
  std::string op;  // for the summary
  std::vector<Shape> shapes;
  OpFn fn;
  float lo = -1, hi = 1;  // input values
  // Inputs after the differentiated ones, not differentiated (gather's i32 indices).
  std::vector<ops::HostTensor> fixed = {};
};

// loss = sum(fn(inputs) * r) with r a fixed random tensor of the result's shape (its last
// input, not differentiated), so that every output element has its own cotangent.
TraceFn LossOf(const OpFn& fn, int num_inputs) {
  return [fn, num_inputs](std::span<const Value> v) {
    Value y = fn(v.first(num_inputs));
    Value weighted = y * v[num_inputs];
    Value flat = reshape(weighted, {-1});
    return std::vector<Value>{reduce_sum(flat, 0)};
  };
}

std::vector<GradCase> Cases() {
  std::vector<GradCase> c;
  auto binary = [&](std::string op, Value (*f)(Value, Value), float lo = -1, float hi = 1) {
    const std::vector<std::vector<Shape>> shapes = {
        {{3, 5}, {3, 5}}, {{4, 1, 7}, {3, 7}}, {{1}, {6, 9}}, {{2, 17}, {17}}, {{5, 1}, {1, 3}}};
    for (const auto& s : shapes) {
      c.push_back({op, s, [f](std::span<const Value> v) { return f(v[0], v[1]); }, lo, hi});
    }
  };
  binary("add", [](Value a, Value b) { return a + b; });
  binary("sub", [](Value a, Value b) { return a - b; });
  binary("mul", [](Value a, Value b) { return a * b; });
  binary(
      "div", [](Value a, Value b) { return a / b; }, 0.5f, 2.0f);
  auto unary = [&](std::string op, Value (*f)(Value), float lo = -1, float hi = 1) {
    for (const Shape& s : std::vector<Shape>{{13}, {3, 9}, {2, 1, 33}}) {
      c.push_back({op, {s}, [f](std::span<const Value> v) { return f(v[0]); }, lo, hi});
    }
  };
  unary("neg", [](Value x) { return -x; });
  unary("exp", [](Value x) { return exp(x); });
  unary(
      "log", [](Value x) { return log(x); }, 0.2f, 3.0f);
  unary(
      "sqrt", [](Value x) { return sqrt(x); }, 0.2f, 3.0f);
  unary(
      "rsqrt", [](Value x) { return rsqrt(x); }, 0.2f, 3.0f);
  unary(
      "tanh", [](Value x) { return tanh(x); }, -2, 2);
  unary(
      "sigmoid", [](Value x) { return sigmoid(x); }, -3, 3);
  unary(
      "gelu_erf", [](Value x) { return gelu(x); }, -3, 3);
  unary(
      "gelu_tanh", [](Value x) { return gelu(x, GeluApproximation::kTanh); }, -3, 3);
  unary(
      "silu", [](Value x) { return silu(x); }, -3, 3);
  unary(
      "erf", [](Value x) { return erf(x); }, -2, 2);
  // gelu's derivative, which gelu's gradient rule emits: its own rule is gelu's second derivative.
  unary(
      "gelu_erf_grad",
      [](Value x) {
        return x.state()->AddNode(ir::OpKind::kGeluErfGrad, {}, std::vector<Value>{x});
      },
      -3, 3);
  unary("cast", [](Value x) { return cast(x, DType::kF32); });
  for (int axis : {0, 1, 2}) {
    for (bool keep : {false, true}) {
      c.push_back({"reduce_sum", {{3, 4, 5}}, [axis, keep](std::span<const Value> v) {
                     return reduce_sum(v[0], axis, keep);
                   }});
      c.push_back({"reduce_mean", {{3, 4, 5}}, [axis, keep](std::span<const Value> v) {
                     return reduce_mean(v[0], axis, keep);
                   }});
    }
  }
  // matmul: every transpose combination, batched, broadcast batch dims.
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const Shape a = ta ? Shape{5, 3} : Shape{3, 5}, b = tb ? Shape{7, 5} : Shape{5, 7};
      c.push_back({"matmul", {a, b}, [ta, tb](std::span<const Value> v) {
                     return matmul(v[0], v[1], {.transpose_a = ta, .transpose_b = tb});
                   }});
    }
  }
  c.push_back({"matmul", {{2, 3, 4, 5}, {5, 6}}, [](std::span<const Value> v) {
                 return matmul(v[0], v[1]);
               }});
  c.push_back(
      {"matmul", {{3, 4}, {2, 4, 9}}, [](std::span<const Value> v) { return matmul(v[0], v[1]); }});
  c.push_back({"matmul", {{2, 1, 3, 4}, {1, 3, 4, 5}}, [](std::span<const Value> v) {
                 return matmul(v[0], v[1], {.transpose_b = false});
               }});
  c.push_back({"matmul", {{2, 3, 4}, {2, 6, 4}}, [](std::span<const Value> v) {
                 return matmul(v[0], v[1], {.transpose_b = true});
               }});
  // Data movement.
  c.push_back({"transpose", {{2, 3, 5}}, [](std::span<const Value> v) {
                 return transpose(v[0], {2, 0, 1});
               }});
  c.push_back({"reshape", {{2, 3, 5}}, [](std::span<const Value> v) {
                 return reshape(v[0], {6, 5});
               }});
  c.push_back({"reshape", {{6, 5}}, [](std::span<const Value> v) {
                 return reshape(v[0], {2, 3, 5});
               }});
  c.push_back({"concat", {{2, 3}, {2, 5}, {2, 1}}, [](std::span<const Value> v) {
                 return concat({v[0], v[1], v[2]}, 1);
               }});
  c.push_back({"concat", {{1, 4}, {3, 4}}, [](std::span<const Value> v) {
                 return concat({v[0], v[1]}, 0);
               }});
  c.push_back({"slice", {{4, 11}}, [](std::span<const Value> v) { return slice(v[0], 1, 2, 9); }});
  // Strided: a start inside the first block, one past it, a last block that overhangs the end.
  c.push_back({"slice", {{3, 10}}, [](std::span<const Value> v) {
                 return slice(v[0], 1, 1, INT64_MAX, 3);
               }});
  c.push_back(
      {"slice", {{11, 2}}, [](std::span<const Value> v) { return slice(v[0], 0, 5, 10, 2); }});
  c.push_back({"slice", {{7}}, [](std::span<const Value> v) { return slice(v[0], 0, 0, 7, 4); }});
  c.push_back(
      {"slice", {{9, 3}}, [](std::span<const Value> v) { return slice(v[0], 0, -4, INT64_MAX); }});
  // Selections: random values have no ties; max(x, x) is all ties (each side gets half).
  binary("max", [](Value a, Value b) { return maximum(a, b); });
  binary("min", [](Value a, Value b) { return minimum(a, b); });
  c.push_back({"max", {{4, 5}}, [](std::span<const Value> v) { return maximum(v[0], v[0]); }});
  unary("relu", [](Value x) { return relu(x); });
  unary("abs", [](Value x) { return abs(x); });
  c.push_back({"where", {{3, 6}, {3, 6}, {6}}, [](std::span<const Value> v) {
                 return where(gt(v[0], 0.0f), v[1], v[2]);
               }});
  c.push_back({"where", {{2, 5}, {1}, {2, 5}}, [](std::span<const Value> v) {
                 return where(lt(v[0], 0.25f), v[1], v[2] * v[2]);
               }});
  for (int axis : {0, 2}) {
    c.push_back({"reduce_max", {{3, 4, 5}}, [axis](std::span<const Value> v) {
                   return reduce_max(v[0], axis);
                 }});
    c.push_back({"logsumexp", {{3, 4, 5}}, [axis](std::span<const Value> v) {
                   return logsumexp(v[0], axis, axis == 0);
                 }});
  }
  // Row operators.
  for (const Shape& s : std::vector<Shape>{{3, 7}, {2, 3, 17}, {1, 1}}) {
    c.push_back({"softmax", {s}, [](std::span<const Value> v) { return softmax(v[0]); }, -2, 2});
    c.push_back(
        {"log_softmax", {s}, [](std::span<const Value> v) { return log_softmax(v[0]); }, -2, 2});
  }
  for (int64_t n : {1, 8, 33}) {
    c.push_back({"layer_norm", {{4, n}, {n}, {n}}, [](std::span<const Value> v) {
                   return layer_norm(v[0], v[1], v[2]);
                 }});
    c.push_back({"rms_norm", {{2, 3, n}, {n}}, [](std::span<const Value> v) {
                   return rms_norm(v[0], v[1]);
                 }});
  }
  // Indexing: an embedding table [vocab 11, dim 5] looked up by tokens [3, 4] with repeats
  // (their gradients add up), and axis 1 of a [4, 6, 3] tensor.
  c.push_back({"gather",
               {{11, 5}},
               [](std::span<const Value> v) { return gather(v[0], v[1], 0); },
               -1,
               1,
               {ops::HostTensor::I32({3, 4}, {3, 7, 3, 0, 10, 7, 7, 1, 3, 3, 5, 0})}});
  c.push_back({"gather",
               {{4, 6, 3}},
               [](std::span<const Value> v) { return gather(v[0], v[1], 1); },
               -1,
               1,
               {ops::HostTensor::I32({5}, {5, 0, 2, 5, 5})}});
  return c;
}

TEST(GradientCheck, EveryOpAgainstFiniteDifferencesOfTheReferenceInDouble) {
  std::unique_ptr<Runtime> rt = OpenRuntime();
  std::map<std::string, std::pair<int, double>> summary;  // op -> cases, worst ratio
  uint64_t seed = 100;
  for (const GradCase& gc : Cases()) {
    const int n = static_cast<int>(gc.shapes.size());
    const int all = n + static_cast<int>(gc.fixed.size());
    std::vector<ops::HostTensor> inputs;
    for (const Shape& s : gc.shapes)
      inputs.push_back(ops::HostTensor::Random(s, ++seed, gc.lo, gc.hi));
    inputs.insert(inputs.end(), gc.fixed.begin(), gc.fixed.end());
    // r: the shape of the op's result, from a pto call of the op alone.
    absl::StatusOr<std::unique_ptr<Function>> op_alone = rt->JitTraced(
        "op", all, [&gc](std::span<const Value> v) { return std::vector<Value>{gc.fn(v)}; }, {});
    ASSERT_TRUE(op_alone.ok()) << op_alone.status();
    absl::StatusOr<std::vector<ops::HostTensor>> out = RunPto(**op_alone, inputs);
    ASSERT_TRUE(out.ok()) << gc.op << ": " << out.status();
    inputs.push_back(ops::HostTensor::Random((*out)[0].shape, ++seed));
    std::vector<int> wrt;
    for (int i = 0; i < n; ++i) wrt.push_back(i);
    absl::StatusOr<GradientCheckResult> r = CheckGradients(*rt, LossOf(gc.fn, all), inputs, wrt);
    ASSERT_TRUE(r.ok()) << gc.op << ": " << r.status();
    EXPECT_LE(r->worst_ratio, 1.0)
        << gc.op << " " << ops::HostTensor{gc.shapes[0], {}}.ShapeString() << ": " << r->worst;
    EXPECT_LE(r->loss_difference, 1e-5) << gc.op;
    EXPECT_GT(r->elements, 0);
    auto& [cases, worst] = summary[gc.op];
    ++cases;
    worst = std::max(worst, r->worst_ratio);
  }
  std::printf("%-12s %6s %s\n", "op", "cases", "worst error / tolerance");
  for (const auto& [op, s] : summary)
    std::printf("%-12s %6d %.3f\n", op.c_str(), s.first, s.second);
}

}  // namespace
}  // namespace pto::testing
