// AppendOptimizerStep (jit/passes/append_optimizer_step.h) alone: the outputs it leaves (the
// loss, the new parameters, the new state), the gradients laid end to end by one concat of
// their flattened values, the clipping reduction, the per-step scalars of each optimizer, and
// its errors. Values are checked in tests/jit/e2e/train_step_test.cc and against torch.optim in
// tests/training/torch_comparison_test.cc.
#include "jit/passes/append_optimizer_step.h"

#include <cmath>
#include <span>
#include <vector>

#include "gtest/gtest.h"
#include "pto/value.h"
#include "tests/jit/passes/builders.h"

namespace pto::jit {
namespace {

using testing::TraceGraph;

int CountOps(const ir::Graph& g, ir::OpKind op) {
  int n = 0;
  for (const ir::Node& node : g.nodes) n += node.op == op;
  return n;
}

// Inputs: flat parameters [10], `states` state vectors [10], scalars [4]; outputs a loss and
// two "gradients" [2, 3] and [4] (stand-ins computed from the parameters).
ir::Graph StepGraph(int states) {
  std::vector<std::vector<testing::Dim>> shapes = {{10}};
  for (int k = 0; k < states; ++k) shapes.push_back({10});
  shapes.push_back({kOptimizerScalars});
  return TraceGraph(
      [](std::span<const Value> v) {
        const Value p = v[0];
        return std::vector{reduce_sum(p * p, 0), reshape(slice(p, 0, 0, 6), {2, 3}) * 2.0f,
                           slice(p, 0, 6, 10) * 2.0f};
      },
      shapes);
}

OptimizerStepSpec Spec(const ir::Graph& g, const Optimizer& o) {
  OptimizerStepSpec spec;
  spec.optimizer = o;
  spec.parameters_input = 0;
  spec.state_input = 1;
  spec.scalars_input = 1 + OptimizerStateCount(o);
  spec.gradients = {g.outputs[1], g.outputs[2]};
  return spec;
}

TEST(AppendOptimizerStep, AdamWLeavesTheLossParametersAndMoments) {
  const Optimizer o{.kind = Optimizer::Kind::kAdamW, .weight_decay = 0.1f};
  ir::Graph g = StepGraph(2);
  const int loss = g.outputs[0];
  ASSERT_TRUE(AppendOptimizerStep(g, Spec(g, o)).ok());
  ASSERT_EQ(g.outputs.size(), 4u);
  EXPECT_EQ(g.outputs[0], loss);
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(g.nodes[g.outputs[i]].shape, ir::Shape{ir::SymExpr(10)}) << g.ToString();
  }
  // One concat of the two flattened gradients, a sqrt for the denominator, no reduction.
  EXPECT_EQ(CountOps(g, ir::OpKind::kConcat), 1);
  EXPECT_EQ(CountOps(g, ir::OpKind::kSqrt), 1);
  EXPECT_EQ(CountOps(g, ir::OpKind::kReduceSum), 1);  // the loss's own
}

TEST(AppendOptimizerStep, SgdWithoutMomentumHasNoStateAndClippingAddsOneReduction) {
  ir::Graph g = StepGraph(0);
  const Optimizer o{.kind = Optimizer::Kind::kSgd, .max_grad_norm = 1.0f};
  ASSERT_EQ(OptimizerStateCount(o), 0);
  ASSERT_TRUE(AppendOptimizerStep(g, Spec(g, o)).ok());
  EXPECT_EQ(g.outputs.size(), 2u);
  EXPECT_EQ(CountOps(g, ir::OpKind::kReduceSum), 2);  // the loss's and the norm's
  EXPECT_EQ(CountOps(g, ir::OpKind::kSqrt), 1);
  EXPECT_EQ(CountOps(g, ir::OpKind::kMin), 1);
  EXPECT_EQ(OptimizerStateCount({.kind = Optimizer::Kind::kSgd, .momentum = 0.9f}), 1);
}

TEST(AppendOptimizerStep, ScalarsFollowTheStepCount) {
  float s[kOptimizerScalars];
  const Optimizer adam{.kind = Optimizer::Kind::kAdamW, .lr = 0.01f, .weight_decay = 0.5f};
  FillOptimizerScalars(adam, 1, s);
  EXPECT_FLOAT_EQ(s[kLearningRate], 0.01f);
  EXPECT_FLOAT_EQ(s[kStepSize], 0.01f / (1 - 0.9f));
  EXPECT_FLOAT_EQ(s[kSqrtBiasCorrection2], std::sqrt(1 - 0.999f));
  EXPECT_FLOAT_EQ(s[kDecay], 1 - 0.01f * 0.5f);
  FillOptimizerScalars(adam, 3, s);
  EXPECT_FLOAT_EQ(s[kStepSize], static_cast<float>(0.01 / (1 - std::pow(0.9, 3))));
  const Optimizer sgd{.kind = Optimizer::Kind::kSgd, .momentum = 0.9f, .dampening = 0.2f};
  FillOptimizerScalars(sgd, 1, s);
  EXPECT_EQ(s[kBufferKeep], 0.0f);  // the first step's buffer is the gradient
  EXPECT_EQ(s[kGradientShare], 1.0f);
  FillOptimizerScalars(sgd, 2, s);
  EXPECT_FLOAT_EQ(s[kBufferKeep], 0.9f);
  EXPECT_FLOAT_EQ(s[kGradientShare], 0.8f);
}

TEST(AppendOptimizerStep, Errors) {
  const Optimizer o{.kind = Optimizer::Kind::kAdam};
  ir::Graph g = StepGraph(2);
  OptimizerStepSpec spec = Spec(g, o);
  spec.scalars_input = 7;
  absl::Status s = AppendOptimizerStep(g, spec);
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "optimizer step: the parameter or scalar input is missing");
  spec = Spec(g, o);
  spec.gradients.pop_back();  // 6 of the 10 elements
  s = AppendOptimizerStep(g, spec);
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "optimizer step: the gradients hold [6] elements, the flat parameters [10]");
  ir::Graph one_state = StepGraph(1);  // Adam needs two; its scalars are input 2
  spec = Spec(one_state, o);
  spec.scalars_input = 2;
  s = AppendOptimizerStep(one_state, spec);
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "optimizer step: state 1 (input 2) is missing or not of the parameters' shape");
}

}  // namespace
}  // namespace pto::jit
