#include "ops/shape_rules.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/ir/graph.h"
#include "jit/ir/sym_expr.h"
#include "ops/derived_symbols.h"

namespace pto::ops {
namespace {

using ir::OpKind;
using ir::Shape;
using ir::SymExpr;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr int64_t kToEnd = std::numeric_limits<int64_t>::max();

// Symbols: 0 = batch in [1, 4096], 1 = seq in [1, 512], 2 = heads in [1, 64].
const std::vector<std::string> kNames = {"batch", "seq", "heads"};
const std::vector<ir::SymbolInfo> kSymbols = {
    {"batch", 1, 4096}, {"seq", 1, 512}, {"heads", 1, 64}};
const SymExpr kB = SymExpr::Symbol(0);
const SymExpr kS = SymExpr::Symbol(1);
const SymExpr kH = SymExpr::Symbol(2);

// Infers with a fresh copy of kSymbols; `symbols`, when not null, receives the table after it
// (with the symbols a slice derived).
absl::StatusOr<Shape> Infer(OpKind op, const ir::Attrs& attrs, std::vector<Shape> inputs,
                            std::vector<ir::SymbolInfo>* symbols = nullptr) {
  std::vector<ir::SymbolInfo> table = kSymbols;
  absl::StatusOr<Shape> shape = InferShape(op, attrs, inputs, &table);
  if (symbols != nullptr) *symbols = std::move(table);
  return shape;
}

std::string Str(const Shape& s) { return ir::ShapeToString(s, kNames); }

// Expects InvalidArgument whose message contains every fragment.
void ExpectInvalid(const absl::StatusOr<Shape>& r, const std::vector<std::string>& fragments) {
  ASSERT_FALSE(r.ok()) << "unexpected shape " << Str(*r);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  for (const std::string& f : fragments) {
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(f));
  }
}

ir::Attrs Axis(int64_t axis, bool keepdims = false) {
  ir::Attrs a;
  a.axis = axis;
  a.keepdims = keepdims;
  return a;
}

ir::Attrs Ints(std::vector<int64_t> ints) {
  ir::Attrs a;
  a.ints = std::move(ints);
  return a;
}

ir::Attrs SliceAttrs(int64_t axis, int64_t start, int64_t end, int64_t step = 1) {
  ir::Attrs a;
  a.axis = axis;
  a.start = start;
  a.end = end;
  a.step = step;
  return a;
}

TEST(ShapeRulesTest, Arity) {
  EXPECT_TRUE(CheckArity(OpKind::kAdd, 2).ok());
  absl::Status s = CheckArity(OpKind::kAdd, 1);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("add: expects 2 inputs, got 1"));
  EXPECT_THAT(std::string(CheckArity(OpKind::kConcat, 0).message()),
              HasSubstr("concat: expects at least 1 inputs, got 0"));
  EXPECT_THAT(std::string(CheckArity(OpKind::kExp, 2).message()),
              HasSubstr("exp: expects 1 input, got 2"));
  EXPECT_TRUE(CheckArity(OpKind::kConcat, 5).ok());
  EXPECT_TRUE(CheckArity(OpKind::kLayerNorm, 3).ok());
  EXPECT_THAT(std::string(CheckArity(static_cast<OpKind>(200), 1).message()),
              HasSubstr("unknown op kind 200"));
}

TEST(ShapeRulesTest, ConstantAndInput) {
  EXPECT_EQ(*Infer(OpKind::kConstant, {}, {}), Shape{});
  ExpectInvalid(Infer(OpKind::kInput, {}, {}), {"input: ", "function signature"});
}

