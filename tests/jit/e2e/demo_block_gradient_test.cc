// The demo's transformer block differentiated: its gradients against finite differences of the
// reference (small dims), and the activations its backward pass keeps from the forward pass,
// with and without recomputing cheap values (printed for docs/training.md).
#include <cstdio>
#include <span>
#include <vector>

#include "gtest/gtest.h"
#include "jit/passes/differentiate.h"
#include "jit/passes/recompute_cheap_values.h"
#include "jit/trace.h"
#include "ops/host_tensor.h"
#include "pto/runtime.h"
#include "tests/jit/e2e/gradient_check.h"
#include "tests/jit/e2e/test_util.h"
#include "tools/pto/transformer_block.h"

namespace pto::testing {
namespace {

// loss = sum(block(x, weights...) * r), r the last input.
TraceFn BlockLoss(tools::BlockDims dims) {
  TraceFn block = tools::TransformerBlock(dims);
  return [block](std::span<const Value> v) {
    std::vector<Value> out = block(v.first(v.size() - 1));
    return std::vector<Value>{reduce_sum(reshape(out[0] * v.back(), {-1}), 0)};
  };
}

TEST(DemoBlockGradient, MatchesFiniteDifferences) {
  const tools::BlockDims dims{.model = 16, .heads = 2, .ff = 32};
  std::vector<ops::HostTensor> inputs = {ops::HostTensor::Random({2, 5, 16}, 1)};
  uint64_t seed = 10;
  for (const std::vector<int64_t>& s : tools::WeightShapes(dims)) {
    inputs.push_back(ops::HostTensor::Random(s, ++seed, -0.5f, 0.5f));
  }
  inputs.push_back(ops::HostTensor::Random({2, 5, 16}, 99));
  std::vector<int> wrt;
  for (int i = 0; i + 1 < static_cast<int>(inputs.size()); ++i) wrt.push_back(i);
  std::unique_ptr<Runtime> rt = OpenRuntime();
  absl::StatusOr<GradientCheckResult> r =
      CheckGradients(*rt, BlockLoss(dims), inputs, wrt, {.max_elements = 6});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_LE(r->worst_ratio, 1.0) << r->worst;
  EXPECT_LE(r->loss_difference, 1e-5);
}

TEST(DemoBlockGradient, RecomputingCheapValuesSavesActivationBytes) {
  const tools::BlockDims dims;  // the demo's: model 128, 4 heads, ff 512
  std::vector<ir::SymbolInfo> symbols = {{"batch", 1, 64}, {"seq", 1, 2048}};
  std::vector<jit::TraceInput> in = {{{ir::SymExpr::Symbol(0), ir::SymExpr::Symbol(1),
                                       ir::SymExpr(dims.model)}}};
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
  std::printf("demo block, batch 16, seq 128: saved activations %.2f MiB without recomputation, "
              "%.2f MiB with (%d values recomputed)\n",
              saved / 1048576.0, saved_after / 1048576.0, recomputed);
  EXPECT_GT(recomputed, 0);
  EXPECT_LT(saved_after, saved);
}

}  // namespace
}  // namespace pto::testing
