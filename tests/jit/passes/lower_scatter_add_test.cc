// LowerScatterAdd (jit/passes/lower_scatter_add.h) alone: scatter_add(like, updates, indices)
// becomes reshapes, an iota compared with the indices, a select and a sum over the index
// positions (axis 2 of [P, n, m, Q]), reshaped back to like's shape; graphs without a
// scatter_add are left alone; fused, the expansion is one reduction kernel that never reads
// `like`.
#include "jit/passes/lower_scatter_add.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "jit/passes/build_tile_graph.h"
#include "jit/passes/dce.h"
#include "jit/passes/fusion_groups.h"
#include "ops/graph_builder.h"

namespace pto::jit {
namespace {

using ir::DType;
using ir::OpKind;
using ir::Shape;
using ir::SymExpr;

// Inputs like (f32), updates (f32), indices (i32) of these shapes, and scatter_add along
// `axis` as the output. Symbol 0 is "s".
ir::Graph ScatterAddGraph(const Shape& like, const Shape& updates, const Shape& indices,
                          int64_t axis) {
  ir::Graph g;
  g.symbols = {{"s", 1, 64}};
  const Shape shapes[3] = {like, updates, indices};
  for (int i = 0; i < 3; ++i) {
    ir::Node in;
    in.op = OpKind::kInput;
    in.attrs.index = i;
    in.dtype = i == 2 ? DType::kI32 : DType::kF32;
    in.shape = shapes[i];
    g.nodes.push_back(in);
  }
  g.num_inputs = 3;
  ops::GraphBuilder b(g);
  ir::Attrs attrs;
  attrs.axis = axis;
  const int s = b.Op(OpKind::kScatterAdd, {0, 1, 2}, attrs);
  EXPECT_TRUE(b.status().ok()) << b.status();
  g.outputs = {s};
  return g;
}

TEST(LowerScatterAddTest, EmbeddingGradientBecomesASumOfASelect) {
  const SymExpr s = SymExpr::Symbol(0);
  ir::Graph g = ScatterAddGraph({11, 5}, {s, 3, 5}, {s, 3}, 0);
  ASSERT_TRUE(LowerScatterAdd(g).ok());
  // (Symbolic reshapes and broadcasts print their target as the node's shape.)
  EXPECT_EQ(g.ToString(),
            "%0 = input() index=0 : f32[11, 5]\n"
            "%1 = input() index=1 : f32[s, 3, 5]\n"
            "%2 = input() index=2 : i32[s, 3]\n"
            "%3 = reshape(%2) to=[1, 3*s, 1] : i32[1, 3*s, 1]\n"
            "%4 = broadcast_to(%3) to=[11, 3*s, 5] : i32[11, 3*s, 5]\n"
            "%5 = iota(%4) axis=0 : i32[11, 3*s, 5]\n"
            "%6 = reshape(%1) to=[1, 3*s, 5] : f32[1, 3*s, 5]\n"
            "%7 = eq(%3, %5) : f32[11, 3*s, 5]\n"
            "%8 = constant() value=0 : f32[]\n"
            "%9 = where(%7, %6, %8) : f32[11, 3*s, 5]\n"
            "%10 = reduce_sum(%9) axis=1 : f32[11, 5]\n"
            "outputs: %10\n");
  // Fused: one reduction kernel (the reshapes are views) that reads updates and indices only.
  EliminateDeadCode(g);
  const FusionGroups groups = FormFusionGroups(g, {});
  absl::StatusOr<ir::TileGraph> tiles = BuildTileGraph(g, groups);
  ASSERT_TRUE(tiles.ok()) << tiles.status();
  ASSERT_EQ(tiles->calls.size(), 1u) << tiles->ToString();
  const ir::KernelCall& call = tiles->calls[0];
  EXPECT_EQ(call.kernel.kind, ir::KernelKind::kReduce);
  EXPECT_EQ(call.kernel.axis, 1);
  for (int buffer : call.buffers) {
    const ir::Buffer& b = tiles->buffers[buffer];
    EXPECT_FALSE(b.kind == ir::BufferKind::kInput && b.index == 0) << "like is never read";
  }
}

TEST(LowerScatterAddTest, InnerAxisKeepsPreAndPostDims) {
  ir::Graph g = ScatterAddGraph({4, 6, 3}, {4, 2, 5, 3}, {2, 5}, 1);
  ASSERT_TRUE(LowerScatterAdd(g).ok());
  const std::string text = g.ToString();
  EXPECT_NE(text.find("reduce_sum(%9) axis=2 : f32[4, 6, 3]"), std::string::npos) << text;
  EXPECT_NE(text.find("reshape(%1) to=[4, 1, 10, 3] : f32[4, 1, 10, 3]"), std::string::npos)
      << text;
}

// The last axis: pre flattened, post a dim of 1, so the sum is over an inner axis (walked in
// order), then reshaped back.
TEST(LowerScatterAddTest, LastAxisSumsOverAnInnerAxis) {
  ir::Graph g = ScatterAddGraph({2, 3, 6}, {2, 3, 4}, {4}, 2);
  ASSERT_TRUE(LowerScatterAdd(g).ok());
  const std::string text = g.ToString();
  EXPECT_NE(text.find("reduce_sum(%9) axis=2 : f32[6, 6, 1]"), std::string::npos) << text;
  EXPECT_NE(text.find("reshape(%10) to=[2, 3, 6] : f32[2, 3, 6]"), std::string::npos) << text;
}

TEST(LowerScatterAddTest, GraphsWithoutScatterAddAreLeftAlone) {
  ir::Graph g = ScatterAddGraph({4, 6}, {4, 6}, {6}, 1);
  g.outputs = {1};
  g.nodes.pop_back();
  const std::string before = g.ToString();
  ASSERT_TRUE(LowerScatterAdd(g).ok());
  EXPECT_EQ(g.ToString(), before);
}

}  // namespace
}  // namespace pto::jit
