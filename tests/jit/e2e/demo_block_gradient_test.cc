// The demo's transformer block differentiated: its gradients against finite differences of the
// reference (small dims), and the activations its backward pass keeps from the forward pass,
// with and without recomputing cheap values and with the whole block checkpointed (printed for
// docs/training.md); the checkpointed block's gradients against finite differences too.
#include <cstdio>
#include <span>
#include <vector>

#include "gtest/gtest.h"
#include "jit/passes/differentiate.h"
#include "jit/passes/recompute_cheap_values.h"
#include "jit/passes/recompute_checkpoints.h"
#include "jit/trace.h"
#include "ops/host_tensor.h"
#include "pto/runtime.h"
#include "tests/jit/e2e/gradient_check.h"
#include "tests/jit/e2e/test_util.h"
#include "tools/pto/transformer_block.h"

namespace pto::testing {
namespace {

// loss = sum(block(x, weights...) * r), r the last input; with `checkpointed`, the block is one
// checkpoint segment (pto::checkpoint).
TraceFn BlockLoss(tools::BlockDims dims, bool checkpointed = false) {
  TraceFn block = tools::TransformerBlock(dims);
  return [block, checkpointed](std::span<const Value> v) {
    const std::vector<Value> inputs(v.begin(), v.end() - 1);
    std::vector<Value> out = checkpointed ? checkpoint(block, inputs) : block(inputs);
    return std::vector<Value>{reduce_sum(reshape(out[0] * v.back(), {-1}), 0)};
  };
}

// The block's loss (x [2, 5, 16], every weight, r from `seed`) against finite differences.
void CheckBlock(const tools::BlockDims& dims, bool checkpointed, uint64_t seed) {
  std::vector<ops::HostTensor> inputs = {ops::HostTensor::Random({2, 5, 16}, seed)};
  for (const std::vector<int64_t>& s : tools::WeightShapes(dims)) {
    inputs.push_back(ops::HostTensor::Random(s, ++seed, -0.5f, 0.5f));
  }
  inputs.push_back(ops::HostTensor::Random({2, 5, 16}, ++seed));
  std::vector<int> wrt;
  for (int i = 0; i + 1 < static_cast<int>(inputs.size()); ++i) wrt.push_back(i);
  std::unique_ptr<Runtime> rt = OpenRuntime();
  absl::StatusOr<GradientCheckResult> r =
      CheckGradients(*rt, BlockLoss(dims, checkpointed), inputs, wrt, {.max_elements = 6});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_LE(r->worst_ratio, 1.0) << r->worst;
  EXPECT_LE(r->loss_difference, 1e-5);
}

TEST(DemoBlockGradient, MatchesFiniteDifferences) {
  CheckBlock({.model = 16, .heads = 2, .ff = 32}, /*checkpointed=*/false, 1);
}

// The whole block one checkpoint segment, and each sublayer one (BlockDims).
TEST(DemoBlockGradient, CheckpointedMatchesFiniteDifferences) {
  CheckBlock({.model = 16, .heads = 2, .ff = 32, .causal = true}, /*checkpointed=*/true, 30);
  CheckBlock({.model = 16, .heads = 2, .ff = 32, .causal = true, .checkpoint_sublayers = true},
             /*checkpointed=*/false, 60);
}

TEST(DemoBlockGradient, SavedActivationBytesWithRecomputationAndCheckpointing) {
  const tools::BlockDims dims;  // the demo's: model 128, 4 heads, ff 512
  std::vector<ir::SymbolInfo> symbols = {{"batch", 1, 64}, {"seq", 1, 2048}};
  std::vector<jit::TraceInput> in = {
      {{ir::SymExpr::Symbol(0), ir::SymExpr::Symbol(1), ir::SymExpr(dims.model)}}};
  for (const std::vector<int64_t>& s : tools::WeightShapes(dims)) {
    jit::TraceInput w;
    for (int64_t d : s) w.shape.push_back(ir::SymExpr(d));
    in.push_back(w);
  }
  in.push_back(in[0]);  // r
  absl::StatusOr<ir::Graph> forward = jit::Trace(BlockLoss(dims), in, symbols);
  ASSERT_TRUE(forward.ok()) << forward.status();
  std::vector<int> wrt;
  for (int i = 0; i + 1 < static_cast<int>(in.size()); ++i) wrt.push_back(i);
  absl::StatusOr<ir::Graph> g = jit::Differentiate(*forward, {.wrt = wrt});
  ASSERT_TRUE(g.ok()) << g.status();
  const int nf = static_cast<int>(forward->nodes.size());
  const int64_t at[] = {16, 128};  // batch 16, seq 128
  const int64_t saved = jit::SavedBytes(*g, nf, at);
  const int recomputed = jit::RecomputeCheapValues(*g, nf);
  const int64_t saved_after = jit::SavedBytes(*g, nf, at);
  std::printf(
      "demo block, batch 16, seq 128: saved activations %.2f MiB without recomputation, "
      "%.2f MiB with (%d values recomputed)\n",
      saved / 1048576.0, saved_after / 1048576.0, recomputed);
  // The one value the cut would rebuild, the MLP's gelu output, feeds the second linear's
  // weight gradient (a matmul reads it from memory): it stays saved.
  EXPECT_EQ(recomputed, 0);
  EXPECT_EQ(saved_after, saved);

  // The block as one checkpoint segment: the backward pass recomputes it from its inputs (kept
  // anyway), so the activations saved across the step are the few values outside it.
  absl::StatusOr<ir::Graph> traced = jit::Trace(BlockLoss(dims, true), in, symbols);
  ASSERT_TRUE(traced.ok()) << traced.status();
  absl::StatusOr<ir::Graph> c = jit::Differentiate(*traced, {.wrt = wrt});
  ASSERT_TRUE(c.ok()) << c.status();
  const int nc = static_cast<int>(traced->nodes.size());
  const int segment_values = jit::RecomputeCheckpoints(*c, nc);
  const int64_t saved_checkpointed = jit::SavedBytes(*c, nc, at);
  std::printf(
      "demo block, batch 16, seq 128, checkpointed: saved activations %.2f MiB (%d "
      "values recomputed)\n",
      saved_checkpointed / 1048576.0, segment_values);
  EXPECT_GT(segment_values, 0);
  EXPECT_LT(saved_checkpointed * 8, saved_after);
}

}  // namespace
}  // namespace pto::testing
