// RunReference on small graphs with symbolic shapes.
#include <cmath>
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
#include "ops/reference.h"
#include "reference_test_util.h"

namespace pto::ops {
namespace {

using ir::OpKind;
using ir::Shape;
using ir::SymExpr;
using testing::ExpectTensor;
using ::testing::HasSubstr;
using testing::T;

const SymExpr kBatch = SymExpr::Symbol(0);
const SymExpr kSeq = SymExpr::Symbol(1);

int AddNode(ir::Graph& g, OpKind op, std::vector<int> inputs, Shape shape, ir::Attrs attrs = {}) {
  ir::Node n;
  n.op = op;
  n.inputs = std::move(inputs);
  n.shape = std::move(shape);
  n.attrs = std::move(attrs);
  g.nodes.push_back(std::move(n));
  return static_cast<int>(g.nodes.size()) - 1;
}

int AddInput(ir::Graph& g, int index, Shape shape) {
  ir::Attrs a;
  a.index = index;
  ++g.num_inputs;
  return AddNode(g, OpKind::kInput, {}, std::move(shape), a);
}

// x: [batch, seq, 4], w: [4], bias: [batch, 1, 1]
// y = reshape(softmax(x * w + 0.5) + bias, [-1, 4]) : [batch*seq, 4]
// s = reduce_sum(x, axis -1) : [batch, seq]
ir::Graph SmallGraph() {
  ir::Graph g;
  g.symbols = {{"batch", 1, 64}, {"seq", 1, 1024}};
  const int x = AddInput(g, 0, {kBatch, kSeq, 4});
  const int w = AddInput(g, 1, {4});
  const int bias = AddInput(g, 2, {kBatch, 1, 1});
  const int xw = AddNode(g, OpKind::kMul, {x, w}, {kBatch, kSeq, 4});
  ir::Attrs half;
  half.scalar = 0.5;
  const int c = AddNode(g, OpKind::kConstant, {}, {}, half);
  const int sum = AddNode(g, OpKind::kAdd, {xw, c}, {kBatch, kSeq, 4});
  const int sm = AddNode(g, OpKind::kSoftmax, {sum}, {kBatch, kSeq, 4});
  const int biased = AddNode(g, OpKind::kAdd, {sm, bias}, {kBatch, kSeq, 4});
  ir::Attrs spec;
  spec.ints = {-1, 4};
  const int y = AddNode(g, OpKind::kReshape, {biased}, {kBatch * kSeq, 4}, spec);
  ir::Attrs axis;
  axis.axis = -1;
  const int s = AddNode(g, OpKind::kReduceSum, {x}, {kBatch, kSeq}, axis);
  g.outputs = {y, s};
  return g;
}

TEST(RunReferenceTest, EvaluatesGraphWithSymbols) {
  const ir::Graph g = SmallGraph();
  // batch = 2, seq = 1.
  std::vector<HostTensor> inputs = {T({2, 1, 4}, {0, 0, 0, 0, 1, 2, 3, 4}), T({4}, {1, 1, 1, 0}),
                                    T({2, 1, 1}, {10, 20})};
  absl::StatusOr<std::vector<HostTensor>> out = RunReference(g, inputs);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  // Row 0: softmax of a constant row is 1/4 each. Row 1: softmax([1, 2, 3, 0]).
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0) + 1;
  ExpectTensor((*out)[0], {2, 4},
               {10.25, 10.25, 10.25, 10.25, 20 + std::exp(1.0) / z, 20 + std::exp(2.0) / z,
                20 + std::exp(3.0) / z, 20 + 1 / z});
  ExpectTensor((*out)[1], {2, 1}, {0, 10});
}

TEST(RunReferenceTest, YieldRunsBeforeEachNodeAndBetweenMatMulRows) {
  ir::Graph g;
  const int a = AddInput(g, 0, {5, 3});
  const int b = AddInput(g, 1, {3, 2});
  const int mm = AddNode(g, OpKind::kMatMul, {a, b}, {5, 2});
  g.outputs = {AddNode(g, OpKind::kRelu, {mm}, {5, 2})};
  const std::vector<HostTensor> inputs = {T({5, 3}, std::vector<float>(15, 1.f)),
                                          T({3, 2}, {1, -1, 2, -2, 3, -3})};
  int yields = 0;
  absl::StatusOr<std::vector<HostTensor>> out = RunReference(g, inputs, [&yields] { ++yields; });
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(yields, 4 + 5);  // before each of the 4 nodes, and before each of the 5 rows
  ExpectTensor((*out)[0], {5, 2}, {6, 0, 6, 0, 6, 0, 6, 0, 6, 0});
}

TEST(RunReferenceTest, ZeroSizedSymbolValue) {
  ir::Graph g = SmallGraph();
  g.symbols[1].min = 0;
  std::vector<HostTensor> inputs = {T({3, 0, 4}, {}), T({4}, {1, 1, 1, 0}),
                                    T({3, 1, 1}, {1, 2, 3})};
  absl::StatusOr<std::vector<HostTensor>> out = RunReference(g, inputs);
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor((*out)[0], {0, 4}, {});
  ExpectTensor((*out)[1], {3, 0}, {});
}

void ExpectInvalid(const absl::StatusOr<std::vector<HostTensor>>& r,
                   const std::vector<std::string>& fragments) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  for (const std::string& f : fragments) {
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(f));
  }
}

