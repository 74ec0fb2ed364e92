// Shape and dtype rules of comparisons, where, iota, one_hot and the ops that take i32.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/ir/graph.h"
#include "jit/ir/sym_expr.h"
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

absl::StatusOr<Shape> Infer(OpKind op, const ir::Attrs& attrs, std::vector<Shape> inputs) {
  std::vector<ir::SymbolInfo> table = kSymbols;
  return InferShape(op, attrs, inputs, &table);
}

void ExpectError(const absl::Status& s, absl::StatusCode code, const std::string& message) {
  EXPECT_EQ(s.code(), code) << s;
  EXPECT_EQ(std::string(s.message()), message);
}

ir::Attrs Axis(int64_t axis) {
  ir::Attrs a;
  a.axis = axis;
  return a;
}

ir::Attrs Depth(std::vector<int64_t> ints) {
  ir::Attrs a;
  a.ints = std::move(ints);
  return a;
}

TEST(IndexingRulesTest, ComparisonsBroadcast) {
  for (OpKind op : {OpKind::kEq, OpKind::kNe, OpKind::kLt, OpKind::kLe, OpKind::kGt, OpKind::kGe}) {
    EXPECT_EQ(*Infer(op, {}, {{kB, 1, 8}, {kS, 1}}), (Shape{kB, kS, 8}));
    EXPECT_EQ(*Infer(op, {}, {{kS}, {}}), (Shape{kS}));
  }
  ExpectError(Infer(OpKind::kLt, {}, {{kB, 8}, {kB, 9}}).status(),
              absl::StatusCode::kInvalidArgument,
              "lt: input 1 shape [batch, 9] is not broadcastable with input 0 shape [batch, 8] "
              "(axis 1: 9 vs 8)");
  ExpectError(Infer(OpKind::kEq, {}, {{kB}}).status(), absl::StatusCode::kInvalidArgument,
              "eq: expects 2 inputs, got 1");
}

TEST(IndexingRulesTest, WhereBroadcastsThree) {
  EXPECT_EQ(*Infer(OpKind::kWhere, {}, {{kS, kS}, {kB, 1, kS, kS}, {}}), (Shape{kB, 1, kS, kS}));
  EXPECT_EQ(*Infer(OpKind::kWhere, {}, {{1, 5}, {3, 1}, {7, 1, 1}}), (Shape{7, 3, 5}));
  ExpectError(Infer(OpKind::kWhere, {}, {{4}, {5}, {}}).status(),
              absl::StatusCode::kInvalidArgument,
              "where: input 1 shape [5] is not broadcastable with input 0 shape [4] (axis 0: 5 "
              "vs 4)");
  ExpectError(Infer(OpKind::kWhere, {}, {{4, 1}, {1, 6}, {4, 7}}).status(),
              absl::StatusCode::kInvalidArgument,
              "where: input 2 shape [4, 7] is not broadcastable with input 1 shape [1, 6] (axis "
              "1: 7 vs 6)");
  ExpectError(Infer(OpKind::kWhere, {}, {{3, 1}, {1, 6}, {4, 6}}).status(),
              absl::StatusCode::kInvalidArgument,
              "where: input 2 shape [4, 6] is not broadcastable with input 0 shape [3, 1] (axis "
              "0: 4 vs 3)");
  ExpectError(Infer(OpKind::kWhere, {}, {{3}, {3}}).status(), absl::StatusCode::kInvalidArgument,
              "where: expects 3 inputs, got 2");
}

TEST(IndexingRulesTest, Iota) {
  EXPECT_EQ(*Infer(OpKind::kIota, Axis(-1), {{kB, kS}}), (Shape{kB, kS}));
  EXPECT_EQ(*Infer(OpKind::kIota, Axis(0), {{kS}}), (Shape{kS}));
  ExpectError(Infer(OpKind::kIota, Axis(2), {{kB, kS}}).status(),
              absl::StatusCode::kInvalidArgument,
              "iota: axis 2 is out of range for input 0 shape [batch, seq] (rank 2: expected -2 "
              "<= axis < 2)");
  ExpectError(Infer(OpKind::kIota, Axis(0), {{}}).status(), absl::StatusCode::kInvalidArgument,
              "iota: axis 0 is out of range for input 0 shape [] (rank 0: expected 0 <= axis < "
              "0)");
}

TEST(IndexingRulesTest, OneHot) {
  EXPECT_EQ(*Infer(OpKind::kOneHot, Depth({10}), {{kB}}), (Shape{kB, 10}));
  EXPECT_EQ(*Infer(OpKind::kOneHot, Depth({1}), {{}}), (Shape{1}));
  ExpectError(Infer(OpKind::kOneHot, Depth({0}), {{kB}}).status(),
              absl::StatusCode::kInvalidArgument,
              "one_hot: depth must be one constant >= 1, got 0");
  ExpectError(Infer(OpKind::kOneHot, Depth({}), {{kB}}).status(),
              absl::StatusCode::kInvalidArgument,
              "one_hot: depth must be one constant >= 1, got 0 values");
}

