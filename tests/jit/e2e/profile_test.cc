// Function::Profile: each kernel of the plan, in execution order, with its median time.
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
