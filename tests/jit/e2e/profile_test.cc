// Function::Profile: each kernel of the plan, in execution order, with its median time, its
// flops and bytes, their rates and its share of the roofline.
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

using ops::HostTensor;

TEST(Profile, EveryKernelInOrderWithItsTimeAndShare) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  // Three kernels: matmul with a bias epilogue, softmax, and an elementwise tail.
  auto fn = rt->Jit("mm_softmax_scale",
                    [](Value x, Value w, Value b) { return softmax(matmul(x, w) + b) * 3.0f; });
  ASSERT_TRUE(fn.ok());
  const std::vector<HostTensor> inputs = {HostTensor::Random({64, 96}, 1),
                                          HostTensor::Random({96, 80}, 2),
                                          HostTensor::Random({80}, 3)};
  std::vector<float> out(64 * 80, 0.f);
  const std::vector<TensorView> in = testing::Views(inputs);
  const TensorView out_view = TensorView::Dense(out.data(), {64, 80});
  absl::StatusOr<std::vector<KernelProfile>> profile = (*fn)->Profile(in, {&out_view, 1}, 7);
  ASSERT_TRUE(profile.ok()) << profile.status();
  ASSERT_GE(profile->size(), 2u);
  EXPECT_EQ((*profile)[0].kernel.rfind("f32_matmul_add", 0), 0u) << (*profile)[0].kernel;
  EXPECT_EQ((*profile)[1].kernel.rfind("f32_softmax", 0), 0u) << (*profile)[1].kernel;
  double shares = 0;
  for (const KernelProfile& k : *profile) {
    EXPECT_GT(k.seconds, 0) << k.kernel;
    EXPECT_GT(k.share, 0) << k.kernel;
    shares += k.share;
  }
  EXPECT_NEAR(shares, 1.0, 1e-9);
  // The profiled calls are calls: the output is the function's result.
  absl::StatusOr<std::vector<HostTensor>> want = testing::RunPto(**fn, inputs);
  ASSERT_TRUE(want.ok());
  EXPECT_EQ(out, (*want)[0].data);
  EXPECT_EQ((*fn)->stats().calls, 1 + 7 + 1);
}

// A matmul's flops are exactly 2*M*N*K and its bytes each operand once; rates follow from
// its time, and its roofline share from the machine's measured peaks.
TEST(Profile, RatesAndRooflineShareOfAMatmul) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto fn = rt->Jit("mm", [](Value x, Value w) { return matmul(x, w); });
  ASSERT_TRUE(fn.ok());
  const int64_t m = 96, k = 128, n = 64;
  const std::vector<HostTensor> inputs = {HostTensor::Random({m, k}, 1),
                                          HostTensor::Random({k, n}, 2)};
  std::vector<float> out(m * n);
  const TensorView out_view = TensorView::Dense(out.data(), {m, n});
  absl::StatusOr<std::vector<KernelProfile>> profile =
      (*fn)->Profile(testing::Views(inputs), {&out_view, 1}, 9);
  ASSERT_TRUE(profile.ok()) << profile.status();
  ASSERT_EQ(profile->size(), 1u);
  const KernelProfile& p = (*profile)[0];
  EXPECT_EQ(p.flops, 2.0 * m * n * k);
  EXPECT_EQ(p.bytes, 4.0 * (m * k + k * n + m * n));
  EXPECT_GT(p.gflops, 0);
  EXPECT_GT(p.gbs, 0);
  EXPECT_DOUBLE_EQ(p.gflops, p.flops / p.seconds * 1e-9);
  EXPECT_DOUBLE_EQ(p.gbs, p.bytes / p.seconds * 1e-9);
  // The peaks are measured in this process: under load, or in a sanitizer build (its FMA loops
  // are instrumented, the JIT's kernels are not), the share can pass 1 by any amount, so only
  // its sign is checked here; GivenPeaksSetTheRoofline checks how it follows from the peaks.
  EXPECT_GT(p.roofline_share, 0);
  EXPECT_TRUE(std::isfinite(p.roofline_share));
}

// Peaks given in RuntimeOptions are used as given (nothing measured).
TEST(Profile, GivenPeaksSetTheRoofline) {
  RuntimeOptions options;
  options.peak_gflops = 1000;
  options.peak_bandwidth_gbs = 1;
  std::unique_ptr<Runtime> rt = testing::OpenRuntime(options);
  auto fn = rt->Jit("scale", [](Value x) { return x * 2.0f + 1.0f; });
  ASSERT_TRUE(fn.ok());
  const std::vector<HostTensor> inputs = {HostTensor::Random({64, 256}, 1)};
  std::vector<float> out(64 * 256);
  const TensorView out_view = TensorView::Dense(out.data(), {64, 256});
  absl::StatusOr<std::vector<KernelProfile>> profile =
      (*fn)->Profile(testing::Views(inputs), {&out_view, 1}, 5);
  ASSERT_TRUE(profile.ok()) << profile.status();
  ASSERT_EQ(profile->size(), 1u);
  const KernelProfile& p = (*profile)[0];
  EXPECT_EQ(p.flops, 2.0 * 64 * 256);
  EXPECT_EQ(p.bytes, 4.0 * 2 * 64 * 256);
  EXPECT_TRUE(p.memory_bound);
  EXPECT_DOUBLE_EQ(p.roofline_share, p.bytes / 1e9 / p.seconds);
}

TEST(Profile, BadCallsAndBadViewsAreInvalidArgument) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto fn = rt->Jit("twice", [](Value x) { return x * 2.0f; });
  ASSERT_TRUE(fn.ok());
  const std::vector<HostTensor> inputs = {HostTensor::Random({4, 8}, 1)};
  std::vector<float> out(32);
  const std::vector<TensorView> in = testing::Views(inputs);
  const TensorView out_view = TensorView::Dense(out.data(), {4, 8});
  absl::StatusOr<std::vector<KernelProfile>> p = (*fn)->Profile(in, {&out_view, 1}, 0);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(p.status().message(), "Profile of 'twice': calls must be at least 1, got 0");
  const TensorView wrong = TensorView::Dense(out.data(), {8, 4});
  p = (*fn)->Profile(in, {&wrong, 1}, 3);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("output 0: shape [8, 4] does not match"), std::string::npos)
      << p.status();
}

}  // namespace
}  // namespace pto
