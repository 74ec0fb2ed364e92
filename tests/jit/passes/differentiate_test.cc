// The differentiation pass on traced graphs: the gradient outputs it appends, their shapes
// (symbolic, broadcast inputs summed back), the pruning of values no wrt input reaches, and
// its errors. Values are checked end to end in tests/jit/e2e/gradient_check_test.cc.
#include "jit/passes/differentiate.h"

#include <span>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/graph_builder.h"
#include "pto/value.h"
#include "tests/jit/passes/builders.h"

namespace pto::jit {
namespace {

using ::pto::jit::testing::TraceGraph;
using ::testing::HasSubstr;

int CountOps(const ir::Graph& g, ir::OpKind op) {
  int n = 0;
  for (const ir::Node& node : g.nodes) n += node.op == op;
  return n;
}

TEST(Differentiate, AppendsOneGradientPerWrtInputWithItsSymbolicShape) {
  // loss = sum(x @ w + b): x [batch, 8], w [8, 4], b [4] (broadcast over batch).
  ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        return std::vector{reduce_sum(reduce_sum(matmul(v[0], v[1]) + v[2], 1), 0)};
      },
      {{"batch", 8}, {8, 4}, {4}}, {{"batch", 1, 64}});
  absl::StatusOr<ir::Graph> d = Differentiate(g, {.wrt = {1, 2, 0}});
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->outputs.size(), 4u);
  EXPECT_EQ(d->outputs[0], g.outputs[0]);  // the loss first, unchanged
  const std::vector<std::string> names = d->SymbolNames();
  EXPECT_EQ(ir::ShapeToString(d->nodes[d->outputs[1]].shape, names), "[8, 4]");
  EXPECT_EQ(ir::ShapeToString(d->nodes[d->outputs[2]].shape, names), "[4]");
  EXPECT_EQ(ir::ShapeToString(d->nodes[d->outputs[3]].shape, names), "[batch, 8]");
  // dW = x^T G and dx = G W^T: two matmuls more; db sums G over the batch.
  EXPECT_EQ(CountOps(*d, ir::OpKind::kMatMul), 3);
  const ir::Node& db = d->nodes[d->outputs[2]];
  EXPECT_EQ(db.op, ir::OpKind::kReduceSum) << d->ToString();
}

// A weight shared by every batch of x [batch, seq, 8]: its gradient is ONE matmul over the
// rows of all batches ([batch*seq, 8]^T [batch*seq, 4], K = batch*seq), not a matmul per batch
// and a sum over them.
// The gradient of sum((x @ w)^2) with respect to w, x of shape [batch, 5, k], w [k, n].
absl::StatusOr<ir::Graph> SharedWeightGradient(int64_t k, int64_t n) {
  ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        const Value y = matmul(v[0], v[1]);
        return std::vector{reduce_sum(reduce_sum(reduce_sum(y * y, 2), 1), 0)};
      },
      {{"batch", 5, k}, {k, n}}, {{"batch", 1, 64}});
  return Differentiate(g, {.wrt = {1}});
}

TEST(Differentiate, ASharedWeightsGradientFoldsTheBatchIntoOneMatMul) {
  absl::StatusOr<ir::Graph> d = SharedWeightGradient(4, 8);
  ASSERT_TRUE(d.ok()) << d.status();
  const std::vector<std::string> names = d->SymbolNames();
  const ir::Node& dw = d->nodes[d->outputs[1]];
  ASSERT_EQ(dw.op, ir::OpKind::kMatMul) << d->ToString();
  EXPECT_EQ(ir::ShapeToString(dw.shape, names), "[4, 8]");
  EXPECT_TRUE(dw.attrs.transpose_a);
  EXPECT_FALSE(dw.attrs.transpose_b);
  const ir::Node& rows = d->nodes[dw.inputs[0]];
  EXPECT_EQ(rows.op, ir::OpKind::kReshape);
  EXPECT_EQ(ir::ShapeToString(rows.shape, names), "[5*batch, 4]");
  EXPECT_EQ(CountOps(*d, ir::OpKind::kReduceSum), 3) << d->ToString();  // the loss's only
}

