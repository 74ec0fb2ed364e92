// One Function called from many threads at once, including while its first compilation is
// under way (run it under the tsan preset too).
#include <atomic>
#include <thread>
#include <vector>

#include "device/device_info.h"
#include "gtest/gtest.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

TEST(Threads, EightCallersDuringFirstCompile) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto fn = rt->Jit("mlp", [](Value x, Value w, Value b) { return relu(linear(x, w, b)) * 2.0f; },
                    {.dynamic = {{0, 0, Dim("batch", 1, 256)}}});
  ASSERT_TRUE(fn.ok());
  const ops::HostTensor w = ops::HostTensor::Random({16, 32}, 1), b = ops::HostTensor::Random({16}, 2);
  constexpr int kThreads = 8;
  // Two shape classes, raced for: a multiple of the vector width and the size after it.
  const int64_t lanes = device::DetectHost().f32_lanes();
  std::atomic<int> go{0}, failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const int64_t batch = lanes + (t % 2);
      ops::HostTensor x = ops::HostTensor::Random({batch, 32}, 10 + t);
      go.fetch_add(1);
      while (go.load() < kThreads) {
      }
      for (int rep = 0; rep < 20; ++rep) {
        absl::StatusOr<std::vector<ops::HostTensor>> got = testing::RunPto(**fn, {x, w, b});
        if (!got.ok()) {
          failures.fetch_add(1);
          continue;
        }
        float want = 0;
        for (int k = 0; k < 32; ++k) want += x.data[k] * w.data[k];
        want = std::max(want + b.data[0], 0.0f) * 2.0f;
        if (std::abs((*got)[0].data[0] - want) > 1e-4f) failures.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ((*fn)->stats().compiles, 2);
  EXPECT_EQ((*fn)->stats().traces, 1);
  EXPECT_EQ((*fn)->stats().calls, kThreads * 20);
}

}  // namespace
}  // namespace pto
