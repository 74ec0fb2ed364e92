// jit/numerics: the scan for the first non-finite value, the buffers scanned after each
// kernel, the re-run that locates the op, and the input message.
#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "jit/numerics/locate_op.h"
#include "jit/numerics/non_finite.h"
#include "jit/numerics/numerics_message.h"
#include "jit/numerics/written_buffers.h"

namespace pto::jit::numerics {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(FindNonFinite, FindsTheFirstAcrossBlocks) {
  std::vector<float> v(5000, 1.5f);
  EXPECT_FALSE(FindNonFinite(v.data(), 5000).has_value());
  EXPECT_FALSE(FindNonFinite(v.data(), 0).has_value());
  v[4000] = -kInf;
  v[4321] = std::nanf("");
  std::optional<NonFinite> f = FindNonFinite(v.data(), 5000);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->index, 4000);
  EXPECT_EQ(NonFiniteName(f->value), "-inf");
  v[1023] = kInf;  // the last element of the first block
  f = FindNonFinite(v.data(), 5000);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->index, 1023);
  EXPECT_EQ(NonFiniteName(f->value), "inf");
  EXPECT_FALSE(FindNonFinite(v.data(), 1023).has_value());  // the count bounds the scan
  v[7] = -std::nanf("");
  EXPECT_EQ(NonFiniteName(FindNonFinite(v.data(), 5000)->value), "nan");
  // The largest finite values are finite.
  std::vector<float> big = {std::numeric_limits<float>::max(), -std::numeric_limits<float>::max()};
  EXPECT_FALSE(FindNonFinite(big.data(), 2).has_value());
}

TEST(MultiIndexString, RowMajor) {
  const std::vector<int64_t> shape = {2, 3, 4};
  EXPECT_EQ(MultiIndexString(0, shape), "[0, 0, 0]");
  EXPECT_EQ(MultiIndexString(23, shape), "[1, 2, 3]");
  EXPECT_EQ(MultiIndexString(13, shape), "[1, 0, 1]");
  EXPECT_EQ(MultiIndexString(0, {}), "[]");
}

TEST(InputMessage, NamesTheInputValueAndElement) {
  const std::vector<int64_t> shape = {3, 4};
  EXPECT_EQ(InputMessage(2, NonFinite{9, kInf}, shape),
            "check_numerics: input 2 holds inf at element 9 [2, 1]");
}

BufferRef Ref(ir::BufferKind kind, int index, int node, bool written) {
  BufferRef r;
  r.kind = kind;
  r.index = index;
  r.node = node;
  r.written = written;
  return r;
}

TEST(BuffersToScan, EachBufferAfterItsLastWriter) {
  Plan plan;
  plan.kernels.resize(4);
  // Kernel 0 writes node 3 into arena slot 0; kernels 1 and 2 write the windows of node 5
  // (output 0); kernel 3 writes node 6 into arena slot 0 (reused) and a layout copy (no node).
  plan.kernels[0].buffers = {Ref(ir::BufferKind::kInput, 0, 0, false),
                             Ref(ir::BufferKind::kTemp, 0, 3, true)};
  plan.kernels[1].buffers = {Ref(ir::BufferKind::kTemp, 0, 3, false),
                             Ref(ir::BufferKind::kOutput, 0, 5, true)};
  plan.kernels[2].buffers = {Ref(ir::BufferKind::kInput, 0, 0, false),
                             Ref(ir::BufferKind::kOutput, 0, 5, true)};
  plan.kernels[3].buffers = {Ref(ir::BufferKind::kTemp, 1, -1, true),
                             Ref(ir::BufferKind::kTemp, 0, 6, true)};
  const std::vector<std::vector<WrittenBuffer>> scan = BuffersToScan(plan);
  ASSERT_EQ(scan.size(), 4u);
  ASSERT_EQ(scan[0].size(), 1u);
  EXPECT_EQ(scan[0][0].slot, 1);
  EXPECT_EQ(scan[0][0].node, 3);
  EXPECT_EQ(scan[0][0].writers, std::vector<int>({0}));
  EXPECT_TRUE(scan[1].empty());
  ASSERT_EQ(scan[2].size(), 1u);
  EXPECT_EQ(scan[2][0].node, 5);
  EXPECT_EQ(scan[2][0].writers, std::vector<int>({1, 2}));
  ASSERT_EQ(scan[3].size(), 1u);
  EXPECT_EQ(scan[3][0].slot, 1);
  EXPECT_EQ(scan[3][0].node, 6);
}

// %0 = input 0 [4]; %1 = constant 2; %2 = sub(%0, %1); %3 = sqrt(%2); %4 = mul(%3, %1)
ir::Graph SqrtGraph() {
  ir::Graph g;
  g.num_inputs = 1;
  ir::Node in;
  in.op = ir::OpKind::kInput;
  in.shape = {ir::SymExpr(4)};
  g.nodes.push_back(in);
  ir::Node c;
  c.op = ir::OpKind::kConstant;
  c.attrs.scalar = 2;
  g.nodes.push_back(c);
  ir::Node sub;
  sub.op = ir::OpKind::kSub;
  sub.inputs = {0, 1};
  sub.shape = in.shape;
  g.nodes.push_back(sub);
  ir::Node sq = sub;
  sq.op = ir::OpKind::kSqrt;
  sq.inputs = {2};
  g.nodes.push_back(sq);
  ir::Node mul = sub;
  mul.op = ir::OpKind::kMul;
  mul.inputs = {3, 1};
  g.nodes.push_back(mul);
  g.outputs = {4};
  return g;
}

TEST(FirstNonFiniteOp, ReRunsTheKernelsOpsInOrder) {
  const ir::Graph g = SqrtGraph();
  const std::vector<float> x = {3, 4, 1, 5};  // sqrt(1 - 2) is nan at element 2
  const std::vector<int> nodes = {2, 3, 4};
  auto memory = [&](int node) -> const float* { return node == 0 ? x.data() : nullptr; };
  absl::StatusOr<std::optional<OpFinding>> f = FirstNonFiniteOp(g, nodes, {}, memory);
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_TRUE(f->has_value());
  EXPECT_EQ((*f)->node, 3);
  EXPECT_EQ((*f)->first.index, 2);
  EXPECT_TRUE(std::isnan((*f)->first.value));
  // The kernel computes only node 4 and reads node 3 from memory: nothing it computes is
  // non-finite by itself but its operand, which it does not re-run.
  const std::vector<float> finite = {1, 1, 1, 1};
  auto from_memory = [&](int node) -> const float* { return node == 3 ? finite.data() : nullptr; };
  const std::vector<int> last = {4};
  f = FirstNonFiniteOp(g, last, {}, from_memory);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_FALSE(f->has_value());
  // An input the memory lacks cannot be re-run.
  auto nothing = [](int) -> const float* { return nullptr; };
  f = FirstNonFiniteOp(g, nodes, {}, nothing);
  EXPECT_EQ(f.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(f.status().message(), "check_numerics: input node 0 not in memory");
}

}  // namespace
}  // namespace pto::jit::numerics
