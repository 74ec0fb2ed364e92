// The reference in f64 (the wide type of gradient checks) against itself in f32, and i32 through
// the data-movement ops.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "jit/ir/graph.h"
#include "ops/host_tensor.h"
#include "ops/reference.h"
#include "ops/shape_rules.h"
#include "reference_test_util.h"

namespace pto::ops {
namespace {

using ir::DType;
using ir::OpKind;
using testing::Eval;
using testing::T;

struct Case {
  std::string name;
  OpKind op;
  ir::Attrs attrs;
  std::vector<HostTensor> inputs;
};

ir::Attrs Axis(int64_t axis) {
  ir::Attrs a;
  a.axis = axis;
  return a;
}

// Every op with a reference loop, on random f32 inputs in [-2, 2).
std::vector<Case> Cases() {
  std::vector<Case> cases;
  uint64_t seed = 1;
  auto rnd = [&](std::vector<int64_t> shape) {
    return HostTensor::Random(std::move(shape), seed++, -2.0f, 2.0f);
  };
  for (int v = 0; v < 256; ++v) {
    const OpKind op = static_cast<OpKind>(v);
    if (ir::IsUnaryElementwise(op)) {
      cases.push_back({std::string(ir::OpName(op)), op, {}, {rnd({3, 5})}});
    } else if (ir::IsBinaryElementwise(op)) {
      cases.push_back({std::string(ir::OpName(op)), op, {}, {rnd({3, 5}), rnd({5})}});
    }
  }
  cases.push_back({"cast", OpKind::kCast, {}, {rnd({7})}});
  for (OpKind op : {OpKind::kReduceSum, OpKind::kReduceMax, OpKind::kReduceMean}) {
    cases.push_back({std::string(ir::OpName(op)), op, Axis(1), {rnd({3, 17, 2})}});
  }
  for (OpKind op : {OpKind::kSoftmax, OpKind::kLogSoftmax}) {
    cases.push_back({std::string(ir::OpName(op)), op, Axis(-1), {rnd({4, 9})}});
  }
  ir::Attrs eps;
  eps.axis = -1;
  eps.eps = 1e-5;
  cases.push_back({"layer_norm", OpKind::kLayerNorm, eps, {rnd({4, 9}), rnd({9}), rnd({9})}});
  cases.push_back({"rms_norm", OpKind::kRmsNorm, eps, {rnd({4, 9}), rnd({9})}});
  cases.push_back({"logsumexp", OpKind::kLogSumExp, Axis(1), {rnd({3, 17, 2})}});
  for (OpKind op : {OpKind::kSoftmaxGrad, OpKind::kLogSoftmaxGrad}) {
    cases.push_back({std::string(ir::OpName(op)), op, {}, {rnd({4, 9}), rnd({4, 9})}});
  }
  for (OpKind op : {OpKind::kLayerNormGrad, OpKind::kRmsNormGrad}) {
    cases.push_back({std::string(ir::OpName(op)), op, eps, {rnd({4, 9}), rnd({9}), rnd({4, 9})}});
  }
  ir::Attrs tb;
  tb.transpose_b = true;
  cases.push_back({"matmul", OpKind::kMatMul, {}, {rnd({2, 3, 33}), rnd({33, 5})}});
  cases.push_back({"matmul_tb", OpKind::kMatMul, tb, {rnd({3, 33}), rnd({2, 5, 33})}});
  ir::Attrs perm;
  perm.ints = {2, 0, 1};
  cases.push_back({"transpose", OpKind::kTranspose, perm, {rnd({2, 3, 4})}});
  ir::Attrs shape;
  shape.ints = {4, -1};
  cases.push_back({"reshape", OpKind::kReshape, shape, {rnd({2, 3, 4})}});
  cases.push_back({"concat", OpKind::kConcat, Axis(1), {rnd({2, 3}), rnd({2, 1}), rnd({2, 2})}});
  ir::Attrs slice = Axis(1);
  slice.start = 1;
  slice.end = 7;
  slice.step = 2;
  cases.push_back({"slice", OpKind::kSlice, slice, {rnd({3, 8})}});
  return cases;
}

// Arithmetic is in double either way and a result is rounded once: the f32 result is the f64
// result rounded to float, exactly.
TEST(ReferenceDTypeTest, EveryOpInF64RoundsToItsF32Result) {
  int checked = 0;
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<HostTensor> f32 = Eval(c.op, c.attrs, c.inputs);
    if (!f32.ok()) continue;  // an op kind without a reference loop yet
    ASSERT_EQ(f32->dtype, DType::kF32);
    std::vector<HostTensor> wide;
    for (const HostTensor& t : c.inputs) wide.push_back(t.ToF64());
    absl::StatusOr<HostTensor> f64 = Eval(c.op, c.attrs, wide);
    ASSERT_TRUE(f64.ok()) << f64.status();
    EXPECT_EQ(f64->dtype, DType::kF64);
    EXPECT_TRUE(f64->data.empty());
    ASSERT_EQ(f64->shape, f32->shape);
    ASSERT_EQ(f64->size(), f32->size());
    for (int64_t i = 0; i < f32->size(); ++i) {
      const float want = f32->data[i];
      const float got = static_cast<float>(f64->wide[i]);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << i;
      } else {
        EXPECT_EQ(got, want) << i;
      }
    }
    ++checked;
  }
  // 13 unary, 6 binary, cast, 3 reductions and logsumexp, 4 row ops and their 4 backward ops, 2
  // matmuls, 4 moves.
  EXPECT_GE(checked, 38);
}

