// Shape and dtype rules of gather and scatter_add, and their reference loops.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "jit/ir/graph.h"
#include "jit/ir/sym_expr.h"
#include "ops/host_tensor.h"
#include "ops/reference.h"
#include "ops/shape_rules.h"

namespace pto::ops {
namespace {

using ir::DType;
using ir::OpKind;
using ir::Shape;
using ir::SymExpr;

const std::vector<ir::SymbolInfo> kSymbols = {{"batch", 1, 4096}, {"seq", 1, 512}};
const SymExpr kB = SymExpr::Symbol(0);
const SymExpr kS = SymExpr::Symbol(1);

absl::StatusOr<Shape> Infer(OpKind op, int64_t axis, std::vector<Shape> inputs) {
  std::vector<ir::SymbolInfo> table = kSymbols;
  ir::Attrs attrs;
  attrs.axis = axis;
  return InferShape(op, attrs, inputs, &table);
}

void ExpectError(const absl::Status& s, absl::StatusCode code, const std::string& message) {
  EXPECT_EQ(s.code(), code) << s;
  EXPECT_EQ(std::string(s.message()), message);
}

TEST(GatherRulesTest, GatherShape) {
  EXPECT_EQ(*Infer(OpKind::kGather, 0, {{50, 768}, {kB, kS}}), (Shape{kB, kS, 768}));
  EXPECT_EQ(*Infer(OpKind::kGather, 1, {{4, 6, 3}, {5}}), (Shape{4, 5, 3}));
  EXPECT_EQ(*Infer(OpKind::kGather, -1, {{4, 6}, {}}), (Shape{4}));
  EXPECT_EQ(*Infer(OpKind::kGather, -2, {{kB, 6, 3}, {2, 1}}), (Shape{kB, 2, 1, 3}));
  ExpectError(
      Infer(OpKind::kGather, 2, {{4, 6}, {3}}).status(), absl::StatusCode::kInvalidArgument,
      "gather: axis 2 is out of range for input 0 shape [4, 6] (rank 2: expected -2 <= axis < "
      "2)");
  ExpectError(
      Infer(OpKind::kGather, 0, {{}, {3}}).status(), absl::StatusCode::kInvalidArgument,
      "gather: axis 0 is out of range for input 0 shape [] (rank 0: expected 0 <= axis < 0)");
  ExpectError(Infer(OpKind::kGather, 0, {{4}}).status(), absl::StatusCode::kInvalidArgument,
              "gather: expects 2 inputs, got 1");
}

TEST(GatherRulesTest, ScatterAddShape) {
  EXPECT_EQ(*Infer(OpKind::kScatterAdd, 0, {{50, 768}, {kB, kS, 768}, {kB, kS}}), (Shape{50, 768}));
  EXPECT_EQ(*Infer(OpKind::kScatterAdd, 1, {{4, 6, 3}, {4, 5, 3}, {5}}), (Shape{4, 6, 3}));
  EXPECT_EQ(*Infer(OpKind::kScatterAdd, -1, {{4, 6}, {4}, {}}), (Shape{4, 6}));
  ExpectError(Infer(OpKind::kScatterAdd, 0, {{50, 768}, {kB, kS, 767}, {kB, kS}}).status(),
              absl::StatusCode::kInvalidArgument,
              "scatter_add: input 1 (updates) shape [batch, seq, 767] must be input 0 shape "
              "[50, 768] with axis 0 replaced by input 2 (indices) shape [batch, seq]: "
              "[batch, seq, 768]");
  ExpectError(
      Infer(OpKind::kScatterAdd, 3, {{4, 6}, {4}, {}}).status(), absl::StatusCode::kInvalidArgument,
      "scatter_add: axis 3 is out of range for input 0 shape [4, 6] (rank 2: expected -2 <= "
      "axis < 2)");
  ExpectError(Infer(OpKind::kScatterAdd, 0, {{4, 6}, {4, 6}}).status(),
              absl::StatusCode::kInvalidArgument, "scatter_add: expects 3 inputs, got 2");
}

TEST(GatherRulesTest, DTypes) {
  const DType f = DType::kF32, i = DType::kI32;
  EXPECT_EQ(*InferDType(OpKind::kGather, {}, std::vector<DType>{f, i}), f);
  EXPECT_EQ(*InferDType(OpKind::kScatterAdd, {}, std::vector<DType>{f, f, i}), f);
  // `like` gives only the shape.
  EXPECT_EQ(*InferDType(OpKind::kScatterAdd, {}, std::vector<DType>{i, f, i}), f);
  ExpectError(InferDType(OpKind::kGather, {}, std::vector<DType>{f, f}).status(),
              absl::StatusCode::kInvalidArgument,
              "gather: input 1 (indices) is f32; indices are i32");
  ExpectError(InferDType(OpKind::kGather, {}, std::vector<DType>{i, i}).status(),
              absl::StatusCode::kInvalidArgument,
              "gather: input 0 is i32; gather takes f32 values");
  ExpectError(InferDType(OpKind::kScatterAdd, {}, std::vector<DType>{f, f, f}).status(),
              absl::StatusCode::kInvalidArgument,
              "scatter_add: input 2 (indices) is f32; indices are i32");
  ExpectError(InferDType(OpKind::kScatterAdd, {}, std::vector<DType>{f, i, i}).status(),
              absl::StatusCode::kInvalidArgument,
              "scatter_add: input 1 (updates) is i32; scatter_add takes f32 values");
}

TEST(GatherRulesTest, ReferenceGatherReadsNaNOffRangeAndScatterAddDropsIt) {
  const HostTensor x{{3, 2}, {1, 2, 3, 4, 5, 6}};
  const HostTensor idx = HostTensor::I32({2, 2}, {2, -1, 0, 3});
  ir::Attrs axis0;
  const HostTensor* in[2] = {&x, &idx};
  absl::StatusOr<HostTensor> g = EvaluateOp(OpKind::kGather, axis0, in);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->shape, (std::vector<int64_t>{2, 2, 2}));
  const std::vector<float> want = {5, 6, NAN, NAN, 1, 2, NAN, NAN};
  for (size_t k = 0; k < want.size(); ++k) {
    if (std::isnan(want[k])) {
      EXPECT_TRUE(std::isnan(g->data[k])) << k;
    } else {
      EXPECT_EQ(g->data[k], want[k]) << k;
    }
  }
  // Updates [2, 2] along axis 1 of like [2, 3]: index 1 twice, 5 dropped.
  const HostTensor like{{2, 3}, {9, 9, 9, 9, 9, 9}};
  const HostTensor u{{2, 3}, {1, 10, 100, 2, 20, 200}};
  const HostTensor j = HostTensor::I32({3}, {1, 5, 1});
  ir::Attrs axis1;
  axis1.axis = 1;
  const HostTensor* sin[3] = {&like, &u, &j};
  absl::StatusOr<HostTensor> s = EvaluateOp(OpKind::kScatterAdd, axis1, sin);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->data, (std::vector<float>{0, 101, 0, 0, 202, 0}));
  // In f64 too (the gradient checks' reference).
  const HostTensor u64 = u.ToF64();
  const HostTensor* wide[3] = {&like, &u64, &j};
  absl::StatusOr<HostTensor> s64 = EvaluateOp(OpKind::kScatterAdd, axis1, wide);
  ASSERT_TRUE(s64.ok()) << s64.status();
  EXPECT_EQ(s64->dtype, DType::kF64);
  EXPECT_EQ(s64->at(4), 202.0);
}

}  // namespace
}  // namespace pto::ops