TEST(Differentiate, AFoldedWeightGradientComesOutInTheWeightsLayout) {
  // x ([5*batch, 8]) is wider than g ([5*batch, 4]), and the product is still x^T g: no
  // transpose after it.
  absl::StatusOr<ir::Graph> d = SharedWeightGradient(8, 4);
  ASSERT_TRUE(d.ok()) << d.status();
  const std::vector<std::string> names = d->SymbolNames();
  const ir::Node& dw = d->nodes[d->outputs[1]];
  ASSERT_EQ(dw.op, ir::OpKind::kMatMul) << d->ToString();
  EXPECT_EQ(ir::ShapeToString(dw.shape, names), "[8, 4]");
  EXPECT_TRUE(dw.attrs.transpose_a);
  EXPECT_EQ(ir::ShapeToString(d->nodes[dw.inputs[0]].shape, names), "[5*batch, 8]");
  EXPECT_EQ(CountOps(*d, ir::OpKind::kTranspose), 0) << d->ToString();
}

TEST(Differentiate, OnlyTheWrtInputsPathsAreDifferentiated) {
  // x's branch gets a gradient; y's branch (exp(y) * 3) contributes none and is not touched.
  ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        return std::vector{reduce_sum(v[0] * v[0] + exp(v[1]) * 3.0f, 0)};
      },
      {{16}, {16}});
  absl::StatusOr<ir::Graph> d = Differentiate(g, {.wrt = {0}});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(CountOps(*d, ir::OpKind::kExp), 1) << d->ToString();  // the forward one only
  ASSERT_EQ(d->outputs.size(), 2u);
  // d(x*x)/dx = g*x + g*x: both operands of the product contribute.
  EXPECT_EQ(d->nodes[d->outputs[1]].op, ir::OpKind::kAdd) << d->ToString();
}

TEST(Differentiate, AnInputTheLossDoesNotReachGetsZeros) {
  ir::Graph g = TraceGraph(
      [](std::span<const Value> v) { return std::vector{reduce_sum(reduce_sum(v[0], 1), 0)}; },
      {{"n", 3}, {5, 2}}, {{"n", 1, 100}});
  absl::StatusOr<ir::Graph> d = Differentiate(g, {.wrt = {1}});
  ASSERT_TRUE(d.ok()) << d.status();
  const ir::Node& zeros = d->nodes[d->outputs[1]];
  EXPECT_EQ(zeros.op, ir::OpKind::kBroadcastTo);
  EXPECT_EQ(ir::ShapeToString(zeros.shape), "[5, 2]");
  EXPECT_EQ(d->nodes[zeros.inputs[0]].attrs.scalar, 0.0);
  EXPECT_THAT(d->ToString(), HasSubstr(" to=[5, 2] : f32[5, 2]"));
}

TEST(Differentiate, VectorJacobianProductReadsTheCotangentInputs) {
  // f(x) = tanh(x) with the cotangent as input 1: the gradient is c * (1 - y^2).
  ir::Graph g = TraceGraph([](std::span<const Value> v) { return std::vector{tanh(v[0])}; },
                           {{"b", 7}, {"b", 7}}, {{"b", 1, 32}});
  absl::StatusOr<ir::Graph> d = Differentiate(g, {.wrt = {0}, .cotangents = 1});
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->outputs.size(), 2u);
  const ir::Node& grad = d->nodes[d->outputs[1]];
  EXPECT_EQ(grad.op, ir::OpKind::kMul);
  EXPECT_EQ(grad.inputs[0], 1) << "the cotangent input's node";
}

TEST(Differentiate, RefusesANonScalarLoss) {
  ir::Graph g = TraceGraph([](std::span<const Value> v) { return std::vector{exp(v[0])}; },
                           {{"batch", 10}}, {{"batch", 1, 8}});
  absl::StatusOr<ir::Graph> d = Differentiate(g, {.wrt = {0}});
  ASSERT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(d.status().message(),
            "gradient: output 0 (the loss) is f32[batch, 10]; a gradient is taken of a scalar "
            "f32 loss (reduce it with reduce_sum or reduce_mean, or pass cotangents for a "
            "vector-Jacobian product)");
}

