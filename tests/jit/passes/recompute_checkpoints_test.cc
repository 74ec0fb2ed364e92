// RecomputeCheckpoints (jit/passes/recompute_checkpoints.h) alone: the backward pass reads copies
// of a checkpoint segment's values, recomputed from the segment's inputs; values outside any
// segment stay saved; the marks are cleared; a graph without segments is left as it is.
#include "jit/passes/recompute_checkpoints.h"

#include <span>
#include <vector>

#include "gtest/gtest.h"
#include "jit/passes/differentiate.h"
#include "jit/passes/recompute_cheap_values.h"
#include "pto/value.h"
#include "tests/jit/passes/builders.h"

namespace pto::jit {
namespace {

using testing::TraceGraph;

// loss = sum(tanh(segment(h)) ...) with h = x @ w outside, the segment = exp(h @ w) * h.
ir::Graph Traced(bool checkpointed) {
  return TraceGraph(
      [checkpointed](std::span<const Value> v) {
        const Value h = matmul(v[0], v[1]);
        auto segment = [](std::span<const Value> in) {
          return std::vector<Value>{exp(matmul(in[0], in[1])) * in[0]};
        };
        const std::vector<Value> inputs = {h, v[1]};
        const Value s = checkpointed ? checkpoint(segment, inputs)[0] : segment(inputs)[0];
        return std::vector{reduce_sum(reduce_sum(tanh(s), 1), 0)};
      },
      {{4, 8}, {8, 8}});
}

TEST(RecomputeCheckpoints, TheBackwardPassRecomputesTheSegmentFromItsInputs) {
  const ir::Graph forward = Traced(true);
  const int nf = static_cast<int>(forward.nodes.size());
  int marked = 0;
  for (const ir::Node& n : forward.nodes) marked += n.checkpoint >= 0;
  EXPECT_EQ(marked, 3) << "matmul, exp, mul";
  absl::StatusOr<ir::Graph> d = Differentiate(forward, {.wrt = {0, 1}});
  ASSERT_TRUE(d.ok()) << d.status();
  const int64_t none[] = {0};
  const int64_t before = SavedBytes(*d, nf, none);
  const int recomputed = RecomputeCheckpoints(*d, nf);
  EXPECT_EQ(recomputed, 1);  // exp(h @ w): read by the backward of exp and of the product
  // No backward node reads a forward value made inside the segment; h (its input) stays saved.
  for (size_t id = nf; id < d->nodes.size(); ++id) {
    for (int in : d->nodes[id].inputs) {
      if (in < nf) {
        EXPECT_LT(forward.nodes[in].checkpoint, 0) << "node %" << id << " reads %" << in;
      }
    }
  }
  int copies = 0;
  for (const ir::Node& n : d->nodes) {
    EXPECT_EQ(n.checkpoint, -1);
    copies += n.recomputed;
  }
  EXPECT_EQ(copies, 2);  // exp and the matmul under it
  EXPECT_LT(SavedBytes(*d, nf, none), before);
}

TEST(RecomputeCheckpoints, WithoutSegmentsNothingChanges) {
  const ir::Graph forward = Traced(false);
  const int nf = static_cast<int>(forward.nodes.size());
  absl::StatusOr<ir::Graph> d = Differentiate(forward, {.wrt = {0, 1}});
  ASSERT_TRUE(d.ok()) << d.status();
  const std::string text = d->ToString();
  EXPECT_EQ(RecomputeCheckpoints(*d, nf), 0);
  EXPECT_EQ(d->ToString(), text);
}

}  // namespace
}  // namespace pto::jit
