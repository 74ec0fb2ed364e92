// RunReference with f64 (ReferenceOptions::f64 and f64 inputs) and with i32 inputs.
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "jit/ir/graph.h"
#include "jit/ir/sym_expr.h"
#include "ops/host_tensor.h"
#include "ops/reference.h"
#include "reference_test_util.h"

namespace pto::ops {
namespace {

using ir::DType;
using ir::OpKind;
using ir::Shape;
using ir::SymExpr;
using testing::T;

const SymExpr kBatch = SymExpr::Symbol(0);

int AddNode(ir::Graph& g, OpKind op, std::vector<int> inputs, Shape shape, ir::Attrs attrs = {},
            DType dtype = DType::kF32) {
  ir::Node n;
  n.op = op;
  n.inputs = std::move(inputs);
  n.shape = std::move(shape);
  n.attrs = std::move(attrs);
  n.dtype = dtype;
  g.nodes.push_back(std::move(n));
  return static_cast<int>(g.nodes.size()) - 1;
}

int AddInput(ir::Graph& g, int index, Shape shape, DType dtype = DType::kF32) {
  ir::Attrs a;
  a.index = index;
  ++g.num_inputs;
  return AddNode(g, OpKind::kInput, {}, std::move(shape), a, dtype);
}

// x: [batch, 3], w: [3]: y = softmax(x * w + 0.1), s = reduce_sum(x * x, -1).
ir::Graph FloatGraph() {
  ir::Graph g;
  g.symbols = {{"batch", 1, 64}};
  const int x = AddInput(g, 0, {kBatch, 3});
  const int w = AddInput(g, 1, {3});
  const int xw = AddNode(g, OpKind::kMul, {x, w}, {kBatch, 3});
  ir::Attrs c;
  c.scalar = 0.1;
  const int k = AddNode(g, OpKind::kConstant, {}, {}, c);
  const int sum = AddNode(g, OpKind::kAdd, {xw, k}, {kBatch, 3});
  ir::Attrs last;
  last.axis = -1;
  const int y = AddNode(g, OpKind::kSoftmax, {sum}, {kBatch, 3}, last);
  const int sq = AddNode(g, OpKind::kMul, {x, x}, {kBatch, 3});
  const int s = AddNode(g, OpKind::kReduceSum, {sq}, {kBatch}, last);
  g.outputs = {y, s};
  return g;
}

// The graph computed by hand in double on the same (f32) input values.
std::vector<std::vector<double>> FloatGraphInDouble(const HostTensor& x, const HostTensor& w) {
  std::vector<double> y, s;
  for (int64_t r = 0; r < x.shape[0]; ++r) {
    double z[3], max = -INFINITY, total = 0, sq = 0;
    for (int i = 0; i < 3; ++i) {
      z[i] = x.at(r * 3 + i) * w.at(i) + 0.1;
      max = std::fmax(max, z[i]);
      sq += x.at(r * 3 + i) * x.at(r * 3 + i);
    }
    for (double v : z) total += std::exp(v - max);
    for (double v : z) y.push_back(std::exp(v - max) / total);
    s.push_back(sq);
  }
  return {y, s};
}

TEST(RunReferenceDTypeTest, F64OptionComputesEveryNodeInDouble) {
  const ir::Graph g = FloatGraph();
  const std::vector<HostTensor> inputs = {HostTensor::Random({4, 3}, 11),
                                          HostTensor::Random({3}, 12)};
  absl::StatusOr<std::vector<HostTensor>> f32 = RunReference(g, inputs);
  absl::StatusOr<std::vector<HostTensor>> f64 = RunReference(g, inputs, nullptr, {.f64 = true});
  ASSERT_TRUE(f32.ok()) << f32.status();
  ASSERT_TRUE(f64.ok()) << f64.status();
  const std::vector<std::vector<double>> want = FloatGraphInDouble(inputs[0], inputs[1]);
  for (int o = 0; o < 2; ++o) {
    EXPECT_EQ((*f32)[o].dtype, DType::kF32);
    EXPECT_EQ((*f64)[o].dtype, DType::kF64);
    ASSERT_EQ((*f64)[o].size(), static_cast<int64_t>(want[o].size()));
    for (size_t i = 0; i < want[o].size(); ++i) {
      EXPECT_NEAR((*f64)[o].at(i), want[o][i], 1e-15 * (1 + std::fabs(want[o][i]))) << o << i;
      EXPECT_NEAR((*f32)[o].at(i), want[o][i], 1e-6 * (1 + std::fabs(want[o][i]))) << o << i;
    }
  }
  // The f64 outputs are not the f32 ones widened.
  EXPECT_NE((*f64)[0].wide, (*f32)[0].ToF64().wide);
  EXPECT_NE((*f64)[1].wide, (*f32)[1].ToF64().wide);
}

// f64 inputs without the option: a float op with an f64 input is f64, so the graph stays f64,
// and the constants join in f64.
TEST(RunReferenceDTypeTest, F64InputsKeepTheGraphInF64) {
  const ir::Graph g = FloatGraph();
  const std::vector<HostTensor> inputs = {HostTensor::Random({2, 3}, 5).ToF64(),
                                          HostTensor::Random({3}, 6)};
  absl::StatusOr<std::vector<HostTensor>> out = RunReference(g, inputs);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype, DType::kF64);
  EXPECT_EQ((*out)[1].dtype, DType::kF64);
  absl::StatusOr<std::vector<HostTensor>> opt =
      RunReference(g, inputs, nullptr, ReferenceOptions{.f64 = true});
  ASSERT_TRUE(opt.ok()) << opt.status();
  EXPECT_EQ((*opt)[0].wide, (*out)[0].wide);
  EXPECT_EQ((*opt)[1].wide, (*out)[1].wide);
}

TEST(RunReferenceDTypeTest, F64OptionWidensConstantOutputs) {
  ir::Graph g;
  ir::Attrs c;
  c.scalar = 0.1;
  g.outputs = {AddNode(g, OpKind::kConstant, {}, {}, c)};
  absl::StatusOr<std::vector<HostTensor>> f32 = RunReference(g, {});
  absl::StatusOr<std::vector<HostTensor>> f64 = RunReference(g, {}, nullptr, {.f64 = true});
  ASSERT_TRUE(f32.ok()) << f32.status();
  ASSERT_TRUE(f64.ok()) << f64.status();
  EXPECT_EQ((*f32)[0].data, std::vector<float>{0.1f});
  EXPECT_EQ((*f64)[0].dtype, DType::kF64);
  EXPECT_EQ((*f64)[0].wide, std::vector<double>{0.1});
}

// labels: [batch] i32 -> reshape [batch, 1] -> transpose [1, batch] -> concat with itself
// [2, batch] -> slice of row 1; x: [batch] f32 -> neg.
ir::Graph IntegerGraph() {
  ir::Graph g;
  g.symbols = {{"batch", 1, 64}};
  const int labels = AddInput(g, 0, {kBatch}, DType::kI32);
  const int x = AddInput(g, 1, {kBatch});
  ir::Attrs spec;
  spec.ints = {-1, 1};
  const int col = AddNode(g, OpKind::kReshape, {labels}, {kBatch, 1}, spec, DType::kI32);
  ir::Attrs perm;
  perm.ints = {1, 0};
  const int row = AddNode(g, OpKind::kTranspose, {col}, {1, kBatch}, perm, DType::kI32);
  ir::Attrs axis0;
  axis0.axis = 0;
  const int both = AddNode(g, OpKind::kConcat, {row, row}, {2, kBatch}, axis0, DType::kI32);
  ir::Attrs slice;
  slice.axis = 0;
  slice.start = 1;
  slice.end = 2;
  const int second = AddNode(g, OpKind::kSlice, {both}, {1, kBatch}, slice, DType::kI32);
  const int neg = AddNode(g, OpKind::kNeg, {x}, {kBatch});
  g.outputs = {second, neg};
  return g;
}

TEST(RunReferenceDTypeTest, I32FlowsThroughDataMovement) {
  const ir::Graph g = IntegerGraph();
  const std::vector<HostTensor> inputs = {HostTensor::I32({4}, {3, -1, 2147483647, 0}),
                                          T({4}, {1, 2, 3, 4})};
  for (bool f64 : {false, true}) {
    absl::StatusOr<std::vector<HostTensor>> out =
        RunReference(g, inputs, nullptr, ReferenceOptions{.f64 = f64});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].dtype, DType::kI32);
    EXPECT_EQ((*out)[0].shape, (std::vector<int64_t>{1, 4}));
    EXPECT_EQ((*out)[0].I32Values(), (std::vector<int32_t>{3, -1, 2147483647, 0}));
    EXPECT_EQ((*out)[1].dtype, f64 ? DType::kF64 : DType::kF32);
    EXPECT_EQ((*out)[1].at(3), -4.0);
  }
}