TEST(ShapeRulesTest, BinaryBroadcastsSymbolically) {
  EXPECT_EQ(*Infer(OpKind::kAdd, {}, {{kB, 768}, {768}}), (Shape{kB, 768}));
  EXPECT_EQ(*Infer(OpKind::kMul, {}, {{kB, 1, 64}, {kS, 1}}), (Shape{kB, kS, 64}));
  EXPECT_EQ(*Infer(OpKind::kSub, {}, {{1}, {kB * kS, kH}}), (Shape{kB * kS, kH}));
  EXPECT_EQ(*Infer(OpKind::kDiv, {}, {{kB, kS}, {kB, kS}}), (Shape{kB, kS}));
  // Scalar constants have shape [].
  EXPECT_EQ(*Infer(OpKind::kMax, {}, {{kB, 4}, {}}), (Shape{kB, 4}));
  EXPECT_EQ(*Infer(OpKind::kMin, {}, {{}, {}}), Shape{});
  // Size 0 broadcasts against 1 only.
  EXPECT_EQ(*Infer(OpKind::kAdd, {}, {{0, 3}, {1, 3}}), (Shape{0, 3}));
}

TEST(ShapeRulesTest, BinaryBroadcastErrors) {
  ExpectInvalid(Infer(OpKind::kAdd, {}, {{kB, 768}, {kB, 512}}),
                {"add: input 1 shape [batch, 512] is not broadcastable with input 0 shape "
                 "[batch, 768] (axis 1: 512 vs 768)"});
  // A symbolic dim against a different constant or symbol is an error (it is not known
  // to be 1).
  ExpectInvalid(Infer(OpKind::kMul, {}, {{kB, 4}, {3, 4}}),
                {"mul: input 1 shape [3, 4]", "input 0 shape [batch, 4]", "axis 0: 3 vs batch"});
  ExpectInvalid(Infer(OpKind::kSub, {}, {{kB}, {kS}}),
                {"sub: input 1 shape [seq]", "input 0 shape [batch]", "axis 0: seq vs batch"});
  ExpectInvalid(Infer(OpKind::kMax, {}, {{0, 3}, {2, 3}}), {"max: ", "axis 0: 2 vs 0"});
  // Axis is the output axis when ranks differ.
  ExpectInvalid(Infer(OpKind::kDiv, {}, {{2, kB, 4}, {5}}),
                {"div: input 1 shape [5]", "input 0 shape [2, batch, 4]", "axis 2: 5 vs 4"});
}

TEST(ShapeRulesTest, UnaryKeepsShape) {
  for (OpKind op : {OpKind::kNeg, OpKind::kAbs, OpKind::kExp, OpKind::kLog, OpKind::kSqrt,
                    OpKind::kRsqrt, OpKind::kTanh, OpKind::kSigmoid, OpKind::kRelu,
                    OpKind::kGeluTanh, OpKind::kGeluErf, OpKind::kSilu, OpKind::kCast}) {
    EXPECT_EQ(*Infer(op, {}, {{kB, kS * 4}}), (Shape{kB, kS * 4})) << ir::OpName(op);
    EXPECT_EQ(*Infer(op, {}, {{}}), Shape{}) << ir::OpName(op);
  }
}

TEST(ShapeRulesTest, Reduce) {
  EXPECT_EQ(*Infer(OpKind::kReduceSum, Axis(1), {{kB, kS, 8}}), (Shape{kB, 8}));
  EXPECT_EQ(*Infer(OpKind::kReduceMax, Axis(-1), {{kB, kS, 8}}), (Shape{kB, kS}));
  EXPECT_EQ(*Infer(OpKind::kReduceMean, Axis(-3, true), {{kB, kS, 8}}), (Shape{1, kS, 8}));
  EXPECT_EQ(*Infer(OpKind::kReduceSum, Axis(0), {{5}}), Shape{});
  EXPECT_EQ(*Infer(OpKind::kReduceSum, Axis(0, true), {{0}}), Shape{1});
}

TEST(ShapeRulesTest, ReduceAxisErrors) {
  ExpectInvalid(Infer(OpKind::kReduceSum, Axis(2), {{kB, 4}}),
                {"reduce_sum: axis 2 is out of range for input 0 shape [batch, 4] (rank 2"});
  ExpectInvalid(Infer(OpKind::kReduceMean, Axis(-3), {{kB, 4}}),
                {"reduce_mean: axis -3", "input 0 shape [batch, 4]"});
  ExpectInvalid(Infer(OpKind::kReduceMax, Axis(0), {{}}),
                {"reduce_max: axis 0", "input 0 shape []"});
}

