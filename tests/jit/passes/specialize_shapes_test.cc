// SpecializeShapes (jit/passes/specialize_shapes.h) alone: a symbol with a replacement becomes
// that expression in every shape (a constant, or a multiple of a fresh symbol), through
// products made by reshapes; symbols without one stay; nothing but shapes changes.
#include "jit/passes/specialize_shapes.h"

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "pto/value.h"
#include "tests/jit/passes/builders.h"

namespace pto::jit {
namespace {

using ir::SymExpr;
using testing::TraceGraph;

// x[batch, seq, 4] reshaped to [batch * seq, 4], plus a bias of 4.
ir::Graph Flatten() {
  return TraceGraph(
      [](std::span<const Value> v) {
        return std::vector{reshape(v[0], {-1, 4}) + v[1]};
      },
      {{"batch", "seq", 4}, {4}}, {{"batch", 1, 64}, {"seq", 1, 512}});
}

TEST(SpecializeShapesTest, TracedShapes) {
  EXPECT_EQ(Flatten().ToString(),
            "%0 = input() index=0 : f32[batch, seq, 4]\n"
            "%1 = input() index=1 : f32[4]\n"
            "%2 = reshape(%0) shape=[-1,4] : f32[batch*seq, 4]\n"
            "%3 = add(%2, %1) : f32[batch*seq, 4]\n"
            "outputs: %3\n");
}

TEST(SpecializeShapesTest, ConstantReplacesItsSymbolEverywhere) {
  ir::Graph g = Flatten();
  SpecializeShapes(g, {SymExpr(8), std::nullopt});
  EXPECT_EQ(g.ToString(),
            "%0 = input() index=0 : f32[8, seq, 4]\n"
            "%1 = input() index=1 : f32[4]\n"
            "%2 = reshape(%0) shape=[-1,4] : f32[8*seq, 4]\n"
            "%3 = add(%2, %1) : f32[8*seq, 4]\n"
            "outputs: %3\n");
}

TEST(SpecializeShapesTest, DivisibleSymbolBecomesAMultipleOfAFreshSymbol) {
  ir::Graph g = Flatten();
  // seq = 16 * seq', seq' being symbol 2 (Specialize appends it to the graph's symbols).
  SpecializeShapes(g, {std::nullopt, SymExpr(16) * SymExpr::Symbol(2)});
  g.symbols.push_back({"seq/16", 1, 32});
  EXPECT_EQ(g.ToString(),
            "%0 = input() index=0 : f32[batch, 16*seq/16, 4]\n"
            "%1 = input() index=1 : f32[4]\n"
            "%2 = reshape(%0) shape=[-1,4] : f32[16*batch*seq/16, 4]\n"
            "%3 = add(%2, %1) : f32[16*batch*seq/16, 4]\n"
            "outputs: %3\n");
}

TEST(SpecializeShapesTest, BothSymbolsConstantGiveStaticShapes) {
  ir::Graph g = Flatten();
  SpecializeShapes(g, {SymExpr(1), SymExpr(3)});
  EXPECT_EQ(g.ToString(),
            "%0 = input() index=0 : f32[1, 3, 4]\n"
            "%1 = input() index=1 : f32[4]\n"
            "%2 = reshape(%0) shape=[-1,4] : f32[3, 4]\n"
            "%3 = add(%2, %1) : f32[3, 4]\n"
            "outputs: %3\n");
  // Only shapes change: the symbol table, attributes and edges are the traced ones.
  const ir::Graph traced = Flatten();
  ASSERT_EQ(g.symbols.size(), traced.symbols.size());
  EXPECT_EQ(g.symbols[1].name, "seq");
  EXPECT_EQ(g.nodes[2].attrs, traced.nodes[2].attrs);
  EXPECT_EQ(g.nodes[3].inputs, traced.nodes[3].inputs);
}

TEST(SpecializeShapesTest, NoReplacementIsANoOp) {
  ir::Graph g = Flatten();
  SpecializeShapes(g, {std::nullopt, std::nullopt});
  EXPECT_EQ(g.ToString(), Flatten().ToString());
  // A replacement list shorter than the symbols leaves the rest alone too.
  SpecializeShapes(g, {});
  EXPECT_EQ(g.ToString(), Flatten().ToString());
}

}  // namespace
}  // namespace pto::jit
