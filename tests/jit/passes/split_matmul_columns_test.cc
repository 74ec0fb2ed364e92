// SplitMatMulColumns (jit/passes/split_matmul_columns.h) alone: a matmul (optionally plus a
// bias over its columns) read only through column slices becomes one matmul per slice over
// the matching columns (or, with transpose_b, rows) of the weight and slice of the bias. It
// applies only when B is rank 2, N is static, every use is a step-1 slice of the last axis,
// the slices cover at most N columns, there are at least two, and the result is no graph
// output. The replaced nodes stay, unused, until DCE.
#include "jit/passes/split_matmul_columns.h"

#include <span>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "pto/value.h"
#include "tests/jit/passes/builders.h"

namespace pto::jit {
namespace {

using testing::TextAfter;
using testing::TraceGraph;

// The graph is left as it was.
void ExpectNoSplit(const TraceFn& fn, const std::vector<std::vector<testing::Dim>>& shapes,
                   std::vector<ir::SymbolInfo> symbols = {}) {
  const ir::Graph g = TraceGraph(fn, shapes, std::move(symbols));
  EXPECT_EQ(TextAfter(SplitMatMulColumns, g), g.ToString());
}

// x[s, 8] · W[8, 12] + b[12], read as three slices of 4 columns.
TEST(SplitMatMulColumnsTest, ProjectionWithBiasSplitsPerSlice) {
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        Value y = matmul(v[0], v[1]) + v[2];
        return std::vector{slice(y, 1, 0, 4), slice(y, 1, 4, 8), slice(y, 1, 8, 12)};
      },
      {{"s", 8}, {8, 12}, {12}}, {{"s", 1, 64}});
  EXPECT_EQ(TextAfter(SplitMatMulColumns, g),
            "%0 = input() index=0 : f32[s, 8]\n"
            "%1 = input() index=1 : f32[8, 12]\n"
            "%2 = input() index=2 : f32[12]\n"
            "%3 = matmul(%0, %1) : f32[s, 12]\n"
            "%4 = add(%3, %2) : f32[s, 12]\n"
            "%5 = slice(%1) axis=1 start=0 end=4 step=1 : f32[8, 4]\n"
            "%6 = matmul(%0, %5) : f32[s, 4]\n"
            "%7 = slice(%2) axis=0 start=0 end=4 step=1 : f32[4]\n"
            "%8 = add(%6, %7) : f32[s, 4]\n"
            "%9 = slice(%1) axis=1 start=4 end=8 step=1 : f32[8, 4]\n"
            "%10 = matmul(%0, %9) : f32[s, 4]\n"
            "%11 = slice(%2) axis=0 start=4 end=8 step=1 : f32[4]\n"
            "%12 = add(%10, %11) : f32[s, 4]\n"
            "%13 = slice(%1) axis=1 start=8 end=12 step=1 : f32[8, 4]\n"
            "%14 = matmul(%0, %13) : f32[s, 4]\n"
            "%15 = slice(%2) axis=0 start=8 end=12 step=1 : f32[4]\n"
            "%16 = add(%14, %15) : f32[s, 4]\n"
            "outputs: %8 %12 %16\n");
}

TEST(SplitMatMulColumnsTest, TransposedWeightIsSlicedAlongItsRows) {
  // linear(x, W[6, 8], b[6]) = x · Wᵀ + b, read as columns [0, 2) and [2, 4).
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        Value y = linear(v[0], v[1], v[2]);
        Value a = slice(y, 1, 0, 2);
        Value b = slice(y, 1, 2, 4);
        return std::vector{a * b};
      },
      {{3, 8}, {6, 8}, {6}});
  EXPECT_EQ(TextAfter(SplitMatMulColumns, g),
            "%0 = input() index=0 : f32[3, 8]\n"
            "%1 = input() index=1 : f32[6, 8]\n"
            "%2 = input() index=2 : f32[6]\n"
            "%3 = matmul(%0, %1) transpose_b : f32[3, 6]\n"
            "%4 = add(%3, %2) : f32[3, 6]\n"
            "%5 = slice(%1) axis=0 start=0 end=2 step=1 : f32[2, 8]\n"
            "%6 = matmul(%0, %5) transpose_b : f32[3, 2]\n"
            "%7 = slice(%2) axis=0 start=0 end=2 step=1 : f32[2]\n"
            "%8 = add(%6, %7) : f32[3, 2]\n"
            "%9 = slice(%1) axis=0 start=2 end=4 step=1 : f32[2, 8]\n"
            "%10 = matmul(%0, %9) transpose_b : f32[3, 2]\n"
            "%11 = slice(%2) axis=0 start=2 end=4 step=1 : f32[2]\n"
            "%12 = add(%10, %11) : f32[3, 2]\n"
            "%13 = mul(%8, %12) : f32[3, 2]\n"
            "outputs: %13\n");
}