TEST(ShapeRulesTest, RowOps) {
  EXPECT_EQ(*Infer(OpKind::kSoftmax, {}, {{kB, kS}}), (Shape{kB, kS}));
  EXPECT_EQ(*Infer(OpKind::kLogSoftmax, {}, {{7}}), Shape{7});
  ExpectInvalid(Infer(OpKind::kSoftmax, {}, {{}}),
                {"softmax: input 0 shape [] has rank 0; expected rank >= 1"});
  ExpectInvalid(Infer(OpKind::kLogSoftmax, {}, {{}}), {"log_softmax: input 0 shape []"});
}

TEST(ShapeRulesTest, Norms) {
  EXPECT_EQ(*Infer(OpKind::kLayerNorm, {}, {{kB, kS, 768}, {768}, {768}}), (Shape{kB, kS, 768}));
  EXPECT_EQ(*Infer(OpKind::kRmsNorm, {}, {{kB, kH * 64}, {kH * 64}}), (Shape{kB, kH * 64}));
  ExpectInvalid(Infer(OpKind::kLayerNorm, {}, {{kB, 768}, {512}, {768}}),
                {"layer_norm: input 1 (weight) shape [512] does not match the last dim of input "
                 "0 shape [batch, 768] (expected [768])"});
  ExpectInvalid(Infer(OpKind::kLayerNorm, {}, {{kB, 768}, {768}, {1, 768}}),
                {"layer_norm: input 2 (bias) shape [1, 768]", "input 0 shape [batch, 768]"});
  ExpectInvalid(
      Infer(OpKind::kRmsNorm, {}, {{kB, kS}, {kB}}),
      {"rms_norm: input 1 (weight) shape [batch]", "input 0 shape [batch, seq]", "expected [seq]"});
  ExpectInvalid(Infer(OpKind::kRmsNorm, {}, {{}, {}}), {"rms_norm: input 0 shape [] has rank 0"});
}

TEST(ShapeRulesTest, MatMulPlainAndTransposed) {
  EXPECT_EQ(*Infer(OpKind::kMatMul, {}, {{kB, 768}, {768, 3072}}), (Shape{kB, 3072}));
  ir::Attrs ta;
  ta.transpose_a = true;
  EXPECT_EQ(*Infer(OpKind::kMatMul, ta, {{768, kB}, {768, 64}}), (Shape{kB, 64}));
  ir::Attrs tb;
  tb.transpose_b = true;
  EXPECT_EQ(*Infer(OpKind::kMatMul, tb, {{kB, kS, 64}, {kB, kS, 64}}), (Shape{kB, kS, kS}));
  ir::Attrs both;
  both.transpose_a = both.transpose_b = true;
  EXPECT_EQ(*Infer(OpKind::kMatMul, both, {{5, 3}, {4, 5}}), (Shape{3, 4}));
}

TEST(ShapeRulesTest, MatMulBatchBroadcast) {
  // Rank-2 operand against a batched one.
  EXPECT_EQ(*Infer(OpKind::kMatMul, {}, {{kB, kS, 768}, {768, 64}}), (Shape{kB, kS, 64}));
  EXPECT_EQ(*Infer(OpKind::kMatMul, {}, {{kS, 768}, {kB, 768, 64}}), (Shape{kB, kS, 64}));
  // Batch dims broadcast with 1.
  EXPECT_EQ(*Infer(OpKind::kMatMul, {}, {{kB, 1, kS, 8}, {1, kH, 8, kS}}), (Shape{kB, kH, kS, kS}));
}

