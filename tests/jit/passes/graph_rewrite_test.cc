// The rewriting helpers of the tensor-graph passes (jit/passes/graph_rewrite.h): replacements
// resolved through chains into inputs and outputs, use counts and consumer lists that count
// every input slot.
#include "jit/passes/graph_rewrite.h"

#include <span>
#include <vector>

#include "gtest/gtest.h"
#include "pto/value.h"
#include "tests/jit/passes/builders.h"

namespace pto::jit {
namespace {

using testing::TraceGraph;

// %0 = x, %1 = exp(x), %2 = -%1, %3 = %2 * x; outputs %3 and %2.
ir::Graph Chain() {
  return TraceGraph(
      [](std::span<const Value> v) {
        Value e = exp(v[0]);
        Value n = -e;
        return std::vector{n * v[0], n};
      },
      {{4}});
}

TEST(GraphRewriteTest, ReplacementsResolveThroughChainsInInputsAndOutputs) {
  ir::Graph g = Chain();
  // %2 -> %1 -> %0: every use of %2 becomes a use of %0; %1 and %2 stay, unused, until DCE.
  ApplyReplacements(g, {0, 0, 1, 3});
  EXPECT_EQ(g.ToString(),
            "%0 = input() index=0 : f32[4]\n"
            "%1 = exp(%0) : f32[4]\n"
            "%2 = neg(%0) : f32[4]\n"
            "%3 = mul(%0, %0) : f32[4]\n"
            "outputs: %3 %0\n");
}

TEST(GraphRewriteTest, IdentityReplacementChangesNothing) {
  ir::Graph g = Chain();
  const std::string before = g.ToString();
  ApplyReplacements(g, {0, 1, 2, 3});
  EXPECT_EQ(g.ToString(), before);
}

TEST(GraphRewriteTest, UsesCountEveryInputSlotAndEveryOutput) {
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        Value e = exp(v[0]);
        return std::vector{e * e, e, e};
      },
      {{4}});
  // x: read by exp; exp: twice by the mul and twice as an output; the mul: once as an output.
  EXPECT_EQ(CountUses(g), (std::vector<int>{1, 4, 1}));
}

TEST(GraphRewriteTest, ConsumersListOneEntryPerInputSlot) {
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        Value e = exp(v[0]);
        return std::vector{e * e + v[0]};
      },
      {{4}});
  // %1 = exp(%0), %2 = %1 * %1, %3 = %2 + %0. Outputs are no consumers.
  const std::vector<std::vector<int>> consumers = Consumers(g);
  ASSERT_EQ(consumers.size(), 4u);
  EXPECT_EQ(consumers[0], (std::vector<int>{1, 3}));
  EXPECT_EQ(consumers[1], (std::vector<int>{2, 2}));
  EXPECT_EQ(consumers[2], (std::vector<int>{3}));
  EXPECT_TRUE(consumers[3].empty());
}

}  // namespace
}  // namespace pto::jit