// One f64 input makes a float op f64; its f32 inputs are widened.
TEST(ReferenceDTypeTest, MixedF32AndF64InputsGiveF64) {
  HostTensor a = HostTensor::Zeros({2}, DType::kF64);
  a.Set(0, 0.1);
  a.Set(1, 1e-10);
  const HostTensor b{{2}, {1.0f, 1.0f}};
  absl::StatusOr<HostTensor> sum = Eval(OpKind::kAdd, {}, {b, a});
  ASSERT_TRUE(sum.ok()) << sum.status();
  EXPECT_EQ(sum->dtype, DType::kF64);
  EXPECT_EQ(sum->wide, (std::vector<double>{1.1, 1.0 + 1e-10}));
  ir::Attrs eps;
  eps.eps = 1e-5;
  const HostTensor x = HostTensor::Zeros({1, 2}, DType::kF64);
  absl::StatusOr<HostTensor> ln = Eval(OpKind::kLayerNorm, eps, {x, b, b});
  ASSERT_TRUE(ln.ok()) << ln.status();
  EXPECT_EQ(ln->dtype, DType::kF64);
  EXPECT_EQ(ln->wide, (std::vector<double>{1.0, 1.0}));
}

// |got - want| in f64 is strictly below the f32 result's error for values a double holds well.
void ExpectF64Closer(OpKind op, const ir::Attrs& attrs, const std::vector<HostTensor>& f32_inputs,
                     double want, int64_t index = 0) {
  SCOPED_TRACE(std::string(ir::OpName(op)));
  absl::StatusOr<HostTensor> f32 = Eval(op, attrs, f32_inputs);
  std::vector<HostTensor> wide;
  for (const HostTensor& t : f32_inputs) wide.push_back(t.ToF64());
  absl::StatusOr<HostTensor> f64 = Eval(op, attrs, wide);
  ASSERT_TRUE(f32.ok()) << f32.status();
  ASSERT_TRUE(f64.ok()) << f64.status();
  const double err32 = std::fabs(f32->at(index) - want);
  const double err64 = std::fabs(f64->at(index) - want);
  EXPECT_LT(err64, err32);
  EXPECT_LE(err64, 1e-15 * std::fabs(want));
}

TEST(ReferenceDTypeTest, F64IsCloserToTheExactValue) {
  ExpectF64Closer(OpKind::kExp, {}, {T({1}, {1.0f})}, 2.718281828459045);
  ExpectF64Closer(OpKind::kSqrt, {}, {T({1}, {2.0f})}, 1.4142135623730951);
  ExpectF64Closer(OpKind::kDiv, {}, {T({1}, {1.0f}), T({1}, {3.0f})}, 1.0 / 3.0);
  ExpectF64Closer(OpKind::kLog, {}, {T({1}, {10.0f})}, 2.302585092994046);
  ExpectF64Closer(OpKind::kSoftmax, Axis(-1), {T({2}, {0.0f, 1.0f})}, 0.7310585786300049, 1);
  ExpectF64Closer(OpKind::kReduceMean, Axis(0), {T({3}, {1.0f, 2.0f, 4.0f})}, 7.0 / 3.0);
  ExpectF64Closer(OpKind::kMatMul, {}, {T({1, 2}, {1.0f, 1.0f}), T({2, 1}, {0.5f, 1.0f / 3})},
                  0.5 + static_cast<double>(1.0f / 3));
}