TEST(ShapeRulesTest, MatMulErrors) {
  ExpectInvalid(Infer(OpKind::kMatMul, {}, {{kB, 512}, {768, 64}}),
                {"matmul: input 1 shape [768, 64] has K = 768 (axis 0) but input 0 shape "
                 "[batch, 512] has K = 512 (axis 1)"});
  ir::Attrs tb;
  tb.transpose_b = true;
  ExpectInvalid(Infer(OpKind::kMatMul, tb, {{kB, 64}, {64, 32}}),
                {"matmul: input 1 shape [64, 32] has K = 32 (axis 1, transposed)",
                 "input 0 shape [batch, 64]"});
  ExpectInvalid(Infer(OpKind::kMatMul, {}, {{8}, {8, 4}}),
                {"matmul: input 0 shape [8] has rank 1; expected rank >= 2"});
  ExpectInvalid(Infer(OpKind::kMatMul, {}, {{8, 4}, {4}}),
                {"matmul: input 1 shape [4] has rank 1"});
  ExpectInvalid(Infer(OpKind::kMatMul, {}, {{kB, 3, 8, 4}, {kS, 4, 2}}),
                {"matmul: input 1 shape [seq, 4, 2] has batch dims not broadcastable with "
                 "input 0 shape [batch, 3, 8, 4] (batch axis 1: seq vs 3)"});
}

TEST(ShapeRulesTest, Transpose) {
  EXPECT_EQ(*Infer(OpKind::kTranspose, Ints({0, 2, 1, 3}), {{kB, kS, kH, 64}}),
            (Shape{kB, kH, kS, 64}));
  EXPECT_EQ(*Infer(OpKind::kTranspose, Ints({}), {{}}), Shape{});
  ExpectInvalid(Infer(OpKind::kTranspose, Ints({0, 1}), {{kB, kS, 4}}),
                {"transpose: permutation [0, 1] for input 0 shape [batch, seq, 4] has 2 "
                 "entries; expected 3"});
  ExpectInvalid(Infer(OpKind::kTranspose, Ints({0, 3, 1}), {{kB, kS, 4}}),
                {"transpose: ", "input 0 shape [batch, seq, 4]", "entry 3 outside [0, 3)"});
  ExpectInvalid(Infer(OpKind::kTranspose, Ints({1, 1, 0}), {{kB, kS, 4}}),
                {"transpose: ", "input 0 shape [batch, seq, 4]", "repeats axis 1"});
  ExpectInvalid(Infer(OpKind::kTranspose, Ints({-1, 0}), {{2, 3}}), {"entry -1 outside [0, 2)"});
}

TEST(ShapeRulesTest, ReshapeSymbolic) {
  // [b, s, 768] -> [-1, 768] gives [b*s, 768].
  EXPECT_EQ(*Infer(OpKind::kReshape, Ints({-1, 768}), {{kB, kS, 768}}), (Shape{kB * kS, 768}));
  // 0 copies the input dim at the same position.
  EXPECT_EQ(*Infer(OpKind::kReshape, Ints({0, 0, 12, 64}), {{kB, kS, 768}}),
            (Shape{kB, kS, 12, 64}));
  EXPECT_EQ(*Infer(OpKind::kReshape, Ints({0, -1, 64}), {{kB, kS, 768}}), (Shape{kB, kS * 12, 64}));
  EXPECT_EQ(*Infer(OpKind::kReshape, Ints({0, -1, 64}), {{kB * kS, 768}}),
            (Shape{kB * kS, 12, 64}));
  EXPECT_EQ(*Infer(OpKind::kReshape, Ints({0, 12, -1}), {{kB * kS, 768}}),
            (Shape{kB * kS, 12, 64}));
  // [b*s, h*64] -> [0, -1, 64] infers h.
  EXPECT_EQ(*Infer(OpKind::kReshape, Ints({0, -1, 64}), {{kB * kS, kH * 64}}),
            (Shape{kB * kS, kH, 64}));
  // Back: [b, s, h, 64] -> [0, 0, -1].
  EXPECT_EQ(*Infer(OpKind::kReshape, Ints({0, 0, -1}), {{kB, kS, kH, 64}}),
            (Shape{kB, kS, kH * 64}));
  // Whole tensor flattened, and scalars.
  EXPECT_EQ(*Infer(OpKind::kReshape, Ints({-1}), {{kB, kS, 3}}), (Shape{kB * kS * 3}));
  EXPECT_EQ(*Infer(OpKind::kReshape, Ints({}), {{1, 1}}), Shape{});
  EXPECT_EQ(*Infer(OpKind::kReshape, Ints({1, -1}), {{}}), (Shape{1, 1}));
  // Equal element counts without -1.
  EXPECT_EQ(*Infer(OpKind::kReshape, Ints({4, 6}), {{2, 3, 4}}), (Shape{4, 6}));
  EXPECT_EQ(*Infer(OpKind::kReshape, Ints({0, 0}), {{kB, kS}}), (Shape{kB, kS}));
}

