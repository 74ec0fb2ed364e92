// Canonicalize (jit/passes/canonicalize.h) alone: the identities x*1, 1*x, x/1, x+0, 0+x, x-0
// and --x, no-op transposes, reshapes and casts, and folding of scalar-constant arithmetic (in
// float, as a kernel computes it). A rewritten node stays in the graph, unused, until DCE; a
// folded node becomes a constant in place. What is not an identity in float (x*0, x-x) and
// what would drop a broadcast stays.
#include "jit/passes/canonicalize.h"

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

std::string CanonicalOf(const TraceFn& fn, const std::vector<std::vector<testing::Dim>>& shapes) {
  return TextAfter(Canonicalize, TraceGraph(fn, shapes));
}

TEST(CanonicalizeTest, ArithmeticIdentitiesForwardTheOperand) {
  // Each output is x through one identity.
  const TraceFn fn = [](std::span<const Value> v) {
    const Value x = v[0];
    return std::vector{x * 1.f, 1.f * x, x / 1.f, x + 0.f, 0.f + x, x - 0.f, -(-x)};
  };
  const std::string text = CanonicalOf(fn, {{2, 3}});
  EXPECT_NE(text.find("outputs: %0 %0 %0 %0 %0 %0 %0\n"), std::string::npos) << text;
}

TEST(CanonicalizeTest, RewrittenNodesStayUntilDce) {
  EXPECT_EQ(
      CanonicalOf([](std::span<const Value> v) { return std::vector{exp(v[0] * 1.f)}; }, {{4}}),
      "%0 = input() index=0 : f32[4]\n"
      "%1 = constant() value=1 : f32[]\n"
      "%2 = mul(%0, %1) : f32[4]\n"
      "%3 = exp(%0) : f32[4]\n"
      "outputs: %3\n");
}

TEST(CanonicalizeTest, IdentitiesChainThroughEachOther) {
  // ((x + 0) * 1) / 1: each step forwards to the operand the previous step forwarded to.
  EXPECT_EQ(
      CanonicalOf(
          [](std::span<const Value> v) { return std::vector{sqrt((v[0] + 0.f) * 1.f / 1.f)}; },
          {{5}}),
      "%0 = input() index=0 : f32[5]\n"
      "%1 = constant() value=0 : f32[]\n"
      "%2 = add(%0, %1) : f32[5]\n"
      "%3 = constant() value=1 : f32[]\n"
      "%4 = mul(%0, %3) : f32[5]\n"
      "%5 = constant() value=1 : f32[]\n"
      "%6 = div(%0, %5) : f32[5]\n"
      "%7 = sqrt(%0) : f32[5]\n"
      "outputs: %7\n");
}

TEST(CanonicalizeTest, NotIdentitiesInFloatStay) {
  // 0 * x is NaN for an infinite x; x - x too; 0 - x is -x, not x; 1 / x is not x.
  const TraceFn fn = [](std::span<const Value> v) {
    const Value x = v[0];
    return std::vector{0.f * x, x - x, 0.f - x, 1.f / x, x * 2.f};
  };
  const ir::Graph traced = TraceGraph(fn, {{3}});
  EXPECT_EQ(TextAfter(Canonicalize, traced), traced.ToString());
}

TEST(CanonicalizeTest, IdentityThatWouldDropABroadcastStays) {
  // x[3] * ones[2, 3]: the result has ones' shape, not x's. Constants are traced as scalars;
  // this one is given a shape by hand.
  ir::Graph g = TraceGraph([](std::span<const Value> v) { return std::vector{v[0] * 1.f}; }, {{3}});
  ASSERT_EQ(g.nodes.size(), 3u);
  g.nodes[1].shape = {ir::SymExpr(2), ir::SymExpr(3)};
  g.nodes[2].shape = {ir::SymExpr(2), ir::SymExpr(3)};
  const std::string before = g.ToString();
  EXPECT_EQ(TextAfter(Canonicalize, g), before);
}

