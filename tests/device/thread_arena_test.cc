// ThreadArena::Shared: one arena per thread count (and pinning) for the process while someone
// holds it, and concurrent loops on the shared arena from several threads each cover their range
// once. Pinning: each slot runs on its own CPU, and the caller gets its affinity back.
#include "device/thread_arena.h"

#include <sched.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
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

TEST(ThreadArena, SharedKeepsPinnedAndUnpinnedApart) {
  std::shared_ptr<ThreadArena> pinned = ThreadArena::Shared(2, /*pin=*/true);
  std::shared_ptr<ThreadArena> unpinned = ThreadArena::Shared(2, /*pin=*/false);
  EXPECT_NE(pinned.get(), unpinned.get());
  EXPECT_EQ(pinned.get(), ThreadArena::Shared(2, true).get());
  EXPECT_FALSE(unpinned->pins());
  EXPECT_TRUE(unpinned->cpus().empty());
}

std::vector<int> CpusOf(const cpu_set_t& set) {
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

cpu_set_t Affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  return set;
}

// Every piece of a pinned arena's loop runs on its slot's CPU: the caller's (slot 0, under a
// CallerPin) on cpus()[0], the worker's on cpus()[1]; afterwards the caller's affinity is its
// own again. Pieces sleep a little so that the worker surely takes some.
TEST(ThreadArena, PinnedSlotsRunOnTheirOwnCpus) {
  const std::vector<int> allowed = CpusOf(Affinity());
  ASSERT_EQ(ThreadArena::AllowedCpuCount(), static_cast<int>(allowed.size()));
  ThreadArena arena(2, /*pin=*/true);
  if (allowed.size() < 2) {
    EXPECT_FALSE(arena.pins()) << "one CPU: nothing to pin to";
    return;
  }
  ASSERT_TRUE(arena.pins());
  EXPECT_EQ(arena.cpus(), std::vector<int>(allowed.begin(), allowed.begin() + 2));
  std::mutex mu;
  std::set<std::pair<int, int>> seen;  // (slot, cpu)
  {
    ThreadArena::CallerPin pin(&arena);
    EXPECT_TRUE(pin.pinned());
    EXPECT_EQ(CpusOf(Affinity()), std::vector<int>{arena.cpus()[0]});
    ThreadArena::CallerPin second(&arena);
    EXPECT_FALSE(second.pinned()) << "only the first holder pins";
    const int64_t extent[2] = {64, 1}, grain[2] = {1, 1};
    for (int rep = 0; rep < 5; ++rep) {
      // 200 us a unit, so a worker that joins late still finds a piece to take.
      arena.ParallelFor2D(extent, grain, [&](const int64_t* lo, const int64_t* hi) {
        std::this_thread::sleep_for(std::chrono::microseconds(200) * (hi[0] - lo[0]));
        const int cpu = sched_getcpu();
        std::lock_guard<std::mutex> lock(mu);
        seen.insert({ThreadArena::CurrentThreadIndex(), cpu});
      });
    }
  }
  EXPECT_EQ(CpusOf(Affinity()), allowed) << "the caller's own affinity is back";
  std::set<int> slots;
  for (const auto& [slot, cpu] : seen) {
    slots.insert(slot);
    ASSERT_LT(slot, 2);
    EXPECT_EQ(cpu, arena.cpus()[slot]) << "slot " << slot;
  }
  EXPECT_EQ(slots.size(), 2u) << "both threads took pieces";
  // On slot 0's CPU the caller is not on a worker's; on slot 1's it is.
  for (int slot : {0, 1}) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(arena.cpus()[slot], &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    EXPECT_EQ(arena.OnWorkerCpu(), slot == 1);
  }
  const cpu_set_t own = [&] {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : allowed) CPU_SET(c, &set);
    return set;
  }();
  ASSERT_EQ(sched_setaffinity(0, sizeof own, &own), 0);
  EXPECT_FALSE(ThreadArena(2, /*pin=*/false).OnWorkerCpu());
}

// An arena asked to pin more threads than the caller has CPUs, or not asked, pins nothing, and
// its CallerPin leaves the caller alone.
TEST(ThreadArena, NoPinningWithoutEnoughCpusOrWhenNotAsked) {
  const cpu_set_t own = Affinity();
  const std::vector<int> allowed = CpusOf(own);
  ThreadArena too_many(static_cast<int>(allowed.size()) + 1, /*pin=*/true);
  EXPECT_FALSE(too_many.pins());
  ThreadArena unpinned(2, /*pin=*/false);
  for (ThreadArena* arena : {&too_many, &unpinned}) {
    ThreadArena::CallerPin pin(arena);
    EXPECT_FALSE(pin.pinned());
    EXPECT_EQ(CpusOf(Affinity()), allowed);
  }
  ThreadArena::CallerPin none(nullptr);
  EXPECT_FALSE(none.pinned());
}

}  // namespace
}  // namespace pto::device
