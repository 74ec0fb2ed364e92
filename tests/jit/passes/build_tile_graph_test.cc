// BuildTileGraph (jit/passes/build_tile_graph.h) alone, on traced graphs and their fusion
// groups: one kernel per group in execution order, roots that are outputs computed straight
// into the caller's buffer, views and broadcasting as affine accesses (strides, offsets,
// stride 0), copies where no access can express a value (a reshape of a strided window, a B
// with neither stride 1, an output that is no root), concats as copies into windows, and
// groups followed as given.
#include "jit/passes/build_tile_graph.h"

#include <span>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "pto/value.h"
#include "tests/jit/passes/builders.h"

namespace pto::jit {
namespace {

using testing::TraceGraph;

std::string Tiles(const ir::Graph& g, const FusionGroups& groups) {
  absl::StatusOr<ir::TileGraph> tiles = BuildTileGraph(g, groups);
  EXPECT_TRUE(tiles.ok()) << tiles.status();
  return tiles.ok() ? tiles->ToString() : "";
}

std::string Tiles(const ir::Graph& g) { return Tiles(g, FormFusionGroups(g)); }

TEST(BuildTileGraphTest, ElementwiseChainIsOneKernelIntoTheOutput) {
  const ir::Graph g =
      TraceGraph([](std::span<const Value> v) { return std::vector{exp(v[0]) * 2.f + v[0]}; },
                 {{"n", 3}}, {{"n", 1, 16}});
  EXPECT_EQ(
      Tiles(g),
      "buf0: input 0 f32[3*n]  // %0 input\n"
      "buf1: output 0 f32[3*n]  // %4 add\n"
      "kernel f32_elementwise_add_mul_exp (elementwise) domain [n, 3] buffers=2\n"
      "  config: tile 1x0 vw 0 unroll 1 mr 4 nr 2 panel 0 pack 0 kc 0 mc 0 order panels_outer\n"
      "  a0: f32 buf0 + 0 strides [3, 1]\n"
      "  a1: f32 buf1 + 0 strides [3, 1]\n"
      "  output:\n"
      "    v0 = load a0\n"
      "    v1 = exp v0\n"
      "    v2 = const 0x1p+1\n"
      "    v3 = mul v1, v2\n"
      "    v4 = load a0\n"
      "    v5 = add v3, v4\n"
      "  store v5 -> a1\n"
      "  buffers: slot0=buf0 slot1=buf1\n");
}

TEST(BuildTileGraphTest, MatMulWithEpilogue) {
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) { return std::vector{gelu(matmul(v[0], v[1]) + v[2])}; },
      {{"m", 4}, {4, 8}, {8}}, {{"m", 1, 512}});
  EXPECT_EQ(
      Tiles(g),
      "buf0: input 0 f32[4*m]  // %0 input\n"
      "buf1: input 1 f32[32]  // %1 input\n"
      "buf2: input 2 f32[8]  // %2 input\n"
      "buf3: output 0 f32[8*m]  // %5 gelu_erf\n"
      "kernel f32_matmul_gelu_erf_add (matmul) domain [m, 8] k=4 a=a0 b=a1 buffers=4\n"
      "  config: tile 1x0 vw 0 unroll 1 mr 4 nr 2 panel 0 pack 0 kc 0 mc 0 order panels_outer\n"
      "  a0: f32 buf0 + 0 strides [4, 0, 1]\n"
      "  a1: f32 buf1 + 0 strides [0, 1, 8]\n"
      "  a2: f32 buf2 + 0 strides [0, 1]\n"
      "  a3: f32 buf3 + 0 strides [8, 1]\n"
      "  output:\n"
      "    v0 = acc\n"
      "    v1 = load a2\n"
      "    v2 = add v0, v1\n"
      "    v3 = gelu_erf v2\n"
      "  store v3 -> a3\n"
      "  buffers: slot0=buf0 slot1=buf1 slot2=buf2 slot3=buf3\n");
}