TEST(SplitMatMulColumnsTest, MatMulWithoutBiasSplitsToo) {
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        Value y = matmul(v[0], v[1]);
        return std::vector{slice(y, 1, 0, 3), slice(y, 1, 3, 5)};
      },
      {{2, 4}, {4, 5}});
  EXPECT_EQ(TextAfter(SplitMatMulColumns, g),
            "%0 = input() index=0 : f32[2, 4]\n"
            "%1 = input() index=1 : f32[4, 5]\n"
            "%2 = matmul(%0, %1) : f32[2, 5]\n"
            "%3 = slice(%1) axis=1 start=0 end=3 step=1 : f32[4, 3]\n"
            "%4 = matmul(%0, %3) : f32[2, 3]\n"
            "%5 = slice(%1) axis=1 start=3 end=5 step=1 : f32[4, 2]\n"
            "%6 = matmul(%0, %5) : f32[2, 2]\n"
            "outputs: %4 %6\n");
}

TEST(SplitMatMulColumnsTest, SlicesMayOverlapWhileTheyCoverAtMostN) {
  // 3 + 3 columns of 8: no more arithmetic than the whole matmul.
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        Value y = matmul(v[0], v[1]);
        return std::vector{slice(y, 1, 0, 3), slice(y, 1, 1, 4)};
      },
      {{2, 4}, {4, 8}});
  const std::string text = TextAfter(SplitMatMulColumns, g);
  EXPECT_NE(text.find("outputs: %4 %6\n"), std::string::npos) << text;
}

TEST(SplitMatMulColumnsTest, OneSliceIsNotSplit) {
  ExpectNoSplit(
      [](std::span<const Value> v) { return std::vector{slice(matmul(v[0], v[1]), 1, 0, 3)}; },
      {{2, 4}, {4, 8}});
}

TEST(SplitMatMulColumnsTest, AnyOtherUseBlocksTheSplit) {
  ExpectNoSplit(
      [](std::span<const Value> v) {
        Value y = matmul(v[0], v[1]);
        return std::vector{slice(y, 1, 0, 4), slice(y, 1, 4, 8), exp(y)};
      },
      {{2, 4}, {4, 8}});
}

TEST(SplitMatMulColumnsTest, ResultThatIsAnOutputIsNotSplit) {
  ExpectNoSplit(
      [](std::span<const Value> v) {
        Value y = matmul(v[0], v[1]) + v[2];
        return std::vector{slice(y, 1, 0, 4), slice(y, 1, 4, 8), y};
      },
      {{2, 4}, {4, 8}, {8}});
}

TEST(SplitMatMulColumnsTest, StepOrRowSlicesAreNotSplit) {
  ExpectNoSplit(
      [](std::span<const Value> v) {
        Value y = matmul(v[0], v[1]);
        return std::vector{slice(y, 1, 0, 8, 2), slice(y, 1, 1, 8, 2)};
      },
      {{2, 4}, {4, 8}});
  ExpectNoSplit(
      [](std::span<const Value> v) {
        Value y = matmul(v[0], v[1]);
        return std::vector{slice(y, 0, 0, 1), slice(y, 0, 1, 2)};
      },
      {{2, 4}, {4, 8}});
}

TEST(SplitMatMulColumnsTest, SlicesCoveringMoreThanNAreNotSplit) {
  // 6 + 6 columns of 8: splitting would add arithmetic.
  ExpectNoSplit(
      [](std::span<const Value> v) {
        Value y = matmul(v[0], v[1]);
        return std::vector{slice(y, 1, 0, 6), slice(y, 1, 2, 8)};
      },
      {{2, 4}, {4, 8}});
}

TEST(SplitMatMulColumnsTest, BatchedWeightOrSymbolicColumnsAreNotSplit) {
  ExpectNoSplit(
      [](std::span<const Value> v) {
        Value y = matmul(v[0], v[1]);
        return std::vector{slice(y, 2, 0, 4), slice(y, 2, 4, 8)};
      },
      {{2, 3, 4}, {2, 4, 8}});
  ExpectNoSplit(
      [](std::span<const Value> v) {
        Value y = matmul(v[0], v[1]);
        return std::vector{slice(y, 1, 0, 4), slice(y, 1, 4, 8)};
      },
      {{2, 4}, {4, "n"}}, {{"n", 8, 64}});
}

TEST(SplitMatMulColumnsTest, FullMatrixAddIsNoBias) {
  // The add of a residual [2, 8] is not a bias over the columns: its slices are not the
  // matmul's.
  ExpectNoSplit(
      [](std::span<const Value> v) {
        Value y = matmul(v[0], v[1]) + v[2];
        return std::vector{slice(y, 1, 0, 4), slice(y, 1, 4, 8)};
      },
      {{2, 4}, {4, 8}, {2, 8}});
}

}  // namespace
}  // namespace pto::jit
