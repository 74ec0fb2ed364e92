// Tolerances, AllClose, HostTensor helpers and the op -> tile IR mapping.
#include "ops/tolerance.h"

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/ir/graph.h"
#include "jit/ir/tile_ir.h"
#include "ops/host_tensor.h"
#include "ops/lowering.h"
#include "ops/reference.h"

namespace pto::ops {
namespace {

using ir::OpKind;
using ::testing::HasSubstr;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
// HostTensor::Random({2}, 1) on any platform (std::mt19937_64 is fully specified).
constexpr float kGolden0 = -0.732246757f;
constexpr float kGolden1 = -0.727185965f;

TEST(AllCloseTest, EqualAndWithinTolerance) {
  const HostTensor want{{2, 2}, {1, -2, 0, 1000}};
  std::string why;
  EXPECT_TRUE(AllClose(want, want, {0, 0}, &why));
  const HostTensor got{{2, 2}, {1.000001f, -2, 1e-7f, 1000.5f}};
  EXPECT_TRUE(AllClose(got, want, {1e-6, 1e-3}, &why)) << why;
  EXPECT_FALSE(AllClose(got, want, {1e-6, 1e-4}, &why));
  EXPECT_THAT(why, HasSubstr("index 3 [1, 1]: got 1000.5, expected 1000"));
  EXPECT_THAT(why, HasSubstr("|diff| 0.5 > 0.1"));
}

TEST(AllCloseTest, NaNAndInfinities) {
  std::string why;
  const HostTensor want{{3}, {kNaN, kInf, -kInf}};
  EXPECT_TRUE(AllClose(want, want, {0, 0}, &why));
  EXPECT_FALSE(AllClose(HostTensor{{3}, {0, kInf, -kInf}}, want, {1, 1}, &why));
  EXPECT_THAT(why, HasSubstr("index 0 [0]: got 0, expected nan"));
  EXPECT_FALSE(AllClose(HostTensor{{3}, {kNaN, -kInf, -kInf}}, want, {1, 1}, &why));
  EXPECT_THAT(why, HasSubstr("index 1"));
  EXPECT_FALSE(AllClose(HostTensor{{1}, {kNaN}}, HostTensor{{1}, {1}}, {1, 1}, nullptr));
  EXPECT_FALSE(AllClose(HostTensor{{1}, {kInf}}, HostTensor{{1}, {FLT_MAX}}, {1, 1}, nullptr));
}

TEST(AllCloseTest, ShapeMismatch) {
  std::string why;
  EXPECT_FALSE(AllClose(HostTensor{{2, 3}, std::vector<float>(6)},
                        HostTensor{{3, 2}, std::vector<float>(6)}, {1, 1}, &why));
  EXPECT_EQ(why, "shape [2, 3] vs expected [3, 2]");
  EXPECT_FALSE(AllClose(HostTensor{{2}, {1}}, HostTensor{{2}, {1, 2}}, {1, 1}, &why));
  EXPECT_THAT(why, HasSubstr("data sizes 1 vs expected 2"));
  EXPECT_TRUE(AllClose(HostTensor{{0, 4}, {}}, HostTensor{{0, 4}, {}}, {0, 0}, &why));
}

TEST(ToleranceTest, StatedValues) {
  for (OpKind op : {OpKind::kTranspose, OpKind::kReshape, OpKind::kConcat, OpKind::kSlice,
                    OpKind::kCast, OpKind::kNeg, OpKind::kAbs, OpKind::kRelu, OpKind::kMax,
                    OpKind::kMin, OpKind::kReduceMax}) {
    const Tolerance t = OpTolerance(op, 4096);
    EXPECT_EQ(t.abs, 0) << ir::OpName(op);
    EXPECT_EQ(t.rel, 0) << ir::OpName(op);
  }
  EXPECT_DOUBLE_EQ(OpTolerance(OpKind::kAdd, 0).rel, 1e-6);
  EXPECT_DOUBLE_EQ(OpTolerance(OpKind::kExp, 0).rel, 4e-6);
  EXPECT_DOUBLE_EQ(OpTolerance(OpKind::kGeluErf, 0).abs, 1e-6);
  // Accumulating ops grow linearly with the reduction length.
  for (OpKind op : {OpKind::kReduceSum, OpKind::kReduceMean, OpKind::kSoftmax, OpKind::kLogSoftmax,
                    OpKind::kLayerNorm, OpKind::kRmsNorm, OpKind::kMatMul}) {
    const Tolerance small = OpTolerance(op, 16), large = OpTolerance(op, 4096);
    EXPECT_LT(small.abs + small.rel, large.abs + large.rel) << ir::OpName(op);
    EXPECT_LT(large.rel, 2e-4) << ir::OpName(op);
  }
  EXPECT_DOUBLE_EQ(OpTolerance(OpKind::kReduceSum, 4096).abs, 1e-6 + 4096 * double{FLT_EPSILON});
  const Tolerance c = Combine({1, 2}, {3, 4});
  EXPECT_EQ(c.abs, 4);
  EXPECT_EQ(c.rel, 6);
}

// f32 sequential sum: the least accurate order a kernel may use.
float SequentialSum(const float* x, int64_t n, int64_t stride = 1) {
  float s = 0;
  for (int64_t i = 0; i < n; ++i) s += x[i * stride];
  return s;
}

TEST(ToleranceTest, SequentialF32SumsPassAndDroppedTermsFail) {
  ir::Attrs axis;
  axis.axis = 1;
  for (int64_t n : {1, 7, 100, 1000, 4096}) {
    for (int kind = 0; kind < 3; ++kind) {
      // Random in [-1, 1], random in [0, 1], and a constant row (the worst case).
      HostTensor x = kind == 0   ? HostTensor::Random({8, n}, 100 + n)
                     : kind == 1 ? HostTensor::Random({8, n}, 200 + n, 0, 1)
                                 : HostTensor::Filled({8, n}, 0.1f);
      const HostTensor* args[] = {&x};
      absl::StatusOr<HostTensor> want = EvaluateOp(OpKind::kReduceSum, axis, args);
      ASSERT_TRUE(want.ok());
      HostTensor got{{8}, {}}, dropped{{8}, {}};
      for (int r = 0; r < 8; ++r) {
        got.data.push_back(SequentialSum(&x.data[r * n], n));
        dropped.data.push_back(SequentialSum(&x.data[r * n], n - 1));  // a tail bug
      }
      std::string why;
      const Tolerance tol = OpTolerance(OpKind::kReduceSum, n);
      EXPECT_TRUE(AllClose(got, *want, tol, &why)) << "n=" << n << " kind=" << kind << ": " << why;
      if (n <= 1000 || kind != 2) {  // 0.1/4096 of a constant row is below its rounding noise
        EXPECT_FALSE(AllClose(dropped, *want, tol, &why)) << "n=" << n << " kind=" << kind;
      }
    }
  }
}

TEST(ToleranceTest, F32MatMulAndLayerNormPass) {
  const int64_t m = 4, k = 1000, n = 3;
  HostTensor a = HostTensor::Random({m, k}, 1), b = HostTensor::Random({k, n}, 2);
  const HostTensor* mm_args[] = {&a, &b};
  absl::StatusOr<HostTensor> want = EvaluateOp(OpKind::kMatMul, {}, mm_args);
  ASSERT_TRUE(want.ok());
  HostTensor got{{m, n}, {}};
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0;
      for (int64_t p = 0; p < k; ++p) acc = std::fma(a.data[i * k + p], b.data[p * n + j], acc);
      got.data.push_back(acc);
    }
  }
  std::string why;
  EXPECT_TRUE(AllClose(got, *want, OpTolerance(OpKind::kMatMul, k), &why)) << why;

