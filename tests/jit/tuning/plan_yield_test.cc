// Plan::Run on a thread with a yield hook (the background tuner's runs): the hook runs before
// each kernel and between pieces of a one-thread run's grid, the result is unchanged, and
// time spent in the hook is not counted as kernel time.
#include <chrono>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "device/device_info.h"
#include "device/yield_point.h"
#include "gtest/gtest.h"
#include "jit/kernel_compiler.h"
#include "jit/pipeline.h"
#include "jit/plan.h"
#include "pto/pto.h"
#include "tests/jit/e2e/test_util.h"

namespace pto::jit {
namespace {

TEST(PlanYieldTest, HookRunsBetweenPiecesAndIsNotKernelTime) {
  const TraceFn trace = [](std::span<const Value> v) {
    return std::vector<Value>{gelu(matmul(v[0], v[1]) + v[2])};
  };
  const std::vector<std::vector<int64_t>> shapes = {{96, 64}, {64, 48}, {48}};
  absl::StatusOr<LoweredProgram> lowered = testing::LowerStatic(trace, shapes);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  absl::StatusOr<std::unique_ptr<KernelCompiler>> compiler =
      KernelCompiler::Create(device::DetectHost());
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  absl::StatusOr<BuiltPlan> built = BuildPlan(*lowered, **compiler);
  ASSERT_TRUE(built.ok()) << built.status();
  const std::unique_ptr<Plan>& plan = built->plan;
  // 96 rows in grains of 4 rows: 24 grains cut into 8 pieces of 3 grains (12 rows).
  int64_t tiles = 0;
  for (PlanKernel& k : plan->kernels) {
    ASSERT_EQ(k.grid[0].Evaluate({}), 96);
    k.grain[0] = 4;
    k.grain[1] = 0;
    tiles += 8;
  }

  std::vector<ops::HostTensor> inputs;
  for (size_t i = 0; i < shapes.size(); ++i) {
    inputs.push_back(ops::HostTensor::Random(shapes[i], 11 + i));
  }
  absl::StatusOr<std::vector<ops::HostTensor>> want = testing::RunReference(trace, inputs);
  ASSERT_TRUE(want.ok()) << want.status();
  std::vector<void*> in;
  for (const ops::HostTensor& t : inputs) in.push_back(const_cast<float*>(t.data.data()));

  int hooks = 0;
  const std::function<void()> hook = [&hooks] {
    ++hooks;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  };
  std::vector<ops::HostTensor> got = *want;
  std::fill(got[0].data.begin(), got[0].data.end(), -7.f);
  void* out[] = {got[0].data.data()};
  std::vector<double> seconds(plan->kernels.size(), -1);
  {
    const device::ScopedYieldHook scoped(&hook);
    ASSERT_TRUE(plan->Run({}, in.data(), out, nullptr, seconds.data()).ok());
  }
  EXPECT_EQ(testing::Compare(got, *want, {1e-5, 1e-5}), "");
  EXPECT_EQ(hooks, tiles);  // one before each kernel, one between pieces
  double kernel_total = 0;
  for (double s : seconds) {
    EXPECT_GE(s, 0);
    kernel_total += s;
  }
  // The hook slept tiles x 2 ms; the kernels themselves take well under a millisecond.
  EXPECT_LT(kernel_total, 0.5 * 0.002 * static_cast<double>(tiles));
  EXPECT_GT(device::SecondsYielded(), 0.9 * 0.002 * static_cast<double>(tiles));

  // Without a hook: one launch per kernel, no yields.
  const double yielded = device::SecondsYielded();
  ASSERT_TRUE(plan->Run({}, in.data(), out, nullptr, seconds.data()).ok());
  EXPECT_EQ(testing::Compare(got, *want, {1e-5, 1e-5}), "");
  EXPECT_EQ(device::SecondsYielded(), yielded);
}

}  // namespace
}  // namespace pto::jit