TEST(BuildTileGraphTest, ViewsAndBroadcastsAreAccesses) {
  // exp of a transposed input, plus a slice of another, plus a bias broadcast over rows.
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        Value t = exp(transpose(v[0], {1, 0}));
        Value s = slice(v[1], 1, 1, 4);
        return std::vector{t + s + v[2]};
      },
      {{3, 2}, {2, 5}, {3}});
  EXPECT_EQ(
      Tiles(g),
      "buf0: input 0 f32[6]  // %0 input\n"
      "buf1: input 1 f32[10]  // %1 input\n"
      "buf2: input 2 f32[3]  // %2 input\n"
      "buf3: output 0 f32[6]  // %7 add\n"
      "kernel f32_elementwise_add_add_exp (elementwise) domain [2, 3] buffers=4\n"
      "  config: tile 1x0 vw 0 unroll 1 mr 4 nr 2 panel 0 pack 0 kc 0 mc 0 order panels_outer\n"
      "  a0: f32 buf0 + 0 strides [1, 2]\n"
      "  a1: f32 buf1 + 1 strides [5, 1]\n"
      "  a2: f32 buf2 + 0 strides [0, 1]\n"
      "  a3: f32 buf3 + 0 strides [3, 1]\n"
      "  output:\n"
      "    v0 = load a0\n"
      "    v1 = exp v0\n"
      "    v2 = load a1\n"
      "    v3 = add v1, v2\n"
      "    v4 = load a2\n"
      "    v5 = add v3, v4\n"
      "  store v5 -> a3\n"
      "  buffers: slot0=buf0 slot1=buf1 slot2=buf2 slot3=buf3\n");
}

TEST(BuildTileGraphTest, DimsOfOneBroadcastWithStrideZero) {
  // y[2, 1] * x[2, 3]: y's column index is always 0.
  const ir::Graph g = TraceGraph([](std::span<const Value> v) { return std::vector{v[1] * v[0]}; },
                                 {{2, 3}, {2, 1}});
  EXPECT_EQ(
      Tiles(g),
      "buf0: input 0 f32[6]  // %0 input\n"
      "buf1: input 1 f32[2]  // %1 input\n"
      "buf2: output 0 f32[6]  // %2 mul\n"
      "kernel f32_elementwise_mul (elementwise) domain [2, 3] buffers=3\n"
      "  config: tile 1x0 vw 0 unroll 1 mr 4 nr 2 panel 0 pack 0 kc 0 mc 0 order panels_outer\n"
      "  a0: f32 buf0 + 0 strides [1, 0]\n"
      "  a1: f32 buf1 + 0 strides [3, 1]\n"
      "  a2: f32 buf2 + 0 strides [3, 1]\n"
      "  output:\n"
      "    v0 = load a0\n"
      "    v1 = load a1\n"
      "    v2 = mul v0, v1\n"
      "  store v2 -> a2\n"
      "  buffers: slot0=buf1 slot1=buf0 slot2=buf2\n");
}