  // Two-pass f32 layer norm on rows of 768.
  const int64_t len = 768;
  HostTensor x = HostTensor::Random({4, len}, 3), w = HostTensor::Random({len}, 4),
             bias = HostTensor::Random({len}, 5);
  const HostTensor* ln_args[] = {&x, &w, &bias};
  want = EvaluateOp(OpKind::kLayerNorm, {}, ln_args);
  ASSERT_TRUE(want.ok());
  got = HostTensor{x.shape, {}};
  for (int64_t r = 0; r < 4; ++r) {
    const float* row = &x.data[r * len];
    const float mean = SequentialSum(row, len) / len;
    float var = 0;
    for (int64_t i = 0; i < len; ++i) var += (row[i] - mean) * (row[i] - mean);
    const float rstd = 1.0f / std::sqrt(var / len + 1e-5f);
    for (int64_t i = 0; i < len; ++i)
      got.data.push_back((row[i] - mean) * rstd * w.data[i] + bias.data[i]);
  }
  EXPECT_TRUE(AllClose(got, *want, OpTolerance(OpKind::kLayerNorm, len), &why)) << why;
}

// NodeTolerance: the reduction length from the inputs' shapes, the absolute term scaled by the
// magnitude of what the op combines.
TEST(ToleranceTest, NodeToleranceScalesWithTheInputs) {
  const HostTensor a = HostTensor::Filled({3, 12}, 4.0f), b = HostTensor::Filled({12, 5}, -0.5f);
  const HostTensor* mm[] = {&a, &b};
  const Tolerance matmul = NodeTolerance(OpKind::kMatMul, {}, mm);
  EXPECT_DOUBLE_EQ(matmul.abs, OpTolerance(OpKind::kMatMul, 12).abs * 2.0);
  EXPECT_DOUBLE_EQ(matmul.rel, OpTolerance(OpKind::kMatMul, 12).rel);
  ir::Attrs transposed;
  transposed.transpose_a = true;  // a is [K, M]: K = 3
  EXPECT_DOUBLE_EQ(NodeTolerance(OpKind::kMatMul, transposed, mm).rel,
                   OpTolerance(OpKind::kMatMul, 3).rel);
  // Inputs of magnitude below 1 keep OpTolerance.
  const HostTensor small = HostTensor::Filled({3, 12}, 0.25f);
  const HostTensor* one[] = {&small};
  EXPECT_DOUBLE_EQ(NodeTolerance(OpKind::kExp, {}, one).abs, OpTolerance(OpKind::kExp, 0).abs);
  ir::Attrs axis0;
  axis0.axis = 0;
  EXPECT_DOUBLE_EQ(NodeTolerance(OpKind::kReduceSum, axis0, one).abs,
                   OpTolerance(OpKind::kReduceSum, 3).abs);
  const HostTensor* x4[] = {&a};
  EXPECT_DOUBLE_EQ(NodeTolerance(OpKind::kSoftmax, {}, x4).abs,
                   OpTolerance(OpKind::kSoftmax, 12).abs * 4.0);
  // The norms' output is normalized: the weight's magnitude counts, not x's.
  const HostTensor w = HostTensor::Filled({12}, 3.0f);
  const HostTensor* norm[] = {&a, &w};
  EXPECT_DOUBLE_EQ(NodeTolerance(OpKind::kRmsNorm, {}, norm).abs,
                   OpTolerance(OpKind::kRmsNorm, 12).abs * 3.0);
}

