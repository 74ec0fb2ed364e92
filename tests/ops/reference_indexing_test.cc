// Reference loops of comparisons, where, cast to and from i32, iota, one_hot and i32
// arithmetic, on f32, f64 and i32 tensors.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "ops/host_tensor.h"
#include "ops/reference.h"

namespace pto::ops {
namespace {

using ir::DType;
using ir::OpKind;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax32 = std::numeric_limits<int32_t>::max();

HostTensor Eval(OpKind op, std::vector<const HostTensor*> in, ir::Attrs attrs = {}) {
  absl::StatusOr<HostTensor> r = EvaluateOp(op, attrs, in);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : HostTensor{};
}

std::vector<double> Values(const HostTensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.size(); ++i) v.push_back(t.at(i));
  return v;
}

TEST(ReferenceIndexingTest, ComparisonsAreIeeeMasks) {
  const HostTensor a{{4}, {1.0f, kNaN, 2.0f, -1.0f}};
  const HostTensor b{{}, {1.0f}};
  const std::vector<std::pair<OpKind, std::vector<double>>> want = {
      {OpKind::kEq, {1, 0, 0, 0}}, {OpKind::kNe, {0, 1, 1, 1}}, {OpKind::kLt, {0, 0, 0, 1}},
      {OpKind::kLe, {1, 0, 0, 1}}, {OpKind::kGt, {0, 0, 1, 0}}, {OpKind::kGe, {1, 0, 1, 0}}};
  for (const auto& [op, values] : want) {
    HostTensor r = Eval(op, {&a, &b});
    EXPECT_EQ(r.dtype, DType::kF32);
    EXPECT_EQ(r.shape, (std::vector<int64_t>{4}));
    EXPECT_EQ(Values(r), values) << ir::OpName(op);
  }
  // i32 operands, broadcast against each other: f32 masks.
  const HostTensor i = HostTensor::I32({2, 1}, {kMin32, 3});
  const HostTensor j = HostTensor::I32({3}, {kMin32, 3, kMax32});
  HostTensor r = Eval(OpKind::kLt, {&i, &j});
  EXPECT_EQ(r.dtype, DType::kF32);
  EXPECT_EQ(Values(r), (std::vector<double>{0, 1, 1, 0, 0, 1}));
  // f64 operands are compared in f64: 1 + 2^-40 != 1.
  HostTensor wide = HostTensor::Zeros({1}, DType::kF64);
  wide.Set(0, 1.0 + std::ldexp(1.0, -40));
  r = Eval(OpKind::kGt, {&wide, &b});
  EXPECT_EQ(r.dtype, DType::kF64);
  EXPECT_EQ(Values(r), (std::vector<double>{1}));
}

TEST(ReferenceIndexingTest, WhereTakesNonzero) {
  const HostTensor cond{{4, 1}, {0.0f, kNaN, -0.0f, 2.0f}};
  const HostTensor a{{2}, {10, 20}};
  const HostTensor b{{}, {-1}};
  HostTensor r = Eval(OpKind::kWhere, {&cond, &a, &b});
  EXPECT_EQ(r.shape, (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(Values(r), (std::vector<double>{-1, -1, 10, 20, -1, -1, 10, 20}));
  const HostTensor ic = HostTensor::I32({3}, {0, 5, -1});
  const HostTensor ia = HostTensor::I32({3}, {kMin32, kMax32, 7});
  const HostTensor ib = HostTensor::I32({}, {9});
  r = Eval(OpKind::kWhere, {&ic, &ia, &ib});
  EXPECT_EQ(r.dtype, DType::kI32);
  EXPECT_EQ(r.I32Values(), (std::vector<int32_t>{9, kMax32, 7}));
  // f64 values in, f64 out.
  const HostTensor wa = a.ToF64();
  r = Eval(OpKind::kWhere, {&cond, &wa, &b});
  EXPECT_EQ(r.dtype, DType::kF64);
  EXPECT_EQ(Values(r), (std::vector<double>{-1, -1, 10, 20, -1, -1, 10, 20}));
}

TEST(ReferenceIndexingTest, CastSaturates) {
  const HostTensor x{{9}, {kNaN, INFINITY, -INFINITY, 3e9f, -3e9f, -2.5f, 2.5f, -0.5f, 7.0f}};
  ir::Attrs to_i32;
  to_i32.dtype = DType::kI32;
  HostTensor r = Eval(OpKind::kCast, {&x}, to_i32);
  EXPECT_EQ(r.dtype, DType::kI32);
  EXPECT_EQ(r.I32Values(), (std::vector<int32_t>{0, kMax32, kMin32, kMax32, kMin32, -2, 2, 0, 7}));
  ir::Attrs to_f32;
  const HostTensor i = HostTensor::I32({2}, {16777217, kMin32});
  r = Eval(OpKind::kCast, {&i}, to_f32);
  EXPECT_EQ(r.dtype, DType::kF32);
  EXPECT_EQ(r.data, (std::vector<float>{16777216.0f, -2147483648.0f}));
}

TEST(ReferenceIndexingTest, IntegerArithmeticWraps) {
  const HostTensor a = HostTensor::I32({3}, {kMax32, kMin32, -7});
  const HostTensor b = HostTensor::I32({}, {2});
  EXPECT_EQ(Eval(OpKind::kAdd, {&a, &b}).I32Values(),
            (std::vector<int32_t>{kMin32 + 1, kMin32 + 2, -5}));
  EXPECT_EQ(Eval(OpKind::kSub, {&a, &b}).I32Values(),
            (std::vector<int32_t>{kMax32 - 2, kMax32 - 1, -9}));
  EXPECT_EQ(Eval(OpKind::kMul, {&a, &b}).I32Values(), (std::vector<int32_t>{-2, 0, -14}));
  EXPECT_EQ(Eval(OpKind::kMax, {&a, &b}).I32Values(), (std::vector<int32_t>{kMax32, 2, 2}));
  EXPECT_EQ(Eval(OpKind::kMin, {&a, &b}).I32Values(), (std::vector<int32_t>{2, kMin32, -7}));
  EXPECT_EQ(Eval(OpKind::kNeg, {&a}).I32Values(), (std::vector<int32_t>{-kMax32, kMin32, 7}));
  EXPECT_EQ(Eval(OpKind::kAbs, {&a}).I32Values(), (std::vector<int32_t>{kMax32, kMin32, 7}));
}

TEST(ReferenceIndexingTest, IotaAndOneHot) {
  ir::Attrs axis;
  axis.axis = -2;
  const HostTensor like{{2, 3}, {kNaN, kNaN, kNaN, kNaN, kNaN, kNaN}};
  HostTensor r = Eval(OpKind::kIota, {&like}, axis);
  EXPECT_EQ(r.dtype, DType::kI32);
  EXPECT_EQ(r.I32Values(), (std::vector<int32_t>{0, 0, 0, 1, 1, 1}));
  axis.axis = 1;
  EXPECT_EQ(Eval(OpKind::kIota, {&like}, axis).I32Values(),
            (std::vector<int32_t>{0, 1, 2, 0, 1, 2}));
  ir::Attrs depth;
  depth.ints = {3};
  const HostTensor idx = HostTensor::I32({4}, {2, -1, 3, 0});
  r = Eval(OpKind::kOneHot, {&idx}, depth);
  EXPECT_EQ(r.dtype, DType::kF32);
  EXPECT_EQ(r.shape, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(r.data, (std::vector<float>{0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0}));
}

}  // namespace
}  // namespace pto::ops
