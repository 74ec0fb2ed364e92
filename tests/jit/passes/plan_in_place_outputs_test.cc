// PlanInPlaceOutputs (jit/passes/plan_in_place_outputs.h) alone, on hand-made tile graphs: an
// output declared in place of an input is written in place when no kernel reads the input
// after the output's one writer starts and the writer reads it only at the element it writes;
// otherwise its buffer becomes a temp copied into the output after the input's last reader.
// Bad declarations: an output the graph lacks, a dtype that differs.
#include "jit/passes/plan_in_place_outputs.h"

#include <span>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/jit/e2e/test_util.h"
#include "tests/jit/passes/builders.h"

namespace pto::jit {
namespace {

using ir::ExprOp;
using testing::Elementwise;
using testing::TileGraphBuilder;

// A traced graph with two [4, 4] inputs and two [4, 4] outputs: what the pass reads of it
// (the outputs' shapes and dtypes, the inputs' dtypes).
ir::Graph TwoByTwo() {
  return testing::TraceGraph(
      [](std::span<const Value> v) {
        return std::vector<Value>{v[0] - v[1], v[0] * 2.0f};
      },
      {{4, 4}, {4, 4}});
}

const device::DeviceInfo& Device() {
  static const device::DeviceInfo device = pto::testing::Avx512Device();
  return device;
}

ir::TileGraph& Plan(TileGraphBuilder& t, std::vector<InPlaceOutput> pairs) {
  EXPECT_TRUE(PlanInPlaceOutputs(TwoByTwo(), pairs, Device(), t.graph()).ok());
  return t.graph();
}

// p - g written over p: the writer reads p only at the element it writes.
TEST(PlanInPlaceOutputsTest, ElementwiseUpdateIsInPlace) {
  TileGraphBuilder t;
  const int p = t.Input(0, 16), g = t.Input(1, 16), out = t.Output(0, 16);
  t.Call(Elementwise({4, 4}, ExprOp::kSub), {p, g, out});
  ir::TileGraph& tiles = Plan(t, {{.output = 0, .input = 0}});
  ASSERT_EQ(tiles.in_place_outputs.size(), 1u);
  const ir::InPlaceOutputPlan& d = tiles.in_place_outputs[0];
  EXPECT_TRUE(d.in_place);
  EXPECT_EQ(d.reason,
            "call 0 (elementwise_sub) reads input 0 only at the elements it writes, and no "
            "kernel reads it later");
  EXPECT_EQ(tiles.calls.size(), 1u);
  EXPECT_EQ(tiles.buffers[out].kind, ir::BufferKind::kOutput);
}

// Every reader of the input runs before the output's writer, which does not read it.
TEST(PlanInPlaceOutputsTest, ReadersBeforeTheWriter) {
  TileGraphBuilder t;
  const int p = t.Input(0, 16), a = t.Temp(16), out = t.Output(0, 16);
  t.Call(Elementwise({4, 4}, ExprOp::kExp), {p, a});
  t.Call(Elementwise({4, 4}, ExprOp::kNeg), {a, out});
  ir::TileGraph& tiles = Plan(t, {{.output = 0, .input = 0}});
  ASSERT_EQ(tiles.in_place_outputs.size(), 1u);
  EXPECT_TRUE(tiles.in_place_outputs[0].in_place);
  EXPECT_EQ(tiles.in_place_outputs[0].reason,
            "every reader of input 0 runs before call 1 (elementwise_neg) writes output 0");
  EXPECT_EQ(tiles.calls.size(), 2u);
}

// p is read again by a later kernel: output 0 goes to a temp, copied after that reader.
TEST(PlanInPlaceOutputsTest, LaterReaderGetsACopy) {
  TileGraphBuilder t;
  const int p = t.Input(0, 16), g = t.Input(1, 16), out0 = t.Output(0, 16), out1 = t.Output(1, 16);
  t.Call(Elementwise({4, 4}, ExprOp::kSub), {p, g, out0});
  t.Call(Elementwise({4, 4}, ExprOp::kExp), {p, out1});
  ir::TileGraph& tiles = Plan(t, {{.output = 0, .input = 0}});
  ASSERT_EQ(tiles.in_place_outputs.size(), 1u);
  EXPECT_FALSE(tiles.in_place_outputs[0].in_place);
  EXPECT_EQ(tiles.in_place_outputs[0].reason,
            "call 1 (elementwise_exp) reads input 0 after call 0 (elementwise_sub) writes "
            "output 0");
  ASSERT_EQ(tiles.calls.size(), 3u);
  EXPECT_EQ(tiles.buffers[out0].kind, ir::BufferKind::kTemp);
  const ir::KernelCall& copy = tiles.calls[2];
  EXPECT_EQ(copy.kernel.name, "f32_in_place_copy");
  ASSERT_EQ(copy.buffers.size(), 2u);
  EXPECT_EQ(copy.buffers[0], out0);
  const ir::Buffer& to = tiles.buffers[copy.buffers[1]];
  EXPECT_EQ(to.kind, ir::BufferKind::kOutput);
  EXPECT_EQ(to.index, 0);
  EXPECT_EQ(to.elements, ir::SymExpr(16));
  EXPECT_EQ(tiles.calls[1].buffers, (std::vector<int>{p, out1}));  // untouched
}

// A matmul reads p at other elements than it writes: copied, right after the matmul (the
// input's last reader), before a later kernel reading the result.
TEST(PlanInPlaceOutputsTest, MatMulWriterGetsACopy) {
  TileGraphBuilder t;
  const int p = t.Input(0, 16), w = t.Input(1, 16), out0 = t.Output(0, 16), out1 = t.Output(1, 16);
  t.Call(testing::MatMul({.m = 4, .n = 4, .k = 4}), {p, w, out0});
  t.Call(Elementwise({4, 4}, ExprOp::kTanh), {out0, out1});
  ir::TileGraph& tiles = Plan(t, {{.output = 0, .input = 0}});
  ASSERT_EQ(tiles.in_place_outputs.size(), 1u);
  EXPECT_FALSE(tiles.in_place_outputs[0].in_place);
  EXPECT_EQ(tiles.in_place_outputs[0].reason,
            "call 0 (matmul) writes output 0 and reads input 0 at other elements than it writes");
  ASSERT_EQ(tiles.calls.size(), 3u);
  EXPECT_EQ(tiles.calls[1].kernel.name, "f32_in_place_copy");
  EXPECT_EQ(tiles.calls[2].buffers, (std::vector<int>{out0, out1}));
}

// A transposed read of p by the writer itself.
TEST(PlanInPlaceOutputsTest, TransposedReadGetsACopy) {
  TileGraphBuilder t;
  const int p = t.Input(0, 16), g = t.Input(1, 16), out = t.Output(0, 16);
  ir::Kernel k = Elementwise({4, 4}, ExprOp::kSub);
  k.accesses[0].strides = {ir::SymExpr(1), ir::SymExpr(4)};  // p read at [j, i]
  t.Call(std::move(k), {p, g, out});
  ir::TileGraph& tiles = Plan(t, {{.output = 0, .input = 0}});
  ASSERT_EQ(tiles.in_place_outputs.size(), 1u);
  EXPECT_FALSE(tiles.in_place_outputs[0].in_place);
  EXPECT_EQ(tiles.calls.size(), 2u);
}

// Two pairs decided independently; an undeclared output is left alone.
TEST(PlanInPlaceOutputsTest, PairsAreIndependent) {
  TileGraphBuilder t;
  const int p = t.Input(0, 16), g = t.Input(1, 16), out0 = t.Output(0, 16), out1 = t.Output(1, 16);
  t.Call(Elementwise({4, 4}, ExprOp::kExp), {p, out1});
  t.Call(Elementwise({4, 4}, ExprOp::kAdd), {g, p, out0});
  ir::TileGraph& tiles = Plan(t, {{.output = 0, .input = 1}, {.output = 1, .input = 0}});
  ASSERT_EQ(tiles.in_place_outputs.size(), 2u);
  EXPECT_TRUE(tiles.in_place_outputs[0].in_place);   // g + p over g: the last reader of g
  EXPECT_FALSE(tiles.in_place_outputs[1].in_place);  // exp(p) over p: p read later
  ASSERT_EQ(tiles.calls.size(), 3u);
  EXPECT_EQ(tiles.calls[2].kernel.name, "f32_in_place_copy");
  EXPECT_EQ(tiles.calls[2].buffers[0], out1);
}

TEST(PlanInPlaceOutputsTest, NoPairsNoDecisions) {
  TileGraphBuilder t;
  const int p = t.Input(0, 16), g = t.Input(1, 16), out = t.Output(0, 16);
  t.Call(Elementwise({4, 4}, ExprOp::kSub), {p, g, out});
  EXPECT_TRUE(Plan(t, {}).in_place_outputs.empty());
  EXPECT_EQ(t.graph().calls.size(), 1u);
}

TEST(PlanInPlaceOutputsTest, OutputThatDoesNotExist) {
  TileGraphBuilder t;
  const int p = t.Input(0, 16), g = t.Input(1, 16), out = t.Output(0, 16);
  t.Call(Elementwise({4, 4}, ExprOp::kSub), {p, g, out});
  const std::vector<InPlaceOutput> pairs = {{.output = 2, .input = 0}};
  absl::Status s = PlanInPlaceOutputs(TwoByTwo(), pairs, Device(), t.graph());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "in-place output 2 does not exist (the function has 2 outputs)");
}

TEST(PlanInPlaceOutputsTest, DTypesMustAgree) {
  TileGraphBuilder t;
  const int p = t.Input(0, 16), g = t.Input(1, 16), out = t.Output(0, 16);
  t.Call(Elementwise({4, 4}, ExprOp::kSub), {p, g, out});
  ir::Graph graph = TwoByTwo();
  for (ir::Node& n : graph.nodes) {
    if (n.op == ir::OpKind::kInput && n.attrs.index == 1) n.dtype = ir::DType::kI32;
  }
  const std::vector<InPlaceOutput> pairs = {{.output = 0, .input = 1}};
  absl::Status s = PlanInPlaceOutputs(graph, pairs, Device(), t.graph());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "output 0 (f32) cannot be written in place of input 1 (i32): an in-place output "
            "needs its input's dtype");
}

}  // namespace
}  // namespace pto::jit