TEST(RunReferenceTest, InconsistentSymbolNamesBothInputs) {
  const ir::Graph g = SmallGraph();
  std::vector<HostTensor> inputs = {T({2, 1, 4}, std::vector<float>(8)), T({4}, {1, 1, 1, 0}),
                                    T({3, 1, 1}, {1, 2, 3})};
  ExpectInvalid(RunReference(g, inputs),
                {"symbol batch is 3 in input 2 (shape [3, 1, 1], axis 0) but 2 in input 0 "
                 "(shape [2, 1, 4], axis 0)"});
}

TEST(RunReferenceTest, InputErrors) {
  const ir::Graph g = SmallGraph();
  // Constant dim disagrees.
  ExpectInvalid(RunReference(g, std::vector<HostTensor>{T({2, 1, 4}, std::vector<float>(8)),
                                                        T({3}, {1, 1, 1}), T({2, 1, 1}, {1, 2})}),
                {"input 1 has shape [3] but the graph shape [4] evaluates to [4]"});
  // Rank disagrees.
  ExpectInvalid(
      RunReference(g, std::vector<HostTensor>{T({8}, std::vector<float>(8)), T({4}, {1, 1, 1, 1}),
                                              T({2, 1, 1}, {1, 2})}),
      {"input 0 has shape [8] but the graph expects [batch, seq, 4]"});
  // Wrong number of tensors.
  ExpectInvalid(RunReference(g, std::vector<HostTensor>{T({4}, {1, 1, 1, 1})}),
                {"the graph has 3 inputs but 1 tensors were given"});
  // Out of the symbol's range (seq >= 1).
  ExpectInvalid(RunReference(g, std::vector<HostTensor>{T({2, 0, 4}, {}), T({4}, {1, 1, 1, 1}),
                                                        T({2, 1, 1}, {1, 2})}),
                {"symbol seq is 0 (from input 0 axis 1) but its range is [1, 1024]"});
  // Data size does not match the shape.
  ExpectInvalid(RunReference(g, std::vector<HostTensor>{T({1, 1, 4}, {1, 2}), T({4}, {1, 1, 1, 1}),
                                                        T({1, 1, 1}, {1})}),
                {"input 0 shape [1, 1, 4] needs 4 values but has 2"});
}

TEST(RunReferenceTest, UnboundSymbol) {
  ir::Graph g;
  g.symbols = {{"batch", 1, 64}, {"seq", 1, 64}};
  const int x = AddInput(g, 0, {kBatch * kSeq});
  g.outputs = {x};
  ExpectInvalid(RunReference(g, std::vector<HostTensor>{T({4}, {1, 2, 3, 4})}),
                {"symbol batch in shape [batch*seq] is not bound"});
}

