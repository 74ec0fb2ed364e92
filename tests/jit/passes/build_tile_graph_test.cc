// BuildTileGraph (jit/passes/build_tile_graph.h) alone, on traced graphs and their fusion
// groups: one kernel per group in execution order, roots that are outputs computed straight
// into the caller's buffer, views and broadcasting as affine accesses (strides, offsets,
// stride 0), copies where no access can express a value (a reshape of a strided window, a B
// with neither stride 1, an output that is no root), concats as copies into windows, and
// groups followed as given; scatter_add as a kernel of its own kind over [P, N, M, Q] whose
// updates and indices are in memory.
#include "jit/passes/build_tile_graph.h"

#include <span>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/graph_builder.h"
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
  // A reshape of a transposed value; an output that is an input. The copy runs along the
  // source's rows (domain [2, 3], loads of stride 1) and stores across the copy's rows.
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
      "kernel f32_copy (elementwise) domain [2, 3] buffers=2\n"
      "  config: tile 1x0 vw 0 unroll 1 mr 4 nr 2 panel 0 pack 0 kc 0 mc 0 order panels_outer\n"
      "  a0: f32 buf0 + 0 strides [3, 1]\n"
      "  a1: f32 buf1 + 0 strides [1, 2]\n"
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

TEST(BuildTileGraphTest, MatMulAReadAcrossKIsCopiedToRowsWhenNIsWide) {
  // A = xᵀ (a weight gradient's shape): A's K stride is M. With 256 columns the matmul reads a
  // copy in rows of [M, K], made along x's rows; with 255 it reads x (its kernel may copy
  // blocks of it to its scratch).
  const auto tiles = [](int64_t n) {
    return Tiles(TraceGraph(
        [](std::span<const Value> v) {
          return std::vector{matmul(transpose(v[0], {1, 0}), v[1])};
        },
        {{4, 2}, {4, n}}));
  };
  const std::string wide = tiles(256);
  EXPECT_NE(wide.find("buf3: temp f32[8]  // %2 transpose (A rows for matmul)\n"
                      "kernel f32_copy (elementwise) domain [4, 2] buffers=2\n"),
            std::string::npos)
      << wide;
  EXPECT_NE(wide.find("  a0: f32 buf0 + 0 strides [2, 1]\n"
                      "  a1: f32 buf1 + 0 strides [1, 4]\n"),
            std::string::npos)
      << wide;
  EXPECT_NE(wide.find("kernel f32_matmul (matmul) domain [2, 256] k=4 a=a0 b=a1 buffers=3\n"
                      "  config: tile 1x0 vw 0 unroll 1 mr 4 nr 2 panel 0 pack 0 kc 0 mc 0 order "
                      "panels_outer\n"
                      "  a0: f32 buf0 + 0 strides [4, 0, 1]\n"),
            std::string::npos)
      << wide;
  const std::string narrow = tiles(255);
  EXPECT_EQ(narrow.find("A rows for matmul"), std::string::npos) << narrow;
  EXPECT_NE(narrow.find("  a0: f32 buf0 + 0 strides [1, 0, 2]\n"), std::string::npos) << narrow;
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

// Roots whose one use is the concat are computed straight into their windows: two matmuls
// flattened by reshapes (the gradients of a parameter list laid end to end). An input is still
// copied, and so is a root used twice (it keeps a buffer of its own).
TEST(BuildTileGraphTest, ConcatInputsComputedInTheirWindows) {
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        Value w = matmul(v[0], v[1]);  // [2, 3]
        Value u = matmul(v[1], v[2]);  // [5, 4]
        Value twice = tanh(v[2]);      // [3, 4], also the second output
        Value flat = concat(
            {reshape(w, {6}), reshape(u, {20}), reshape(v[2], {12}), reshape(twice, {12})}, 0);
        return std::vector{flat * 2.0f, twice};
      },
      {{2, 5}, {5, 3}, {3, 4}});
  const std::string text = Tiles(g);
  // The concat's buffer (buf5) is written by both matmuls, at offsets 0 and 6.
  EXPECT_NE(text.find("buf5: temp f32[50]  // %10 concat"), std::string::npos) << text;
  EXPECT_NE(text.find("a2: f32 buf2 + 0 strides [3, 1]\n  output:\n    v0 = acc\n  store v0 -> "
                      "a2\n  buffers: slot0=buf0 slot1=buf1 slot2=buf5"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("a2: f32 buf2 + 6 strides [4, 1]\n  output:\n    v0 = acc\n  store v0 -> "
                      "a2\n  buffers: slot0=buf1 slot1=buf2 slot2=buf5"),
            std::string::npos)
      << text;
  // One copy kernel, for the input and the twice-used tanh only (offsets 26 and 38).
  EXPECT_NE(text.find("a1: f32 buf1 + 26 strides [1]"), std::string::npos) << text;
  EXPECT_NE(text.find("a3: f32 buf1 + 38 strides [1]"), std::string::npos) << text;
  int concats = 0;
  for (size_t at = text.find("kernel f32_concat"); at != std::string::npos;
       at = text.find("kernel f32_concat", at + 1)) {
    ++concats;
  }
  EXPECT_EQ(concats, 1) << text;
}