TEST(ShapeRulesTest, ReshapeErrors) {
  ExpectInvalid(Infer(OpKind::kReshape, Ints({-1, -1}), {{kB, 768}}),
                {"reshape: spec [-1, -1] for input 0 shape [batch, 768] has more than one -1"});
  ExpectInvalid(Infer(OpKind::kReshape, Ints({-2, 768}), {{kB, 768}}),
                {"reshape: spec [-2, 768] for input 0 shape [batch, 768] has invalid entry -2 "
                 "at position 0"});
  ExpectInvalid(
      Infer(OpKind::kReshape, Ints({0, 0, 0}), {{kB, 768}}),
      {"reshape: spec [0, 0, 0] for input 0 shape [batch, 768] copies input dim 2", "rank 2"});
  ExpectInvalid(Infer(OpKind::kReshape, Ints({-1, 7}), {{kB, 768}}),
                {"reshape: spec [-1, 7] for input 0 shape [batch, 768]", "cannot infer -1",
                 "768*batch", "divisible by 7"});
  ExpectInvalid(Infer(OpKind::kReshape, Ints({-1, 4}), {{kB, kS}}),
                {"reshape: spec [-1, 4] for input 0 shape [batch, seq] cannot infer -1"});
  // DivExact divides by single terms only: b+1 is not recognized as a divisor of 4*b + 4.
  ExpectInvalid(Infer(OpKind::kReshape, Ints({0, -1}), {{kB + 1, 4}}),
                {"cannot infer -1", "input 0 shape [1 + batch, 4]"});
  ExpectInvalid(Infer(OpKind::kReshape, Ints({0, 12, 64}), {{kB, kS, 768}}),
                {"reshape: spec [0, 12, 64] for input 0 shape [batch, seq, 768] asks for "
                 "768*batch elements (shape [batch, 12, 64]) but the input has 768*batch*seq"});
  ExpectInvalid(Infer(OpKind::kReshape, Ints({0, -1}), {{0, 4}}),
                {"cannot infer -1", "input 0 shape [0, 4]"});
  ExpectInvalid(Infer(OpKind::kReshape, Ints({5}), {{2, 3}}),
                {"reshape: spec [5] for input 0 shape [2, 3] asks for 5 elements"});
}

// A -1 inferred by dividing by dims that may be 0 holds only where they are not: a guard.
TEST(ShapeRulesTest, ReshapeGuardsADivisorThatMayBeZero) {
  std::vector<ir::SymbolInfo> symbols = {{"n", 0, 40}, {"m", 1, 40}};
  std::vector<ir::ShapeGuard> guards;
  const SymExpr n = SymExpr::Symbol(0), m = SymExpr::Symbol(1);
  absl::StatusOr<Shape> out =
      InferShape(OpKind::kReshape, Ints({0, -1}), std::vector<Shape>{{n, 2, 3}}, &symbols, &guards);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, (Shape{n, 6}));
  ASSERT_EQ(guards.size(), 1u);
  EXPECT_EQ(guards[0].expr, n);
  EXPECT_EQ(guards[0].message,
            "reshape: spec [0, -1] for input 0 shape [n, 2, 3] cannot infer -1 when n is 0, "
            "since any size would fit");
  // A divisor >= 1 over its symbols' ranges, or a constant one, needs no guard.
  out =
      InferShape(OpKind::kReshape, Ints({0, -1}), std::vector<Shape>{{m, 2, 3}}, &symbols, &guards);
  ASSERT_TRUE(out.ok()) << out.status();
  out =
      InferShape(OpKind::kReshape, Ints({-1, 3}), std::vector<Shape>{{n, 2, 3}}, &symbols, &guards);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(guards.size(), 1u);
  // With constant sizes the same reshape is an error, as in numpy.
  ExpectInvalid(Infer(OpKind::kReshape, Ints({0, -1}), {{0, 2, 3}}),
                {"reshape: spec [0, -1] for input 0 shape [0, 2, 3] cannot infer -1: the other "
                 "sizes multiply to 0, so any size would fit"});
}

