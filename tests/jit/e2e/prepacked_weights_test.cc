// Constant weights of a matmul are packed once by the plan (jit/passes/prepack_constant_weights,
// ir::PackedB) instead of per call: results match the reference for both weight layouts, shapes
// with column tails, serial and parallel, after InvalidateConstants (a new copy is packed), and
// when many threads make the first call together.
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

using ops::HostTensor;

struct PrepackCase {
  int64_t m, k, n;
  bool transposed_b;  // weight stored [N, K], as a linear layer's
  int threads;
};

TraceFn Linear(bool transposed_b) {
  return [transposed_b](std::span<const Value> v) {
    return std::vector<Value>{transposed_b ? matmul(v[0], transpose(v[1], 0, 1))
                                           : matmul(v[0], v[1]) + v[2]};
  };
}

std::vector<HostTensor> Inputs(const PrepackCase& c, uint32_t seed) {
  return {HostTensor::Random({c.m, c.k}, seed),
          c.transposed_b ? HostTensor::Random({c.n, c.k}, seed + 1)
                         : HostTensor::Random({c.k, c.n}, seed + 1),
          HostTensor::Random({c.n}, seed + 2)};
}

class PrepackedWeights : public ::testing::TestWithParam<PrepackCase> {};

TEST_P(PrepackedWeights, MatchReferenceAndFollowNewConstants) {
  const PrepackCase c = GetParam();
  const TraceFn f = Linear(c.transposed_b);
  std::unique_ptr<Runtime> rt = testing::OpenRuntime({.intra_op_threads = c.threads});
  FunctionOptions options;
  options.constant_inputs = {1};
  auto fn = rt->JitTraced("linear", 3, f, options);
  ASSERT_TRUE(fn.ok()) << fn.status();
  // The plan reads the weight prepacked.
  auto dump = (*fn)->Dump(Stage::kExec, {{c.m, c.k},
                                         c.transposed_b ? std::vector<int64_t>{c.n, c.k}
                                                        : std::vector<int64_t>{c.k, c.n},
                                         {c.n}});
  ASSERT_TRUE(dump.ok()) << dump.status();
  EXPECT_NE(dump->find("packed in1"), std::string::npos) << *dump;
  const ops::Tolerance tol = ops::OpTolerance(ir::OpKind::kMatMul, c.k);
  for (uint32_t seed : {1u, 10u}) {
    const std::vector<HostTensor> in = Inputs(c, seed);
    if (seed != 1) (*fn)->InvalidateConstants();  // new weights: packed again
    for (int call = 0; call < 2; ++call) {
      auto got = testing::RunPto(**fn, in);
      ASSERT_TRUE(got.ok()) << got.status();
      auto want = testing::RunReference(f, in);
      ASSERT_TRUE(want.ok()) << want.status();
      EXPECT_EQ(testing::Compare(*got, *want, tol), "") << "seed " << seed << " call " << call;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, PrepackedWeights,
    ::testing::Values(PrepackCase{64, 300, 100, true, 1}, PrepackCase{64, 300, 100, false, 2},
                      PrepackCase{8, 1000, 515, true, 2}, PrepackCase{200, 700, 77, false, 1},
                      PrepackCase{33, 64, 40, true, 2}, PrepackCase{1, 257, 130, true, 1},
                      PrepackCase{130, 520, 260, true, 2},
                      // M = 1 reads the packed blocks front to back (SingleRowPacked), column
                      // tails from B itself.
                      PrepackCase{1, 1000, 515, false, 2}, PrepackCase{1, 64, 192, true, 2},
                      PrepackCase{1, 3, 70, false, 1}));

// Non-constant weights are not prepacked.
TEST(PrepackedWeightsRule, OnlyConstantInputs) {
  const TraceFn f = Linear(true);
  std::unique_ptr<Runtime> rt = testing::OpenRuntime({});
  auto fn = rt->JitTraced("linear", 3, f, {});
  ASSERT_TRUE(fn.ok()) << fn.status();
  auto dump = (*fn)->Dump(Stage::kExec, {{64, 300}, {100, 300}, {100}});
  ASSERT_TRUE(dump.ok()) << dump.status();
  EXPECT_EQ(dump->find("packed"), std::string::npos) << *dump;
}

// Threads making the first call together all get the one packed copy, and the right answer.
TEST(PrepackedWeightsRule, ConcurrentFirstCalls) {
  const PrepackCase c{48, 512, 256, true, 1};
  const TraceFn f = Linear(true);
  std::unique_ptr<Runtime> rt = testing::OpenRuntime({.intra_op_threads = 1});
  FunctionOptions options;
  options.constant_inputs = {1};
  auto fn = rt->JitTraced("linear", 3, f, options);
  ASSERT_TRUE(fn.ok()) << fn.status();
  const std::vector<HostTensor> in = Inputs(c, 3);
  auto want = testing::RunReference(f, in);
  ASSERT_TRUE(want.ok()) << want.status();
  std::vector<std::string> diffs(6);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < diffs.size(); ++t) {
    threads.emplace_back([&, t] {
      auto got = testing::RunPto(**fn, in);
      diffs[t] = got.ok()
                     ? testing::Compare(*got, *want, ops::OpTolerance(ir::OpKind::kMatMul, c.k))
                     : got.status().ToString();
    });
  }
  for (std::thread& th : threads) th.join();
  for (const std::string& d : diffs) EXPECT_EQ(d, "");
}

}  // namespace
}  // namespace pto
