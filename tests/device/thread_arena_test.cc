// ThreadArena::Shared: one arena per thread count for the process while someone holds it, and
// concurrent loops on the shared arena from several threads each cover their range once.
#include "device/thread_arena.h"

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace pto::device {
namespace {

TEST(ThreadArena, SharedPerThreadCountWhileHeld) {
  std::shared_ptr<ThreadArena> a = ThreadArena::Shared(2);
  std::shared_ptr<ThreadArena> b = ThreadArena::Shared(2);
  std::shared_ptr<ThreadArena> c = ThreadArena::Shared(3);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_NE(a.get(), c.get());
  EXPECT_EQ(a->threads(), 2);
  EXPECT_EQ(c->threads(), 3);
  EXPECT_EQ(ThreadArena::Shared(0)->threads(), 1);
  std::weak_ptr<ThreadArena> gone = a;
  a.reset();
  b.reset();
  EXPECT_TRUE(gone.expired()) << "the registry holds no arena nobody uses";
}

TEST(ThreadArena, ConcurrentLoopsOnTheSharedArenaCoverTheirRanges) {
  constexpr int kCallers = 4, kRows = 97, kCols = 13, kReps = 50;
  std::vector<std::vector<std::atomic<int>>> hits(kCallers);
  for (auto& h : hits) h = std::vector<std::atomic<int>>(kRows * kCols);
  std::vector<std::thread> callers;
  for (int t = 0; t < kCallers; ++t) {
    callers.emplace_back([&hits, t] {
      std::shared_ptr<ThreadArena> arena = ThreadArena::Shared(2);
      const int64_t extent[2] = {kRows, kCols}, grain[2] = {3, 4};
      for (int rep = 0; rep < kReps; ++rep) {
        arena->ParallelFor2D(extent, grain, [&](const int64_t lo[2], const int64_t hi[2]) {
          for (int64_t r = lo[0]; r < hi[0]; ++r) {
            for (int64_t c = lo[1]; c < hi[1]; ++c) hits[t][r * kCols + c].fetch_add(1);
          }
        });
      }
    });
  }
  for (std::thread& c : callers) c.join();
  for (int t = 0; t < kCallers; ++t) {
    for (int i = 0; i < kRows * kCols; ++i) ASSERT_EQ(hits[t][i].load(), kReps) << t << " " << i;
  }
}

}  // namespace
}  // namespace pto::device