TEST(ShapeRulesTest, Concat) {
  EXPECT_EQ(*Infer(OpKind::kConcat, Axis(1), {{kB, 4}, {kB, kS}, {kB, 4}}), (Shape{kB, kS + 8}));
  EXPECT_EQ(*Infer(OpKind::kConcat, Axis(-2), {{kB, 4}, {kS, 4}}), (Shape{kB + kS, 4}));
  EXPECT_EQ(*Infer(OpKind::kConcat, Axis(0), {{3}}), Shape{3});
  ExpectInvalid(Infer(OpKind::kConcat, Axis(1), {{kB, 4}, {kS, 4}}),
                {"concat: input 1 shape [seq, 4] does not match input 0 shape [batch, 4] at "
                 "axis 0 (seq vs batch); only the concat axis 1 may differ"});
  ExpectInvalid(Infer(OpKind::kConcat, Axis(0), {{kB, 4}, {kB, 4}, {4}}),
                {"concat: input 2 shape [4] has rank 1 but input 0 shape [batch, 4] has rank 2"});
  ExpectInvalid(Infer(OpKind::kConcat, Axis(2), {{kB, 4}, {kB, 4}}),
                {"concat: axis 2 is out of range for input 0 shape [batch, 4]"});
}

TEST(ShapeRulesTest, SliceConstantDimClampsLikePython) {
  EXPECT_EQ(*Infer(OpKind::kSlice, SliceAttrs(1, 2, 7), {{kB, 10}}), (Shape{kB, 5}));
  EXPECT_EQ(*Infer(OpKind::kSlice, SliceAttrs(-1, -3, kToEnd), {{kB, 10}}), (Shape{kB, 3}));
  EXPECT_EQ(*Infer(OpKind::kSlice, SliceAttrs(1, 0, 100, 3), {{kB, 10}}), (Shape{kB, 4}));
  EXPECT_EQ(*Infer(OpKind::kSlice, SliceAttrs(1, 8, 2), {{kB, 10}}), (Shape{kB, 0}));
  EXPECT_EQ(*Infer(OpKind::kSlice, SliceAttrs(0, -100, -8), {{10}}), Shape{2});
  EXPECT_EQ(*Infer(OpKind::kSlice, SliceAttrs(0, 0, kToEnd), {{0}}), Shape{0});
}

// Where no size in the symbols' ranges clamps the bounds, start and length are polynomials.
TEST(ShapeRulesTest, SliceSymbolicDimWithoutClamping) {
  std::vector<ir::SymbolInfo> symbols;
  EXPECT_EQ(*Infer(OpKind::kSlice, SliceAttrs(0, 1, kToEnd), {{kB, 10}}, &symbols),
            (Shape{kB - 1, 10}));
  EXPECT_EQ(symbols.size(), kSymbols.size());  // batch >= 1: nothing derived
  EXPECT_EQ(*Infer(OpKind::kSlice, SliceAttrs(0, 0, kToEnd), {{kB * kS}}), (Shape{kB * kS}));
  EXPECT_EQ(*Infer(OpKind::kSlice, SliceAttrs(0, 0, -1), {{kB, 3}}), (Shape{kB - 1, 3}));
  // An end at or past the largest size is the end; a start and end within the smallest size
  // give a constant length.
  EXPECT_EQ(*Infer(OpKind::kSlice, SliceAttrs(2, 0, 64), {{4, kS, kH}}), (Shape{4, kS, kH}));
  EXPECT_EQ(*Infer(OpKind::kSlice, SliceAttrs(0, 0, 1), {{kB}}), (Shape{1}));
  EXPECT_EQ(*Infer(OpKind::kSlice, SliceAttrs(0, -1, kToEnd), {{kB * kS}}), (Shape{1}));
  EXPECT_EQ(*Infer(OpKind::kSlice, SliceAttrs(1, 2, 2), {{4, kS}}), (Shape{4, 0}));
  EXPECT_EQ(symbols.size(), kSymbols.size());
}

