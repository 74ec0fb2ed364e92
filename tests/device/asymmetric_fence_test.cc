#include "device/asymmetric_fence.h"

#include <atomic>
#include <thread>

#include "device/sanitizers.h"
#include "gtest/gtest.h"

namespace pto::device {
namespace {

TEST(AsymmetricFenceTest, DecidedOnceAndOffUnderThreadSanitizer) {
  const bool available = AsymmetricFencesAvailable();
  EXPECT_EQ(AsymmetricFencesAvailable(), available);
  if (PTO_UNDER_TSAN) {
    EXPECT_FALSE(available);
  }
}

// Store buffering: each thread stores its flag, fences, then loads the other's. With a full
// fence on both sides, at least one of them sees the other's store. Here one side's fence is a
// compiler barrier only and the other's the membarrier: both loads seeing 0 would mean the
// membarrier did not order the light side's store before its load.
TEST(AsymmetricFenceTest, HeavyFenceOrdersTheLightSidesStoreBeforeItsLoad) {
  if (!AsymmetricFencesAvailable()) {
    // The epoch domain then uses full fences on both sides (EpochTest covers it).
    GTEST_SKIP() << "membarrier(PRIVATE_EXPEDITED) is not available here";
  }
  constexpr int kRounds = 20000;
  std::atomic<int> x{0}, y{0};
  // Both threads leave this barrier together each round, so their stores and loads overlap.
  std::atomic<int> arrived{0};
  const auto meet = [&](int r) {
    arrived.fetch_add(1, std::memory_order_acq_rel);
    while (arrived.load(std::memory_order_acquire) < 2 * (r + 1)) {
    }
  };
  std::atomic<int> done{0};
  std::atomic<int> light_saw{0};
  std::thread light([&] {
    for (int r = 0; r < kRounds; ++r) {
      meet(r);
      x.store(1, std::memory_order_relaxed);
      std::atomic_signal_fence(std::memory_order_seq_cst);
      light_saw.store(y.load(std::memory_order_relaxed), std::memory_order_relaxed);
      done.fetch_add(1, std::memory_order_release);
    }
  });
  int both_zero = 0;
  bool fence_failed = false;
  for (int r = 0; r < kRounds; ++r) {
    x.store(0, std::memory_order_relaxed);
    y.store(0, std::memory_order_relaxed);
    meet(r);
    y.store(1, std::memory_order_relaxed);
    fence_failed |= !HeavyFence();
    const int heavy_saw = x.load(std::memory_order_relaxed);
    while (done.load(std::memory_order_acquire) != r + 1) {
    }
    if (heavy_saw == 0 && light_saw.load(std::memory_order_relaxed) == 0) ++both_zero;
  }
  light.join();
  EXPECT_FALSE(fence_failed);
  EXPECT_EQ(both_zero, 0) << "of " << kRounds << " rounds";
}

}  // namespace
}  // namespace pto::device