TEST(BuildTileGraphTest, ValuesNoAccessExpressesAreCopied) {
  // A reshape of a transposed value; an output that is an input.
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        return std::vector{reshape(transpose(v[0], {1, 0}), {6}), v[0]};
      },
      {{2, 3}});
  EXPECT_EQ(
      Tiles(g),
      "buf0: input 0 f32[6]  // %0 input\n"
      "buf1: output 0 f32[6]  // %2 reshape\n"
      "buf2: temp f32[6]  // %1 transpose (contiguous for reshape)\n"
      "buf3: output 1 f32[6]  // %0 input\n"
      "kernel f32_copy (elementwise) domain [3, 2] buffers=2\n"
      "  config: tile 1x0 vw 0 unroll 1 mr 4 nr 2 panel 0 pack 0 kc 0 mc 0 order panels_outer\n"
      "  a0: f32 buf0 + 0 strides [1, 3]\n"
      "  a1: f32 buf1 + 0 strides [2, 1]\n"
      "  output:\n"
      "    v0 = load a0\n"
      "  store v0 -> a1\n"
      "  buffers: slot0=buf0 slot1=buf2\n"
      "kernel f32_output_copy (elementwise) domain [6] buffers=2\n"
      "  config: tile 1x0 vw 0 unroll 1 mr 4 nr 2 panel 0 pack 0 kc 0 mc 0 order panels_outer\n"
      "  a0: f32 buf0 + 0 strides [1]\n"
      "  a1: f32 buf1 + 0 strides [1]\n"
      "  output:\n"
      "    v0 = load a0\n"
      "  store v0 -> a1\n"
      "  buffers: slot0=buf2 slot1=buf1\n"
      "kernel f32_output_copy (elementwise) domain [2, 3] buffers=2\n"
      "  config: tile 1x0 vw 0 unroll 1 mr 4 nr 2 panel 0 pack 0 kc 0 mc 0 order panels_outer\n"
      "  a0: f32 buf0 + 0 strides [3, 1]\n"
      "  a1: f32 buf1 + 0 strides [3, 1]\n"
      "  output:\n"
      "    v0 = load a0\n"
      "  store v0 -> a1\n"
      "  buffers: slot0=buf0 slot1=buf3\n");
}

TEST(BuildTileGraphTest, MatMulBWithNoUnitStrideIsCopiedToRows) {
  // B = every other column of w: neither its N nor its K stride is 1.
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) { return std::vector{matmul(v[0], slice(v[1], 1, 0, 8, 2))}; },
      {{2, 4}, {4, 8}});
  EXPECT_EQ(
      Tiles(g),
      "buf0: input 0 f32[8]  // %0 input\n"
      "buf1: input 1 f32[32]  // %1 input\n"
      "buf2: output 0 f32[8]  // %3 matmul\n"
      "buf3: temp f32[16]  // %2 slice (B rows for matmul)\n"
      "kernel f32_copy (elementwise) domain [4, 4] buffers=2\n"
      "  config: tile 1x0 vw 0 unroll 1 mr 4 nr 2 panel 0 pack 0 kc 0 mc 0 order panels_outer\n"
      "  a0: f32 buf0 + 0 strides [8, 2]\n"
      "  a1: f32 buf1 + 0 strides [4, 1]\n"
      "  output:\n"
      "    v0 = load a0\n"
      "  store v0 -> a1\n"
      "  buffers: slot0=buf1 slot1=buf3\n"
      "kernel f32_matmul (matmul) domain [2, 4] k=4 a=a0 b=a1 buffers=3\n"
      "  config: tile 1x0 vw 0 unroll 1 mr 4 nr 2 panel 0 pack 0 kc 0 mc 0 order panels_outer\n"
      "  a0: f32 buf0 + 0 strides [4, 0, 1]\n"
      "  a1: f32 buf1 + 0 strides [0, 1, 4]\n"
      "  a2: f32 buf2 + 0 strides [4, 1]\n"
      "  output:\n"
      "    v0 = acc\n"
      "  store v0 -> a2\n"
      "  buffers: slot0=buf0 slot1=buf3 slot2=buf2\n");
}