// Per-head results merged back ([heads 2, seq 3, 5] -> [seq 3, 10], as attention's dq, dk
// and dv) and concatenated along the last axis: each matmul stores straight into its window
// of the concat's [3, 30] buffer, heads 5 apart and rows 30, and no copy kernel is left.
TEST(BuildTileGraphTest, MergedHeadsAreComputedInTheirConcatWindows) {
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        auto merged = [](Value heads) { return reshape(transpose(heads, {1, 0, 2}), {3, 10}); };
        Value q = merged(matmul(v[0], v[1]));
        Value k = merged(matmul(v[0], v[2]));
        Value w = merged(matmul(v[0], v[1]) * 2.0f);
        return std::vector{exp(concat({q, k, w}, 1))};
      },
      {{2, 3, 4}, {2, 4, 5}, {2, 4, 5}});
  const std::string text = Tiles(g);
  EXPECT_EQ(text.find("kernel f32_concat"), std::string::npos) << text;
  EXPECT_NE(text.find("buf4: temp f32[90]  // %14 concat\n"), std::string::npos) << text;
  for (const char* window :
       {"(matmul) domain [2, 3, 5] k=4 a=a0 b=a1 buffers=3\n",
        "  a2: f32 buf2 + 0 strides [5, 30, 1]\n", "  a2: f32 buf2 + 10 strides [5, 30, 1]\n",
        "  a2: f32 buf2 + 20 strides [5, 30, 1]\n"}) {
    EXPECT_NE(text.find(window), std::string::npos) << window << "\n" << text;
  }
  int into_concat = 0;
  for (size_t at = text.find("slot2=buf4\n"); at != std::string::npos;
       at = text.find("slot2=buf4\n", at + 1)) {
    ++into_concat;
  }
  EXPECT_EQ(into_concat, 3) << text;
}

// Sibling outputs (an optimizer's new moment beside the new parameters): the consumer's kernel
// computes the output inline and stores it too, one pass over memory for both.
TEST(BuildTileGraphTest, StoredInlineOutputsAreExtraStoresOfTheirConsumer) {
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        const Value m = v[1] * 0.5f + v[0];
        return std::vector{v[2] - m * 2.0f, m};
      },
      {{6}, {6}, {6}});
  const std::string text = Tiles(g);
  int kernels = 0;
  for (size_t at = text.find("kernel "); at != std::string::npos;
       at = text.find("kernel ", at + 1)) {
    ++kernels;
  }
  EXPECT_EQ(kernels, 1) << text;
  // Output 1 (m, buf4) and output 0 (buf3) both stored by the one kernel.
  EXPECT_NE(text.find("buf3: output 0 f32[6]"), std::string::npos) << text;
  EXPECT_NE(text.find("buf4: output 1 f32[6]"), std::string::npos) << text;
  EXPECT_NE(text.find("slot3=buf4"), std::string::npos) << text;
  int stores = 0;
  for (size_t at = text.find("  store "); at != std::string::npos;
       at = text.find("  store ", at + 1)) {
    ++stores;
  }
  EXPECT_EQ(stores, 2) << text;
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