TEST(ToleranceTest, MaxErrors) {
  const HostTensor want{{4}, {1, -2, 0, 8}};
  ErrorStats e = MaxErrors(want, want);
  EXPECT_EQ(e.max_abs, 0);
  EXPECT_EQ(e.max_rel, 0);
  e = MaxErrors(HostTensor{{4}, {1.5f, -2, 0, 9}}, want);
  EXPECT_DOUBLE_EQ(e.max_abs, 1.0);  // at 8
  EXPECT_DOUBLE_EQ(e.max_rel, 0.5);  // at 1
  // Against 0 the relative error divides by FLT_MIN.
  e = MaxErrors(HostTensor{{4}, {1, -2, 1e-30f, 8}}, want);
  EXPECT_DOUBLE_EQ(e.max_rel, double{1e-30f} / FLT_MIN);
  // NaN meets NaN and an infinity itself; anything else against them is infinitely off.
  const HostTensor special{{2}, {kNaN, kInf}};
  EXPECT_EQ(MaxErrors(special, special).max_abs, 0);
  e = MaxErrors(HostTensor{{2}, {0, kInf}}, special);
  EXPECT_EQ(e.max_abs, std::numeric_limits<double>::infinity());
  EXPECT_EQ(e.max_rel, std::numeric_limits<double>::infinity());
  EXPECT_EQ(MaxErrors(HostTensor{{2, 2}, {1, -2, 0, 8}}, want).max_abs,
            std::numeric_limits<double>::infinity());
}

