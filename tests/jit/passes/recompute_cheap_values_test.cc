// The recompute pass on differentiated graphs: which saved values it recomputes (the cut it
// finds, the depth limit, what backward matmuls read), that the copies sit in the backward part and
// read only values saved anyway, and the saved bytes.
#include "jit/passes/recompute_cheap_values.h"

#include <span>
#include <vector>

#include "gtest/gtest.h"
#include "jit/passes/cse.h"
#include "jit/passes/differentiate.h"
#include "pto/value.h"
#include "tests/jit/passes/builders.h"

namespace pto::jit {
namespace {

using ::pto::jit::testing::TraceGraph;

// loss = sum(gelu(x w1 + b1) * c): the backward pass reads a = x w1 + b1 (for gelu's
// derivative) and gelu(a) (for c's gradient, an elementwise product). gelu(a) is recomputed
// from a, inside the kernel of that product.
ir::Graph GeluGradient(int* forward_nodes) {
  ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        Value h = gelu(matmul(v[0], v[1]) + v[2]);
        return std::vector{reduce_sum(reduce_sum(h * v[3], 1), 0)};
      },
      {{"batch", 32}, {32, 64}, {64}, {"batch", 64}}, {{"batch", 1, 256}});
  *forward_nodes = static_cast<int>(g.nodes.size());
  absl::StatusOr<ir::Graph> d = Differentiate(g, {.wrt = {1, 2, 3}});
  EXPECT_TRUE(d.ok()) << d.status();
  return d.ok() ? *std::move(d) : ir::Graph{};
}

TEST(RecomputeCheapValues, RecomputesTheGeluFromItsSavedInput) {
  int forward = 0;
  ir::Graph g = GeluGradient(&forward);
  const int64_t batch[] = {128};
  const int64_t before = SavedBytes(g, forward, batch);
  EXPECT_EQ(RecomputeCheapValues(g, forward), 1) << g.ToString();
  const int64_t after = SavedBytes(g, forward, batch);
  // Saved before: a and gelu(a) ([128, 64] each; the matmul x w1 is not read); after: a.
  EXPECT_EQ(before, 2 * 128 * 64 * 4);
  EXPECT_EQ(after, 128 * 64 * 4);
  int copies = 0;
  for (size_t id = 0; id < g.nodes.size(); ++id) {
    const ir::Node& n = g.nodes[id];
    if (!n.recomputed) continue;
    ++copies;
    EXPECT_GE(static_cast<int>(id), forward) << "a copy belongs to the backward part";
    EXPECT_EQ(n.op, ir::OpKind::kGeluErf);
    EXPECT_LT(n.inputs[0], forward) << "it reads the saved a";
  }
  EXPECT_EQ(copies, 1);
}

TEST(RecomputeCheapValues, CseKeepsTheCopyApartFromTheOriginal) {
  int forward = 0;
  ir::Graph g = GeluGradient(&forward);
  ASSERT_EQ(RecomputeCheapValues(g, forward), 1);
  EliminateCommonSubexpressions(g);
  int gelus = 0;
  for (const ir::Node& n : g.nodes) gelus += n.op == ir::OpKind::kGeluErf;
  EXPECT_EQ(gelus, 2);
}

TEST(RecomputeCheapValues, KeepsWhatABackwardMatmulReads) {
  // loss = sum(gelu(x w1 + b1) w2): w2's gradient is a matmul over gelu(a), through a reshape
  // of the batch dims. Rebuilt for it, gelu(a) would take a kernel and a buffer of its own in
  // the backward pass: it stays saved, as a does.
  ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        Value h = gelu(matmul(v[0], v[1]) + v[2]);
        return std::vector{reduce_sum(reduce_sum(reduce_sum(matmul(h, v[3]), 2), 1), 0)};
      },
      {{4, 8, 32}, {32, 64}, {64}, {64, 16}});
  const int forward = static_cast<int>(g.nodes.size());
  absl::StatusOr<ir::Graph> d = Differentiate(g, {.wrt = {1, 2, 3}});
  ASSERT_TRUE(d.ok()) << d.status();
  const std::string before = d->ToString();
  EXPECT_EQ(SavedBytes(*d, forward, {}), 2 * 4 * 8 * 64 * 4);
  EXPECT_EQ(RecomputeCheapValues(*d, forward), 0);
  EXPECT_EQ(d->ToString(), before);
}