TEST(Differentiate, RefusesBadSpecs) {
  ir::Graph g = TraceGraph(
      [](std::span<const Value> v) { return std::vector{reduce_sum(v[0] * v[1], 0)}; }, {{4}, {4}});
  EXPECT_EQ(Differentiate(g, {.wrt = {2}}).status().message(),
            "gradient: wrt input 2 is out of range [0, 2)");
  EXPECT_EQ(Differentiate(g, {.wrt = {0, 0}}).status().message(),
            "gradient: wrt lists input 0 twice");
  EXPECT_EQ(Differentiate(g, {.wrt = {}}).status().message(),
            "gradient: no input to differentiate with respect to");
  // With a cotangent, input 1 is the cotangent of output 0: not differentiable.
  EXPECT_EQ(Differentiate(g, {.wrt = {1}, .cotangents = 1}).status().message(),
            "gradient: wrt input 1 is out of range [0, 1) (the cotangents are not "
            "differentiable inputs)");
}

TEST(Differentiate, RefusesACotangentOfAnotherShape) {
  ir::Graph g = TraceGraph([](std::span<const Value> v) { return std::vector{exp(v[0])}; },
                           {{"a", 3}, {"b", 3}}, {{"a", 1, 8}, {"b", 1, 8}});
  absl::StatusOr<ir::Graph> d = Differentiate(g, {.wrt = {0}, .cotangents = 1});
  ASSERT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(d.status().message(),
            "gradient: cotangent 0 (input 1) is f32[b, 3] but output 0 is f32[a, 3]; give their "
            "symbolic dims the same pto::Dim so they are one symbol");
}

// x[0:8:2] of a symbolic dim: the cotangent is scatter-added at the same slice of an index
// ramp over the dim (values checked end to end by JitGrad's StridedSlicesOfASymbolicDim...).
TEST(Differentiate, ASliceWithAStepOfASymbolicDimScattersAtTheSlicedPositions) {
  ir::Graph g = TraceGraph(
      [](std::span<const Value> v) { return std::vector{reduce_sum(slice(v[0], 0, 0, 8, 2), 0)}; },
      {{"n"}}, {{"n", 8, 64}});
  absl::StatusOr<ir::Graph> d = Differentiate(g, {.wrt = {0}});
  ASSERT_TRUE(d.ok()) << d.status();
  const ir::Node& grad = d->nodes[d->outputs[1]];
  ASSERT_EQ(grad.op, ir::OpKind::kScatterAdd) << d->ToString();
  EXPECT_EQ(grad.inputs[0], 0) << "like: the sliced input";
  const ir::Node& positions = d->nodes[grad.inputs[2]];
  ASSERT_EQ(positions.op, ir::OpKind::kSlice) << d->ToString();
  EXPECT_EQ(positions.attrs.step, 2);
  EXPECT_EQ(positions.dtype, ir::DType::kI32);
  EXPECT_EQ(d->nodes[positions.inputs[0]].op, ir::OpKind::kIota) << d->ToString();
}

TEST(Differentiate, SlicesOfASymbolicDimGetTheirCotangentBetweenZeros) {
  // x[1:] of a dim n >= 2: the gradient is [0, g...] of length n (1 + (n - 1)).
  ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        return std::vector{reduce_sum(slice(v[0], 0, 1, INT64_MAX), 0)};
      },
      {{"n"}}, {{"n", 2, 64}});
  absl::StatusOr<ir::Graph> d = Differentiate(g, {.wrt = {0}});
  ASSERT_TRUE(d.ok()) << d.status();
  const ir::Node& grad = d->nodes[d->outputs[1]];
  EXPECT_EQ(grad.op, ir::OpKind::kConcat) << d->ToString();
  EXPECT_EQ(ir::ShapeToString(grad.shape, d->SymbolNames()), "[n]");
}