// Inputs like (f32), updates (f32), indices (i32) of these shapes; `updates_fn` (if set) makes
// the value scattered from the updates input; scatter_add along `axis` is the output. Symbol 0
// is "s".
ir::Graph ScatterAddGraph(const ir::Shape& like, const ir::Shape& updates, const ir::Shape& indices,
                          int64_t axis, int (*updates_fn)(ops::GraphBuilder&, int) = nullptr) {
  ir::Graph g;
  g.symbols = {{"s", 1, 64}};
  const ir::Shape shapes[3] = {like, updates, indices};
  for (int i = 0; i < 3; ++i) {
    ir::Node in;
    in.op = ir::OpKind::kInput;
    in.attrs.index = i;
    in.dtype = i == 2 ? ir::DType::kI32 : ir::DType::kF32;
    in.shape = shapes[i];
    g.nodes.push_back(in);
  }
  g.num_inputs = 3;
  ops::GraphBuilder b(g);
  ir::Attrs attrs;
  attrs.axis = axis;
  const int u = updates_fn != nullptr ? updates_fn(b, 1) : 1;
  const int s = b.Op(ir::OpKind::kScatterAdd, {0, u, 2}, attrs);
  EXPECT_TRUE(b.status().ok()) << b.status();
  g.outputs = {s};
  return g;
}

// An embedding's gradient: [s, 3] token ids, [s, 3, 5] rows, into [11, 5]. One kernel over
// [P = 1, N = 11, M = 3*s, Q = 5] that never reads `like` (buf0).
TEST(BuildTileGraphTest, ScatterAddIsOneKernelOverPNMQ) {
  const ir::SymExpr s = ir::SymExpr::Symbol(0);
  const ir::Graph g = ScatterAddGraph({11, 5}, {s, 3, 5}, {s, 3}, 0);
  EXPECT_EQ(
      Tiles(g),
      "buf0: input 0 f32[55]  // %0 input\n"
      "buf1: input 1 f32[15*s]  // %1 input\n"
      "buf2: input 2 i32[3*s]  // %2 input\n"
      "buf3: output 0 f32[55]  // %3 scatter_add\n"
      "kernel f32_scatter_add (scatter_add) domain [1, 11, 3*s, 5] updates=a0 indices=a1 "
      "buffers=3\n"
      "  config: tile 1x0 vw 0 unroll 1 mr 4 nr 2 panel 0 pack 0 kc 0 mc 0 order panels_outer\n"
      "  a0: f32 buf0 + 0 strides [15*s, 0, 5, 1]\n"
      "  a1: i32 buf1 + 0 strides [0, 0, 1, 0]\n"
      "  a2: f32 buf2 + 0 strides [55, 5, 0, 1]\n"
      "  output:\n"
      "    v0 = acc\n"
      "  store v0 -> a2\n"
      "  buffers: slot0=buf1 slot1=buf2 slot2=buf3\n");
}

// Along an inner axis the dims before it are the kernel's rows (P = 2) and those after it its
// columns (Q = 4 * 3); updates computed inline are given a buffer first, updates read through
// a transpose are copied contiguous (they flatten to no [P, M, Q] view).
TEST(BuildTileGraphTest, ScatterAddReadsItsUpdatesFromMemory) {
  const ir::Graph g =
      ScatterAddGraph({2, 7, 4, 3}, {2, 5, 4, 3}, {5}, 1,
                      [](ops::GraphBuilder& b, int u) { return b.Op(ir::OpKind::kExp, {u}); });
  const std::string inline_text = Tiles(g);
  EXPECT_NE(inline_text.find("kernel f32_elementwise_exp"), std::string::npos) << inline_text;
  EXPECT_NE(inline_text.find("domain [2, 7, 5, 12] updates=a0 indices=a1"), std::string::npos)
      << inline_text;
  EXPECT_NE(inline_text.find("a0: f32 buf0 + 0 strides [60, 0, 12, 1]"), std::string::npos)
      << inline_text;
  EXPECT_NE(inline_text.find("a2: f32 buf2 + 0 strides [84, 12, 0, 1]"), std::string::npos)
      << inline_text;

  const ir::Graph t =
      ScatterAddGraph({2, 7, 4, 3}, {2, 5, 3, 4}, {5}, 1, [](ops::GraphBuilder& b, int u) {
        ir::Attrs perm;
        perm.ints = {0, 1, 3, 2};
        return b.Op(ir::OpKind::kTranspose, {u}, perm);
      });
  const std::string copied = Tiles(t);
  EXPECT_NE(copied.find("(contiguous for scatter_add)"), std::string::npos) << copied;
  EXPECT_NE(copied.find("kernel f32_copy"), std::string::npos) << copied;
  EXPECT_NE(copied.find("domain [2, 7, 5, 12] updates=a0 indices=a1"), std::string::npos) << copied;
}

}  // namespace
}  // namespace pto::jit