TEST(RunReferenceTest, PolynomialInputDimIsChecked) {
  ir::Graph g;
  g.symbols = {{"batch", 1, 64}, {"seq", 1, 64}};
  const int x = AddInput(g, 0, {kBatch, kSeq});
  const int y = AddInput(g, 1, {kBatch * kSeq});
  const int r = AddNode(g, OpKind::kNeg, {y}, {kBatch * kSeq});
  g.outputs = {r, x};
  std::vector<HostTensor> ok = {T({2, 2}, {1, 2, 3, 4}), T({4}, {1, 2, 3, 4})};
  absl::StatusOr<std::vector<HostTensor>> out = RunReference(g, ok);
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor((*out)[0], {4}, {-1, -2, -3, -4});
  std::vector<HostTensor> bad = {T({2, 2}, {1, 2, 3, 4}), T({3}, {1, 2, 3})};
  ExpectInvalid(RunReference(g, bad),
                {"input 1 has shape [3] but the graph shape [batch*seq] evaluates to [4]"});
}

TEST(RunReferenceTest, NodeShapeDisagreement) {
  // slice(x, 0:4) on a symbolic dim assumes seq >= 4; with seq = 2 the reference clamps.
  ir::Graph g;
  g.symbols = {{"seq", 1, 64}};
  const SymExpr seq = SymExpr::Symbol(0);
  const int x = AddInput(g, 0, {seq});
  ir::Attrs s;
  s.start = 0;
  s.end = 4;
  const int y = AddNode(g, OpKind::kSlice, {x}, {4}, s);
  g.outputs = {y};
  ExpectInvalid(RunReference(g, std::vector<HostTensor>{T({2}, {1, 2})}),
                {"node %1 (slice): the graph shape [4] evaluates to [4] but the reference "
                 "computed [2]"});
}

// Derived symbols (a slice's start and length on a symbolic dim) are computed from the
// symbols of their dim when the inputs bind them.
TEST(RunReferenceTest, DerivedSymbolsFollowTheInputs) {
  ir::Graph g;
  g.symbols = {{"rows", 1, 64}};
  std::vector<ir::SymbolInfo> symbols = g.symbols;
  const SymbolicSlice sl = ResolveSymbolicSlice(kBatch, -5, -1, 2, symbols);
  g.symbols = symbols;
  ASSERT_EQ(g.symbols.size(), 3u);
  const int x = AddInput(g, 0, {kBatch});
  ir::Attrs s;
  s.start = -5;
  s.end = -1;
  s.step = 2;
  g.outputs = {AddNode(g, OpKind::kSlice, {x}, {sl.length}, s)};
  for (const auto& [n, want] : std::vector<std::pair<int64_t, std::vector<double>>>{
           {4, {0, 2}}, {6, {1, 3}}, {1, {}}, {2, {0}}}) {
    std::vector<float> data;
    for (int64_t i = 0; i < n; ++i) data.push_back(static_cast<float>(i));
    absl::StatusOr<std::vector<HostTensor>> out =
        RunReference(g, std::vector<HostTensor>{T({n}, data)});
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectTensor((*out)[0], {static_cast<int64_t>(want.size())}, want);
  }
  // A derived symbol whose dim uses a later symbol is refused.
  g.symbols[1].derived->dim = SymExpr::Symbol(2);
  ExpectInvalid(RunReference(g, std::vector<HostTensor>{T({3}, {0, 1, 2})}),
                {"symbol rows[-5:-1:2].start is derived from rows[-5:-1:2], whose symbol "
                 "rows[-5:-1:2] is not bound before it"});
}

TEST(RunReferenceTest, OpErrorsNameTheNode) {
  ir::Graph g;
  const int a = AddInput(g, 0, {2});
  const int b = AddInput(g, 1, {3});
  const int c = AddNode(g, OpKind::kAdd, {a, b}, {3});
  g.outputs = {c};
  ExpectInvalid(RunReference(g, std::vector<HostTensor>{T({2}, {1, 2}), T({3}, {1, 2, 3})}),
                {"node %2 (add): add: input 1 shape [3] is not broadcastable with input 0 "
                 "shape [2]"});
  g.nodes[2].inputs = {a, 5};
  ExpectInvalid(RunReference(g, std::vector<HostTensor>{T({2}, {1, 2}), T({3}, {1, 2, 3})}),
                {"node %2 (add): operand %5 is not an earlier node"});
}

}  // namespace
}  // namespace pto::ops