// Elsewhere the length is a derived symbol computed from the runtime size like numpy.
TEST(ShapeRulesTest, SliceSymbolicDimDerivesItsLength) {
  std::vector<ir::SymbolInfo> symbols;
  absl::StatusOr<Shape> shape = Infer(OpKind::kSlice, SliceAttrs(1, 2, 40, 7), {{4, kS}}, &symbols);
  ASSERT_TRUE(shape.ok()) << shape.status();
  ASSERT_EQ(symbols.size(), kSymbols.size() + 1);
  const ir::SymbolInfo& len = symbols.back();
  EXPECT_EQ(*shape, (Shape{4, SymExpr::Symbol(3)}));
  EXPECT_EQ(len.name, "seq[2:40:7]");
  EXPECT_EQ(len.min, 0);
  EXPECT_EQ(len.max, 74);  // ceil(512 / 7): a bound, not the exact largest length
  ASSERT_TRUE(len.derived.has_value());
  EXPECT_EQ(*len.derived, (ir::DerivedSymbol{ir::DerivedSymbol::Kind::kSliceLength, kS, 2, 40, 7}));
  // numpy: [2:40:7] of 3, 10 and 500 elements has 1, 2 and 6.
  for (auto [seq, want] :
       std::vector<std::pair<int64_t, int64_t>>{{3, 1}, {10, 2}, {500, 6}, {1, 0}}) {
    std::vector<int64_t> values = {1, seq, 1, -1};
    BindDerivedSymbols(symbols, values);
    EXPECT_EQ(values[3], want) << "seq " << seq;
  }
}

TEST(ShapeRulesTest, SliceSymbolicDimPastItsSize) {
  // end 1000 and 1e8 on a dim of 3: 3 rows, never the bounds' difference.
  for (int64_t end : {int64_t{1000}, int64_t{100000000}}) {
    std::vector<ir::SymbolInfo> symbols;
    absl::StatusOr<Shape> shape = Infer(OpKind::kSlice, SliceAttrs(0, 0, end), {{kB, 4}}, &symbols);
    ASSERT_TRUE(shape.ok()) << shape.status();
    ASSERT_EQ(symbols.size(), kSymbols.size() + (end < 4096 ? 1 : 0)) << end;
    if (end >= 4096) {
      EXPECT_EQ(*shape, (Shape{kB, 4}));  // past every size batch may take: the whole dim
      continue;
    }
    std::vector<int64_t> values = {3, 1, 1, -1};
    BindDerivedSymbols(symbols, values);
    EXPECT_EQ(shape->at(0).Evaluate(values), 3);
  }
}

// A negative start needs a derived start (the index of the first element taken) too; slices
// with equal bounds of one dim share their symbols.
TEST(ShapeRulesTest, SliceSymbolicDimNegativeBounds) {
  std::vector<ir::SymbolInfo> symbols = kSymbols;
  const ir::Attrs attrs = SliceAttrs(0, -5, -1, 2);
  absl::StatusOr<Shape> a =
      InferShape(OpKind::kSlice, attrs, std::vector<Shape>{{kB, 4}}, &symbols);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(symbols.size(), kSymbols.size() + 2);
  EXPECT_EQ(symbols[3].name, "batch[-5:-1:2].start");
  EXPECT_EQ(symbols[4].name, "batch[-5:-1:2]");
  EXPECT_EQ(a->at(0), SymExpr::Symbol(4));
  absl::StatusOr<Shape> b =
      InferShape(OpKind::kSlice, attrs, std::vector<Shape>{{kB, 9}}, &symbols);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(a->at(0), b->at(0));
  EXPECT_EQ(symbols.size(), kSymbols.size() + 2);
  std::optional<SymExpr> start = SymbolicSliceStart(kB, -5, -1, 2, symbols);
  ASSERT_TRUE(start.has_value());
  EXPECT_EQ(*start, SymExpr::Symbol(3));
  EXPECT_FALSE(SymbolicSliceStart(kB, -6, -1, 2, symbols).has_value());  // never derived
  // numpy: np.arange(n)[-5:-1:2] starts at max(n - 5, 0) and has ceil((n - 1 - start) / 2).
  for (int64_t n : {1, 2, 4, 5, 6, 100}) {
    std::vector<int64_t> values = {n, 1, 1, -1, -1};
    BindDerivedSymbols(symbols, values);
    const int64_t first = std::max<int64_t>(n - 5, 0);
    EXPECT_EQ(values[3], first) << n;
    EXPECT_EQ(values[4], std::max<int64_t>(0, (n - 1 - first + 1) / 2)) << n;
  }
}