TEST(BuildTileGraphTest, HeadsAreStoredInTheLayoutTheirMergeReads) {
  // Per-head results [heads 2, seq 3, 5] transposed to [seq, heads, 5] and merged to [3, 10]:
  // the matmul stores in the merged layout (heads 5 apart, rows 10), so no copy is needed.
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        Value heads = transpose(matmul(v[0], v[1]), {1, 0, 2});
        return std::vector{exp(reshape(heads, {3, 10}))};
      },
      {{2, 3, 4}, {2, 4, 5}});
  EXPECT_EQ(
      Tiles(g),
      "buf0: input 0 f32[24]  // %0 input\n"
      "buf1: input 1 f32[40]  // %1 input\n"
      "buf2: output 0 f32[30]  // %5 exp\n"
      "buf3: temp f32[30]  // %3 transpose\n"
      "kernel f32_matmul (matmul) domain [2, 3, 5] k=4 a=a0 b=a1 buffers=3\n"
      "  config: tile 1x0 vw 0 unroll 1 mr 4 nr 2 panel 0 pack 0 kc 0 mc 0 order panels_outer\n"
      "  a0: f32 buf0 + 0 strides [12, 4, 0, 1]\n"
      "  a1: f32 buf1 + 0 strides [20, 0, 1, 5]\n"
      "  a2: f32 buf2 + 0 strides [5, 10, 1]\n"
      "  output:\n"
      "    v0 = acc\n"
      "  store v0 -> a2\n"
      "  buffers: slot0=buf0 slot1=buf1 slot2=buf3\n"
      "kernel f32_elementwise_exp (elementwise) domain [3, 10] buffers=2\n"
      "  config: tile 1x0 vw 0 unroll 1 mr 4 nr 2 panel 0 pack 0 kc 0 mc 0 order panels_outer\n"
      "  a0: f32 buf0 + 0 strides [10, 1]\n"
      "  a1: f32 buf1 + 0 strides [10, 1]\n"
      "  output:\n"
      "    v0 = load a0\n"
      "    v1 = exp v0\n"
      "  store v1 -> a1\n"
      "  buffers: slot0=buf3 slot1=buf2\n");
}

TEST(BuildTileGraphTest, ReductionKeepsItsAxisInTheStore) {
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        return std::vector{reduce_sum(v[0], 1, true), reduce_max(v[0], 0)};
      },
      {{2, 3}});
  EXPECT_EQ(
      Tiles(g),
      "buf0: input 0 f32[6]  // %0 input\n"
      "buf1: output 0 f32[2]  // %1 reduce_sum\n"
      "buf2: output 1 f32[3]  // %2 reduce_max\n"
      "kernel f32_reduce (reduce) domain [2, 3] sum axis=1 buffers=2\n"
      "  config: tile 1x0 vw 0 unroll 1 mr 4 nr 2 panel 0 pack 0 kc 0 mc 0 order panels_outer\n"
      "  a0: f32 buf0 + 0 strides [3, 1]\n"
      "  a1: f32 buf1 + 0 strides [1, 0]\n"
      "  input (v0):\n"
      "    v0 = load a0\n"
      "  output:\n"
      "    v0 = acc\n"
      "  store v0 -> a1\n"
      "  buffers: slot0=buf0 slot1=buf1\n"
      "kernel f32_reduce (reduce) domain [2, 3] max axis=0 buffers=2\n"
      "  config: tile 1x0 vw 0 unroll 1 mr 4 nr 2 panel 0 pack 0 kc 0 mc 0 order panels_outer\n"
      "  a0: f32 buf0 + 0 strides [3, 1]\n"
      "  a1: f32 buf1 + 0 strides [0, 1]\n"
      "  input (v0):\n"
      "    v0 = load a0\n"
      "  output:\n"
      "    v0 = acc\n"
      "  store v0 -> a1\n"
      "  buffers: slot0=buf0 slot1=buf2\n");
}

