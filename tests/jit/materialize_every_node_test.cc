// The debug plan (jit/materialize_every_node.h): every traced node comes back as an output, its
// values match the real plan's outputs and the reference, and programs of more nodes than a
// Function returns are split into several Functions.
#include "jit/materialize_every_node.h"

#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/graph/limits.h"
#include "jit/trace.h"
#include "ops/reference.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// x · w1 + b1 -> gelu -> · w2 + x: matmuls with an epilogue the real plan fuses.
std::vector<Value> Mlp(std::span<const Value> v) {
  return {matmul(gelu(matmul(v[0], v[1]) + v[2]), v[3]) + v[0]};
}

std::vector<ops::HostTensor> MlpInputs() {
  return {ops::HostTensor::Random({5, 12}, 1), ops::HostTensor::Random({12, 20}, 2),
          ops::HostTensor::Random({20}, 3), ops::HostTensor::Random({20, 12}, 4)};
}

absl::StatusOr<ir::Graph> TraceStatic(const TraceFn& fn, const std::vector<ops::HostTensor>& in) {
  std::vector<jit::TraceInput> inputs;
  for (const ops::HostTensor& t : in) {
    jit::TraceInput i;
    for (int64_t d : t.shape) i.shape.push_back(ir::SymExpr(d));
    inputs.push_back(std::move(i));
  }
  return jit::Trace(fn, inputs, {});
}

TEST(MaterializeEveryNode, GroupsEveryNodeButTheInputsInOrder) {
  absl::StatusOr<ir::Graph> g = TraceStatic(Mlp, MlpInputs());
  ASSERT_TRUE(g.ok()) << g.status();
  // 4 inputs, then matmul, add, gelu, matmul, add.
  ASSERT_EQ(g->nodes.size(), 9u);
  EXPECT_THAT(jit::MaterializedNodeGroups(*g, 64), ElementsAre(ElementsAre(4, 5, 6, 7, 8)));
  EXPECT_THAT(jit::MaterializedNodeGroups(*g, 2),
              ElementsAre(ElementsAre(4, 5), ElementsAre(6, 7), ElementsAre(8)));
}

TEST(MaterializeEveryNode, EveryValueMatchesTheRealPlanAndTheReference) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  ASSERT_NE(rt, nullptr);
  const std::vector<ops::HostTensor> inputs = MlpInputs();
  absl::StatusOr<std::unique_ptr<Function>> real = rt->JitTraced("mlp", 4, Mlp, {});
  ASSERT_TRUE(real.ok()) << real.status();
  absl::StatusOr<std::vector<ops::HostTensor>> out = testing::RunPto(**real, inputs);
  ASSERT_TRUE(out.ok()) << out.status();

  absl::StatusOr<jit::NodeValues> every = jit::RunEveryNode(*rt, "mlp", Mlp, {}, inputs);
  ASSERT_TRUE(every.ok()) << every.status();
  EXPECT_THAT(every->nodes, ElementsAre(4, 5, 6, 7, 8));
  ASSERT_EQ(every->values.size(), 5u);
  const std::vector<std::vector<int64_t>> shapes = {{5, 20}, {5, 20}, {5, 20}, {5, 12}, {5, 12}};
  for (size_t i = 0; i < shapes.size(); ++i) EXPECT_EQ(every->values[i].shape, shapes[i]) << i;
  // The last node is the program's output: the real plan's value up to the order of operations.
  const ops::Tolerance tol = ops::Combine(ops::OpTolerance(ir::OpKind::kMatMul, 20),
                                          ops::OpTolerance(ir::OpKind::kMatMul, 12));
  EXPECT_EQ(testing::Compare({every->values.back()}, *out, tol), "");
  // Every node against the reference of the whole graph.
  ir::Graph all = every->traced;
  all.outputs = every->nodes;
  absl::StatusOr<std::vector<ops::HostTensor>> want = ops::RunReference(all, inputs);
  ASSERT_TRUE(want.ok()) << want.status();
  // Including the matmul, add and gelu the real plan fuses into one kernel.
  EXPECT_EQ(testing::Compare(every->values, *want, tol), "");
}

// More nodes than a Function returns: one Function per group, every value exact (doublings).
TEST(MaterializeEveryNode, ProgramsOfManyNodesRunAsSeveralFunctions) {
  constexpr int steps = static_cast<int>(graph::kMaxOutputs) + 6;
  TraceFn doublings = [](std::span<const Value> v) {
    Value x = v[0];
    for (int i = 0; i < steps; ++i) x = x + x;
    return std::vector<Value>{x};
  };
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  ASSERT_NE(rt, nullptr);
  const std::vector<ops::HostTensor> inputs = {ops::HostTensor::Random({3, 7}, 9)};
  absl::StatusOr<jit::NodeValues> every =
      jit::RunEveryNode(*rt, "doublings", doublings, {}, inputs);
  ASSERT_TRUE(every.ok()) << every.status();
  ASSERT_EQ(every->values.size(), static_cast<size_t>(steps));
  for (int i = 0; i < steps; ++i) {
    EXPECT_EQ(every->nodes[i], i + 1);
    std::vector<float> want = inputs[0].data;
    for (float& w : want) w = std::ldexp(w, i + 1);
    EXPECT_EQ(every->values[i].data, want) << "node " << i + 1;
  }
}

TEST(MaterializeEveryNode, ANodeTheTraceLacksFailsTheTrace) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  ASSERT_NE(rt, nullptr);
  absl::StatusOr<std::unique_ptr<Function>> fn =
      rt->JitTraced("mlp", 4, jit::MaterializeNodes(Mlp, {4, 99}), {});
  ASSERT_TRUE(fn.ok()) << fn.status();
  absl::StatusOr<std::vector<ops::HostTensor>> out = testing::RunPto(**fn, MlpInputs());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("cannot materialize node %99: the trace has 9 nodes"));
}

}  // namespace
}  // namespace pto