// AllClose and MaxErrors read elements through at(): f32 against f64 works, i32 only with i32.
TEST(AllCloseTest, AcrossDTypes) {
  HostTensor wide = HostTensor::Zeros({2}, ir::DType::kF64);
  wide.Set(0, 1.0 / 3.0);
  wide.Set(1, -2);
  const HostTensor narrow{{2}, {1.0f / 3.0f, -2}};
  std::string why;
  EXPECT_TRUE(AllClose(narrow, wide, {0, 1e-7}, &why)) << why;
  EXPECT_FALSE(AllClose(narrow, wide, {0, 0}, &why));
  EXPECT_EQ(why,
            "index 0 [0]: got 0.3333333432674408, expected 0.33333333333333331 (|diff| 9.93e-09 "
            "> 0 = abs 0 + rel 0 * |expected|) [got f32, expected f64]");
  EXPECT_FALSE(AllClose(wide, wide.ToF32(), {0, 0}, &why));
  EXPECT_THAT(why, HasSubstr("[got f64, expected f32]"));
  const HostTensor labels = HostTensor::I32({2}, {1, -2});
  EXPECT_TRUE(AllClose(labels, labels, {0, 0}, &why));
  EXPECT_FALSE(AllClose(labels, HostTensor::I32({2}, {1, 3}), {0, 0}, &why));
  EXPECT_EQ(why, "index 1 [1]: got -2, expected 3 (|diff| 5 > 0 = abs 0 + rel 0 * |expected|)");
  EXPECT_FALSE(AllClose(labels, HostTensor{{2}, {1, -2}}, {1, 1}, &why));
  EXPECT_EQ(why, "dtype i32 vs expected f32");
  EXPECT_FALSE(AllClose(wide, HostTensor::I32({2, 1}, {1, -2}), {1, 1}, &why));
  EXPECT_EQ(why, "dtype f64 vs expected i32");
  EXPECT_FALSE(AllClose(wide, HostTensor::Zeros({2, 1}, ir::DType::kF64), {1, 1}, &why));
  EXPECT_EQ(why, "shape [2] vs expected [2, 1]");
  HostTensor short_wide = wide;
  short_wide.wide.pop_back();
  EXPECT_FALSE(AllClose(short_wide, wide, {1, 1}, &why));
  EXPECT_EQ(why, "data sizes 1 vs expected 2 for shape [2]");
}

TEST(ToleranceTest, MaxErrorsAcrossDTypes) {
  HostTensor wide = HostTensor::Zeros({2}, ir::DType::kF64);
  wide.Set(0, 0.1);
  wide.Set(1, 4);
  const HostTensor narrow{{2}, {0.1f, 4.5f}};
  const ErrorStats e = MaxErrors(narrow, wide);
  EXPECT_DOUBLE_EQ(e.max_abs, 0.5);
  EXPECT_DOUBLE_EQ(e.max_rel, 0.125);  // at 4; 0.1f against 0.1 is only 1.5e-8 off
  EXPECT_EQ(MaxErrors(wide, wide).max_abs, 0);
  EXPECT_EQ(MaxErrors(HostTensor::I32({2}, {0, 4}), wide).max_abs,
            std::numeric_limits<double>::infinity());
  EXPECT_EQ(MaxErrors(HostTensor::I32({2}, {0, 4}), HostTensor::I32({2}, {0, 6})).max_abs, 2);
}

// A node's tolerance scales with its inputs' magnitude in any dtype.
TEST(ToleranceTest, NodeToleranceReadsF64Inputs) {
  HostTensor big = HostTensor::Zeros({2}, ir::DType::kF64);
  big.Set(1, -3);
  const HostTensor* inputs[] = {&big};
  EXPECT_DOUBLE_EQ(NodeTolerance(OpKind::kExp, {}, inputs).abs,
                   OpTolerance(OpKind::kExp, 0).abs * 3.0);
}

TEST(HostTensorTest, RandomIsDeterministicAndInRange) {
  const HostTensor a = HostTensor::Random({3, 5}, 42, -2, 3);
  const HostTensor b = HostTensor::Random({3, 5}, 42, -2, 3);
  const HostTensor c = HostTensor::Random({3, 5}, 43, -2, 3);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(a.data, b.data);
  EXPECT_NE(a.data, c.data);
  for (float v : a.data) {
    EXPECT_GE(v, -2);
    EXPECT_LT(v, 3);
  }
  // Pinned: the generator must not change between platforms or releases.
  const HostTensor g = HostTensor::Random({2}, 1);
  EXPECT_FLOAT_EQ(g.data[0], kGolden0);
  EXPECT_FLOAT_EQ(g.data[1], kGolden1);
  EXPECT_EQ(HostTensor::Random({0, 3}, 1).data.size(), 0u);
  EXPECT_EQ(HostTensor::Random({}, 1).data.size(), 1u);
  EXPECT_EQ(HostTensor::Filled({2, 2}, 1.5f).data, (std::vector<float>{1.5f, 1.5f, 1.5f, 1.5f}));
  EXPECT_EQ(HostTensor::Filled({2, 0}, 1).NumElements(), 0);
  EXPECT_EQ(HostTensor{}.NumElements(), 1);
  EXPECT_EQ(HostTensor::Filled({2, 3}, 0).ShapeString(), "[2, 3]");
}