TEST(ShapeRulesTest, SliceErrors) {
  ExpectInvalid(
      Infer(OpKind::kSlice, SliceAttrs(0, 0, 4, 0), {{8}}),
      {"slice: start 0, end 4, step 0 on axis 0 of input 0 shape [8]: step must be >= 1"});
  ExpectInvalid(Infer(OpKind::kSlice, SliceAttrs(0, 0, 4, -1), {{kB}}),
                {"slice: start 0, end 4, step -1 on axis 0 of input 0 shape [batch]: step must be "
                 ">= 1"});
  ExpectInvalid(Infer(OpKind::kSlice, SliceAttrs(3, 0, 1), {{kB}}),
                {"slice: axis 3 is out of range for input 0 shape [batch]"});
  // Without a symbol table a symbolic slice cannot derive its length.
  absl::StatusOr<Shape> no_table =
      InferShape(OpKind::kSlice, SliceAttrs(0, 0, 4), std::vector<Shape>{{kB}});
  ASSERT_FALSE(no_table.ok());
  EXPECT_EQ(no_table.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(no_table.status().message()),
              HasSubstr("slicing the symbolic dim s0 needs the graph's symbol table"));
}

TEST(ShapeRulesTest, ResolveSlice) {
  SliceBounds b = ResolveSlice(10, -3, kToEnd, 1);
  EXPECT_EQ(b.start, 7);
  EXPECT_EQ(b.length, 3);
  b = ResolveSlice(10, 1, 10, 4);  // 1, 5, 9
  EXPECT_EQ(b.start, 1);
  EXPECT_EQ(b.length, 3);
  b = ResolveSlice(10, 20, 30, 1);
  EXPECT_EQ(b.start, 10);
  EXPECT_EQ(b.length, 0);
  b = ResolveSlice(5, std::numeric_limits<int64_t>::min(), kToEnd, kToEnd);
  EXPECT_EQ(b.start, 0);
  EXPECT_EQ(b.length, 1);
}

TEST(ShapeRulesTest, DTypes) {
  using ir::DType;
  EXPECT_EQ(*InferDType(OpKind::kAdd, {}, std::vector<DType>{DType::kF32, DType::kF32}),
            DType::kF32);
  EXPECT_EQ(*InferDType(OpKind::kConstant, {}, {}), DType::kF32);
  EXPECT_EQ(*InferDType(OpKind::kCast, {}, std::vector<DType>{DType::kF32}), DType::kF32);

  absl::StatusOr<DType> r =
      InferDType(OpKind::kMatMul, {}, std::vector<DType>{DType::kF32, DType::kBF16});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("matmul: input 1 dtype bf16 differs from input 0 dtype f32"));

  r = InferDType(OpKind::kExp, {}, std::vector<DType>{DType::kF16});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(r.status().message()),
              AllOf(HasSubstr("exp: input 0 dtype f16"), HasSubstr("only f32")));

  ir::Attrs to_i8;
  to_i8.dtype = DType::kI8;
  r = InferDType(OpKind::kCast, to_i8, std::vector<DType>{DType::kF32});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("cast: target dtype i8"));

  r = InferDType(OpKind::kAdd, {}, std::vector<DType>{DType::kF32});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("add: expects 2 inputs, got 1"));
}

}  // namespace
}  // namespace pto::ops