TEST(RunReferenceDTypeTest, I32Constant) {
  ir::Graph g;
  ir::Attrs c;
  c.scalar = -3;
  g.outputs = {AddNode(g, OpKind::kConstant, {}, {}, c, DType::kI32)};
  absl::StatusOr<std::vector<HostTensor>> out = RunReference(g, {}, nullptr, {.f64 = true});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].I32Values(), std::vector<int32_t>{-3});
  g.nodes[0].attrs.scalar = 0.5;
  EXPECT_EQ(RunReference(g, {}).status(),
            absl::InvalidArgumentError("node %0 (constant): the i32 constant 0.5 is not an int32"));
}

TEST(RunReferenceDTypeTest, InputDTypeErrors) {
  const ir::Graph g = IntegerGraph();
  const HostTensor labels = HostTensor::I32({2}, {1, 2});
  const HostTensor x{{2}, {1, 2}};
  // An f32 tensor where the graph wants i32, and the other way round.
  EXPECT_EQ(RunReference(g, std::vector<HostTensor>{x, x}).status(),
            absl::InvalidArgumentError("input 0 has dtype f32 but the graph's input is i32"));
  EXPECT_EQ(RunReference(g, std::vector<HostTensor>{x.ToF64(), x}).status(),
            absl::InvalidArgumentError("input 0 has dtype f64 but the graph's input is i32"));
  EXPECT_EQ(RunReference(g, std::vector<HostTensor>{labels, labels}).status(),
            absl::InvalidArgumentError("input 1 has dtype i32 but the graph's input is f32 (f32 "
                                       "or f64 tensors are accepted)"));
  HostTensor half = x;
  half.dtype = DType::kF16;
  EXPECT_EQ(RunReference(g, std::vector<HostTensor>{labels, half}).status(),
            absl::InvalidArgumentError("input 1 has dtype f16 but the graph's input is f32 (f32 "
                                       "or f64 tensors are accepted)"));
  // An f64 tensor is accepted for an f32 input.
  EXPECT_TRUE(RunReference(g, std::vector<HostTensor>{labels, x.ToF64()}).ok());
}

TEST(RunReferenceDTypeTest, InputSizeErrors) {
  const ir::Graph g = IntegerGraph();
  HostTensor labels = HostTensor::I32({3}, {1, 2, 3});
  labels.wide.pop_back();
  EXPECT_EQ(RunReference(g, std::vector<HostTensor>{labels, T({3}, {1, 2, 3})}).status(),
            absl::InvalidArgumentError("input 0 shape [3] needs 3 values but has 2"));
  HostTensor wide = HostTensor::Zeros({3}, DType::kF64);
  wide.data = {1, 2, 3};  // f32 storage does not count for an f64 tensor
  wide.wide.clear();
  EXPECT_EQ(
      RunReference(g, std::vector<HostTensor>{HostTensor::I32({3}, {1, 2, 3}), wide}).status(),
      absl::InvalidArgumentError("input 1 shape [3] needs 3 values but has 0"));
}

}  // namespace
}  // namespace pto::ops