TEST(LoweringTest, ElementwiseExprOps) {
  const std::pair<OpKind, ir::ExprOp> table[] = {
      {OpKind::kAdd, ir::ExprOp::kAdd},         {OpKind::kSub, ir::ExprOp::kSub},
      {OpKind::kMul, ir::ExprOp::kMul},         {OpKind::kDiv, ir::ExprOp::kDiv},
      {OpKind::kMax, ir::ExprOp::kMax},         {OpKind::kMin, ir::ExprOp::kMin},
      {OpKind::kNeg, ir::ExprOp::kNeg},         {OpKind::kAbs, ir::ExprOp::kAbs},
      {OpKind::kExp, ir::ExprOp::kExp},         {OpKind::kLog, ir::ExprOp::kLog},
      {OpKind::kSqrt, ir::ExprOp::kSqrt},       {OpKind::kRsqrt, ir::ExprOp::kRsqrt},
      {OpKind::kTanh, ir::ExprOp::kTanh},       {OpKind::kSigmoid, ir::ExprOp::kSigmoid},
      {OpKind::kRelu, ir::ExprOp::kRelu},       {OpKind::kGeluTanh, ir::ExprOp::kGeluTanh},
      {OpKind::kGeluErf, ir::ExprOp::kGeluErf}, {OpKind::kSilu, ir::ExprOp::kSilu},
      {OpKind::kEq, ir::ExprOp::kEq},           {OpKind::kNe, ir::ExprOp::kNe},
      {OpKind::kLt, ir::ExprOp::kLt},           {OpKind::kLe, ir::ExprOp::kLe},
      {OpKind::kGt, ir::ExprOp::kGt},           {OpKind::kGe, ir::ExprOp::kGe},
      {OpKind::kCast, ir::ExprOp::kCast},
  };
  for (const auto& [op, expr] : table) {
    EXPECT_EQ(ElementwiseExprOp(op), expr) << ir::OpName(op);
    EXPECT_STREQ(ir::ExprOpName(expr), std::string(ir::OpName(op)).c_str());
  }
  EXPECT_EQ(ElementwiseExprOp(OpKind::kWhere), ir::ExprOp::kSelect);
  for (OpKind op : {OpKind::kInput, OpKind::kConstant, OpKind::kReduceSum, OpKind::kSoftmax,
                    OpKind::kMatMul, OpKind::kReshape, OpKind::kIota, OpKind::kOneHot}) {
    EXPECT_EQ(ElementwiseExprOp(op), std::nullopt) << ir::OpName(op);
  }
}

TEST(LoweringTest, ReduceAndRowOpKinds) {
  EXPECT_EQ(ReduceKindOf(OpKind::kReduceSum), ir::ReduceKind::kSum);
  EXPECT_EQ(ReduceKindOf(OpKind::kReduceMax), ir::ReduceKind::kMax);
  EXPECT_EQ(ReduceKindOf(OpKind::kReduceMean), ir::ReduceKind::kMean);
  EXPECT_EQ(ReduceKindOf(OpKind::kSoftmax), std::nullopt);
  EXPECT_EQ(RowOpKindOf(OpKind::kSoftmax), ir::RowOpKind::kSoftmax);
  EXPECT_EQ(RowOpKindOf(OpKind::kLogSoftmax), ir::RowOpKind::kLogSoftmax);
  EXPECT_EQ(RowOpKindOf(OpKind::kLayerNorm), ir::RowOpKind::kLayerNorm);
  EXPECT_EQ(RowOpKindOf(OpKind::kRmsNorm), ir::RowOpKind::kRmsNorm);
  EXPECT_EQ(RowOpKindOf(OpKind::kReduceMean), std::nullopt);
  EXPECT_EQ(RowOpKindOf(OpKind::kAdd), std::nullopt);
}

}  // namespace
}  // namespace pto::ops
