// Parallel launches: results do not depend on how the grid is split across threads.
#include <vector>

#include "gtest/gtest.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

using ops::HostTensor;

TEST(Parallel, SameResultsOnOneAndTwoThreads) {
  const std::vector<std::pair<TraceFn, std::vector<std::vector<int64_t>>>> cases = {
      {[](std::span<const Value> v) { return std::vector<Value>{pto::tanh(v[0]) * v[1] + 1.0f}; },
       {{1, 100003}, {100003}}},
      {[](std::span<const Value> v) { return std::vector<Value>{reduce_sum(v[0], 0)}; }, {{37, 40000}}},
      {[](std::span<const Value> v) { return std::vector<Value>{softmax(v[0])}; }, {{300, 257}}},
      {[](std::span<const Value> v) { return std::vector<Value>{matmul(v[0], v[1]) + v[2]}; },
       {{130, 70}, {70, 90}, {90}}},
  };
  std::unique_ptr<Runtime> serial = testing::OpenRuntime({.intra_op_threads = 1});
  std::unique_ptr<Runtime> parallel = testing::OpenRuntime({.intra_op_threads = 2});
  int seed = 0;
  for (const auto& [trace, shapes] : cases) {
    std::vector<HostTensor> in;
    for (const auto& s : shapes) in.push_back(HostTensor::Random(s, ++seed));
    auto f1 = serial->JitTraced("f", static_cast<int>(shapes.size()), trace, {});
    auto f2 = parallel->JitTraced("f", static_cast<int>(shapes.size()), trace, {});
    ASSERT_TRUE(f1.ok() && f2.ok());
    auto a = testing::RunPto(**f1, in);
    auto b = testing::RunPto(**f2, in);
    ASSERT_TRUE(a.ok() && b.ok());
    // Each output element is computed by one thread with the same code: bitwise equal.
    EXPECT_EQ((*a)[0].data, (*b)[0].data) << "case " << seed;
    auto want = testing::RunReference(trace, in);
    ASSERT_TRUE(want.ok());
    EXPECT_EQ(testing::Compare(*b, *want, ops::OpTolerance(ir::OpKind::kMatMul, 40000)), "");
  }
}

}  // namespace
}  // namespace pto
