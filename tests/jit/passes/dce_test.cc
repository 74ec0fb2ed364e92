// EliminateDeadCode (jit/passes/dce.h) alone: nodes no output depends on go, also when only
// dead nodes used them; inputs stay (they are the signature) even when unused; the rest is
// renumbered densely in the same order, outputs with it.
#include "jit/passes/dce.h"

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

TEST(DceTest, RemovesWhatNoOutputNeedsAndRenumbers) {
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        Value unused = tanh(exp(v[0]));  // %2, %3: the tanh's only use is dead
        (void)unused;
        return std::vector{v[0] * v[1], v[0]};
      },
      {{"n"}, {"n"}}, {{"n", 1, 100}});
  ASSERT_EQ(g.nodes.size(), 5u);
  EXPECT_EQ(TextAfter(EliminateDeadCode, g),
            "%0 = input() index=0 : f32[n]\n"
            "%1 = input() index=1 : f32[n]\n"
            "%2 = mul(%0, %1) : f32[n]\n"
            "outputs: %2 %0\n");
}

TEST(DceTest, UnusedInputsStay) {
  const ir::Graph g =
      TraceGraph([](std::span<const Value> v) { return std::vector{exp(v[2])}; }, {{2}, {3}, {4}});
  EXPECT_EQ(TextAfter(EliminateDeadCode, g),
            "%0 = input() index=0 : f32[2]\n"
            "%1 = input() index=1 : f32[3]\n"
            "%2 = input() index=2 : f32[4]\n"
            "%3 = exp(%2) : f32[4]\n"
            "outputs: %3\n");
}

TEST(DceTest, LiveNodesAfterDeadOnesMoveUp) {
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        Value dead = v[0] * 3.f;  // %1, %2
        (void)dead;
        Value e = exp(v[0]);  // %3
        return std::vector{e + e, e};
      },
      {{4}});
  EXPECT_EQ(TextAfter(EliminateDeadCode, g),
            "%0 = input() index=0 : f32[4]\n"
            "%1 = exp(%0) : f32[4]\n"
            "%2 = add(%1, %1) : f32[4]\n"
            "outputs: %2 %1\n");
}

TEST(DceTest, GraphWithoutDeadNodesIsUnchanged) {
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        return std::vector{softmax(v[0]), v[0]};
      },
      {{2, 5}});
  EXPECT_EQ(TextAfter(EliminateDeadCode, g), g.ToString());
}

}  // namespace
}  // namespace pto::jit