TEST(CanonicalizeTest, NoOpTransposeReshapeAndCastForward) {
  const TraceFn fn = [](std::span<const Value> v) {
    const Value x = v[0];
    return std::vector{transpose(x, {0, 1}), reshape(x, {2, 3}), cast(x, DType::kF32),
                       transpose(x, {1, 0}), reshape(x, {3, 2})};
  };
  EXPECT_EQ(CanonicalOf(fn, {{2, 3}}),
            "%0 = input() index=0 : f32[2, 3]\n"
            "%1 = transpose(%0) perm=[0,1] : f32[2, 3]\n"
            "%2 = reshape(%0) shape=[2,3] : f32[2, 3]\n"
            "%3 = cast(%0) to=f32 : f32[2, 3]\n"
            "%4 = transpose(%0) perm=[1,0] : f32[3, 2]\n"
            "%5 = reshape(%0) shape=[3,2] : f32[3, 2]\n"
            "outputs: %0 %0 %0 %4 %5\n");
}

TEST(CanonicalizeTest, ScalarArithmeticFoldsInFloat) {
  const TraceFn fn = [](std::span<const Value> v) {
    // 0.1f + 0.2f in float is 0.300000012 (in double it would be 0.300000004).
    const Value a = constant(0.1f);
    const Value b = constant(0.2f);
    return std::vector{v[0] * (a + b)};
  };
  EXPECT_EQ(CanonicalOf(fn, {{2}}),
            "%0 = input() index=0 : f32[2]\n"
            "%1 = constant() value=0.100000001 : f32[]\n"
            "%2 = constant() value=0.200000003 : f32[]\n"
            "%3 = constant() value=0.300000012 : f32[]\n"
            "%4 = mul(%0, %3) : f32[2]\n"
            "outputs: %4\n");
}

TEST(CanonicalizeTest, FoldsCascadeAndEnableIdentities) {
  // max(2, 3) - min(2, 3) is 1, and -(-1) * 1 is 1 too: x times it is x.
  const TraceFn fn = [](std::span<const Value> v) {
    const Value two = constant(2.f);
    const Value three = constant(3.f);
    const Value larger = maximum(two, three);
    const Value smaller = minimum(two, three);
    const Value one = larger - smaller;
    return std::vector{v[0] * -(-one), v[0] / (one + one)};
  };
  // The folded constants stand in place of the nodes they replace (max, min, sub, neg, neg,
  // add).
  EXPECT_EQ(CanonicalOf(fn, {{2}}),
            "%0 = input() index=0 : f32[2]\n"
            "%1 = constant() value=2 : f32[]\n"
            "%2 = constant() value=3 : f32[]\n"
            "%3 = constant() value=3 : f32[]\n"
            "%4 = constant() value=2 : f32[]\n"
            "%5 = constant() value=1 : f32[]\n"
            "%6 = constant() value=-1 : f32[]\n"
            "%7 = constant() value=1 : f32[]\n"
            "%8 = mul(%0, %7) : f32[2]\n"
            "%9 = constant() value=2 : f32[]\n"
            "%10 = div(%0, %9) : f32[2]\n"
            "outputs: %0 %10\n");
}

TEST(CanonicalizeTest, DivisionByZeroFoldsToInfinity) {
  const TraceFn fn = [](std::span<const Value> v) {
    const Value one = constant(1.f);
    const Value zero = constant(0.f);
    return std::vector{v[0] + one / zero};
  };
  EXPECT_EQ(CanonicalOf(fn, {{2}}),
            "%0 = input() index=0 : f32[2]\n"
            "%1 = constant() value=1 : f32[]\n"
            "%2 = constant() value=0 : f32[]\n"
            "%3 = constant() value=inf : f32[]\n"
            "%4 = add(%0, %3) : f32[2]\n"
            "outputs: %4\n");
}

TEST(CanonicalizeTest, GraphWithoutRulesIsUnchanged) {
  const ir::Graph g = TraceGraph(
      [](std::span<const Value> v) { return std::vector{softmax(matmul(v[0], v[1]) + v[2])}; },
      {{"batch", 8}, {8, 4}, {4}}, {{"batch", 1, 64}});
  EXPECT_EQ(TextAfter(Canonicalize, g), g.ToString());
}

}  // namespace
}  // namespace pto::jit