TEST(ReferenceDTypeTest, I32ThroughDataMovement) {
  const HostTensor x = HostTensor::I32({2, 3}, {1, -2, 3, 2147483647, 5, -2147483647 - 1});
  ir::Attrs perm;
  perm.ints = {1, 0};
  absl::StatusOr<HostTensor> t = Eval(OpKind::kTranspose, perm, {x});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype, DType::kI32);
  EXPECT_EQ(t->shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(t->I32Values(), (std::vector<int32_t>{1, 2147483647, -2, 5, 3, -2147483647 - 1}));

  ir::Attrs shape;
  shape.ints = {-1};
  absl::StatusOr<HostTensor> r = Eval(OpKind::kReshape, shape, {x});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->dtype, DType::kI32);
  EXPECT_EQ(r->shape, (std::vector<int64_t>{6}));
  EXPECT_EQ(r->I32Values(), x.I32Values());

  absl::StatusOr<HostTensor> c =
      Eval(OpKind::kConcat, Axis(0), {x, HostTensor::I32({1, 3}, {7, 8, 9})});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->dtype, DType::kI32);
  EXPECT_EQ(c->I32Values(),
            (std::vector<int32_t>{1, -2, 3, 2147483647, 5, -2147483647 - 1, 7, 8, 9}));

  ir::Attrs slice = Axis(1);
  slice.start = -1;
  slice.end = 3;
  slice.step = 1;
  absl::StatusOr<HostTensor> s = Eval(OpKind::kSlice, slice, {x});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->dtype, DType::kI32);
  EXPECT_EQ(s->shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(s->I32Values(), (std::vector<int32_t>{3, -2147483647 - 1}));
}

// Ops that do not take i32, and mixed i32/f32 inputs, report what InferDType reports.
TEST(ReferenceDTypeTest, DTypeErrorsAreInferDTypes) {
  const HostTensor i = HostTensor::I32({2}, {1, 2});
  const HostTensor f{{2}, {1.0f, 2.0f}};
  absl::StatusOr<HostTensor> e = Eval(OpKind::kExp, {}, {i});
  const std::vector<DType> exp_dtypes = {DType::kI32};
  absl::StatusOr<DType> exp_rule = InferDType(OpKind::kExp, {}, exp_dtypes);
  if (!exp_rule.ok()) {
    EXPECT_EQ(e.status(), exp_rule.status());
  }
  absl::StatusOr<HostTensor> c = Eval(OpKind::kConcat, Axis(0), {i, f});
  const std::vector<DType> concat_dtypes = {DType::kI32, DType::kF32};
  absl::StatusOr<DType> concat_rule = InferDType(OpKind::kConcat, Axis(0), concat_dtypes);
  ASSERT_FALSE(concat_rule.ok());
  EXPECT_EQ(c.status(), concat_rule.status());
  EXPECT_EQ(c.status().message(),
            "concat: input 1 dtype f32 differs from input 0 dtype i32; all inputs must share one "
            "dtype");
  // f64 stands for f32: f64 with i32 is the same mismatch.
  absl::StatusOr<HostTensor> c64 = Eval(OpKind::kConcat, Axis(0), {i, f.ToF64()});
  EXPECT_EQ(c64.status(), concat_rule.status());
}

TEST(ReferenceDTypeTest, MalformedTensorsAreInvalid) {
  HostTensor bad = HostTensor::Zeros({2}, DType::kF64);
  bad.wide.push_back(1);
  absl::StatusOr<HostTensor> r = Eval(OpKind::kExp, {}, {bad});
  EXPECT_EQ(r.status(),
            absl::InvalidArgumentError("exp: input 0 shape [2] needs 2 values but has 3"));
  // An f64 tensor's values are in `wide`; `data` does not count.
  HostTensor misplaced{{2}, {1.0f, 2.0f}};
  misplaced.dtype = DType::kF64;
  r = Eval(OpKind::kNeg, {}, {misplaced});
  EXPECT_EQ(r.status(),
            absl::InvalidArgumentError("neg: input 0 shape [2] needs 2 values but has 0"));
  HostTensor half{{1}, {1.0f}};
  half.dtype = DType::kF16;
  r = Eval(OpKind::kAdd, {}, {T({1}, {1.0f}), half});
  EXPECT_EQ(r.status(), absl::InvalidArgumentError(
                            "add: input 1 has dtype f16; a host tensor holds f32, f64 or i32"));
}

}  // namespace
}  // namespace pto::ops