absl::StatusOr<DType> DT(OpKind op, std::vector<DType> in, DType cast_to = DType::kF32) {
  ir::Attrs a;
  a.dtype = cast_to;
  return InferDType(op, a, in);
}

TEST(IndexingRulesTest, DTypes) {
  const DType f = DType::kF32, i = DType::kI32;
  for (OpKind op : {OpKind::kEq, OpKind::kNe, OpKind::kLt, OpKind::kLe, OpKind::kGt, OpKind::kGe}) {
    EXPECT_EQ(*DT(op, {f, f}), f);
    EXPECT_EQ(*DT(op, {i, i}), f);
  }
  EXPECT_EQ(*DT(OpKind::kWhere, {f, i, i}), i);
  EXPECT_EQ(*DT(OpKind::kWhere, {i, f, f}), f);
  EXPECT_EQ(*DT(OpKind::kIota, {f}), i);
  EXPECT_EQ(*DT(OpKind::kIota, {i}), i);
  EXPECT_EQ(*DT(OpKind::kOneHot, {i}), f);
  EXPECT_EQ(*DT(OpKind::kCast, {f}, i), i);
  EXPECT_EQ(*DT(OpKind::kCast, {i}, f), f);
  EXPECT_EQ(*DT(OpKind::kCast, {i}, i), i);
  for (OpKind op : {OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kMax, OpKind::kMin}) {
    EXPECT_EQ(*DT(op, {i, i}), i);
  }
  for (OpKind op : {OpKind::kNeg, OpKind::kAbs, OpKind::kTranspose, OpKind::kReshape,
                    OpKind::kSlice, OpKind::kConcat}) {
    EXPECT_EQ(*DT(op, {i}), i);
  }
  EXPECT_EQ(*DT(OpKind::kConcat, {i, i, i}), i);
  ir::Attrs i32_constant;
  i32_constant.dtype = i;
  EXPECT_EQ(*InferDType(OpKind::kConstant, i32_constant, {}), i);
  EXPECT_EQ(*InferDType(OpKind::kConstant, {}, {}), f);
}

TEST(IndexingRulesTest, RefusedI32Uses) {
  const DType f = DType::kF32, i = DType::kI32;
  ExpectError(DT(OpKind::kExp, {i}).status(), absl::StatusCode::kInvalidArgument,
              "exp: input 0 is i32; exp takes f32 (cast it first)");
  ExpectError(DT(OpKind::kDiv, {i, i}).status(), absl::StatusCode::kInvalidArgument,
              "div: input 0 is i32; div takes f32 (cast it first)");
  ExpectError(DT(OpKind::kReduceSum, {i}).status(), absl::StatusCode::kInvalidArgument,
              "reduce_sum: input 0 is i32; reduce_sum takes f32 (cast it first)");
  ExpectError(DT(OpKind::kSoftmax, {i}).status(), absl::StatusCode::kInvalidArgument,
              "softmax: input 0 is i32; softmax takes f32 (cast it first)");
  ExpectError(DT(OpKind::kMatMul, {i, i}).status(), absl::StatusCode::kInvalidArgument,
              "matmul: input 0 is i32; matmul takes f32 (cast it first)");
  ExpectError(DT(OpKind::kLayerNorm, {f, i, i}).status(), absl::StatusCode::kInvalidArgument,
              "layer_norm: input 1 dtype i32 differs from input 0 dtype f32; all inputs must "
              "share one dtype");
  ExpectError(DT(OpKind::kOneHot, {f}).status(), absl::StatusCode::kInvalidArgument,
              "one_hot: input 0 is f32; one_hot takes i32 indices (cast it first)");
  ExpectError(DT(OpKind::kAdd, {i, f}).status(), absl::StatusCode::kInvalidArgument,
              "add: input 1 dtype f32 differs from input 0 dtype i32; all inputs must share one "
              "dtype");
  ExpectError(DT(OpKind::kWhere, {f, f, i}).status(), absl::StatusCode::kInvalidArgument,
              "where: input 2 dtype i32 differs from input 1 dtype f32; all inputs must share one "
              "dtype");
  ExpectError(DT(OpKind::kLt, {f, i}).status(), absl::StatusCode::kInvalidArgument,
              "lt: input 1 dtype i32 differs from input 0 dtype f32; all inputs must share one "
              "dtype");
  // f16, bf16, i8 stay unimplemented.
  ExpectError(DT(OpKind::kAdd, {DType::kF16, DType::kF16}).status(),
              absl::StatusCode::kUnimplemented,
              "add: input 0 dtype f16 is not supported yet (only f32 and i32)");
  ExpectError(DT(OpKind::kCast, {f}, DType::kBF16).status(), absl::StatusCode::kUnimplemented,
              "cast: target dtype bf16 is not supported yet (only f32 and i32)");
  ExpectError(DT(OpKind::kIota, {DType::kI8}).status(), absl::StatusCode::kUnimplemented,
              "iota: input 0 dtype i8 is not supported yet (only f32 and i32)");
}

}  // namespace
}  // namespace pto::ops