TEST(Differentiate, AnOpWithoutAGradientRuleIsNamed) {
  // softmax_grad (which the pass emits, never differentiates) on the loss's path.
  ir::Graph g =
      TraceGraph([](std::span<const Value> v) { return std::vector{softmax(v[0])}; }, {{2, 3}});
  ops::GraphBuilder b(g);
  const int grad = b.Op(ir::OpKind::kSoftmaxGrad, {1, 0});
  g.outputs = {b.Sum(b.Sum(grad, 1, false), 0, false)};
  ASSERT_TRUE(b.status().ok()) << b.status();
  absl::StatusOr<ir::Graph> d = Differentiate(g, {.wrt = {0}});
  ASSERT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(d.status().message(),
            "gradient of node %2 (softmax_grad): softmax_grad has no gradient rule");
}

// A training step's parameters are views of one flat input: differentiating with respect to
// the views (wrt_nodes) gives each its gradient in its own shape, after the wrt inputs'.
TEST(Differentiate, WrtNodesGetTheirGradientsAfterTheInputs) {
  ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        const Value w = reshape(slice(v[1], 0, 0, 12), {3, 4});
        const Value b = slice(v[1], 0, 12, 16);
        return std::vector{reduce_sum(reduce_sum(matmul(v[0], w) + b, 1), 0), w, b};
      },
      {{2, 3}, {16}});
  const int w = g.outputs[1], b = g.outputs[2];
  absl::StatusOr<ir::Graph> d = Differentiate(g, {.wrt = {0}, .wrt_nodes = {w, b}});
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->outputs.size(), 6u);
  const std::vector<std::string> names = d->SymbolNames();
  EXPECT_EQ(ir::ShapeToString(d->nodes[d->outputs[3]].shape, names), "[2, 3]");  // x
  EXPECT_EQ(ir::ShapeToString(d->nodes[d->outputs[4]].shape, names), "[3, 4]");  // w
  EXPECT_EQ(ir::ShapeToString(d->nodes[d->outputs[5]].shape, names), "[4]");     // b
  // Nothing flows into the flat input: no slice's gradient (a padding concat) is built.
  EXPECT_EQ(CountOps(*d, ir::OpKind::kConcat), 0) << d->ToString();

  absl::StatusOr<ir::Graph> bad = Differentiate(g, {.wrt_nodes = {99}});
  ASSERT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "gradient: wrt node %99 is not a node of the graph");
  bad = Differentiate(g, {.wrt_nodes = {w}, .accumulate = true});
  ASSERT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "gradient: accumulators are for wrt inputs, not nodes");
}

TEST(Differentiate, RefusesAnAccumulatorOfAnotherShape) {
  ir::Graph g = TraceGraph(
      [](std::span<const Value> v) { return std::vector{reduce_sum(v[0] * v[0], 0)}; }, {{4}, {5}});
  absl::StatusOr<ir::Graph> d = Differentiate(g, {.wrt = {0}, .accumulate = true});
  ASSERT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(d.status().message(),
            "gradient: accumulator 0 (input 1) is f32[5] but wrt input 0 is f32[4]; give their "
            "symbolic dims the same pto::Dim so they are one symbol");
}

// Between two inputs of symbolic size, an input's slice has no constant bound (JitGrad's
// ConcatInputsAroundOneOfSymbolicSizeGetTheirSlices covers one symbolic run).
TEST(Differentiate, AConcatInputBetweenTwoOfSymbolicSizeIsNotDifferentiableYet) {
  ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        return std::vector{reduce_sum(concat({v[0], v[1], v[0]}, 0), 0)};
      },
      {{"n"}, {3}}, {{"n", 1, 64}});
  absl::StatusOr<ir::Graph> d = Differentiate(g, {.wrt = {1}});
  ASSERT_EQ(d.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(d.status().message(),
            "gradient of node %2 (concat): concat: input 1 has inputs of symbolic size along axis "
            "0 both before and after it; its gradient's slice would have symbolic bounds");
}

}  // namespace
}  // namespace pto::jit
