// EliminateCommonSubexpressions (jit/passes/cse.h) alone: nodes with the same op, attributes
// and inputs merge into the first (constants by value, chains of them at once); inputs never
// merge; any attribute that differs keeps nodes apart, and so does the order of operands (no
// commutativity). The merged duplicates stay in the graph, unused, until DCE.
#include "jit/passes/cse.h"

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

TEST(CseTest, DuplicateChainsMergeIntoTheFirst) {
  // exp(x) + 1 twice: the second exp, its constant and its add all merge, in one walk.
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        Value a = exp(v[0]) + 1.f;
        Value b = exp(v[0]) + 1.f;
        return std::vector{a * b, b};
      },
      {{"n", 4}}, {{"n", 1, 8}});
  EXPECT_EQ(TextAfter(EliminateCommonSubexpressions, g),
            "%0 = input() index=0 : f32[n, 4]\n"
            "%1 = exp(%0) : f32[n, 4]\n"
            "%2 = constant() value=1 : f32[]\n"
            "%3 = add(%1, %2) : f32[n, 4]\n"
            "%4 = exp(%0) : f32[n, 4]\n"
            "%5 = constant() value=1 : f32[]\n"
            "%6 = add(%1, %2) : f32[n, 4]\n"
            "%7 = mul(%3, %3) : f32[n, 4]\n"
            "outputs: %7 %3\n");
}

TEST(CseTest, ConstantsMergeByValueOnly) {
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        Value a = v[0] * 2.f;
        Value b = v[0] * 2.f;
        Value c = v[0] * 3.f;
        return std::vector{a, b, c};
      },
      {{4}});
  EXPECT_EQ(TextAfter(EliminateCommonSubexpressions, g),
            "%0 = input() index=0 : f32[4]\n"
            "%1 = constant() value=2 : f32[]\n"
            "%2 = mul(%0, %1) : f32[4]\n"
            "%3 = constant() value=2 : f32[]\n"
            "%4 = mul(%0, %1) : f32[4]\n"
            "%5 = constant() value=3 : f32[]\n"
            "%6 = mul(%0, %5) : f32[4]\n"
            "outputs: %2 %2 %6\n");
}

TEST(CseTest, InputsNeverMerge) {
  // Two inputs of one shape are different values: exp of each stays too.
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        return std::vector{exp(v[0]), exp(v[1])};
      },
      {{4}, {4}});
  EXPECT_EQ(TextAfter(EliminateCommonSubexpressions, g), g.ToString());
}

TEST(CseTest, DifferentAttributesStayApart) {
  // Pairs that differ in one attribute each: axis, keepdims, op, slice bounds, eps.
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        const Value x = v[0], w = v[1];
        return std::vector{reduce_sum(x, 0),     reduce_sum(x, 1),  reduce_sum(x, 1, true),
                           reduce_max(x, 1),     slice(x, 1, 0, 2), slice(x, 1, 1, 3),
                           transpose(x, {1, 0}), reshape(x, {6}),   rms_norm(x, w, 1e-5f),
                           rms_norm(x, w, 1e-6f)};
      },
      {{2, 3}, {3}});
  EXPECT_EQ(TextAfter(EliminateCommonSubexpressions, g), g.ToString());
}

TEST(CseTest, OperandOrderKeepsNodesApart) {
  // x + y and y + x are one value to arithmetic, not to CSE.
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        return std::vector{v[0] + v[1], v[1] + v[0]};
      },
      {{4}, {4}});
  EXPECT_EQ(TextAfter(EliminateCommonSubexpressions, g), g.ToString());
}

TEST(CseTest, GraphWithoutDuplicatesIsUnchanged) {
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) { return std::vector{gelu(matmul(v[0], v[1])) + v[0]}; },
      {{4, 4}, {4, 4}});
  EXPECT_EQ(TextAfter(EliminateCommonSubexpressions, g), g.ToString());
}

}  // namespace
}  // namespace pto::jit
