// MarkInPlace (jit/passes/mark_in_place.h) alone, on hand-made tile graphs: a call's output is
// paired with an input it may overwrite when both are temps, the input dies at the call and
// the output is first written there; the kernel is elementwise or a row op; the output has one
// store and no loads; every access to the input is that store's access, dense over the
// domain; and every load of the input feeds the stored value (a row op's through its result).
#include "jit/passes/mark_in_place.h"

#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/jit/codegen/kernel_builders.h"
#include "tests/jit/ir/tile_ir_builders.h"
#include "tests/jit/passes/builders.h"

namespace pto::jit {
namespace {

using ir::ExprOp;
using ir::SymExpr;
using testing::Elementwise;
using testing::TileGraphBuilder;

using Pairs = std::vector<std::pair<int, int>>;

// The pairs of every call, in call order.
std::vector<Pairs> InPlace(ir::TileGraph& tiles) {
  MarkInPlace(tiles);
  std::vector<Pairs> out;
  for (const ir::KernelCall& call : tiles.calls) out.push_back(call.in_place);
  return out;
}

// x -> exp -> t0 -> `middle` -> t1 -> tanh -> y, every value [4, 4].
struct Chain {
  TileGraphBuilder t;
  int x = t.Input(0, 16), t0 = t.Temp(16), t1 = t.Temp(16), y = t.Output(0, 16);
  explicit Chain(ir::Kernel middle) {
    t.Call(Elementwise({4, 4}, ExprOp::kExp), {x, t0});
    t.Call(std::move(middle), {t0, t1});
    t.Call(Elementwise({4, 4}, ExprOp::kTanh), {t1, y});
  }
};

TEST(MarkInPlaceTest, DyingTempIsOverwrittenByTheNextTemp) {
  Chain c(Elementwise({4, 4}, ExprOp::kNeg));
  // Only the middle call: the first reads an input, the last writes an output.
  EXPECT_EQ(InPlace(c.t.graph()), (std::vector<Pairs>{{}, {{c.t1, c.t0}}, {}}));
}

TEST(MarkInPlaceTest, SymbolicDomainsPairToo) {
  const SymExpr n = SymExpr::Symbol(0);
  TileGraphBuilder t({{"n", 1, 64}});
  const int x = t.Input(0, 4 * n), a = t.Temp(4 * n), b = t.Temp(4 * n), y = t.Output(0, 4 * n);
  t.Call(Elementwise({n, 4}, ExprOp::kExp), {x, a});
  t.Call(Elementwise({n, 4}, ExprOp::kSqrt), {a, b});
  t.Call(Elementwise({n, 4}, ExprOp::kTanh), {b, y});
  EXPECT_EQ(InPlace(t.graph()), (std::vector<Pairs>{{}, {{b, a}}, {}}));
}

TEST(MarkInPlaceTest, InputReadLaterIsKept) {
  Chain c(Elementwise({4, 4}, ExprOp::kNeg));
  // t0 is read again after the middle call.
  c.t.Call(Elementwise({4, 4}, ExprOp::kAdd), {c.t0, c.y, c.y});
  EXPECT_TRUE(InPlace(c.t.graph())[1].empty());
}

TEST(MarkInPlaceTest, OutputWrittenBeforeIsNotPaired) {
  Chain c(Elementwise({4, 4}, ExprOp::kNeg));
  // t1 is first written by a call before the middle one.
  ir::TileGraph& tiles = c.t.graph();
  ir::KernelCall early;
  early.kernel = Elementwise({4, 4}, ExprOp::kExp);
  early.buffers = {c.x, c.t1};
  tiles.calls.insert(tiles.calls.begin(), std::move(early));
  EXPECT_TRUE(InPlace(tiles)[2].empty());
}

TEST(MarkInPlaceTest, IndexOtherThanTheStoresRulesThePairOut) {
  // The input read transposed, broadcast along rows, or shifted by one element.
  for (std::vector<SymExpr> strides : std::vector<std::vector<SymExpr>>{{1, 4}, {0, 1}}) {
    ir::Kernel k = Elementwise({4, 4}, ExprOp::kNeg);
    k.accesses[0].strides = strides;
    Chain c(std::move(k));
    EXPECT_TRUE(InPlace(c.t.graph())[1].empty()) << strides[0].ToString();
  }
  ir::Kernel shifted = Elementwise({4, 4}, ExprOp::kNeg);
  shifted.accesses[0].offset = 1;
  Chain c(std::move(shifted));
  EXPECT_TRUE(InPlace(c.t.graph())[1].empty());
}

TEST(MarkInPlaceTest, OutputNotDenseOverTheDomainIsNotPaired) {
  // Both accesses alike, rows 8 elements apart: an injective index, but not the dense
  // row-major one the rule asks for.
  ir::Kernel k = Elementwise({4, 4}, ExprOp::kNeg);
  k.accesses[0].strides = {8, 1};
  k.accesses[1].strides = {8, 1};
  Chain c(std::move(k));
  EXPECT_TRUE(InPlace(c.t.graph())[1].empty());
}

TEST(MarkInPlaceTest, ExtentOneDimsMayHaveAnyStride) {
  ir::Kernel k = Elementwise({1, 16}, ExprOp::kNeg);
  k.accesses[0].strides = {99, 1};
  k.accesses[1].strides = {99, 1};
  Chain c(std::move(k));
  EXPECT_EQ(InPlace(c.t.graph())[1], (Pairs{{c.t1, c.t0}}));
}

TEST(MarkInPlaceTest, LoadThatDoesNotFeedTheStoreRulesThePairOut) {
  // out = -x, with one more load of x that nothing uses: the store could move before it.
  ir::Kernel k = Elementwise({4, 4}, ExprOp::kNeg);
  testing::Program p;
  p.Load(0);
  k.stores[0].value = p.Un(ExprOp::kNeg, p.Load(0));
  k.output = p.nodes();
  Chain c(std::move(k));
  EXPECT_TRUE(InPlace(c.t.graph())[1].empty());
}

TEST(MarkInPlaceTest, OutputThatIsAlsoLoadedOrStoredTwiceIsNotPaired) {
  {
    // out = -x + out, the load of out an access of its own.
    ir::Kernel k = Elementwise({4, 4}, ExprOp::kNeg);
    k.accesses.push_back(testing::MakeAccess(1, {4, 1}));
    testing::Program p;
    k.stores[0].value = p.Bin(ExprOp::kAdd, p.Un(ExprOp::kNeg, p.Load(0)), p.Load(2));
    k.output = p.nodes();
    Chain c(std::move(k));
    EXPECT_TRUE(InPlace(c.t.graph())[1].empty());
  }
  {
    // Two stores to out (at two accesses).
    ir::Kernel k = Elementwise({4, 4}, ExprOp::kNeg);
    k.accesses.push_back(testing::MakeAccess(1, {4, 1}, 16));
    k.stores.push_back({2, 0});
    Chain c(std::move(k));
    EXPECT_TRUE(InPlace(c.t.graph())[1].empty());
  }
}

TEST(MarkInPlaceTest, DifferentDtypesAreNotPaired) {
  Chain c(Elementwise({4, 4}, ExprOp::kNeg));
  c.t.graph().buffers[c.t1].dtype = ir::DType::kF16;
  EXPECT_TRUE(InPlace(c.t.graph())[1].empty());
}

TEST(MarkInPlaceTest, BufferBoundToTwoSlotsIsNotPaired) {
  TileGraphBuilder t;
  const int x = t.Input(0, 16), a = t.Temp(16), b = t.Temp(16), y = t.Output(0, 16);
  t.Call(Elementwise({4, 4}, ExprOp::kExp), {x, a});
  t.Call(Elementwise({4, 4}, ExprOp::kMul), {a, a, b});  // a * a
  t.Call(Elementwise({4, 4}, ExprOp::kTanh), {b, y});
  EXPECT_TRUE(InPlace(t.graph())[1].empty());
}

TEST(MarkInPlaceTest, OneInputPerOutputTheFirstThatQualifies) {
  TileGraphBuilder t;
  const int x = t.Input(0, 16), a = t.Temp(16), b = t.Temp(16), c = t.Temp(16), y = t.Output(0, 16);
  t.Call(Elementwise({4, 4}, ExprOp::kExp), {x, a});
  t.Call(Elementwise({4, 4}, ExprOp::kExp), {x, b});
  t.Call(Elementwise({4, 4}, ExprOp::kSub), {b, a, c});  // both die here
  t.Call(Elementwise({4, 4}, ExprOp::kTanh), {c, y});
  EXPECT_EQ(InPlace(t.graph())[2], (Pairs{{c, b}}));
}

TEST(MarkInPlaceTest, MatMulsAndReductionsNeverPair) {
  {
    TileGraphBuilder t;
    const int x = t.Input(0, 16), a = t.Temp(16), w = t.Input(1, 16), b = t.Temp(16),
              y = t.Output(0, 16);
    t.Call(Elementwise({4, 4}, ExprOp::kExp), {x, a});
    t.Call(testing::MatMul({.m = 4, .n = 4, .k = 4}), {a, w, b});
    t.Call(Elementwise({4, 4}, ExprOp::kTanh), {b, y});
    EXPECT_TRUE(InPlace(t.graph())[1].empty());
  }
  {
    // A sum over the middle axis of [s0, s1, s2], input and output temps.
    const SymExpr s0 = SymExpr::Symbol(0), s1 = SymExpr::Symbol(1), s2 = SymExpr::Symbol(2);
    TileGraphBuilder t({{"s0"}, {"s1"}, {"s2"}});
    const int x = t.Input(0, s0 * s1 * s2), a = t.Temp(s0 * s1 * s2), bias = t.Input(1, s0 * s2),
              r = t.Temp(s0 * s2), y = t.Output(0, s0 * s2);
    t.Call(Elementwise({s0, s1, s2}, ExprOp::kExp), {x, a});
    t.Call(testing::ReduceKernel(1, ir::ReduceKind::kSum, 1, "sum"), {a, bias, r});
    t.Call(Elementwise({s0, s2}, ExprOp::kTanh), {r, y});
    EXPECT_TRUE(InPlace(t.graph())[1].empty());
  }
}

// x -> exp -> a -> row op (weight w, bias b) -> r -> tanh -> y over [s0, s1, s2].
struct RowChain {
  SymExpr s0 = SymExpr::Symbol(0), s1 = SymExpr::Symbol(1), s2 = SymExpr::Symbol(2);
  TileGraphBuilder t{{{"s0"}, {"s1"}, {"s2"}}};
  int x = t.Input(0, s0*s1*s2), a = t.Temp(s0 * s1 * s2), w = t.Input(1, s2), b = t.Input(2, s2),
      r = t.Temp(s0 * s1 * s2), y = t.Output(0, s0*s1*s2);
  explicit RowChain(ir::Kernel row_op) {
    t.Call(Elementwise({s0, s1, s2}, ExprOp::kExp), {x, a});
    t.Call(std::move(row_op), {a, w, b, r});
    t.Call(Elementwise({s0, s1, s2}, ExprOp::kTanh), {r, y});
  }
};

TEST(MarkInPlaceTest, RowOpOverwritesItsInputRow) {
  // x = in * 1.5 in the statistics passes; out = acc * w + b.
  RowChain c(testing::RowKernel(ir::RowOpKind::kLayerNorm, 1, "layer_norm"));
  EXPECT_EQ(InPlace(c.t.graph()), (std::vector<Pairs>{{}, {{c.r, c.a}}, {}}));
}

TEST(MarkInPlaceTest, RowOpWhoseStoreDoesNotUseItsResultIsNotPaired) {
  // out = w * b: the row's loads reach the store only through acc, which it does not use.
  ir::Kernel k = testing::RowKernel(ir::RowOpKind::kSoftmax, 1, "softmax");
  testing::Program p;
  k.stores[0].value = p.Bin(ExprOp::kMul, p.Load(1), p.Load(2));
  k.output = p.nodes();
  RowChain c(std::move(k));
  EXPECT_TRUE(InPlace(c.t.graph())[1].empty());
}

TEST(MarkInPlaceTest, EarlierPairsAreReplaced) {
  Chain c(Elementwise({4, 4}, ExprOp::kNeg));
  c.t.graph().calls[0].in_place = {{c.t0, c.x}};
  EXPECT_EQ(InPlace(c.t.graph()), (std::vector<Pairs>{{}, {{c.t1, c.t0}}, {}}));
}

}  // namespace
}  // namespace pto::jit