TEST(RecomputeCheapValues, AValueWhoseConeWouldSaveAnotherStaysSaved) {
  // loss = sum(exp(x w) * c): the backward pass reads exp(x w) (exp's derivative is itself)
  // and x w is saved by nothing else: recomputing exp would save x w instead. Nothing changes.
  ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        return std::vector{reduce_sum(reduce_sum(exp(matmul(v[0], v[1])) * v[2], 1), 0)};
      },
      {{8, 4}, {4, 5}, {8, 5}});
  const int forward = static_cast<int>(g.nodes.size());
  absl::StatusOr<ir::Graph> d = Differentiate(g, {.wrt = {1}});
  ASSERT_TRUE(d.ok()) << d.status();
  const std::string before = d->ToString();
  EXPECT_EQ(RecomputeCheapValues(*d, forward), 0);
  EXPECT_EQ(d->ToString(), before);
}

TEST(RecomputeCheapValues, KeepsOneInputOfTwoResultsRatherThanBoth) {
  // loss = sum(exp(a) * tanh(a)) with a = x w: the backward pass reads exp(a) and tanh(a), two
  // [8, 5] values, while a alone rebuilds both. The greedy form would keep both (recomputing
  // either needs a kept); the cut keeps a.
  ir::Graph g = TraceGraph(
      [](std::span<const Value> v) {
        Value a = matmul(v[0], v[1]);
        return std::vector{reduce_sum(reduce_sum(exp(a) * tanh(a), 1), 0)};
      },
      {{8, 4}, {4, 5}});
  const int forward = static_cast<int>(g.nodes.size());
  absl::StatusOr<ir::Graph> d = Differentiate(g, {.wrt = {1}});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(SavedBytes(*d, forward, {}), 2 * 8 * 5 * 4);
  EXPECT_EQ(RecomputeCheapValues(*d, forward), 2) << d->ToString();
  EXPECT_EQ(SavedBytes(*d, forward, {}), 8 * 5 * 4);
  for (size_t id = forward; id < d->nodes.size(); ++id) {
    const ir::Node& n = d->nodes[id];
    if (!n.recomputed) continue;
    EXPECT_TRUE(n.op == ir::OpKind::kExp || n.op == ir::OpKind::kTanh) << ir::OpName(n.op);
    EXPECT_EQ(d->nodes[n.inputs[0]].op, ir::OpKind::kMatMul) << "rebuilt from the kept a";
  }
}

// loss = sum(exp(y)), y = (x w) + c + c + ... (`adds` adds of the [8, 5] c to the [8, 1] x w):
// exp's derivative reads exp(y), which x w (5 times smaller) could rebuild.
ir::Graph ChainGradient(int adds, int* forward_nodes) {
  ir::Graph g = TraceGraph(
      [adds](std::span<const Value> v) {
        Value y = matmul(v[0], v[1]);
        for (int i = 0; i < adds; ++i) y = y + v[2];
        return std::vector{reduce_sum(reduce_sum(exp(y), 1), 0)};
      },
      {{8, 4}, {4, 1}, {8, 5}});
  *forward_nodes = static_cast<int>(g.nodes.size());
  absl::StatusOr<ir::Graph> d = Differentiate(g, {.wrt = {1}});
  EXPECT_TRUE(d.ok()) << d.status();
  return d.ok() ? *std::move(d) : ir::Graph{};
}

TEST(RecomputeCheapValues, RebuildsAShortChainFromItsSmallerStart) {
  int forward = 0;
  ir::Graph g = ChainGradient(3, &forward);
  EXPECT_EQ(SavedBytes(g, forward, {}), 8 * 5 * 4);
  EXPECT_EQ(RecomputeCheapValues(g, forward), 1);
  EXPECT_EQ(SavedBytes(g, forward, {}), 8 * 1 * 4);
}

TEST(RecomputeCheapValues, NeverRepeatsAChainDeeperThanTheLimit) {
  int forward = 0;
  ir::Graph g = ChainGradient(kMaxRecomputedDepth, &forward);  // exp sits one deeper
  const std::string before = g.ToString();
  EXPECT_EQ(RecomputeCheapValues(g, forward), 0);
  EXPECT_EQ(g.ToString(), before);
}

}  // namespace
}  // namespace pto::jit
