// SumPaddedCotangents alone: cotangents of the q, k and v slices of one [4, 12] value (each
// its part between zeros) sum to one concat of the parts; overlapping parts, other axes and
// symbolic sizes are left to an add.
#include "jit/passes/sum_padded_cotangents.h"

#include <span>
#include <vector>

#include "gtest/gtest.h"
#include "pto/value.h"
#include "tests/jit/passes/builders.h"

namespace pto::jit {
namespace {

using ir::OpKind;
using testing::TraceGraph;

// A graph whose inputs are three [4, 4] cotangents (nodes 0, 1, 2) and a [4, n] one (node 3).
ir::Graph Inputs() {
  return TraceGraph(
      [](std::span<const Value> v) {
        return std::vector<Value>{v[0], v[1], v[2], v[3]};
      },
      {{4, 4}, {4, 4}, {4, 4}, {4, "n"}}, {{"n", 1, 64}});
}

int Zeros(ops::GraphBuilder& b, int64_t columns) { return b.Filled(0, {4, columns}); }

TEST(SumPaddedCotangents, PartsOfSlicesSumToOneConcat) {
  ir::Graph g = Inputs();
  ops::GraphBuilder b(g);
  const int dq = b.Concat({0, Zeros(b, 8)}, 1);
  const int dk = b.Concat({Zeros(b, 4), 1, Zeros(b, 4)}, 1);
  const int dv = b.Concat({Zeros(b, 8), 2}, 1);
  const int qk = SumPaddedCotangents(b, dq, dk);
  ASSERT_GE(qk, 0);
  ASSERT_EQ(g.nodes[qk].op, OpKind::kConcat);
  ASSERT_EQ(g.nodes[qk].inputs.size(), 3u);
  EXPECT_EQ(g.nodes[qk].inputs[0], 0);
  EXPECT_EQ(g.nodes[qk].inputs[1], 1);
  const ir::Node& gap = g.nodes[g.nodes[qk].inputs[2]];
  EXPECT_EQ(gap.op, OpKind::kBroadcastTo);
  EXPECT_EQ(gap.shape, (ir::Shape{ir::SymExpr(4), ir::SymExpr(4)}));
  const int qkv = SumPaddedCotangents(b, qk, dv);
  ASSERT_GE(qkv, 0);
  EXPECT_EQ(g.nodes[qkv].inputs, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(g.nodes[qkv].shape, g.nodes[dq].shape);
  EXPECT_TRUE(b.status().ok()) << b.status();
}

// Zeros against zeros merge into one gap, whatever their split.
TEST(SumPaddedCotangents, ZerosMergeIntoOneGap) {
  ir::Graph g = Inputs();
  ops::GraphBuilder b(g);
  const int only = b.Concat({Zeros(b, 4), 1}, 1);
  const int none = b.Concat({Zeros(b, 2), Zeros(b, 6)}, 1);
  const int sum = SumPaddedCotangents(b, only, none);
  ASSERT_GE(sum, 0);
  ASSERT_EQ(g.nodes[sum].op, OpKind::kConcat);
  ASSERT_EQ(g.nodes[sum].inputs.size(), 2u);
  EXPECT_EQ(g.nodes[g.nodes[sum].inputs[0]].shape, (ir::Shape{ir::SymExpr(4), ir::SymExpr(4)}));
  EXPECT_EQ(g.nodes[sum].inputs[1], 1);
}

TEST(SumPaddedCotangents, OverlapsOtherAxesAndSymbolicSizesAreLeftToAnAdd) {
  ir::Graph g = Inputs();
  ops::GraphBuilder b(g);
  // Nonzero parts overlapping in columns [2, 4).
  const int a = b.Concat({0, Zeros(b, 4)}, 1);
  const int c = b.Concat({Zeros(b, 2), b.Slice(1, 1, 0, 2), 2}, 1);
  ASSERT_EQ(g.nodes[c].shape, g.nodes[a].shape);
  EXPECT_EQ(SumPaddedCotangents(b, a, c), -1);
  // Along rows against along columns.
  const int rows = b.Concat({0, b.Filled(0, {4, 4})}, 0);
  const int rows2 = b.Concat({b.Filled(0, {4, 4}), 1}, 0);
  EXPECT_GE(SumPaddedCotangents(b, rows, rows2), 0);
  const int cols = b.Concat({0, 1}, 1);
  EXPECT_EQ(SumPaddedCotangents(b, rows, cols), -1);  // shapes [8, 4] and [4, 8]
  // A piece of symbolic size.
  const int s1 = b.Concat({3, Zeros(b, 4)}, 1);
  const int s2 = b.Concat({b.Filled(0, g.nodes[3].shape), 0}, 1);
  EXPECT_EQ(SumPaddedCotangents(b, s1, s2), -1);
  // Not concats.
  EXPECT_EQ(SumPaddedCotangents(b, 0, 1), -1);
  EXPECT_TRUE(b.status().ok()) << b.status();
}

}  // namespace
}  // namespace pto::jit