TEST(BuildTileGraphTest, ConcatCopiesIntoWindows) {
  // Two inputs of one shape share a kernel; the slices of one tensor stepping through it are
  // one kernel over the run.
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        Value a = concat({v[0], v[1]}, 1);
        Value b = concat({slice(v[2], 0, 0, 1), slice(v[2], 0, 1, 2), slice(v[2], 0, 2, 3)}, 0);
        return std::vector{a, b};
      },
      {{2, 2}, {2, 2}, {3, 4}});
  EXPECT_EQ(
      Tiles(g),
      "buf0: input 0 f32[4]  // %0 input\n"
      "buf1: input 1 f32[4]  // %1 input\n"
      "buf2: input 2 f32[12]  // %2 input\n"
      "buf3: output 0 f32[8]  // %3 concat\n"
      "buf4: output 1 f32[12]  // %7 concat\n"
      "kernel f32_concat (elementwise) domain [2, 2] buffers=3\n"
      "  config: tile 1x0 vw 0 unroll 1 mr 4 nr 2 panel 0 pack 0 kc 0 mc 0 order panels_outer\n"
      "  a0: f32 buf0 + 0 strides [2, 1]\n"
      "  a1: f32 buf1 + 0 strides [4, 1]\n"
      "  a2: f32 buf2 + 0 strides [2, 1]\n"
      "  a3: f32 buf1 + 2 strides [4, 1]\n"
      "  output:\n"
      "    v0 = load a0\n"
      "    v1 = load a2\n"
      "  store v0 -> a1\n"
      "  store v1 -> a3\n"
      "  buffers: slot0=buf0 slot1=buf3 slot2=buf1\n"
      "kernel f32_concat (elementwise) domain [3, 1, 4] buffers=2\n"
      "  config: tile 1x0 vw 0 unroll 1 mr 4 nr 2 panel 0 pack 0 kc 0 mc 0 order panels_outer\n"
      "  a0: f32 buf0 + 0 strides [4, 4, 1]\n"
      "  a1: f32 buf1 + 0 strides [4, 4, 1]\n"
      "  output:\n"
      "    v0 = load a0\n"
      "  store v0 -> a1\n"
      "  buffers: slot0=buf2 slot1=buf4\n");
}

TEST(BuildTileGraphTest, GroupsAreFollowedAsGiven) {
  // exp(x) * 2: with exp given a buffer of its own by hand, two kernels instead of one.
  const ir::Graph g =
      TraceGraph([](std::span<const Value> v) { return std::vector{exp(v[0]) * 2.f}; }, {{4}});
  FusionGroups groups = FormFusionGroups(g);
  ASSERT_EQ(groups.role[1], NodeRole::kInline);
  groups.role[1] = NodeRole::kRoot;
  groups.inline_cost[1] = 1;
  EXPECT_EQ(
      Tiles(g, groups),
      "buf0: input 0 f32[4]  // %0 input\n"
      "buf1: output 0 f32[4]  // %3 mul\n"
      "buf2: temp f32[4]  // %1 exp\n"
      "kernel f32_elementwise_exp (elementwise) domain [4] buffers=2\n"
      "  config: tile 1x0 vw 0 unroll 1 mr 4 nr 2 panel 0 pack 0 kc 0 mc 0 order panels_outer\n"
      "  a0: f32 buf0 + 0 strides [1]\n"
      "  a1: f32 buf1 + 0 strides [1]\n"
      "  output:\n"
      "    v0 = load a0\n"
      "    v1 = exp v0\n"
      "  store v1 -> a1\n"
      "  buffers: slot0=buf0 slot1=buf2\n"
      "kernel f32_elementwise_mul (elementwise) domain [4] buffers=2\n"
      "  config: tile 1x0 vw 0 unroll 1 mr 4 nr 2 panel 0 pack 0 kc 0 mc 0 order panels_outer\n"
      "  a0: f32 buf0 + 0 strides [1]\n"
      "  a1: f32 buf1 + 0 strides [1]\n"
      "  output:\n"
      "    v0 = load a0\n"
      "    v1 = const 0x1p+1\n"
      "    v2 = mul v0, v1\n"
      "  store v2 -> a1\n"
      "  buffers: slot0=buf2 slot1=buf1\n");
}

TEST(BuildTileGraphTest, AnchorWithoutABufferIsAnError) {
  // A matmul marked inline cannot be recomputed inside its consumer: a status, not a crash.
  const ir::Graph g =
      TraceGraph([](std::span<const Value> v) { return std::vector{exp(matmul(v[0], v[1]))}; },
                 {{2, 2}, {2, 2}});
  FusionGroups groups = FormFusionGroups(g);
  groups.role[2] = NodeRole::kInline;
  groups.anchor = std::vector<int>(g.nodes.size(), -1);
  const absl::StatusOr<ir::TileGraph> tiles = BuildTileGraph(g, groups);
  ASSERT_FALSE(tiles.ok());
  EXPECT_EQ(tiles.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(tiles.status().message().find("node %2 (matmul)"), std::string::npos) << tiles.status();
}

}  // namespace
}  // namespace pto::jit
